// Network statistics and impact: payments from the indexer, sessions and energy from the orders the
// device cloud metered, online devices from the device cloud. Computed at most every STATS_CACHE_MS.
import { count, eq, isNotNull, sql } from "drizzle-orm";
import { devices, orders } from "../db/schema.ts";
import type { Services } from "../services.ts";

const ACTIVE_WINDOW_DAYS = 30;

/** GET /v1/public/stats's figures (the spec's fields). */
export type PublicStats = {
  energyKwh: number;
  powerSessions: number;
  co2AvoidedKg: number;
  onchainVolumeUsd: number;
  devices: { total: number; online: number };
};

/** The impact figures, in total and per region. */
export type Impact = {
  activeDevices: number;
  powerSessions: number;
  energyKwh: number;
  co2AvoidedKg: number;
  co2KgPerKwh: number;
  regions: Array<{
    region: string;
    devices: number;
    activeDevices: number;
    powerSessions: number;
    energyKwh: number;
    co2AvoidedKg: number;
    volumeUsd: number;
  }>;
  activeWindowDays: number;
  updatedAt: string;
};
const round = (n: number, digits: number) => Math.round(n * 10 ** digits) / 10 ** digits;

function cached<T>(ttlMs: number, compute: () => Promise<T>) {
  let value: { at: number; data: T } | undefined;
  let inflight: Promise<T> | undefined;
  return async (): Promise<T> => {
    if (value && Date.now() - value.at < ttlMs) return value.data;
    inflight ??= compute()
      .then((data) => {
        value = { at: Date.now(), data };
        return data;
      })
      .finally(() => {
        inflight = undefined;
      });
    return inflight;
  };
}

export function createStats(services: Services) {
  const {
    database: { db },
    indexer,
    deviceCloud,
    config,
  } = services;
  const factor = config.CO2_KG_PER_KWH;

  async function onlineDevices(): Promise<Set<string>> {
    try {
      return new Set((await deviceCloud.list()).filter((d) => d.online).map((d) => d.deviceId));
    } catch {
      return new Set();
    }
  }

  const publicStats = cached(config.STATS_CACHE_MS, async (): Promise<PublicStats> => {
    const [[sessions], [total], registry, online, network] = await Promise.all([
      db
        .select({ sessions: count(), energyWh: sql<string>`coalesce(sum(${orders.energyWh}), 0)` })
        .from(orders)
        .where(isNotNull(orders.poweredOnAt)),
      db.select({ n: count() }).from(devices),
      db.select({ id: devices.id }).from(devices),
      onlineDevices(),
      indexer.networkStats(),
    ]);
    const energyKwh = Number(sessions.energyWh) / 1000;
    return {
      energyKwh: round(energyKwh, 3),
      powerSessions: sessions.sessions,
      co2AvoidedKg: round(energyKwh * factor, 3),
      onchainVolumeUsd: round(Number(network.volumeUsdMicro) / 1e6, 6),
      devices: { total: total.n, online: registry.filter((d) => online.has(d.id)).length },
    };
  });

  const impact = cached(config.STATS_CACHE_MS, async (): Promise<Impact> => {
    const since = new Date(Date.now() - ACTIVE_WINDOW_DAYS * 86_400_000);
    const rows = await db
      .select({
        region: devices.region,
        devices: sql<number>`count(distinct ${devices.id})::int`,
        activeDevices: sql<number>`count(distinct ${orders.deviceId}) filter (where ${orders.poweredOnAt} >= ${since})::int`,
        powerSessions: sql<number>`count(${orders.poweredOnAt})::int`,
        energyWh: sql<string>`coalesce(sum(${orders.energyWh}), 0)`,
        volumeUsdMicros: sql<string>`coalesce(sum(${orders.amountUsdMicros}) filter (where ${orders.status} = 'success'), 0)`,
      })
      .from(devices)
      .leftJoin(orders, eq(orders.deviceId, devices.id))
      .groupBy(devices.region)
      .orderBy(devices.region);
    const regions = rows.map((r) => {
      const energyKwh = Number(r.energyWh) / 1000;
      return {
        region: r.region,
        devices: Number(r.devices),
        activeDevices: Number(r.activeDevices),
        powerSessions: Number(r.powerSessions),
        energyKwh: round(energyKwh, 3),
        co2AvoidedKg: round(energyKwh * factor, 3),
        volumeUsd: round(Number(r.volumeUsdMicros) / 1e6, 6),
      };
    });
    const sum = (key: "activeDevices" | "powerSessions" | "energyKwh") => regions.reduce((n, r) => n + r[key], 0);
    const energyKwh = round(sum("energyKwh"), 3);
    return {
      activeDevices: sum("activeDevices"),
      powerSessions: sum("powerSessions"),
      energyKwh,
      co2AvoidedKg: round(energyKwh * factor, 3),
      co2KgPerKwh: factor,
      regions,
      activeWindowDays: ACTIVE_WINDOW_DAYS,
      updatedAt: new Date().toISOString(),
    };
  });

  return { publicStats, impact };
}
