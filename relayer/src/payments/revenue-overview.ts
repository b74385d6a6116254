// The tenant's revenue over a window, as GET /v1/revenue/overview answers it (the portal's revenue page):
// orders and gross USD per hour or day, from the relayer's paid orders (per day: their per-day rollups); its
// latest splits (legs from the chain through the indexer) and what its participants earned. Without the indexer, splits and earnings are empty
// and `indexerAvailable` is false.
import { and, desc, eq, gte, sql } from "drizzle-orm";
import type { Db } from "../db/client.ts";
import { deviceRevenueDays, orders, participants, tenantRevenueDays } from "../db/schema.ts";
import type { Services } from "../services.ts";
import { checksummed, tokenRef } from "../representation.ts";
import { usd } from "./pricing.ts";
import { revenueDay } from "./revenue-days.ts";

type TokenRef = ReturnType<typeof tokenRef>;
type Leg = { leg: "assetOwner" | "operator" | "protocol"; recipient: string; amount: string };
type Bucket = { orders: number; grossUsd: number };

/** The tenant's revenue over a window (see the top of this file). */
export type RevenueOverview = {
  range: keyof typeof RANGES;
  bucket: "hour" | "day";
  from: string;
  to: string;
  totals: Bucket;
  series: Array<Bucket & { start: string }>;
  byDevice: Array<Bucket & { deviceId: string }>;
  recentSplits: Array<{
    orderId: string;
    deviceId: string;
    paidAt: string;
    amountUsd: number;
    token: TokenRef;
    tokenAmount: string;
    transactionHash: string;
    ref: string | null;
    legs: Leg[];
  }>;
  participants: Array<{
    id: string;
    name: string;
    address: string;
    earnings: Array<{
      token: TokenRef;
      tokenDecimals: number;
      credited: string;
      withdrawn: string;
      claimable: string;
    }>;
  }>;
  indexerAvailable: boolean;
};

const RANGES = {
  "24h": { bucket: "hour", bucketMs: 3_600_000, buckets: 24 },
  "7d": { bucket: "day", bucketMs: 86_400_000, buckets: 7 },
  "30d": { bucket: "day", bucketMs: 86_400_000, buckets: 30 },
} as const;

/** The overview's reads: the orders and gross per bucket and the ten devices with the most gross, from `from`
 * on (the first bucket's start); the latest ten paid orders whenever paid. A range of hours reads its window's
 * paid orders (orders_tenant_paid_idx); a range of days reads the per-day rollups (db/schema/revenue-days.ts,
 * whose day is a bucket: `from` is midnight UTC), a row per day and one per device and day, whatever the
 * window's orders. Both count what the other would: paid orders (status success) by orders.paid_at. */
export function revenueOverviewQueries(db: Db, tenantId: string, range: keyof typeof RANGES, from: Date) {
  const latest = db
    .select()
    .from(orders)
    .where(and(eq(orders.tenantId, tenantId), eq(orders.status, "success")))
    .orderBy(desc(orders.paidAt), desc(orders.id))
    .limit(10);
  if (RANGES[range].bucket === "day") return { ...dailyQueries(db, tenantId, revenueDay(from)), latest };

  const paidInWindow = and(eq(orders.tenantId, tenantId), eq(orders.status, "success"), gte(orders.paidAt, from));
  const bucketSeconds = RANGES[range].bucketMs / 1000;
  // The bucket size is inlined (a constant of RANGES, not input): GROUP BY must see the same expression.
  const seconds = sql.raw(String(Math.trunc(bucketSeconds)));
  const bucketExpr = sql<string>`(floor(extract(epoch from ${orders.paidAt}) / ${seconds}) * ${seconds})::bigint`;
  const micros = sql<string>`coalesce(sum(${orders.amountUsdMicros}), 0)`;
  return {
    perBucket: db
      .select({ bucket: bucketExpr, orders: sql<string>`count(*)`, micros })
      .from(orders)
      .where(paidInWindow)
      .groupBy(bucketExpr),
    perDevice: db
      .select({ deviceId: orders.deviceId, orders: sql<string>`count(*)`, micros })
      .from(orders)
      .where(paidInWindow)
      .groupBy(orders.deviceId)
      .orderBy(desc(micros), orders.deviceId)
      .limit(10),
    latest,
  };
}

/** The per-day reads from the day `fromDay` (YYYY-MM-DD) on, in the shape of the per-order ones. A device
 * whose orders in the window a reorganisation all took back out has rows of 0 orders: left out, as the
 * orders' read has none of its orders. */
