// Preloaded into the indexer process beside event-loop-sampling.ts and esbuild-no-ping.ts (`node --import ...
// ponder.js ...`, as lib/indexer.ts starts it). Ponder builds the app (ponder.config.ts, the schema, the indexing
// functions and the API) with vite-node, which runs through Vite's transform pipeline (parse, SSR rewrite, source
// maps) every module it does not hand to Node's own import. It hands over the installed packages' modules, except
// those its guess takes for ES modules that Node could not load: a `.js` file under a folder named `esm` or
// `es`, or named `*.esm.js`, whatever the package says. Ponder's own package (`dist/esm/`) and the GraphQL
// libraries its entry point imports (`esm/` folders) are all such paths: some 420 files, transformed again on
// every start, for about 2.3 of the 6 CPU s an indexer took to be ready on PostgreSQL (2-core AMD EPYC host,
// 2026-11-28; the `vite-node:*` debug log lists them). Node loads each of them as it is: their packages say
// `"type": "module"`.
//
// This gives those files to Node's import: a module under node_modules that ends in `.mjs`, or in `.js` with
// `"type": "module"` in its nearest package.json, which is how Node itself decides that a file is an ES module.
// Everything else is decided by vite-node as before (the app's own files, Ponder's virtual modules, CommonJS).
// The app then runs on the same instance of the `ponder` package as Ponder's command line, as any Node program
// importing it would.
import path from "node:path";
import { ViteNodeServer } from "vite-node/server";
// Already loaded in the indexer process (lib/processes.ts PACKAGE_IMPORTS_HOOK): the same module, not a second hook.
import { packageType } from "../lib/package-imports-hook.ts";

/** Whether Node's own import loads `file` (a path vite-node resolved) as an ES module of an installed package. */
export function isInstalledEsModule(file: string): boolean {
  if (!file.includes("/node_modules/") || file.includes("?")) return false;
  if (file.endsWith(".mjs")) return true;
  return file.endsWith(".js") && packageType(path.dirname(file)) === "module";
}

const shouldExternalize = ViteNodeServer.prototype.shouldExternalize;
ViteNodeServer.prototype.shouldExternalize = async function (this: ViteNodeServer, id: string) {
  const decided = await shouldExternalize.call(this, id);
  return decided === false && isInstalledEsModule(id) ? id : decided;
};
