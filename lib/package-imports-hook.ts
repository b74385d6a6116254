// A module resolution hook for the relative imports inside installed packages, loaded with `--import` by the
// Node processes that load large ES module graphs from node_modules: the test files (scripts/test.ts), the
// indexer (lib/indexer.ts ponderNodeArgs) and the local chain (lib/chain.ts).
//
// Why: Node 22 resolves every `import "./x.js"` in a `.js` file by reading the package.json around it for its
// `type`, and in doing so parses that package.json's whole `exports` map again, each time (its
// package_json_reader builds the object with a spread that calls the lazy `exports` getter). drizzle-orm's
// package.json is 175 KB with 439 exports: importing `drizzle-orm/pg-core` (381 files) took 620-700 ms, of
// which about 90% was that parsing, and 50-56 ms with this hook (Node 22.23, 2-core AMD EPYC host,
// 2026-11-27); Node 24.21 was no faster.
//
// What it does: a relative specifier ending in .js, .mjs or .cjs, imported (not required) by a module inside
// a node_modules folder, resolves to the URL next to its importer, with the format the nearest package.json's
// `type` gives (read once per folder): what Node's own resolution gives for such a specifier, less its
// existence check (a missing file fails when it is loaded instead of when it is resolved). Every other
// specifier goes to Node's resolution.
import { readFileSync } from "node:fs";
import { registerHooks } from "node:module";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const RELATIVE_SCRIPT = /^\.\.?\/[^?#]*\.[cm]?js$/;

/** The `type` of the nearest package.json at or above `directory` ("module" or "commonjs"), by folder. (Also
 * indexer/vite-node-externals.ts's test of what Node loads as an ES module.) */
const typeByDirectory = new Map<string, "module" | "commonjs">();
export function packageType(directory: string): "module" | "commonjs" {
  const known = typeByDirectory.get(directory);
  if (known) return known;
  let type: "module" | "commonjs";
  let text: string | undefined;
  try {
    text = readFileSync(path.join(directory, "package.json"), "utf8");
  } catch {
    text = undefined;
  }
  if (text !== undefined) {
    type = (JSON.parse(text) as { type?: unknown }).type === "module" ? "module" : "commonjs";
  } else {
    const parent = path.dirname(directory);
    type = parent === directory ? "commonjs" : packageType(parent);
  }
  typeByDirectory.set(directory, type);
  return type;
}

/** The resolution of `specifier` imported by `parentURL`, or undefined for Node's own resolution. */
export function resolveInPackage(specifier: string, parentURL: string | undefined): { url: string; format: string } | undefined {
  if (parentURL === undefined || !parentURL.startsWith("file:") || !parentURL.includes("/node_modules/")) return undefined;
  if (!RELATIVE_SCRIPT.test(specifier)) return undefined;
  const url = new URL(specifier, parentURL);
  if (url.pathname.includes("%")) return undefined;
  const file = fileURLToPath(url);
  const format = file.endsWith(".mjs") ? "module" : file.endsWith(".cjs") ? "commonjs" : packageType(path.dirname(file));
  return { url: pathToFileURL(file).href, format };
}

registerHooks({
  resolve(specifier, context, nextResolve) {
    if (context.conditions.includes("import")) {
      const resolved = resolveInPackage(specifier, context.parentURL);
      if (resolved) return { ...resolved, shortCircuit: true };
    }
    return nextResolve(specifier, context);
  },
});
