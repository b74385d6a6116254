// The relayer's migrations are generated from its drizzle schema: drizzle-kit finds nothing left to
// generate, and the migrations create exactly what the schema declares (columns with their types,
// nullability and defaults; primary keys; unique, check and foreign-key constraints; indexes with their
// columns, uniqueness and predicates; sequences), on PGlite and PostgreSQL. They apply once, also when
// several processes start at the same time.
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { cp, mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import { pathToFileURL } from "node:url";
import { promisify } from "node:util";
import { getTableName, is, SQL } from "drizzle-orm";
import { getTableConfig, IndexedColumn, isPgSequence, PgDialect, type PgColumn, type PgSequence, type PgTable } from "drizzle-orm/pg-core";
import { type Database, openDatabase, type RawTx } from "../../relayer/src/db/client.ts";
import {
  describeSchema,
  type SchemaDescription,
  schemaDifferences,
  type SequenceDescription,
  type TableDescription,
} from "../support/schema-introspection.ts";
import { MIGRATIONS_TABLE, migrate } from "../../relayer/src/db/migrate.ts";
import * as schema from "../../relayer/src/db/schema.ts";
import { createLogger } from "../../relayer/src/logger.ts";
import { createRelayerDatabase } from "../../lib/relayer.ts";
import { type DatabaseKind, PGLITE_TEMPLATES, pgliteDatabase, postgresDatabase, selectedDatabaseKinds } from "../support/databases.ts";

const root = path.resolve(import.meta.dirname, "../..");
const migrationsDir = path.join(root, "relayer/src/db/migrations");
const logger = createLogger("error");
const schemaExports = Object.values(schema) as unknown[];
const tables: PgTable[] = schemaExports.filter(
  (value): value is PgTable => typeof value === "object" && value !== null && Symbol.for("drizzle:IsDrizzleTable") in value,
);
const sequences: PgSequence[] = schemaExports.filter((value): value is PgSequence => isPgSequence(value));

describe("relayer migrations and drizzle-kit", () => {
  it("drizzle-kit generate finds no schema change the migrations lack", async () => {
    // On a copy of the migrations, so that a pending change is reported here and never written to the repo.
    const dir = await mkdtemp(path.join(os.tmpdir(), "relayer-drizzle-kit-"));
    try {
      const out = path.join(dir, "migrations");
      await cp(migrationsDir, out, { recursive: true });
      const config = path.join(dir, "drizzle.config.ts");
      const repoConfig = pathToFileURL(path.join(root, "drizzle.config.ts")).href;
      await writeFile(
        config,
        // drizzle-kit takes `out` relative to the working directory.
        `import config from ${JSON.stringify(repoConfig)};\nexport default { ...config, out: ${JSON.stringify(path.relative(root, out))} };\n`,
      );
      const bin = path.join(root, "node_modules/drizzle-kit/bin.cjs");
      const result = await promisify(execFile)(process.execPath, [bin, "generate", "--config", config], {
        cwd: root,
        timeout: 120_000,
        env: { ...process.env, NO_COLOR: "1" },
      }).catch((error: { stdout?: string; stderr?: string; message: string }) => {
        assert.fail(`drizzle-kit generate failed: ${error.message}\n${error.stdout ?? ""}\n${error.stderr ?? ""}`);
      });
      assert.match(result.stdout, /No schema changes, nothing to migrate/, `${result.stdout}\n${result.stderr}`);
      assert.deepEqual(await files(out), await files(migrationsDir), "generate wrote nothing");
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});

for (const kind of selectedDatabaseKinds()) {
  describe(`relayer migrations on ${kind}`, () => {
    const open: Database[] = [];
    const cleanups: Array<() => Promise<void>> = [];
    after(async () => {
      for (const database of open) await database.close();
      for (const cleanup of cleanups) await cleanup();
    });
    const fresh = (label: string) => freshDatabase(kind, label, open, cleanups);

    let database: Database;
    before(async () => {
      database = await fresh("migrations");
    });

    it("applies every migration once, in journal order; a second run applies none", async () => {
      const journal = JSON.parse(await readFile(path.join(migrationsDir, "meta/_journal.json"), "utf8")) as {
        entries: Array<{ tag: string }>;
      };
      assert.deepEqual(
        await migrate(database),
        journal.entries.map((e) => e.tag),
      );
      assert.deepEqual(await migrate(database), []);
    });

    it("creates exactly what the drizzle schema declares", async () => {
      await database.rawTransaction(async (tx) => {
        const [{ schema: name }] = await tx.query<{ schema: string }>("select current_schema() as schema");
        const actual = await describeSchema(tx, name, [MIGRATIONS_TABLE]);
        const expected = await declaredSchema(tx);
        assert.ok(expected.tables.length >= 20 && expected.tables.every((t) => t.columns.length > 0));
        assert.deepEqual(schemaDifferences(actual, expected), []);
        assert.deepEqual(actual, expected);
      });
    });

    it("names the schema's constraint in a unique violation (how ingest tells a duplicate reading id)", async () => {
      const reading = {
        deviceId: "dev_constraint",
        readingId: "r1",
        batchId: "b1",
        meterEpoch: 0,
        energyWhCumulative: 1,
        deviceTs: new Date(),
        deviceTsDriftMs: 0,
        receivedAt: new Date(),
      };
      await database.db.insert(schema.energyReadings).values({ ...reading, sequenceNumber: 1 });
      try {
        await assert.rejects(database.db.insert(schema.energyReadings).values({ ...reading, sequenceNumber: 2 }), (error) => {
          const e = error as { code?: string; constraint?: string; message: string };
          assert.equal(e.code, "23505");
          assert.ok(
            e.constraint === schema.ENERGY_READING_ID_CONSTRAINT || e.message.includes(schema.ENERGY_READING_ID_CONSTRAINT),
            `${e.constraint}: ${e.message}`,
          );
          return true;
        });
      } finally {
        await database.db.delete(schema.energyReadings);
      }
    });

    if (kind === "postgres") {
      it("lets several processes migrate the same fresh schema at once", async () => {
        const racing = postgresDatabase("migrace");
        cleanups.push(racing.cleanup);
        const opts = { kind: "postgres" as const, url: racing.database.url, schema: racing.database.schema };
        const databases = await Promise.all([1, 2, 3].map(() => openDatabase(opts, logger)));
        open.push(...databases);
        const results = await Promise.all(databases.map((d) => migrate(d)));
        const total = results.reduce((n, r) => n + r.length, 0);
        assert.equal(total, results.find((r) => r.length > 0)?.length, "each migration applied by one process only");
        assert.equal(results.filter((r) => r.length > 0).length, 1);
      });
    }
  });
}

async function freshDatabase(kind: DatabaseKind, label: string, open: Database[], cleanups: Array<() => Promise<void>>): Promise<Database> {
  if (kind === "pglite") {
    const fresh = pgliteDatabase(label);
    cleanups.push(fresh.cleanup);
    // A copy of the template of an empty PGlite database (lib/pglite.ts), as every stack makes: initdb is
    // several seconds of CPU, and nothing in it is the relayer's.
    await createRelayerDatabase(fresh.database.directory, PGLITE_TEMPLATES);
    const database = await openDatabase(fresh.database, logger);
    open.push(database);
    return database;
  }
  const fresh = postgresDatabase(label);
  cleanups.push(fresh.cleanup);
  const database = await openDatabase({ kind: "postgres", url: fresh.database.url, schema: fresh.database.schema }, logger);
  open.push(database);
  return database;
}

async function files(dir: string): Promise<string[]> {
  return (await readdir(dir, { recursive: true })).map(String).sort();
}

// ---- The schema as the drizzle definitions declare it, in the form describeSchema reads a database in.
// Expressions (defaults, check conditions, index predicates) are put to the database to be written the way
// it writes them back, each on the migrated table in a savepoint that is rolled back.

const dialect = new PgDialect();
const SERIAL_TYPES = new Map([
  ["bigserial", { type: "bigint", max: "9223372036854775807" }],
  ["serial", { type: "integer", max: "2147483647" }],
  ["smallserial", { type: "smallint", max: "32767" }],
]);

function render(value: SQL): string {
  const query = dialect.sqlToQuery(value);
  assert.deepEqual(query.params, [], `an expression of the schema has parameters: ${query.sql}`);
  return query.sql;
}

function literal(value: unknown): string {
  if (is(value, SQL)) return render(value);
  if (typeof value === "number" || typeof value === "bigint" || typeof value === "boolean") return String(value);
  const text = typeof value === "string" ? value : JSON.stringify(value);
  return `'${text.replaceAll("'", "''")}'`;
}

async function probe(tx: RawTx, statement: string, read: string, params: unknown[]): Promise<string | null> {
  await tx.exec("savepoint drift_probe");
  try {
    await tx.exec(statement);
    const [row] = await tx.query<{ e: string | null }>(read, params);
    return row?.e ?? null;
  } finally {
    await tx.exec("rollback to savepoint drift_probe");
    await tx.exec("release savepoint drift_probe");
  }
}

const quoted = (name: string) => `"${name.replaceAll('"', '""')}"`;

async function declaredSchema(tx: RawTx): Promise<SchemaDescription> {
  const described: TableDescription[] = [];
  const owned: SequenceDescription[] = [];
  for (const table of tables) {
    const config = getTableConfig(table);
    const t = config.name;
    const columns = [];
    for (const column of config.columns as PgColumn[]) {
      const sqlType = column.getSQLType();
      const serial = SERIAL_TYPES.get(sqlType);
      let value: string | null = null;
      if (serial) {
        value = `nextval('${t}_${column.name}_seq'::regclass)`;
        owned.push(sequence(`${t}_${column.name}_seq`, serial.type, { max: serial.max, ownedBy: `${t}.${column.name}` }));
      } else if (column.default !== undefined) {
        value = await probe(
          tx,
          `alter table ${quoted(t)} alter column ${quoted(column.name)} set default ${literal(column.default)}`,
          `select pg_get_expr(d.adbin, d.adrelid) as e from pg_attrdef d
           join pg_attribute a on a.attrelid = d.adrelid and a.attnum = d.adnum
           where d.adrelid = $1::regclass and a.attname = $2`,
          [quoted(t), column.name],
        );
      }
      columns.push({
        name: column.name,
        type: serial?.type ?? sqlType.replace(/, /g, ","),
        notNull: column.notNull,
        default: value,
      });
    }
    const primary = config.columns.filter((c) => c.primary);
    const primaryKey =
      primary.length > 0
        ? { name: `${t}_pkey`, columns: primary.map((c) => c.name) }
        : config.primaryKeys.length > 0
          ? { name: config.primaryKeys[0].getName(), columns: config.primaryKeys[0].columns.map((c) => c.name) }
          : null;
    const uniques = [
      ...config.columns.filter((c) => c.isUnique).map((c) => ({ name: c.uniqueName ?? "", columns: [c.name] })),
      ...config.uniqueConstraints.map((u) => ({ name: u.getName() ?? "", columns: u.columns.map((c) => c.name) })),
    ];
    const checks = [];
    for (const check of config.checks) {
      const expression = await probe(
        tx,
        `alter table ${quoted(t)} add constraint drift_probe check (${render(check.value)}) not valid`,
        "select pg_get_expr(conbin, conrelid) as e from pg_constraint where conrelid = $1::regclass and conname = 'drift_probe'",
        [quoted(t)],
      );
      checks.push({ name: check.name, expression: expression ?? "" });
    }
    const foreignKeys = config.foreignKeys.map((fk) => {
      const reference = fk.reference();
      return {
        name: fk.getName(),
        columns: reference.columns.map((c) => c.name),
        refTable: getTableName(reference.foreignTable),
        refColumns: reference.foreignColumns.map((c) => c.name),
        onDelete: fk.onDelete ?? "no action",
        onUpdate: fk.onUpdate ?? "no action",
      };
    });
    const indexes = [];
    for (const index of config.indexes) {
      // An expression column (e.g. split_part("type", '.', 1)) as the database writes it back.
      const columnNames: string[] = [];
      for (const c of index.config.columns) {
        if (is(c, IndexedColumn)) columnNames.push(c.name ?? "");
        else
          columnNames.push(
            (await probe(
              tx,
              `create index drift_probe on ${quoted(t)} ((${render(c as SQL)}))`,
              "select pg_get_indexdef('drift_probe'::regclass, 1, true) as e",
              [],
            )) ?? "",
          );
      }
      const where = index.config.where;
      const predicate = where
        ? await probe(
            tx,
            `create index drift_probe on ${quoted(t)} (${quoted(columnNames[0])}) where ${render(where)}`,
            "select pg_get_expr(indpred, indrelid) as e from pg_index where indexrelid = 'drift_probe'::regclass",
            [],
          )
        : null;
      indexes.push({
        name: index.config.name ?? "",
        columns: columnNames,
        unique: index.config.unique,
        method: index.config.method ?? "btree",
        predicate,
      });
    }
    const byName = <T extends { name: string }>(items: T[]) => items.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    described.push({
      name: t,
      columns: byName(columns),
      primaryKey,
      uniques: byName(uniques),
      checks: byName(checks),
      foreignKeys: byName(foreignKeys),
      indexes: byName(indexes),
    });
  }
  const declared = sequences.map((s) => {
    const o = s.seqOptions ?? {};
    const increment = String(o.increment ?? 1);
    const min = String(o.minValue ?? (Number(increment) > 0 ? 1 : "-9223372036854775808"));
    return sequence(s.seqName ?? "", "bigint", {
      start: String(o.startWith ?? min),
      increment,
      min,
      max: String(o.maxValue ?? "9223372036854775807"),
      cache: String(o.cache ?? 1),
      cycle: o.cycle ?? false,
    });
  });
  const byName = <T extends { name: string }>(items: T[]) => items.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  return { tables: byName(described), sequences: byName([...declared, ...owned]) };
}

function sequence(name: string, type: string, options: Partial<SequenceDescription>): SequenceDescription {
  return {
    name,
    type,
    start: "1",
    increment: "1",
    min: "1",
    max: "9223372036854775807",
    cache: "1",
    cycle: false,
    ownedBy: null,
    ...options,
  };
}
