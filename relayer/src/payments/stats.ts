// Network statistics and impact: payments from the indexer, sessions, energy and volume from the running
// totals per region and device (usage-totals.ts keeps them as orders change), online devices from the device
// cloud. Each read is a row per region, or per device active in the window: none grows with the orders.
// Computed at most every STATS_CACHE_MS.
import { count, gte, inArray, sum } from "drizzle-orm";
import { deviceUsage, devices, regionUsage } from "../db/schema.ts";
import type { Db } from "../db/client.ts";
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
    totalDevices: number;
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

  /** How many registered devices the device cloud lists as online. */
  async function onlineDevices(): Promise<number> {
    let online: string[];
    try {
      online = (await deviceCloud.list()).filter((d) => d.online).map((d) => d.deviceId);
    } catch {
      return 0;
    }
    let n = 0;
    for (let i = 0; i < online.length; i += ONLINE_CHUNK) {
      const [row] = await onlineDevicesQuery(db, online.slice(i, i + ONLINE_CHUNK));
      n += row.n;
    }
    return n;
  }

  const publicStats = cached(config.STATS_CACHE_MS, async (): Promise<PublicStats> => {
    const [[totals], online, network] = await Promise.all([usageTotalsQuery(db), onlineDevices(), indexer.networkStats()]);
    const energyKwh = Number(totals.energyWh ?? 0) / 1000;
    return {
      energyKwh: round(energyKwh, 3),
      powerSessions: Number(totals.powerSessions ?? 0),
      co2AvoidedKg: round(energyKwh * factor, 3),
      onchainVolumeUsd: round(Number(network.volumeUsdMicro) / 1e6, 6),
      devices: { total: Number(totals.devices ?? 0), online },
    };
  });

  const impact = cached(config.STATS_CACHE_MS, async (): Promise<Impact> => {
    const since = new Date(Date.now() - ACTIVE_WINDOW_DAYS * 86_400_000);
    const [rows, active] = await Promise.all([regionUsageQuery(db), activeDevicesQuery(db, since)]);
    const activeIn = new Map(active.map((a) => [a.region, a.n]));
    const regions = rows.map((r) => {
      const energyKwh = r.energyWh / 1000;
      return {
        region: r.region,
        totalDevices: r.devices,
        activeDevices: activeIn.get(r.region) ?? 0,
        powerSessions: r.powerSessions,
        energyKwh: round(energyKwh, 3),
        co2AvoidedKg: round(energyKwh * factor, 3),
        volumeUsd: round(r.volumeUsdMicros / 1e6, 6),
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

/** Device ids per statement when counting the online ones (well under PostgreSQL's 65,535 parameters). */
const ONLINE_CHUNK = 5_000;

/** How many of `ids` (at most ONLINE_CHUNK) are registered devices: a primary-key lookup each. */
export function onlineDevicesQuery(db: Db, ids: string[]) {
  return db.select({ n: count() }).from(devices).where(inArray(devices.id, ids));
}

/** GET /v1/public/stats' totals: the regions' rows summed (a row per region). */
export function usageTotalsQuery(db: Db) {
  return db
    .select({
      devices: sum(regionUsage.devices),
      powerSessions: sum(regionUsage.powerSessions),
      energyWh: sum(regionUsage.energyWh),
    })
    .from(regionUsage);
}

/** GET /v1/impact's regions: every region with a registered device, in order. */
export function regionUsageQuery(db: Db) {
  return db.select().from(regionUsage).orderBy(regionUsage.region);
}

/** Devices whose latest session started at or after `since`, per region: an index-only range of
 * device_usage_last_powered_on_idx (the active devices, not their orders). */
export function activeDevicesQuery(db: Db, since: Date) {
  return db
    .select({ region: deviceUsage.region, n: count() })
    .from(deviceUsage)
    .where(gte(deviceUsage.lastPoweredOnAt, since))
    .groupBy(deviceUsage.region);
}
