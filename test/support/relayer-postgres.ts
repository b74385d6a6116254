// A relayer database on PostgreSQL for tests of the database layer itself (relayer/src/db/client.ts): a fresh
// schema in this test process's database, opened before the suite's tests and closed and dropped after them,
// and a way to end the server side of chosen connections, as a database restart or a network cut would.
import { after, before } from "node:test";
import pg from "pg";
import { type Database, openDatabase } from "../../relayer/src/db/client.ts";
import { createLogger } from "../../relayer/src/logger.ts";
import { postgresDatabase } from "./databases.ts";

/** Call inside a describe(): registers its before/after hooks. */
export function relayerPostgres(label: string) {
  const variant = postgresDatabase(label);
  let database: Database | undefined;
  before(async () => {
    const { url, schema } = variant.database;
    database = await openDatabase({ kind: "postgres", url, schema }, createLogger("error"));
  });
  after(async () => {
    await database?.close();
    await variant.cleanup();
  });
  return {
    /** The open database (from the suite's first test on). */
    database(): Database {
      if (!database) throw new Error("the database opens before the suite's first test");
      return database;
    },
    /** Ends, from the server side, every other connection of this database whose current or last query is
     * like `queryPattern` (SQL LIKE); how many it ended. */
    async terminateConnections(queryPattern: string): Promise<number> {
      const admin = new pg.Client({ connectionString: variant.database.url });
      await admin.connect();
      try {
        const { rowCount } = await admin.query(
          "select pg_terminate_backend(pid) from pg_stat_activity where datname = current_database() and query like $1 and pid <> pg_backend_pid()",
          [queryPattern],
        );
        return rowCount ?? 0;
      } finally {
        await admin.end();
      }
    },
  };
}
