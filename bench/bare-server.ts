// The bare Hono route the HTTP throughput benchmark compares the relayer's routes with: @hono/node-server
// serving GET /bare (a fixed JSON body, BARE_BODY) and nothing else, on 127.0.0.1. Prints {"port"} once
// listening. Started by bench/http-throughput.ts as a child process.
import { serve } from "@hono/node-server";
import { Hono } from "hono";

const body = JSON.parse(process.env.BARE_BODY ?? '{"ok":true}') as Record<string, unknown>;
const app = new Hono();
app.get("/bare", (c) => c.json(body));
const server = serve({ fetch: app.fetch, hostname: "127.0.0.1", port: 0 }, (info) => {
  console.log(JSON.stringify({ port: info.port }));
});
const stop = () => server.close(() => process.exit(0));
process.on("SIGTERM", stop);
process.on("SIGINT", stop);
