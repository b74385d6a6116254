// The relayer's SQL migrations and its drizzle schema describe the same tables, on PGlite and PostgreSQL;
// migrations apply once, also when several processes start at the same time.
import assert from "node:assert/strict";
import { after, describe, it } from "node:test";
import { getTableConfig, type PgTable } from "drizzle-orm/pg-core";
import { type Database, openDatabase } from "../../relayer/src/db/client.ts";
import { migrate } from "../../relayer/src/db/migrate.ts";
import * as schema from "../../relayer/src/db/schema.ts";
import { createLogger } from "../../relayer/src/logger.ts";
import { pgliteDatabase, postgresDatabase, selectedDatabaseKinds } from "../support/databases.ts";

const logger = createLogger("error");
const tables: PgTable[] = (Object.values(schema) as unknown[]).filter(
  (value): value is PgTable => typeof value === "object" && value !== null && Symbol.for("drizzle:IsDrizzleTable") in value,
);

type Column = { table_name: string; column_name: string; data_type: string; is_nullable: string };

async function columns(database: Database): Promise<Column[]> {
  return database.rawTransaction((tx) =>
    tx.query<Column>(
      `select table_name, column_name, data_type, is_nullable from information_schema.columns
       where table_schema = current_schema() order by table_name, column_name`,
    ),
  );
}

for (const kind of selectedDatabaseKinds()) {
  describe(`relayer migrations on ${kind}`, () => {
    const fresh = kind === "pglite" ? pgliteDatabase("migrations") : postgresDatabase("migrations");
    const options =
      fresh.database.kind === "pglite"
        ? fresh.database
        : { kind: "postgres" as const, url: fresh.database.url, schema: fresh.database.schema };
    const open: Database[] = [];
    after(async () => {
      for (const database of open) await database.close();
      await fresh.cleanup();
    });

    it("applies every migration once; a second run applies none", async () => {
      const database = await openDatabase(options, logger);
      open.push(database);
      const applied = await migrate(database);
      assert.ok(applied.length >= 1);
      assert.deepEqual([...applied].sort(), applied, "in name order");
      assert.deepEqual(await migrate(database), []);
    });

    it("creates exactly the tables and columns the drizzle schema declares, with the same nullability", async () => {
      const database = open[0];
      const actual = await columns(database);
      const actualTables = new Set(actual.map((c) => c.table_name).filter((t) => t !== "schema_migrations"));
      const declared = tables.map((t) => getTableConfig(t));
      assert.deepEqual([...actualTables].sort(), declared.map((t) => t.name).sort());
      for (const table of declared) {
        const inDb = actual.filter((c) => c.table_name === table.name);
        assert.deepEqual(
          inDb.map((c) => c.column_name).sort(),
          table.columns.map((c) => c.name).sort(),
          `columns of ${table.name}`,
        );
        for (const column of table.columns) {
          const found = inDb.find((c) => c.column_name === column.name);
          assert.equal(found?.is_nullable === "NO", column.notNull, `${table.name}.${column.name} nullability`);
          const type = column.getSQLType().replace(/\(.*\)/, "").replace("timestamp with time zone", "timestamptz");
          const dbType = (found?.data_type ?? "").replace("timestamp with time zone", "timestamptz").replace("character varying", "varchar");
          const same =
            type === dbType ||
            (type.endsWith("[]") && dbType === "ARRAY") ||
            (type === "bigserial" && dbType === "bigint") ||
            (type === "serial" && dbType === "integer");
          assert.ok(same, `${table.name}.${column.name}: drizzle ${type}, database ${dbType}`);
        }
      }
    });

    if (kind === "postgres") {
      it("lets several processes migrate the same fresh schema at once", async () => {
        const racing = postgresDatabase("migrace");
        const opts = { kind: "postgres" as const, url: racing.database.url, schema: (racing.database as { schema: string }).schema };
        const databases = await Promise.all([1, 2, 3].map(() => openDatabase(opts, logger)));
        try {
          const results = await Promise.all(databases.map((d) => migrate(d)));
          const total = results.reduce((n, r) => n + r.length, 0);
          assert.equal(total, results.find((r) => r.length > 0)?.length, "each migration applied by one process only");
          assert.equal(results.filter((r) => r.length > 0).length, 1);
        } finally {
          for (const d of databases) await d.close();
          await racing.cleanup();
        }
      });
    }
  });
}
