// GET /v1/public/stats and GET /v1/impact: public, cached briefly, cheap to serve.
import { createRoute } from "@hono/zod-openapi";
import { createApi, assertNoQuery } from "../http/api.ts";
import { errorResponses } from "../http/errors.ts";
import { createStats } from "../payments/stats.ts";
import type { Services } from "../services.ts";
import { Impact, PublicStats } from "./stats.schemas.ts";

export function statsRoutes(services: Services) {
  const api = createApi();
  const stats = createStats(services);
  const cacheControl = `public, max-age=${Math.floor(services.config.STATS_CACHE_MS / 1000)}`;

  api.openapi(
    createRoute({
      method: "get",
      path: "/public/stats",
      operationId: "getPublicStats",
      tags: ["Public"],
      summary: "Network statistics",
      responses: {
        200: { description: "Statistics", content: { "application/json": { schema: PublicStats } } },
        ...errorResponses(422, 503),
      },
    }),
    async (c) => {
      assertNoQuery(c);
      c.header("cache-control", cacheControl);
      return c.json(await stats.publicStats(), 200);
    },
  );

  api.openapi(
    createRoute({
      method: "get",
      path: "/impact",
      operationId: "getImpact",
      tags: ["Public"],
      summary: "Impact: active devices, power sessions and a breakdown by region",
      responses: {
        200: { description: "Impact data", content: { "application/json": { schema: Impact } } },
        ...errorResponses(422, 503),
      },
    }),
    async (c) => {
      assertNoQuery(c);
      c.header("cache-control", cacheControl);
      return c.json(await stats.impact(), 200);
    },
  );
  return api;
}
