// The relayer's entry points (the server, the seed CLI) as single-file bundles, for the processes
// lib/relayer.ts starts (`npm start`, the tests, the benchmarks): the same code, loaded in a fraction of the
// time. From its sources, Node resolves, reads and compiles some 2,000 modules to start the relayer (its own
// TypeScript, viem, drizzle, Hono, zod, Ponder's client...): about 1.3 CPU s a start against 0.2-0.3 s for
// the bundle, and the test suite starts the relayer or the seed some 85 times. `npm run relayer` (the
// production entry point) runs the sources.
//
// esbuild bundles each entry with its dependencies into node_modules/.cache/relayer-bundle/<checkout>/<name>.mjs,
// with a source map beside it (positions only). The processes run without Node's --enable-source-maps, which
// holds the parsed map in memory (about 80 MB more resident for the relayer, and 0.1 s more to start): a stack
// trace names the functions and the bundle's lines; NODE_OPTIONS=--enable-source-maps maps them to the source
// files when a trace needs reading. Outside the bundle stay PGlite (it loads its WebAssembly and data files
// from beside its own module) and pg-native (optional, not installed). `import.meta.url` and
// `import.meta.dirname` keep the value they have in their own source file, so what a module finds beside
// itself (the migrations, the pages' assets, the merkle worker's file, the repository root) it finds as from
// the sources. A bundle is rebuilt when one of its inputs changed (the sizes and modification times of the
// repository's own files, of this file, and of npm's record of node_modules are kept beside it); it is
// written under a temporary name and renamed, so a process starting meanwhile never reads half a file.
import { createHash } from "node:crypto";
import { existsSync } from "node:fs";
import { mkdir, readFile, rename, rm, stat, writeFile } from "node:fs/promises";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { type Plugin, build } from "esbuild";
import { repoRoot } from "../ignition/deployment-records.ts";

export type RelayerEntry = "main" | "seed";

const ENTRIES: Record<RelayerEntry, string> = {
  main: path.join(repoRoot, "relayer", "src", "main.ts"),
  seed: path.join(repoRoot, "relayer", "src", "cli", "seed.ts"),
};

/** Where the bundles of the checkout at `root` are kept: one directory per checkout, since a copy of the
 * repository whose node_modules is a link to this one's (as bench/start-time.ts makes) bundles its own
 * sources; whoever removes such a copy removes its directory too. */
export function relayerBundleDir(root = repoRoot): string {
  const key = createHash("sha256").update(root).digest("hex").slice(0, 16);
  return path.join(root, "node_modules", ".cache", "relayer-bundle", key);
}

const RELAYER_BUNDLE_DIR = relayerBundleDir();
const IN_NODE_MODULES = `${path.sep}node_modules${path.sep}`;
/** npm's record of what is installed in node_modules, rewritten by every install that changes it. */
const INSTALL_RECORD = path.join(repoRoot, "node_modules", ".package-lock.json");

/** This file: how the bundles are built is one of their inputs. */
const SELF = fileURLToPath(import.meta.url);

/** Packages loaded from node_modules at run time instead of bundled. */
const EXTERNAL = ["@electric-sql/pglite", "pg-native"];

/** Each input file with its size and modification time when the bundle was built. */
type Manifest = { inputs: Record<string, [size: number, mtimeMs: number]> };

/** `import.meta.url` and `import.meta.dirname` as in the file itself (see the top of this file). */
const importMetaOfSource: Plugin = {
  name: "import-meta-of-source",
  setup(b) {
    b.onLoad({ filter: /\.(?:ts|mts|js|mjs)$/ }, async (args) => {
      const source = await readFile(args.path, "utf8");
      if (!source.includes("import.meta.url") && !source.includes("import.meta.dirname")) return undefined;
      return {
        contents: source
          .replaceAll("import.meta.dirname", JSON.stringify(path.dirname(args.path)))
          .replaceAll("import.meta.url", JSON.stringify(pathToFileURL(args.path).href)),
        loader: /\.m?ts$/.test(args.path) ? "ts" : "js",
        resolveDir: path.dirname(args.path),
      };
    });
  },
};

