// The SDK as an integrator installs it: built from sdk/src with its own tsconfig into a scratch copy of the
// package (sdk/package.json and README.md; nothing else of the repository), packed with `npm pack`, and
// installed from the tarball into an empty folder outside the repository, from which scripts run with no way
// to reach the repository's files or node_modules.
//
// The install works offline: the folder gets a package-lock.json whose entries for the SDK's dependencies
// (viem, openapi-fetch and everything they need) are the repository's own lockfile entries (same versions,
// resolved URLs and integrity), so `npm ci --offline` takes every tarball from the npm cache that the
// repository's own install filled. (A plain `npm install --offline <tarball>` would need the registry's
// package documents of every transitive range, which an install from a lockfile never caches.)
import { execFile } from "node:child_process";
import { cp, mkdir, mkdtemp, readFile, rm, stat, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";

const run = promisify(execFile);
const root = path.resolve(import.meta.dirname, "..", "..", "..");

type LockEntry = { version?: string; resolved?: string; integrity?: string; dependencies?: Record<string, string>; [key: string]: unknown };

export type PackedSdk = {
  /** The scratch folder holding everything below; remove() deletes it. */
  scratch: string;
  tarball: string;
  /** The tarball's size in bytes. */
  size: number;
  /** The files npm packed, relative to the package. */
  files: string[];
  /** The integrator's folder: package.json, package-lock.json and node_modules with @payg/sdk installed. */
  app: string;
  /** The command that installed it (run in `app`). */
  installCommand: string;
  remove(): Promise<void>;
};

/** `npm` as the shell finds it (the one `npm test` runs under), with the environment of this process. */
async function npm(args: string[], cwd: string) {
  return run("npm", args, { cwd, env: { ...process.env, npm_config_update_notifier: "false" }, maxBuffer: 16 * 1024 * 1024 });
}

/** The repository's lockfile entries of `name` as required from the package at `from` (a lockfile key), and
 * of everything it depends on, resolved the way Node resolves (the nearest node_modules up the tree). */
function closure(packages: Record<string, LockEntry>, from: string, names: string[], out = new Map<string, LockEntry>()) {
  for (const name of names) {
    let key: string | undefined;
    for (let dir = from; ; dir = dir.includes("/node_modules/") ? dir.slice(0, dir.lastIndexOf("/node_modules/")) : "") {
      const candidate = `${dir ? `${dir}/` : ""}node_modules/${name}`;
      if (packages[candidate]) {
        key = candidate;
        break;
      }
      if (dir === "") break;
    }
    if (!key) throw new Error(`the lockfile has no ${name} for ${from || "the root"}`);
    if (out.has(key)) continue;
    out.set(key, packages[key]);
    closure(packages, key, Object.keys(packages[key].dependencies ?? {}), out);
  }
  return out;
}

export async function packAndInstallSdk(): Promise<PackedSdk> {
  const scratch = await mkdtemp(path.join(os.tmpdir(), "payg-sdk-"));
  const pkg = path.join(scratch, "package");
  const app = path.join(scratch, "app");
  await mkdir(pkg);
  await mkdir(app);
  for (const file of ["package.json", "README.md"]) await cp(path.join(root, "sdk", file), path.join(pkg, file));
  // The package's own build (sdk/tsconfig.json), into the scratch copy: nothing is written into the repository.
  await run(process.execPath, [
    path.join(root, "node_modules", "typescript", "bin", "tsc"),
    "-p",
    path.join(root, "sdk", "tsconfig.json"),
    "--outDir",
    path.join(pkg, "dist"),
  ]);
  const [packed] = JSON.parse((await npm(["pack", "--json", "--pack-destination", scratch], pkg)).stdout) as Array<{
    filename: string;
    integrity: string;
    files: Array<{ path: string }>;
  }>;
  const tarball = path.join(scratch, packed.filename);
  const manifest = JSON.parse(await readFile(path.join(pkg, "package.json"), "utf8")) as {
    name: string;
    version: string;
    dependencies: Record<string, string>;
  };

  // The integrator's package.json and a lockfile: the SDK from the tarball, its dependencies as the
  // repository's lockfile has them (keys under sdk/ are the workspace's own: they move under the package).
  const lock = JSON.parse(await readFile(path.join(root, "package-lock.json"), "utf8")) as { packages: Record<string, LockEntry> };
  const tarballSpec = `file:../${packed.filename}`;
  const packages: Record<string, LockEntry> = {
    "": { name: "sdk-consumer", dependencies: { [manifest.name]: tarballSpec } },
    [`node_modules/${manifest.name}`]: {
      version: manifest.version,
      resolved: tarballSpec,
      integrity: packed.integrity,
      dependencies: manifest.dependencies,
    },
  };
  for (const [key, entry] of closure(lock.packages, "sdk", Object.keys(manifest.dependencies))) {
    const { dev: _dev, devOptional: _devOptional, ...rest } = entry;
    // The repository's lockfile leaves out registry URLs (.npmrc); `npm ci` needs one to skip the registry's
    // package document: the registry's tarball URL, which the npm cache keys the tarball by too.
    const name = typeof entry.name === "string" ? entry.name : key.slice(key.lastIndexOf("node_modules/") + "node_modules/".length);
    rest.resolved ??= `https://registry.npmjs.org/${name}/-/${name.split("/").pop()}-${entry.version}.tgz`;
    packages[key.startsWith("sdk/") ? `node_modules/${manifest.name}/${key.slice(4)}` : key] = rest;
  }
  await writeFile(
    path.join(app, "package.json"),
    `${JSON.stringify({ name: "sdk-consumer", private: true, type: "module", dependencies: { [manifest.name]: tarballSpec } }, null, 2)}\n`,
  );
  await writeFile(
    path.join(app, "package-lock.json"),
    `${JSON.stringify({ name: "sdk-consumer", lockfileVersion: 3, requires: true, packages }, null, 2)}\n`,
  );
  const installArgs = ["ci", "--offline", "--no-audit", "--no-fund", "--ignore-scripts"];
  await npm(installArgs, app);
  return {
    scratch,
    tarball,
    size: (await stat(tarball)).size,
    files: packed.files.map((f) => f.path).sort(),
    app,
    installCommand: `npm ${installArgs.join(" ")}`,
    remove: () => rm(scratch, { recursive: true, force: true }),
  };
}
