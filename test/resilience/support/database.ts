// The relayer's database as the resilience suite checks it: a fingerprint of every table (row count and a
// hash of the rows), to show that refused requests wrote nothing. On PostgreSQL it is read directly; the
// embedded PGlite allows one process at a time, so the relayer is stopped while its directory is read.
//
// Background workers write on their own schedule, whatever the requests: the device-status poller stores a
// device's first status row when it first sees the device (a tenant seeded a moment before: that row once
// landed between the two fingerprints and failed the check), the payment sync moves its cursor, leases are
// renewed, jobs and webhook deliveries run. The fingerprints that bracket the refused requests are therefore
// taken with the relayer running WITHOUT its workers (WORKERS=false), restarted for it: then every row that
// differs was written by a request, in every table and every column (a refused request that wrote a
// device_status or sync_state row is caught). Excluding the tables or columns the workers touch, or waiting
// for them to settle, would either hide such writes or still race with the next poll.
import { PGlite } from "@electric-sql/pglite";
import { PGLITE_OPTIONS } from "../../../relayer/src/db/client.ts";
import { testDatabaseUrl, withPostgres } from "../../support/databases.ts";
import type { Stack } from "../../support/stack.ts";

/** Columns that a request may update although it is refused: an API key's last use, recorded (at most once
 * a minute) when a valid key authenticates a request that validation then refuses. They are left out of the
 * fingerprint; their rows still count. (No worker runs between the fingerprints: see above.) */
export const VOLATILE_COLUMNS: Record<string, string[]> = {
  api_keys: ["last_used_at"],
};

export type Fingerprint = Record<string, { rows: number; hash: string }>;

type Query = <Row extends Record<string, unknown>>(sql: string) => Promise<Row[]>;

async function fingerprintWith(query: Query, schema: string): Promise<Fingerprint> {
  const tables = await query<{ table_name: string }>(
    `select table_name from information_schema.tables
     where table_schema = '${schema}' and table_type = 'BASE TABLE' order by table_name`,
  );
  const out: Fingerprint = {};
  for (const { table_name: table } of tables) {
    const without = (VOLATILE_COLUMNS[table] ?? []).map((column) => ` - '${column}'`).join("");
    const [row] = await query<{ n: number; h: string }>(
      `select count(*)::int as n, coalesce(md5(string_agg(r, E'\\n' order by r)), '') as h
       from (select (to_jsonb(t)${without})::text as r from "${schema}"."${table}" t) s`,
    );
    out[table] = { rows: Number(row.n), hash: String(row.h) };
  }
  return out;
}

/** The fingerprint of the relayer's database, and the relayer restarted so that it runs with its background
 * workers (`workers: true`) or without them (`false`) from then on. Without workers the fingerprint is taken
 * once they have stopped; with workers, before they start again. (On PGlite the directory is read while the
 * relayer is stopped.) */
export async function relayerFingerprint(stack: Stack, opts: { workers: boolean }): Promise<Fingerprint> {
  const db = stack.relayerOptions.database;
  const env = opts.workers ? {} : { WORKERS: "false" };
  if (db.kind === "postgres") {
    const read = () =>
      withPostgres(testDatabaseUrl(), (client) =>
        fingerprintWith(async <Row extends Record<string, unknown>>(sql: string) => (await client.query<Row>(sql)).rows, db.schema),
      );
    if (!opts.workers) await stack.restartRelayer({ env });
    const result = await read();
    if (opts.workers) await stack.restartRelayer({ env });
    return result;
  }
  let result: Fingerprint | undefined;
  await stack.restartRelayer({
    env,
    whileStopped: async () => {
      const pglite = await PGlite.create(db.directory, PGLITE_OPTIONS);
      try {
        result = await fingerprintWith(
          async <Row extends Record<string, unknown>>(sql: string) => (await pglite.query<Row>(sql)).rows,
          "public",
        );
      } finally {
        await pglite.close();
      }
    },
  });
  return result!;
}

/** The tables whose rows differ between two fingerprints, with their row counts. */
export function changedTables(before: Fingerprint, after: Fingerprint): string[] {
  const names = new Set([...Object.keys(before), ...Object.keys(after)]);
  return [...names]
    .filter((name) => before[name]?.hash !== after[name]?.hash || before[name]?.rows !== after[name]?.rows)
    .map((name) => `${name} (${before[name]?.rows ?? "absent"} -> ${after[name]?.rows ?? "absent"} rows)`);
}

/** Rows of a query on the relayer's PostgreSQL schema (PostgreSQL only). */
export async function relayerRows<T = Record<string, unknown>>(stack: Stack, sql: string, params: unknown[] = []): Promise<T[]> {
  const db = stack.relayerOptions.database;
  if (db.kind !== "postgres") throw new Error("relayerRows needs PostgreSQL");
  // Straight to the server, not through the stack's database proxy (which a test may have cut).
  return withPostgres(testDatabaseUrl(), async (client) => {
    await client.query(`set search_path to "${db.schema}"`);
    return (await client.query(sql, params)).rows as T[];
  });
}
