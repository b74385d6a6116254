// The indexer's embedded database starts as a copy of a template (lib/indexer.ts createIndexerDatabase) that
// holds Ponder's sync store already migrated: on the copy, every migration Ponder would run at its start is
// recorded as applied, under the names and in the schema Ponder's own migrator looks for, so `ponder start`
// runs none of them. (Every indexer suite on PGlite then starts on such a copy and indexes into it.) The same
// for PostgreSQL: each test file's database is made from a template database with the sync store migrated
// (createIndexerPostgresTemplate, made by scripts/test.ts; test/support/databases.ts).
import assert from "node:assert/strict";
import { mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { after, describe, it } from "node:test";
import { repoRoot } from "../../ignition/deployment-records.ts";
import { createIndexerDatabase, createIndexerPostgresTemplate } from "../../lib/indexer.ts";
import { pgliteOf } from "../../lib/pglite.ts";
import { PGLITE_TEMPLATES, selectedDatabaseKinds, serverTestDatabaseUrl, withPostgres } from "../support/databases.ts";

const ponderPackage = path.join(repoRoot, "node_modules", "ponder");
const ponderModule = (file: string) => pathToFileURL(path.join(ponderPackage, "dist", "esm", file)).href;
const skip = selectedDatabaseKinds().includes("pglite") ? false : "TEST_DATABASES leaves PGlite out";

/** The names of the migrations of Ponder's sync store, as its migrator records them. */
async function ponderSyncMigrations(): Promise<string[]> {
  const { buildMigrationProvider } = (await import(ponderModule("sync-store/migrations.js"))) as {
    buildMigrationProvider(logger: unknown): { getMigrations(): Promise<Record<string, unknown>> };
  };
  const { createNoopLogger } = (await import(ponderModule("internal/logger.js"))) as { createNoopLogger(): unknown };
  return Object.keys(await buildMigrationProvider(createNoopLogger()).getMigrations()).sort();
}

describe(
  "the indexer's PostgreSQL template",
  { skip: selectedDatabaseKinds().includes("postgres") ? false : "TEST_DATABASES leaves PostgreSQL out" },
  () => {
    it("holds every migration of Ponder's sync store: a database made from it has them applied", async () => {
      const expected = await ponderSyncMigrations();
      assert.ok(expected.length > 20, `Ponder's sync store has its migrations (${expected.length})`);
      // Made by scripts/test.ts before this file started (made here when the file runs alone): existing, it is
      // kept. Copied as test/support/databases.ts copies it for each test file (nothing connects to the template
      // itself: a copy is refused while anyone is connected to it).
      const server = serverTestDatabaseUrl();
      const template = await createIndexerPostgresTemplate(server);
      const copy = `${new URL(server).pathname.slice(1)}_template_copy_${process.pid}`;
      await withPostgres(server, (client) => client.query(`CREATE DATABASE "${copy}" TEMPLATE "${template}"`));
      try {
        const url = new URL(server);
        url.pathname = `/${copy}`;
        const applied = await withPostgres(url.toString(), (client) =>
          client.query<{ name: string }>("select name from ponder_sync.kysely_migration order by name"),
        );
        assert.deepEqual(
          applied.rows.map((row) => row.name),
          expected,
        );
      } finally {
        await withPostgres(server, (client) => client.query(`DROP DATABASE IF EXISTS "${copy}" WITH (FORCE)`));
      }
    });
  },
);

describe("the indexer's PGlite database template", { skip }, () => {
  let dir: string | undefined;
  after(() => (dir ? rm(dir, { recursive: true, force: true }) : undefined));

  it("holds every migration of Ponder's sync store, applied as Ponder's migrator records them", async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), "indexer-template-"));
    const directory = path.join(dir, "indexer-db");
    await createIndexerDatabase(directory, PGLITE_TEMPLATES);

    const expected = await ponderSyncMigrations();
    assert.ok(expected.length > 20, `Ponder's sync store has its migrations (${expected.length})`);

    const { PGlite } = (await import(pathToFileURL(pgliteOf(path.join(ponderPackage, "package.json"))).href)) as {
      PGlite: new (dataDir: string) => { query<T>(sql: string): Promise<{ rows: T[] }>; close(): Promise<void> };
    };
    const db = new PGlite(directory);
    try {
      const applied = await db.query<{ name: string }>("select name from ponder_sync.kysely_migration order by name");
      assert.deepEqual(
        applied.rows.map((row) => row.name),
        expected,
      );
      const tables = await db.query<{ table_name: string }>(
        "select table_name from information_schema.tables where table_schema = 'ponder_sync' order by table_name",
      );
      for (const table of ["blocks", "logs", "transactions", "intervals", "kysely_migration_lock"]) {
        assert.ok(
          tables.rows.some((row) => row.table_name === table),
          `ponder_sync.${table} exists`,
        );
      }
    } finally {
      await db.close();
    }
  });
});
