// The indexer's HTTP API (Ponder's Hono app). Ponder itself serves /health, /ready, /status and /metrics;
// this adds SQL over HTTP for `@ponder/client` at /sql/*: read-only queries against ponder.schema.ts at
// /sql/db (results cached until a table they read changes) and live queries at /sql/live (Server-Sent Events
// pushing a query's new result after each indexed block that changes it), both used by indexer/client.ts.
// Every query is planned first and refused above a cost or a number of rows (sql-limits.ts:
// PONDER_SQL_MAX_COST, PONDER_SQL_MAX_ROWS). GraphQL is not mounted: its GraphiQL page needs a CDN.
// The API is meant for the relayer, on loopback or a private network (see the README's deployment notes).
import { db } from "ponder:api";
import schema from "ponder:schema";
import { Hono } from "hono";
import { client, sql } from "ponder";
import { readIndexerEnv } from "../../env.ts";
import { type ClientQuery, sqlLimits } from "./sql-limits.ts";

const app = new Hono();

/** EXPLAIN (FORMAT JSON) of the query's own text, its $n placeholders bound to its params. */
function explain(query: ClientQuery) {
  const chunks = [sql.raw("EXPLAIN (FORMAT JSON) ")];
  const parts = query.sql.split(/\$(\d+)/);
  for (let i = 0; i < parts.length; i++) {
    if (i % 2 === 0) chunks.push(sql.raw(parts[i]!));
    else chunks.push(sql`${query.params[Number(parts[i]) - 1] ?? null}`);
  }
  return db.execute(sql.join(chunks)).then((result) => result.rows as Array<Record<string, unknown>>);
}

app.use(
  "/sql/*",
  sqlLimits({
    limits: readIndexerEnv().sqlLimits,
    explain,
    onRefused: (message, text) => console.warn(`/sql: ${message}: ${text.slice(0, 500)}`),
  }),
);
app.use("/sql/*", client({ db, schema }));

export default app;
