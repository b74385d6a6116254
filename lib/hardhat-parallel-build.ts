// A Hardhat plugin that compiles the contracts on every core. Hardhat merges every root file that shares a
// compiler configuration (the same object) into one compilation job, and runs its jobs on all cores but
// one: with one compiler configuration, as here, a build is one solc process on one core, and solc from
// npm (WebAssembly, so that nothing is downloaded) takes some 12 s for contracts/ on a 2-core machine.
//
// This plugin splits the root files into up to one group per core (os.availableParallelism()), gives every
// group but the first a compiler configuration of its own (a copy of the profile's one compiler: the same
// version and settings, so the same bytecode), and runs the jobs on every core. The cost of a root is the
// Solidity it compiles: the size of its file and of every file it imports, comments left out (a package's
// files at a fifth: mostly interfaces, libraries and abstract contracts); a group counts
// a file its roots share once (solc compiles every contract of a job's sources once), so roots that import
// the same contracts go together where that keeps the groups even (splitRoots). A build profile with more
// than one compiler or with overrides of the project's files is left as it is (an override of an npm file, such as
// Permit2's, is not). On a 2-core AMD EPYC host (two runs each,
// `hardhat build --force`), contracts/ and the Solidity tests built in 13.4-14.0 s instead of 17.6-17.9 s,
// contracts/ alone in 8.6-9.3 s instead of 11.2-11.7 s.
import { existsSync, readdirSync, readFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import type { HardhatPlugin } from "hardhat/types/plugins";

type Closure = Map<string, number>;

/** The Solidity files below `dir`, absolute paths, skipping node_modules. */
function solidityFiles(dir: string): string[] {
  let entries;
  try {
    entries = readdirSync(dir, { recursive: true, withFileTypes: true });
  } catch {
    return [];
  }
  return entries
    .filter((entry) => entry.isFile() && entry.name.endsWith(".sol") && !entry.parentPath.split(path.sep).includes("node_modules"))
    .map((entry) => path.join(entry.parentPath, entry.name))
    .sort();
}

const IMPORT = /^\s*import\s[^;]*?["']([^"']+)["']/gm;
const COMMENTS = /\/\*[\s\S]*?\*\/|\/\/[^\n]*/g;

/** A package's file counts for a fifth of its size: most of what contracts import from packages (OpenZeppelin
 * here) is interfaces, libraries and abstract contracts, which solc analyses but does not compile to bytecode
 * of their own. */
const PACKAGE_WEIGHT = 0.2;

/** Where an import of `file` points: relative to it, or a package under the project's node_modules. */
function resolveImport(file: string, spec: string, root: string): string {
  return spec.startsWith(".") ? path.resolve(path.dirname(file), spec) : path.join(root, "node_modules", spec);
}

/** Every file `file` compiles (itself and what it imports, transitively), each with its size less comments. */
function closureOf(file: string, root: string, sizes: Map<string, { size: number; imports: string[] }>): Closure {
  const closure: Closure = new Map();
  const pending = [file];
  while (pending.length > 0) {
    const next = pending.pop()!;
    if (closure.has(next)) continue;
    let entry = sizes.get(next);
    if (entry === undefined) {
      let text = "";
      try {
        text = readFileSync(next, "utf8");
      } catch {
        // A file that cannot be read counts for nothing; Hardhat reports the missing import itself.
      }
      entry = { size: text.replace(COMMENTS, "").length, imports: [...text.matchAll(IMPORT)].map((m) => resolveImport(next, m[1], root)) };
      sizes.set(next, entry);
    }
    closure.set(next, next.includes(`${path.sep}node_modules${path.sep}`) ? entry.size * PACKAGE_WEIGHT : entry.size);
    pending.push(...entry.imports);
  }
  return closure;
}

const weight = (files: Closure) => [...files.values()].reduce((sum, size) => sum + size, 0);

/** Splits `roots` (absolute paths) into at most `count` groups, the costliest root first. A group costs what
 * its roots compile together (a file two roots import is compiled once), and the build takes as long as its
 * costliest group while the cores share the work of all: each root goes where it lengthens the build least,
 * counting the work it adds (shared between the cores) as well: a root joins the group that already
 * compiles its imports unless that makes the group the build's long pole. */
export function splitRoots(roots: string[], count: number, root: string): string[][] {
  const sizes = new Map<string, { size: number; imports: string[] }>();
  const closures = roots.map((file) => ({ file, closure: closureOf(file, root, sizes) }));
  closures.sort((a, b) => weight(b.closure) - weight(a.closure) || (a.file < b.file ? -1 : 1));
  const cores = Math.max(1, Math.min(count, roots.length));
  const groups = Array.from({ length: cores }, () => ({ files: [] as string[], union: new Map() as Closure, cost: 0 }));
  for (const { file, closure } of closures) {
    const longest = Math.max(...groups.map((group) => group.cost));
    let best = groups[0];
    let bestScore = Number.POSITIVE_INFINITY;
    for (const group of groups) {
      let added = 0;
      for (const [dep, size] of closure) if (!group.union.has(dep)) added += size;
      const score = Math.max(longest, group.cost + added) - longest + added / cores;
      if (score < bestScore) {
        best = group;
        bestScore = score;
      }
    }
    best.files.push(file);
    for (const [dep, size] of closure) best.union.set(dep, size);
    best.cost = weight(best.union);
  }
  return groups.map((group) => group.files).filter((files) => files.length > 0);
}

const parallelBuild: HardhatPlugin = {
  id: "parallel-build",
  hookHandlers: {
    config: async () => ({
      default: async () => ({
        resolveUserConfig: async (userConfig, resolveConfigurationVariable, next) => {
          const config = await next(userConfig, resolveConfigurationVariable);
          const root = config.paths.root;
          const roots = [...config.paths.sources.solidity, config.paths.tests.solidity].flatMap(solidityFiles);
          const groups = splitRoots([...new Set(roots)], os.availableParallelism(), root);
          for (const profile of Object.values(config.solidity.profiles)) {
            // Overrides of npm files (Permit2's own compiler) leave the project's files to split.
            const projectOverrides = Object.keys(profile.overrides).filter((name) => existsSync(path.join(root, name)));
            if (profile.compilers.length !== 1 || projectOverrides.length > 0) continue;
            for (const group of groups.slice(1)) {
              // One object a group: Hardhat merges the roots whose configuration is the same object.
              const compiler = { ...profile.compilers[0] };
              for (const file of group) profile.overrides[path.relative(root, file).split(path.sep).join("/")] = compiler;
            }
          }
          return config;
        },
      }),
    }),
    solidity: async () => ({
      default: async () => ({
        build: async (context, rootFilePaths, options, next) =>
          next(context, rootFilePaths, { ...options, concurrency: options?.concurrency ?? os.availableParallelism() }),
      }),
    }),
  },
};

export default parallelBuild;
