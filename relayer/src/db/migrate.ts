// Applies the migrations drizzle-kit generates from the schema (db/migrations/, see drizzle.config.ts): in
// the order of meta/_journal.json, each SQL file statement by statement (split at drizzle-kit's
// `--> statement-breakpoint`), each migration once, recorded by its tag in schema_migrations. All in one
// transaction, under an advisory lock that makes concurrent relayer processes wait for one another instead
// of racing.
//
// drizzle's own migrator (drizzle-orm/pglite/migrator, drizzle-orm/node-postgres/migrator) is not used:
// drizzle-kit qualifies the targets of foreign keys and the names of sequences with "public" (the schema of
// a pgTable), while on PostgreSQL the relayer's tables live in DATABASE_SCHEMA (`relayer` by default), the
// connection's search_path (db/client.ts). This runner drops that qualifier, so everything is created in the
// search path's schema (PGlite: public).
import { readdir, readFile } from "node:fs/promises";
import path from "node:path";
import type { Database, RawTx } from "./client.ts";

const migrationsDir = path.join(import.meta.dirname, "migrations");

export const MIGRATIONS_TABLE = "schema_migrations";

type Migration = { tag: string; statements: string[] };

/** Applies the migrations not applied yet; returns their tags, in the order applied. */
export async function migrate(database: Database): Promise<string[]> {
  const migrations = await readMigrations();
  return database.rawTransaction(async (tx) => {
    await tx.query("select pg_advisory_xact_lock(hashtext('relayer-migrations'))");
    await tx.exec(`create table if not exists ${MIGRATIONS_TABLE} (name text primary key, applied_at timestamptz not null default now())`);
    const done = new Set((await tx.query<{ name: string }>(`select name from ${MIGRATIONS_TABLE}`)).map((r) => r.name));
    const applied: string[] = [];
    for (const migration of migrations) {
      if (done.has(migration.tag)) continue;
      await apply(tx, migration);
      applied.push(migration.tag);
    }
    return applied;
  });
}

/** The migrations of db/migrations/ in journal order. */
export async function readMigrations(directory = migrationsDir): Promise<Migration[]> {
  const journal = JSON.parse(await readFile(path.join(directory, "meta", "_journal.json"), "utf8")) as {
    dialect: string;
    entries: Array<{ idx: number; tag: string; breakpoints: boolean }>;
  };
  if (journal.dialect !== "postgresql") throw new Error(`migrations: the journal is for ${journal.dialect}, not postgresql`);
  const entries = [...journal.entries].sort((a, b) => a.idx - b.idx);
  // A SQL file the journal does not list would never be applied: refuse it rather than skip it silently.
  const listed = new Set(entries.map((e) => `${e.tag}.sql`));
  const stray = (await readdir(directory)).filter((f) => f.endsWith(".sql") && !listed.has(f));
  if (stray.length > 0) {
    throw new Error(`migrations: ${stray.join(", ")} not in meta/_journal.json; migrations are generated with \`npm run db:generate\``);
  }
  const migrations: Migration[] = [];
  for (const entry of entries) {
    const text = await readFile(path.join(directory, `${entry.tag}.sql`), "utf8");
    const parts = entry.breakpoints ? text.split("--> statement-breakpoint") : [text];
    migrations.push({ tag: entry.tag, statements: parts.map(unqualified).filter((s) => s.length > 0) });
  }
  return migrations;
}

/** The statement without drizzle-kit's "public". qualifiers: its objects are those of the search path. */
function unqualified(statement: string): string {
  return statement.replace(/"public"\.(?=")/g, "").trim();
}

async function apply(tx: RawTx, migration: Migration): Promise<void> {
  for (const statement of migration.statements) {
    try {
      await tx.exec(statement);
    } catch (error) {
      throw new Error(`migration ${migration.tag} failed: ${(error as Error).message}\n${statement}`, { cause: error });
    }
  }
  await tx.query(`insert into ${MIGRATIONS_TABLE} (name) values ($1)`, [migration.tag]);
}
