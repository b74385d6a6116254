// lib/hardhat-parallel-build.ts: the contracts compiled in one job per core, each group of root files of
// about equal cost, with the same bytecode as one job.
import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import os from "node:os";
import path from "node:path";
import { after, describe, it } from "node:test";
import { createHardhatRuntimeEnvironment } from "hardhat/hre";
import type { HardhatUserConfig } from "hardhat/config";
import parallelBuild, { splitRoots } from "../../lib/hardhat-parallel-build.ts";

const scratch = mkdtempSync(path.join(os.tmpdir(), "parallel-build-"));
after(() => rmSync(scratch, { recursive: true, force: true }));

/** Writes `files` (path -> text) under a new directory of the scratch space; returns it. */
function project(name: string, files: Record<string, string>): string {
  const dir = path.join(scratch, name);
  for (const [file, text] of Object.entries(files)) {
    mkdirSync(path.dirname(path.join(dir, file)), { recursive: true });
    writeFileSync(path.join(dir, file), text);
  }
  return dir;
}

const pragma = "// SPDX-License-Identifier: MIT\npragma solidity ^0.8.0;\n";
/** A contract whose source is about `size` characters of code. */
const contractOf = (name: string, size: number, imports: string[] = []) =>
  `${pragma}${imports.map((file) => `import "${file}";\n`).join("")}contract ${name} {\n${"    uint256 public constant X = 1;\n".repeat(Math.ceil(size / 34))}}\n`;

describe("splitting the root files", () => {
  it("puts roots that share an import together, and every root in exactly one group", () => {
    const dir = project("shared", {
      "contracts/Big.sol": contractOf("Big", 6_000),
      "contracts/UsesBigA.sol": contractOf("UsesBigA", 300, ["./Big.sol"]),
      "contracts/UsesBigB.sol": contractOf("UsesBigB", 300, ["./Big.sol"]),
      "contracts/Alone.sol": contractOf("Alone", 5_000),
    });
    const roots = ["UsesBigA", "UsesBigB", "Alone"].map((name) => path.join(dir, "contracts", `${name}.sol`));
    const groups = splitRoots(roots, 2, dir).map((group) => group.map((file) => path.basename(file)).sort());
    assert.deepEqual(groups.sort(), [["Alone.sol"], ["UsesBigA.sol", "UsesBigB.sol"]]);
    assert.deepEqual(
      splitRoots(roots, 1, dir).map((group) => group.length),
      [3],
    );
    // More cores than roots: no empty group, and the roots that share Big.sol still together.
    const many = splitRoots(roots, 8, dir).map((group) => group.map((file) => path.basename(file)).sort());
    assert.deepEqual(many.sort(), [["Alone.sol"], ["UsesBigA.sol", "UsesBigB.sol"]]);
  });

  it("weighs code, not comments, and follows imports into node_modules", () => {
    const dir = project("weights", {
      "contracts/Commented.sol": `${pragma}/* ${"x".repeat(50_000)} */\n// ${"y".repeat(50_000)}\ncontract Commented {}\n`,
      "contracts/Small.sol": contractOf("Small", 2_000),
      "contracts/Package.sol": `${pragma}import "lib-sol/Heavy.sol";\ncontract Package is Heavy {}\n`,
      "node_modules/lib-sol/Heavy.sol": contractOf("Heavy", 20_000),
    });
    const roots = ["Commented", "Small", "Package"].map((name) => path.join(dir, "contracts", `${name}.sol`));
    // The package's contract outweighs the two others together: it is a group of its own.
    const groups = splitRoots(roots, 2, dir).map((group) => group.map((file) => path.basename(file)).sort());
    assert.deepEqual(groups.sort(), [["Commented.sol", "Small.sol"], ["Package.sol"]]);
  });
});

describe("the build with the plugin", () => {
  const require = createRequire(import.meta.url);
  const compiler = { version: require("solc/package.json").version as string, path: require.resolve("solc/soljson.js") };
  const sources = {
    "package.json": JSON.stringify({ name: "parallel-build-test", type: "module" }),
    "contracts/Shared.sol": `${pragma}library Shared { function twice(uint256 x) internal pure returns (uint256) { return 2 * x; } }\n`,
    "contracts/One.sol": `${pragma}import "./Shared.sol";\ncontract One { function f(uint256 x) external pure returns (uint256) { return Shared.twice(x) + 1; } }\n`,
    "contracts/Two.sol": `${pragma}contract Two { uint256 public n; function g() external { n += 2; } }\n`,
  };

  async function build(name: string, config: HardhatUserConfig) {
    const dir = project(name, sources);
    const hre = await createHardhatRuntimeEnvironment(config, {}, dir);
    await hre.tasks.getTask("build").run({ quiet: true, noTests: true });
    const bytecode = (contract: string) =>
      JSON.parse(readFileSync(path.join(dir, "artifacts", "contracts", `${contract}.sol`, `${contract}.json`), "utf8")).bytecode as string;
    const jobs = readdirSync(path.join(dir, "artifacts", "build-info")).filter((file) => !file.endsWith(".output.json"));
    return { hre, jobs, bytecode };
  }

  it(
    "gives each group after the first one compiler configuration of its own, and compiles the same bytecode",
    { timeout: 120_000 },
    async () => {
      const cores = os.availableParallelism();
      const split = await build("with-plugin", { plugins: [parallelBuild], solidity: { profiles: { default: compiler } } });
      const merged = await build("without-plugin", { solidity: { profiles: { default: compiler } } });

      const profile = split.hre.config.solidity.profiles.default;
      const overridden = Object.entries(profile.overrides);
      const configs = new Set(overridden.map(([, config]) => config));
      // Three roots (Shared.sol is a root too): min(cores, 3) groups, the first on the profile's compiler.
      const groups = Math.min(cores, 3);
      assert.equal(configs.size, groups - 1);
      for (const config of configs) {
        assert.notEqual(config, profile.compilers[0]);
        assert.deepEqual(config, profile.compilers[0]);
      }
      assert.equal(split.jobs.length, groups);
      assert.equal(merged.jobs.length, 1);
      for (const contract of ["One", "Two"]) assert.equal(split.bytecode(contract), merged.bytecode(contract));
    },
  );
});
