// relayer/src/db/client.ts on PostgreSQL: a connection that the database ends while a transaction holds it
// between two queries fails that transaction, and the process lives on with the pool usable. (Without a
// listener on checked-out clients, pg emits an 'error' nobody handles and the process ends.)
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";
import { sql } from "drizzle-orm";
import pg from "pg";
import { type Database, openDatabase } from "../../relayer/src/db/client.ts";
import { createLogger } from "../../relayer/src/logger.ts";
import { postgresDatabase, selectedDatabaseKinds } from "../support/databases.ts";

describe("the relayer's PostgreSQL pool", { skip: !selectedDatabaseKinds().includes("postgres") && "TEST_DATABASES leaves PostgreSQL out" }, () => {
  const variant = postgresDatabase("dbconn");
  let database: Database;

  before(async () => {
    const { url, schema } = variant.database;
    database = await openDatabase({ kind: "postgres", url, schema }, createLogger("error"));
  });
  after(async () => {
    await database?.close();
    await variant.cleanup();
  });

  it("fails a transaction whose connection the database ended between two queries, and carries on", async () => {
    const marker = `held_by_test_${process.pid}`;
    let signalHeld!: () => void;
    let signalEnded!: () => void;
    const held = new Promise<void>((resolve) => (signalHeld = resolve));
    const ended = new Promise<void>((resolve) => (signalEnded = resolve));
    const transaction = database.db.transaction(async (tx) => {
      await tx.execute(sql.raw(`select 1 as ${marker}`));
      // Held, with no query in flight, while the database ends the connection.
      signalHeld();
      await ended;
      await sleep(200);
      await tx.execute(sql`select 2`);
    });
    const outcome = transaction.then(
      () => "committed",
      (error: Error) => `failed: ${error.message}`,
    );
    await held;
    const admin = new pg.Client({ connectionString: variant.database.url });
    await admin.connect();
    try {
      const { rowCount } = await admin.query(
        "select pg_terminate_backend(pid) from pg_stat_activity where datname = current_database() and query like $1 and pid <> pg_backend_pid()",
        [`%${marker}%`],
      );
      assert.equal(rowCount, 1, "the transaction's connection was found");
    } finally {
      await admin.end();
      signalEnded();
    }
    assert.match(await outcome, /^failed: /);
    // Still here, and the pool serves the next query on a new connection.
    const result = (await database.db.execute(sql`select 3 as n`)) as unknown as { rows: Array<{ n: number }> };
    assert.equal(Number(result.rows[0].n), 3);
  });
});
