// Schemas of the public statistics routes (/v1/public/stats, /v1/impact).
import { z } from "@hono/zod-openapi";
import { IMPACT_EXAMPLE, PUBLIC_STATS_EXAMPLE } from "./examples.ts";

export const PublicStats = z
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
  .openapi("PublicStats", { example: PUBLIC_STATS_EXAMPLE });

export const Impact = z
  .object({
    activeDevices: z.number().int().openapi({ description: "Devices with a session in the last activeWindowDays" }),
    powerSessions: z.number().int(),
    energyKwh: z.number(),
    co2AvoidedKg: z.number(),
    co2KgPerKwh: z.number(),
    regions: z.array(
      z.object({
        region: z.string(),
        totalDevices: z.number().int().openapi({ description: "Devices in the registry in this region" }),
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
  .openapi("Impact", { example: IMPACT_EXAMPLE });
