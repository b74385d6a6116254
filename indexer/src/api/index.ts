// The indexer's HTTP API (Ponder's Hono app). Ponder itself serves /health, /ready, /status and /metrics;
// this adds SQL over HTTP for `@ponder/client` at /sql/*: read-only queries against ponder.schema.ts at
// /sql/db (results cached until a table they read changes) and live queries at /sql/live (Server-Sent Events
// pushing a query's new result after each indexed block that changes it), both used by indexer/client.ts.
// GraphQL is not mounted: its GraphiQL page needs a CDN.
import { db } from "ponder:api";
import schema from "ponder:schema";
import { Hono } from "hono";
import { client } from "ponder";

const app = new Hono();

app.use("/sql/*", client({ db, schema }));

export default app;
