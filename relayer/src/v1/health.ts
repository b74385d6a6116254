// GET /v1/health (liveness: the process answers) and GET /v1/health/ready (readiness: its dependencies
// answer too; health/readiness.ts).
import { createRoute } from "@hono/zod-openapi";
import { createReadiness } from "../health/readiness.ts";
import { createApi } from "../http/api.ts";
import type { Services } from "../services.ts";
import { Liveness, Readiness } from "./health.schemas.ts";

export function healthRoutes(services: Services, version: string) {
  const api = createApi();
  const readiness = createReadiness(services);

  api.openapi(
    createRoute({
      method: "get",
      path: "/health",
      operationId: "getHealth",
      tags: ["Operations"],
      summary: "Liveness of the service",
      responses: {
        200: { description: "Alive", content: { "application/json": { schema: Liveness } } },
      },
    }),
    (c) => c.json({ status: "ok" as const, version }, 200),
  );

  api.openapi(
    createRoute({
      method: "get",
      path: "/health/ready",
      operationId: "getReadiness",
      tags: ["Operations"],
      summary: "Readiness: the database, the chain's RPC, the indexer and the device cloud answer",
      description:
        "Checks each dependency with a 1 s time limit (together: the answer comes within about 1 s whatever a " +
        "dependency does): the database (`select 1`), the chain's JSON-RPC (eth_blockNumber), the indexer (its " +
        "latest indexed block and its lag behind the chain head) and the device cloud (reachable). 200 while no " +
        "check is `down` (status `ready`, or `degraded` when one is degraded, e.g. the indexer lags); 503 " +
        "`not_ready` when one is down. Answers are shared for up to 1 s. Use GET /health for liveness.",
      responses: {
        200: { description: "Ready (possibly degraded)", content: { "application/json": { schema: Readiness } } },
        503: { description: "Not ready: a dependency is down", content: { "application/json": { schema: Readiness } } },
      },
    }),
    async (c) => {
      const result = await readiness.check();
      c.header("cache-control", "no-store");
      return result.status === "not_ready" ? c.json(result, 503) : c.json(result, 200);
    },
  );
  return api;
}
