// relayer/src/db/client.ts on PostgreSQL: a connection that the database ends while a transaction holds it
// between two queries fails that transaction, and the process lives on with the pool usable. (Without a
// listener on checked-out clients, pg emits an 'error' nobody handles and the process ends.)
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";
import { sql } from "drizzle-orm";
import { selectedDatabaseKinds } from "../support/databases.ts";
import { relayerPostgres } from "../support/relayer-postgres.ts";

describe(
  "the relayer's PostgreSQL pool",
  { skip: !selectedDatabaseKinds().includes("postgres") && "TEST_DATABASES leaves PostgreSQL out" },
  () => {
    const postgres = relayerPostgres("dbconn");

    it("fails a transaction whose connection the database ended between two queries, and carries on", async () => {
      const marker = `held_by_test_${process.pid}`;
      let signalHeld!: () => void;
      let signalEnded!: () => void;
      const held = new Promise<void>((resolve) => (signalHeld = resolve));
      const ended = new Promise<void>((resolve) => (signalEnded = resolve));
      const transaction = postgres.database().db.transaction(async (tx) => {
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
      try {
        assert.equal(await postgres.terminateConnections(`%${marker}%`), 1, "the transaction's connection was found");
      } finally {
        signalEnded();
      }
      assert.match(await outcome, /^failed: /);
      // Still here, and the pool serves the next query on a new connection.
      const result = (await postgres.database().db.execute(sql`select 3 as n`)) as unknown as { rows: Array<{ n: number }> };
      assert.equal(Number(result.rows[0].n), 3);
    });
  },
);
