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
// search path's schema (PGlite: public), and it adopts databases of the former migrations (below).
import { randomBytes } from "node:crypto";
import { readdir, readFile } from "node:fs/promises";
import path from "node:path";
import type { Database, RawTx } from "./client.ts";
import { describeSchema, schemaDifferences } from "./introspect.ts";

const migrationsDir = path.join(import.meta.dirname, "migrations");

export const MIGRATIONS_TABLE = "schema_migrations";

type Migration = { tag: string; statements: string[] };

// Until the schema was generated, its migrations were written by hand (0001..0004, applied in name order
// and recorded under their file names). The generated migrations create exactly the same tables, constraints,
// indexes and sequence (the schema keeps their names): 0000_baseline what 0001..0003 created, 0001_sessions
// what 0004 did. A database those migrations set up is taken over, not migrated again: its schema is compared
// with what the corresponding generated migrations create (applied to a scratch schema in the same
// transaction, then rolled back) and, when they are the same, the generated migrations are recorded as
// applied and the later ones follow as usual. When they differ the relayer refuses to start and says what
// differs, rather than guess: nothing is changed. Tests and `npm start` always begin with an empty database,
// where none of this happens.
const LEGACY_HISTORIES: Array<{ legacy: string[]; generated: string[] }> = [
  {
    legacy: ["0001_accounts_and_payments.sql", "0002_webhooks.sql", "0003_energy.sql"],
    generated: ["0000_baseline"],
  },
  {
    legacy: ["0001_accounts_and_payments.sql", "0002_webhooks.sql", "0003_energy.sql", "0004_sessions.sql"],
    generated: ["0000_baseline", "0001_sessions"],
  },
];
const LEGACY_NAMES = new Set(LEGACY_HISTORIES.flatMap((h) => h.legacy));

/** Applies the migrations not applied yet; returns their tags, in the order applied. */
export async function migrate(database: Database): Promise<string[]> {
  const migrations = await readMigrations();
  return database.rawTransaction(async (tx) => {
    await tx.query("select pg_advisory_xact_lock(hashtext('relayer-migrations'))");
    await tx.exec(`create table if not exists ${MIGRATIONS_TABLE} (name text primary key, applied_at timestamptz not null default now())`);
    const done = new Set((await tx.query<{ name: string }>(`select name from ${MIGRATIONS_TABLE}`)).map((r) => r.name));
    const legacy = [...done].filter((name) => LEGACY_NAMES.has(name)).sort();
    if (legacy.length > 0 && !migrations.some((m) => done.has(m.tag))) {
      for (const tag of await adoptLegacy(tx, legacy, migrations)) done.add(tag);
    }
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

/** Records the generated migrations equivalent to the `legacy` ones as applied, if the schema is what they
 * create; throws (changing nothing) otherwise. Returns the tags recorded. */
async function adoptLegacy(tx: RawTx, legacy: string[], migrations: Migration[]): Promise<string[]> {
  const [{ schema }] = await tx.query<{ schema: string }>("select current_schema() as schema");
  const refuse = (why: string, details: string[] = []) =>
    new Error(
      `The relayer's database (schema ${schema}) was set up by the relayer's former hand-written migrations ` +
        `(${MIGRATIONS_TABLE} lists ${legacy.join(", ")}), which the migrations generated from the drizzle schema ` +
        `replace. It can be taken over only when it is exactly what those migrations created, and ${why}. ` +
        `Nothing was changed. Make the schema match (or move the data to an empty schema: a new DATABASE_SCHEMA, ` +
        `or a new PGLITE_DIR) and start the relayer again.` +
        details.map((line) => `\n  ${line}`).join(""),
    );
  const history = LEGACY_HISTORIES.find((h) => h.legacy.length === legacy.length && h.legacy.every((n) => legacy.includes(n)));
  if (!history) throw refuse(`that is not a complete run of them (0001..0003 or 0001..0004)`);
  const generated = history.generated.map((tag) => migrations.find((m) => m.tag === tag));
  if (generated.some((m) => m === undefined)) throw refuse(`this relayer lacks ${history.generated.join(", ")}`);

  const actual = await describeSchema(tx, schema, [MIGRATIONS_TABLE]);
  const scratch = `relayer_adopt_${randomBytes(6).toString("hex")}`;
  await tx.exec("savepoint relayer_adopt");
  let expected;
  try {
    await tx.exec(`create schema "${scratch}"`);
    await tx.exec(`set local search_path to "${scratch}"`);
    for (const migration of generated as Migration[]) {
      for (const statement of migration.statements) await tx.exec(statement);
    }
    expected = await describeSchema(tx, scratch);
  } finally {
    // Also undoes the search path.
    await tx.exec("rollback to savepoint relayer_adopt");
    await tx.exec("release savepoint relayer_adopt");
  }
  const differences = schemaDifferences(actual, expected);
  if (differences.length > 0) {
    const shown = differences.slice(0, 20);
    if (differences.length > shown.length) shown.push(`(${differences.length - shown.length} more)`);
    throw refuse(`it differs from what ${history.generated.join(" and ")} create (below)`, shown);
  }
  for (const tag of history.generated) {
    await tx.query(`insert into ${MIGRATIONS_TABLE} (name) values ($1)`, [tag]);
  }
  return history.generated;
}