function dailyQueries(db: Db, tenantId: string, fromDay: string) {
  const tenantMicros = sql<string>`coalesce(sum(${tenantRevenueDays.amountUsdMicros}), 0)`;
  const deviceOrders = sql<string>`coalesce(sum(${deviceRevenueDays.orders}), 0)`;
  const deviceMicros = sql<string>`coalesce(sum(${deviceRevenueDays.amountUsdMicros}), 0)`;
  return {
    perBucket: db
      .select({
        bucket: sql<string>`extract(epoch from ${tenantRevenueDays.day})::bigint`,
        orders: sql<string>`coalesce(sum(${tenantRevenueDays.orders}), 0)`,
        micros: tenantMicros,
      })
      .from(tenantRevenueDays)
      .where(and(eq(tenantRevenueDays.tenantId, tenantId), gte(tenantRevenueDays.day, fromDay)))
      .groupBy(tenantRevenueDays.day),
    perDevice: db
      .select({ deviceId: deviceRevenueDays.deviceId, orders: deviceOrders, micros: deviceMicros })
      .from(deviceRevenueDays)
      .where(and(eq(deviceRevenueDays.tenantId, tenantId), gte(deviceRevenueDays.day, fromDay)))
      .groupBy(deviceRevenueDays.deviceId)
      .having(sql`${deviceOrders} > 0`)
      .orderBy(desc(deviceMicros), deviceRevenueDays.deviceId)
      .limit(10),
  };
}

export async function revenueOverview(
  services: Pick<Services, "database" | "indexer" | "chain">,
  tenantId: string,
  range: keyof typeof RANGES,
): Promise<RevenueOverview> {
  const {
    database: { db },
    indexer,
    chain,
  } = services;
  const spec = RANGES[range];
  const now = Date.now();
  const firstBucket = Math.floor(now / spec.bucketMs) * spec.bucketMs - (spec.buckets - 1) * spec.bucketMs;
  const from = new Date(firstBucket);
  const queries = revenueOverviewQueries(db, tenantId, range, from);
  const [perBucket, perDevice, latest, people] = await Promise.all([
    queries.perBucket,
    queries.perDevice,
    queries.latest,
    db.select().from(participants).where(eq(participants.tenantId, tenantId)).orderBy(participants.name),
  ]);

  const byStart = new Map(perBucket.map((b) => [Number(b.bucket) * 1000, b]));
  const series = Array.from({ length: spec.buckets }, (_, i) => {
    const start = firstBucket + i * spec.bucketMs;
    const row = byStart.get(start);
    return { start: new Date(start).toISOString(), orders: Number(row?.orders ?? 0), grossUsd: usd(Number(row?.micros ?? 0)) };
  });

  let indexerAvailable = true;
  const settlements = await indexer.settlementsByOrderIds(latest.map((o) => o.onchainId)).catch(() => {
    indexerAvailable = false;
    return [];
  });
  const byOrder = new Map(settlements.map((s) => [s.orderId, s]));
  // Earnings name their token {symbol, address} with its decimals: without the chain's list of tokens they
  // are left out, as without the indexer.
  const tokens = await chain.stablecoins().catch(() => {
    indexerAvailable = false;
    return new Map();
  });
  const tokenInfo = new Map([...tokens.values()].map((t) => [t.address.toLowerCase(), t as { symbol: string; decimals: number }]));
  const earnings = await Promise.all(
    people.map((p) =>
      indexer.participantEarnings(p.address as `0x${string}`).catch(() => {
        indexerAvailable = false;
        return [];
      }),
    ),
  );

  return {
    range,
    bucket: spec.bucket,
    from: from.toISOString(),
    to: new Date(now).toISOString(),
    totals: {
      orders: series.reduce((n, s) => n + s.orders, 0),
      grossUsd: usd(perBucket.reduce((n, b) => n + Number(b.micros), 0)),
    },
    series,
    byDevice: perDevice.map((d) => ({ deviceId: d.deviceId, orders: Number(d.orders), grossUsd: usd(Number(d.micros)) })),
    recentSplits: latest.map((o) => {
      const s = byOrder.get(o.onchainId);
      return {
        orderId: o.id,
        deviceId: o.deviceId,
        paidAt: o.paidAt?.toISOString() ?? o.updatedAt.toISOString(),
        amountUsd: usd(o.amountUsdMicros),
        token: tokenRef(o.token, o.tokenAddress),
        tokenAmount: o.tokenAmount,
        transactionHash: o.txHash ?? "",
        ref: s?.ref ?? null,
        legs: s
          ? [
              { leg: "assetOwner" as const, recipient: checksummed(s.assetOwner), amount: s.assetOwnerAmount.toString() },
              { leg: "operator" as const, recipient: checksummed(s.operator), amount: s.operatorAmount.toString() },
              { leg: "protocol" as const, recipient: checksummed(s.protocol), amount: s.protocolAmount.toString() },
            ]
          : [],
      };
    }),
    participants: people.map((p, i) => ({
      id: p.id,
      name: p.name,
      address: checksummed(p.address),
      earnings: earnings[i].flatMap((e) => {
        const info = tokenInfo.get(e.token.toLowerCase());
        if (!info) return [];
        return [
          {
            token: tokenRef(info.symbol, e.token),
            tokenDecimals: info.decimals,
            credited: e.credited.toString(),
            withdrawn: e.withdrawn.toString(),
            claimable: e.claimable.toString(),
          },
        ];
      }),
    })),
    indexerAvailable,
  };
}