async function isFresh(bundle: string, manifestFile: string): Promise<boolean> {
  try {
    await stat(bundle);
    const manifest = JSON.parse(await readFile(manifestFile, "utf8")) as Manifest;
    // A record without this file is from a version that did not keep it.
    if (!Object.hasOwn(manifest.inputs, SELF)) return false;
    const inputs = Object.entries(manifest.inputs);
    for (const [file, [size, mtimeMs]] of inputs) {
      const now = await stat(file);
      if (now.size !== size || now.mtimeMs !== mtimeMs) return false;
    }
    return true;
  } catch {
    return false;
  }
}

async function bundle(entry: RelayerEntry, out: string, manifestFile: string): Promise<void> {
  // Built in a directory of this process's own, then moved into place.
  const work = path.join(RELAYER_BUNDLE_DIR, `.build-${process.pid}`);
  await mkdir(work, { recursive: true });
  try {
    const built = path.join(work, path.basename(out));
    const started = Date.now();
    const result = await build({
      entryPoints: [ENTRIES[entry]],
      absWorkingDir: repoRoot,
      outfile: built,
      bundle: true,
      platform: "node",
      format: "esm",
      target: "node22",
      // The source files are at hand: the map needs only the positions (a quarter of its size).
      sourcemap: "linked",
      sourcesContent: false,
      external: EXTERNAL,
      metafile: true,
      logLevel: "silent",
      plugins: [importMetaOfSource],
      // Bundled CommonJS packages require Node's built-in modules.
      banner: { js: 'import { createRequire as __createRequire } from "node:module"; const require = __createRequire(import.meta.url);' },
    });
    // This file (how the bundle is built), the repository's own inputs one by one, and the packages' (some
    // 2,000 files) through the record npm rewrites whenever it changes node_modules.
    const files = new Set<string>([SELF]);
    for (const input of Object.keys(result.metafile.inputs)) {
      const file = path.resolve(repoRoot, input);
      files.add(file.includes(IN_NODE_MODULES) && existsSync(INSTALL_RECORD) ? INSTALL_RECORD : file);
    }
    const inputs: Manifest["inputs"] = {};
    let changedMeanwhile = false;
    for (const file of files) {
      const s = await stat(file);
      inputs[file] = [s.size, s.mtimeMs];
      if (s.mtimeMs >= started - 50) changedMeanwhile = true;
    }
    const record = path.join(work, path.basename(manifestFile));
    await writeFile(record, JSON.stringify({ inputs } satisfies Manifest));
    // The map first, then the bundle that names it, then the record that says both are current, unless an
    // input changed while it was built (the bundle may hold the earlier text: the next start builds again).
    await rename(`${built}.map`, `${out}.map`);
    await rename(built, out);
    if (changedMeanwhile) await rm(manifestFile, { force: true });
    else await rename(record, manifestFile);
  } finally {
    await rm(work, { recursive: true, force: true });
  }
}

/** The bundle of `entry`, built first if it is missing or one of its inputs changed. */
export async function relayerBundle(entry: RelayerEntry): Promise<string> {
  const out = path.join(RELAYER_BUNDLE_DIR, `${entry}.mjs`);
  const manifestFile = path.join(RELAYER_BUNDLE_DIR, `${entry}.inputs.json`);
  if (!(await isFresh(out, manifestFile))) await bundle(entry, out, manifestFile);
  return out;
}

/** Node's arguments to run `entry` from its bundle. */
export async function relayerNodeArgs(entry: RelayerEntry): Promise<string[]> {
  return [await relayerBundle(entry)];
}

if (import.meta.main) {
  // `node lib/relayer-bundle.ts`: bring both bundles up to date (npm test does, before its suites start).
  for (const entry of Object.keys(ENTRIES) as RelayerEntry[]) await relayerBundle(entry);
}
