// indexer/vite-node-externals.ts: the installed packages' ES modules that vite-node would run through Vite's
// transforms (its guess takes any `.js` under an `esm` folder for a module Node cannot load) go to Node's own
// import instead; everything else is decided by vite-node as before.
import assert from "node:assert/strict";
import path from "node:path";
import { describe, it } from "node:test";
import { ViteNodeServer, shouldExternalize } from "vite-node/server";
import { repoRoot } from "../../ignition/deployment-records.ts";
import { isInstalledEsModule } from "../../indexer/vite-node-externals.ts";

const installed = (file: string) => path.join(repoRoot, "node_modules", file);
const ponderEntry = installed("ponder/dist/esm/index.js");
const graphqlYoga = installed("graphql-yoga/esm/index.js");
const deps = { moduleDirectories: ["/node_modules/"] };

describe("vite-node's externals in the indexer", () => {
  it("vite-node alone transforms Ponder's own entry point and the GraphQL libraries it imports", async () => {
    // If a vite-node upgrade hands these to Node by itself, the preload has nothing left to do.
    assert.equal(await shouldExternalize(ponderEntry, deps, new Map()), false);
    assert.equal(await shouldExternalize(graphqlYoga, deps, new Map()), false);
  });

  it("takes an installed file for an ES module exactly when Node does: .mjs, or .js in a package of type module", () => {
    assert.equal(isInstalledEsModule(ponderEntry), true, "ponder: type module");
    assert.equal(isInstalledEsModule(graphqlYoga), true, "graphql-yoga: type module");
    assert.equal(isInstalledEsModule(installed("pg/lib/index.js")), false, "pg: CommonJS");
    assert.equal(isInstalledEsModule(installed("ponder/dist/esm/index.js?v=1")), false, "a query: vite-node decides");
    assert.equal(isInstalledEsModule(path.join(repoRoot, "indexer", "ponder.config.ts")), false, "the app's own file");
    assert.equal(isInstalledEsModule(path.join(repoRoot, "generated", "abis.ts")), false, "outside node_modules");
  });

  it("once preloaded, vite-node hands those files to Node and still transforms the app's own", async () => {
    const server = Object.create(ViteNodeServer.prototype) as ViteNodeServer;
    Object.assign(server, { options: { deps }, externalizeCache: new Map() });
    assert.equal(await server.shouldExternalize(ponderEntry), ponderEntry);
    assert.equal(await server.shouldExternalize(graphqlYoga), graphqlYoga);
    assert.equal(await server.shouldExternalize(path.join(repoRoot, "indexer", "ponder.config.ts")), false);
    assert.equal(await server.shouldExternalize(installed("pg/lib/index.js")), installed("pg/lib/index.js"), "vite-node's own decision");
  });
});
