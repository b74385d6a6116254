// relayer/src/db/client.ts on the embedded PGlite: the relayer opens it with the settings of PGLITE_OPTIONS
// (shared buffers of 32 MB, not PGlite's 128 MB: see the option's comment), whatever made the directory.
import assert from "node:assert/strict";
import { mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { after, describe, it } from "node:test";
import { openDatabase } from "../../relayer/src/db/client.ts";
import { createLogger } from "../../relayer/src/logger.ts";

describe("the relayer's PGlite settings", () => {
  const dirs: string[] = [];
  after(() => Promise.all(dirs.map((dir) => rm(dir, { recursive: true, force: true }))));

  it("opens a new directory with 32 MB of shared buffers, and again once it exists", async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), "relayer-pglite-"));
    dirs.push(dir);
    for (const open of ["new", "existing"]) {
      const database = await openDatabase({ kind: "pglite", directory: path.join(dir, "db") }, createLogger("error"));
      try {
        const rows = await database.rawTransaction((tx) => tx.query<{ shared_buffers: string }>("show shared_buffers"));
        assert.deepEqual(rows, [{ shared_buffers: "32MB" }], `${open} directory`);
      } finally {
        await database.close();
      }
    }
  });
});
