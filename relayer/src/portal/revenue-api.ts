// GET /v1/revenue/overview: the tenant's revenue over a window (orders and gross USD per hour or day, from
// the relayer's paid orders), its latest splits (legs from the chain through the indexer) and what its
// participants earned. The portal's revenue page is drawn from it; it takes the portal JWT only (an API key
// reads the same data through GET /v1/revenue/splits and the earnings route, with the developer role).
import { createRoute, z } from "@hono/zod-openapi";
import { and, desc, eq, gte, sql } from "drizzle-orm";
import { requireUser } from "../auth/middleware.ts";
import { orders, participants } from "../db/schema.ts";
import { createApi } from "../http/api.ts";
import { errorResponses } from "../http/errors.ts";
import { usd } from "../payments/pricing.ts";
import type { Services } from "../services.ts";

export const RANGES = {
  "24h": { bucket: "hour", bucketMs: 3_600_000, buckets: 24 },
  "7d": { bucket: "day", bucketMs: 86_400_000, buckets: 7 },
  "30d": { bucket: "day", bucketMs: 86_400_000, buckets: 30 },
} as const;
export type Range = keyof typeof RANGES;

const OverviewQuery = z.object({ range: z.enum(["24h", "7d", "30d"]).default("7d") }).strict();

const Leg = z.object({ leg: z.enum(["assetOwner", "operator", "protocol"]), recipient: z.string(), amount: z.string() });

const Overview = z
  .object({
    range: z.enum(["24h", "7d", "30d"]),
    bucket: z.enum(["hour", "day"]),
    from: z.string(),
    to: z.string(),
    totals: z.object({ orders: z.number().int(), grossUsd: z.number() }),
    series: z
      .array(z.object({ start: z.string(), orders: z.number().int(), grossUsd: z.number() }))
      .openapi({ description: "One entry per hour (24h) or UTC day (7d, 30d), oldest first, empty buckets included" }),
    byDevice: z.array(z.object({ deviceId: z.string(), orders: z.number().int(), grossUsd: z.number() })),
    recentSplits: z.array(
      z.object({
        orderId: z.string(),
        deviceId: z.string(),
        paidAt: z.string(),
        amountUsd: z.number(),
        token: z.string(),
        tokenAmount: z.string(),
        transactionHash: z.string(),
        ref: z.string().nullable(),
        legs: z.array(Leg),
      }),
    ),
    participants: z.array(
      z.object({
        id: z.string(),
        name: z.string(),
        address: z.string(),
        earnings: z.array(
          z.object({
            token: z.object({ symbol: z.string().nullable(), address: z.string(), decimals: z.number().int().nullable() }),
            credited: z.string(),
            withdrawn: z.string(),
            claimable: z.string(),
          }),
        ),
      }),
    ),
    indexerAvailable: z.boolean().openapi({ description: "false: the indexer did not answer; splits and earnings are empty" }),
  })
  .openapi("RevenueOverview");

export type RevenueOverview = z.infer<typeof Overview>;

export function revenueOverviewRoutes(services: Services) {
  const api = createApi();
  const { db, jwt, indexer, chain } = services;

  api.openapi(
    createRoute({
      method: "get",
      path: "/revenue/overview",
      tags: ["Revenue"],
      summary: "Revenue over time, latest splits and participants' earnings (portal JWT: the portal's revenue page)",
      security: [{ bearerJwt: [] }],
      middleware: [requireUser(db, jwt)] as const,
      request: { query: OverviewQuery },
      responses: {
        200: { description: "The overview", content: { "application/json": { schema: Overview } } },
        ...errorResponses(401, 422),
      },
    }),
    async (c) => {
      const { range } = c.req.valid("query");
      const tenantId = c.get("identity").tenantId;
      const spec = RANGES[range];
      const now = Date.now();
      const firstBucket = Math.floor(now / spec.bucketMs) * spec.bucketMs - (spec.buckets - 1) * spec.bucketMs;
      const from = new Date(firstBucket);
      const paidInWindow = and(eq(orders.tenantId, tenantId), eq(orders.status, "success"), gte(orders.paidAt, from));
      const bucketSeconds = spec.bucketMs / 1000;
      // The bucket size is inlined (a constant of RANGES, not input): GROUP BY must see the same expression.
      const seconds = sql.raw(String(Math.trunc(bucketSeconds)));
      const bucketExpr = sql<string>`(floor(extract(epoch from ${orders.paidAt}) / ${seconds}) * ${seconds})::bigint`;
      const [perBucket, perDevice, latest, people] = await Promise.all([
        db
          .select({
            bucket: bucketExpr,
            orders: sql<string>`count(*)`,
            micros: sql<string>`coalesce(sum(${orders.amountUsdMicros}), 0)`,
          })
          .from(orders)
          .where(paidInWindow)
          .groupBy(bucketExpr),
        db
          .select({
            deviceId: orders.deviceId,
            orders: sql<string>`count(*)`,
            micros: sql<string>`coalesce(sum(${orders.amountUsdMicros}), 0)`,
          })
          .from(orders)
          .where(paidInWindow)
          .groupBy(orders.deviceId)
          .orderBy(desc(sql`coalesce(sum(${orders.amountUsdMicros}), 0)`))
          .limit(10),
        db
          .select()
          .from(orders)
          .where(and(eq(orders.tenantId, tenantId), eq(orders.status, "success")))
          .orderBy(desc(orders.paidAt), desc(orders.id))
          .limit(10),
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
      const tokens = await chain.stablecoins().catch(() => new Map());
      const tokenInfo = new Map([...tokens.values()].map((t) => [t.address.toLowerCase(), t as { symbol: string; decimals: number }]));
      const earnings = await Promise.all(
        people.map((p) =>
          indexer.participantEarnings(p.address as `0x${string}`).catch(() => {
            indexerAvailable = false;
            return [];
          }),
        ),
      );

      const body: RevenueOverview = {
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
              token: o.token,
              tokenAmount: o.tokenAmount,
              transactionHash: o.txHash ?? "",
              ref: s?.ref ?? null,
              legs: s
                ? [
                    { leg: "assetOwner" as const, recipient: s.assetOwner, amount: s.assetOwnerAmount.toString() },
                    { leg: "operator" as const, recipient: s.operator, amount: s.operatorAmount.toString() },
                    { leg: "protocol" as const, recipient: s.protocol, amount: s.protocolAmount.toString() },
                  ]
                : [],
            };
          }),
          participants: people.map((p, i) => ({
            id: p.id,
            name: p.name,
            address: p.address,
            earnings: earnings[i].map((e) => ({
              token: {
                symbol: tokenInfo.get(e.token.toLowerCase())?.symbol ?? null,
                address: e.token,
                decimals: tokenInfo.get(e.token.toLowerCase())?.decimals ?? null,
              },
              credited: e.credited.toString(),
              withdrawn: e.withdrawn.toString(),
              claimable: e.claimable.toString(),
            })),
          })),
          indexerAvailable,
      };
      return c.json(body, 200);
    },
  );

  return api;
}
