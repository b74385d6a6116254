// GET /v1/public/stats and GET /v1/impact: public, cached briefly, cheap to serve.
import { createRoute, z } from "@hono/zod-openapi";
import { createApi } from "../../http/api.ts";
import { errorResponses } from "../../http/errors.ts";
import type { Services } from "../../services.ts";
import { createStats } from "../stats.ts";

const PublicStats = z
  .object({
    energyKwh: z.number().openapi({ description: "Energy delivered in metered sessions, kWh" }),
    powerSessions: z.number().int().openapi({ description: "Sessions the devices were powered on for" }),
    co2AvoidedKg: z.number().openapi({ description: "energyKwh x CO2_KG_PER_KWH (0.8 kg/kWh by default)" }),
    onchainVolumeUsd: z.number().openapi({ description: "Sum of all payments indexed on-chain, USD" }),
    devices: z.object({
      total: z.number().int().openapi({ description: "Devices in the registry" }),
      online: z.number().int().openapi({ description: "Of those, online now according to the device cloud" }),
    }),
  })
  .openapi("PublicStats");

const Impact = z
  .object({
    activeDevices: z.number().int().openapi({ description: "Devices with a session in the last activeWindowDays" }),
    powerSessions: z.number().int(),
    energyKwh: z.number(),
    co2AvoidedKg: z.number(),
    co2KgPerKwh: z.number(),
    regions: z.array(
      z.object({
        region: z.string(),
        devices: z.number().int(),
        activeDevices: z.number().int(),
        powerSessions: z.number().int(),
        energyKwh: z.number(),
        co2AvoidedKg: z.number(),
        volumeUsd: z.number(),
      }),
    ),
    activeWindowDays: z.number().int(),
    updatedAt: z.string(),
  })
  .openapi("Impact");

const NoQuery = z.object({}).strict();

export function statsRoutes(services: Services) {
  const api = createApi();
  const stats = createStats(services);
  const cacheControl = `public, max-age=${Math.floor(services.config.STATS_CACHE_MS / 1000)}`;

  api.openapi(
    createRoute({
      method: "get",
      path: "/public/stats",
      tags: ["Public"],
      summary: "Network statistics",
      request: { query: NoQuery },
      responses: {
        200: { description: "Statistics", content: { "application/json": { schema: PublicStats } } },
        ...errorResponses(422, 503),
      },
    }),
    async (c) => {
      c.header("cache-control", cacheControl);
      return c.json(await stats.publicStats(), 200);
    },
  );

  api.openapi(
    createRoute({
      method: "get",
      path: "/impact",
      tags: ["Public"],
      summary: "Impact: active devices, power sessions and a breakdown by region",
      request: { query: NoQuery },
      responses: {
        200: { description: "Impact data", content: { "application/json": { schema: Impact } } },
        ...errorResponses(422, 503),
      },
    }),
    async (c) => {
      c.header("cache-control", cacheControl);
      return c.json(await stats.impact(), 200);
    },
  );
  return api;
}
