// The databases end-to-end suites run against: the embedded PGlite (a fresh directory) and PostgreSQL (a
// fresh schema, and a views schema, in this test process's own database). Each variant is created fresh and
// cleaned up.
//
// Each test process (each test file) gets a PostgreSQL database of its own, `<test database>_p<pid>`, created
// when this module loads and dropped when the process ends: Ponder keeps the RPC data it fetched in the
// schema `ponder_sync`, one per database and shared by every indexer in it, and an indexer starting on a
// local chain clears that chain id's rows there (lib/indexer.ts resetLocalChainSyncData). Two test files
// running at the same time in one database would clear each other's. scripts/test.ts drops databases left
// behind by test processes that were killed.
//
//   for (const variant of testDatabases("rails")) {
//     describe(`... (${variant.name})`, () => {
//       after(() => variant.cleanup());
//       ... startIndexer({ ..., database: variant.database }) ...
//     });
//   }
//
// Environment: TEST_DATABASE_URL (default postgresql://postgres@127.0.0.1:5432/test); TEST_DATABASES, a
// comma-separated subset of "pglite,postgres" (default both).
import { spawnSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtempSync } from "node:fs";
import { rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import pg from "pg";
import type { IndexerDatabase } from "../../lib/indexer.ts";

export const DEFAULT_TEST_DATABASE_URL = "postgresql://postgres@127.0.0.1:5432/test";

export type DatabaseKind = IndexerDatabase["kind"];

export type PgliteTestDatabase = Extract<IndexerDatabase, { kind: "pglite" }>;
export type PostgresTestDatabase = Extract<IndexerDatabase, { kind: "postgres" }> & { viewsSchema: string };

export type TestDatabase<D extends IndexerDatabase = IndexerDatabase> = {
  /** "pglite" or "postgres", for test names. */
  name: D["kind"];
  /** What to pass to startIndexer (or to any service taking a PGlite directory or a PostgreSQL schema). */
  database: D;
  /** Removes the directory, or drops the schemas. Safe to call more than once. */
  cleanup(): Promise<void>;
};

/** The kinds selected by TEST_DATABASES (default both). */
export function selectedDatabaseKinds(env: NodeJS.ProcessEnv = process.env): DatabaseKind[] {
  const raw = env.TEST_DATABASES?.trim();
  if (!raw) return ["pglite", "postgres"];
  const kinds = raw.split(",").map((kind) => kind.trim());
  for (const kind of kinds) {
    if (kind !== "pglite" && kind !== "postgres") {
      throw new Error(`TEST_DATABASES: unknown database "${kind}" (use pglite and/or postgres)`);
    }
  }
  return kinds as DatabaseKind[];
}

/** The one database kind of a suite whose subject does not depend on the database (the HTTP interface, the
 * transaction sender, metrics, recovery from faults of the chain, the indexer or a process): PostgreSQL, the
 * production database, when TEST_DATABASES selects it, else the embedded PGlite. Suites where the database
 * is the subject (migrations, the worker's leases and wake-ups, telemetry ingest, the indexer's tables, the
 * entry points, `npm start` on PGlite) run on every selected kind through selectedDatabaseKinds. */
export function oneDatabaseKind(env: NodeJS.ProcessEnv = process.env): DatabaseKind {
  const kinds = selectedDatabaseKinds(env);
  return kinds.includes("postgres") ? "postgres" : kinds[0];
}

export { PGLITE_TEMPLATES } from "./pglite-templates.ts";

/** A fresh PGlite directory under the system's temp directory (empty: whoever opens it first creates the
 * database, or a copy of a template goes there first). */
export function pgliteDatabase(label = "test"): TestDatabase<PgliteTestDatabase> {
  const directory = mkdtempSync(path.join(os.tmpdir(), `pglite-${sanitize(label)}-`));
  return {
    name: "pglite",
    database: { kind: "pglite", directory },
    cleanup: () => rm(directory, { recursive: true, force: true }),
  };
}

/** A fresh PostgreSQL schema (and views schema) name in the test database; created by whoever uses it
 * (Ponder creates its schemas itself). */
export function postgresDatabase(label = "test", url = testDatabaseUrl()): TestDatabase<PostgresTestDatabase> {
  // Ponder allows 45 characters; keep room for the "_views" suffix.
  const schema = `t_${sanitize(label).slice(0, 16)}_${process.pid}_${randomBytes(3).toString("hex")}`;
  const viewsSchema = `${schema}_views`;
  return {
    name: "postgres",
    database: { kind: "postgres", url, schema, viewsSchema },
    cleanup: () => dropSchemas(url, [schema, viewsSchema]),
  };
}

/** One fresh database of each selected kind, labelled `label` (used in directory and schema names); with
 * `kinds`, of those kinds only (e.g. `[oneDatabaseKind()]`). */
export function testDatabases(label = "test", kinds: DatabaseKind[] = selectedDatabaseKinds()): TestDatabase[] {
  return kinds.map((kind): TestDatabase => (kind === "pglite" ? pgliteDatabase(label) : postgresDatabase(label)));
}

/** The PostgreSQL database the test run was given (TEST_DATABASE_URL): where the per-process databases are
 * created from, never used by a suite itself. */
export function serverTestDatabaseUrl(env: NodeJS.ProcessEnv = process.env): string {
  return env.TEST_DATABASE_URL?.trim() || DEFAULT_TEST_DATABASE_URL;
}

/** The prefix of the per-process databases' names: `<test database>_p`. */
export function processDatabasePrefix(serverUrl = serverTestDatabaseUrl()): string {
  return `${new URL(serverUrl).pathname.slice(1) || "test"}_p`;
}

/** The URL of database `name` on the test server. */
function databaseUrl(serverUrl: string, name: string): string {
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  return url.toString();
}

const quoteIdent = (name: string) => `"${name.replaceAll('"', '""')}"`;

/** This process's database (see the top of this file), created at first need. */
let processDatabase: string | undefined;

/** The PostgreSQL database of this test process: schemas of every PostgreSQL variant live there. */
export function testDatabaseUrl(): string {
  if (!processDatabase) throw new Error("no PostgreSQL test database: TEST_DATABASES leaves postgres out");
  return processDatabase;
}

if (selectedDatabaseKinds().includes("postgres")) {
  const server = serverTestDatabaseUrl();
  const name = `${processDatabasePrefix(server)}${process.pid}`;
  const drop = `DROP DATABASE IF EXISTS ${quoteIdent(name)} WITH (FORCE)`;
  await withPostgres(server, async (client) => {
    await client.query(drop);
    await client.query(`CREATE DATABASE ${quoteIdent(name)}`);
  });
  processDatabase = databaseUrl(server, name);
  // Dropped once the process has nothing left to do (beforeExit: the event loop is empty, and may run again).
  let dropped = false;
  let dropping = false;
  process.on("beforeExit", () => {
    if (dropping) return;
    dropping = true;
    withPostgres(server, (client) => client.query(drop)).then(
      () => (dropped = true),
      () => undefined,
    );
  });
  // A process ended by process.exit() (or whose drop above failed) gets no beforeExit: an exit handler cannot
  // wait for a promise, so the drop runs in a child process, synchronously.
  process.once("exit", () => {
    if (dropped) return;
    spawnSync(
      process.execPath,
      [
        "--input-type=module",
        "-e",
        `import pg from "pg"; const c = new pg.Client({ connectionString: process.argv[1] }); await c.connect(); await c.query(process.argv[2]); await c.end();`,
        server,
        drop,
      ],
      { cwd: path.resolve(import.meta.dirname, "..", ".."), stdio: "ignore", timeout: 10_000 },
    );
  });
}

/** Runs `fn` with a PostgreSQL client of `url`. */
export async function withPostgres<T>(url: string, fn: (client: pg.Client) => Promise<T>): Promise<T> {
  // A generous bound: on a slow machine, six test files start at once and load their module graphs, and a process
  // whose event loop is busy that long sees a short connect timer fire before it reads the server's answer.
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 30_000 });
  try {
    await client.connect();
  } catch (error) {
    throw new Error(`cannot connect to the test PostgreSQL at ${url}: ${(error as Error).message}`);
  }
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}

/** Drops the schemas (and everything in them) if they exist. */
export async function dropSchemas(url: string, schemas: string[]): Promise<void> {
  await withPostgres(url, async (client) => {
    for (const schema of schemas) await client.query(`DROP SCHEMA IF EXISTS "${schema.replaceAll('"', '""')}" CASCADE`);
  });
}

function sanitize(label: string): string {
  return (
    label
      .toLowerCase()
      .replace(/[^a-z0-9]+/g, "_")
      .replace(/^_+|_+$/g, "") || "test"
  );
}
