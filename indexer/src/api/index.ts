// The indexer's HTTP API (Ponder's Hono app). Ponder itself serves /health, /ready, /status and /metrics;
// this adds SQL over HTTP for `@ponder/client` at /sql/* (read-only queries against ponder.schema.ts,
// used by indexer/client.ts). GraphQL is not mounted: its GraphiQL page needs a CDN.
import { db } from "ponder:api";
import schema from "ponder:schema";
import { Hono } from "hono";
import { client } from "ponder";

const app = new Hono();

app.use("/sql/*", client({ db, schema }));

export default app;
