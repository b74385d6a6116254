// The tenant's revenue. GET /v1/revenue/splits and GET /v1/participants/{id}/earnings: an API key with the
// developer role, the tenant's own only. Not an agent key (an agent confirms cash; the tenant's revenue is not
// its business), not the portal's JWT. GET /v1/revenue/overview: the portal JWT only (the portal's revenue
// page is drawn from it); an API key reads the same data through the other two.
import { predictSplitAddress } from "../chain/split-address.ts";
import { createRoute } from "@hono/zod-openapi";
import { and, eq, inArray, isNotNull } from "drizzle-orm";
import type { Hex } from "viem";
import type { SplitEarnings } from "../../../indexer/client.ts";
import { requireApiKey, requireUser } from "../auth/middleware.ts";
import { devices, orders, participants } from "../db/schema.ts";
import { createApi } from "../http/api.ts";
import { errorResponses } from "../http/errors.ts";
import { errors } from "../errors.ts";
import { usd } from "../payments/pricing.ts";
import { checksummed, tokenRef } from "../representation.ts";
import { revenueOverview } from "../payments/revenue-overview.ts";
import { paidOrderCursor, paidOrdersPage } from "../payments/revenue-splits.ts";
import type { Services } from "../services.ts";
import { Earnings, OverviewQuery, ParticipantParam, RevenueOverview, RevenueSplitPage, SplitsQuery } from "./revenue.schemas.ts";

/** The newest settlements an earnings answer lists. */
const LATEST_SETTLEMENTS = 20;

export function revenueRoutes(services: Services) {
  const api = createApi();
  const {
    database: { db },
    indexer,
    chain,
  } = services;
  const apiKey = requireApiKey(db, ["developer"]);
  const security = [{ apiKey: ["developer"] }];

  /** The splits of the tenant's devices, by lower-case address: each device's split in the main stablecoin and
   * its splits in the others (same asset key at each token's factory; one that was never created is never paid). */
  async function tenantSplits(tenantId: string): Promise<Map<Hex, { id: string; chainDeviceId: string }>> {
    const [rows, tokens] = await Promise.all([
      db
        .select({ id: devices.id, chainDeviceId: devices.chainDeviceId, split: devices.splitAddress, assetKey: devices.assetKey })
        .from(devices)
        .where(and(eq(devices.tenantId, tenantId), isNotNull(devices.splitAddress))),
      chain.stablecoins().catch(() => {
        throw errors.unavailable("the chain is not reachable; retry shortly");
      }),
    ]);
    const others = [...tokens.values()].filter((t) => t.factory !== chain.splitFactory);
    const splits = new Map<Hex, { id: string; chainDeviceId: string }>();
    for (const r of rows) {
      const device = { id: r.id, chainDeviceId: r.chainDeviceId };
      splits.set(r.split!.toLowerCase() as Hex, device);
      if (r.assetKey === null) continue;
      for (const t of others) splits.set(predictSplitAddress(t.factory, t.address, r.assetKey as Hex).toLowerCase() as Hex, device);
    }
    return splits;
  }

  /** The symbol of each of the deployment's stablecoins, by lower-case address: the tokens its splits settle
   * in (each split factory makes splits of one of them). Answers carry a token as {symbol, address}: 503
   * while the chain cannot say. */
  async function symbols() {
    const tokens = await chain.stablecoins().catch(() => {
      throw errors.unavailable("the chain is not reachable; retry shortly");
    });
    return new Map([...tokens.values()].map((t) => [t.address.toLowerCase(), t.symbol as string]));
  }

  api.openapi(
    createRoute({
      method: "get",
      path: "/revenue/splits",
      operationId: "listRevenueSplits",
      tags: ["Revenue"],
      summary: "The 50/40/10 settlements of the tenant's paid orders, newest first",
      security,
      middleware: [apiKey] as const,
      request: { query: SplitsQuery },
      responses: {
        200: {
          description: "A page of splits",
          content: { "application/json": { schema: RevenueSplitPage } },
        },
        ...errorResponses(401, 403, 422, 503),
      },
    }),
    async (c) => {
      const q = c.req.valid("query");
      const tenantId = c.get("identity").tenantId;
      const cursor = q.cursor === undefined ? undefined : await paidOrderCursor(db, tenantId, q.cursor);
      if (q.cursor !== undefined && !cursor) {
        throw errors.invalid("unknown cursor", [{ path: "cursor", message: "not a cursor of this list" }]);
      }
      const rows = await paidOrdersPage(db, tenantId, { limit: q.limit, deviceId: q.deviceId || undefined, cursor });
      const page = rows.slice(0, q.limit);
      const settlements = await indexer.settlementsByOrderIds(page.map((o) => o.onchainId)).catch(() => {
        throw errors.unavailable("the indexer is not reachable; retry shortly");
      });
      const byOrder = new Map(settlements.map((s) => [s.orderId, s]));
      const names = await symbols();
      const data = page.flatMap((order) => {
        const s = byOrder.get(order.onchainId);
        if (!s) return [];
        return [
          {
            orderId: order.id,
            deviceId: order.deviceId,
            ref: s.ref,
            split: checksummed(s.split),
            asset: { deviceId: order.deviceId, chainDeviceId: order.chainDeviceId },
            token: tokenRef(names.get(s.token.toLowerCase()) ?? order.token, s.token),
            gross: s.gross.toString(),
            grossUsd: usd(Number(s.grossUsdMicro)),
            legs: [
              { leg: "assetOwner" as const, recipient: checksummed(s.assetOwner), amount: s.assetOwnerAmount.toString() },
              { leg: "operator" as const, recipient: checksummed(s.operator), amount: s.operatorAmount.toString() },
              { leg: "protocol" as const, recipient: checksummed(s.protocol), amount: s.protocolAmount.toString() },
            ],
            transactionHash: s.transactionHash,
            blockNumber: Number(s.blockNumber),
            settledAt: new Date(Number(s.blockTimestamp) * 1000).toISOString(),
          },
        ];
      });
      return c.json({ data, nextCursor: rows.length > q.limit ? page[page.length - 1].id : null }, 200);
    },
  );

  api.openapi(
    createRoute({
      method: "get",
      path: "/participants/{id}/earnings",
      operationId: "getParticipantEarnings",
      tags: ["Revenue"],
      summary: "Earnings of one of the tenant's participants (split recipients): credited, withdrawn, claimable",
      description:
        "Per token, in base units, from the chain through the indexer: credited is every leg paid to the " +
        "recipient's address by the splits of this tenant's devices (never another tenant's), withdrawn what it took " +
        "out of them, claimable the rest; per split too (bySplit), and the newest settlements that credited it, each " +
        "with its split and asset. `id` is the participant id or its address.",
      security,
      middleware: [apiKey] as const,
      request: { params: ParticipantParam },
      responses: {
        200: { description: "Earnings", content: { "application/json": { schema: Earnings } } },
        ...errorResponses(401, 403, 404, 422, 503),
      },
    }),
    async (c) => {
      const { id } = c.req.valid("param");
      const tenantId = c.get("identity").tenantId;
      const match = id.startsWith("pt_") ? eq(participants.id, id) : eq(participants.address, id.toLowerCase());
      const [participant] = await db
        .select()
        .from(participants)
        .where(and(match, eq(participants.tenantId, tenantId)));
      if (!participant) throw errors.notFound(`participant ${id}`);
      // This tenant's splits only: a recipient may be paid by other tenants' devices too.
      const splits = await tenantSplits(tenantId);
      const who = participant.address as Hex;
      const [rows, latest] = await Promise.all([
        indexer.participantEarningsInSplits(who, [...splits.keys()]),
        indexer.participantSettlements(who, [...splits.keys()], { limit: LATEST_SETTLEMENTS }),
      ]).catch(() => {
        throw errors.unavailable("the indexer is not reachable; retry shortly");
      });
      const paidOrders = latest.length
        ? await db
            .select({ id: orders.id, onchainId: orders.onchainId })
            .from(orders)
            .where(
              and(
                eq(orders.tenantId, tenantId),
                inArray(
                  orders.onchainId,
                  latest.flatMap((l) => (l.orderId === null ? [] : [l.orderId])),
                ),
              ),
            )
        : [];
      const orderOf = new Map(paidOrders.map((o) => [o.onchainId, o.id]));
      const names = await symbols();
      // The tenant's splits settle only in the deployment's stablecoins; an address missing from the list
      // would mean the list changed under the indexer's feet: asked again on the next request.
      const symbolOf = (token: string) => {
        const symbol = names.get(token.toLowerCase());
        if (symbol === undefined) throw errors.unavailable(`token ${token} is not among the deployment's stablecoins yet; retry shortly`);
        return symbol;
      };
      const byToken = new Map<string, SplitEarnings[]>();
      for (const row of rows) byToken.set(row.token, [...(byToken.get(row.token) ?? []), row]);
      const sum = (list: SplitEarnings[], pick: (r: SplitEarnings) => bigint) => list.reduce((n, r) => n + pick(r), 0n).toString();
      const assetOf = (split: string) => {
        const device = splits.get(split.toLowerCase() as Hex);
        return { deviceId: device?.id ?? null, chainDeviceId: device?.chainDeviceId ?? null };
      };
      return c.json(
        {
          participant: { id: participant.id, name: participant.name, address: checksummed(participant.address) },
          earnings: [...byToken.entries()]
            .sort(([a], [b]) => (a < b ? -1 : 1))
            .map(([token, list]) => ({
              token: tokenRef(symbolOf(token), token),
              credited: sum(list, (r) => r.credited),
              withdrawn: sum(list, (r) => r.withdrawn),
              claimable: sum(list, (r) => r.claimable),
              byLeg: {
                assetOwner: sum(list, (r) => r.creditedAsAssetOwner),
                operator: sum(list, (r) => r.creditedAsOperator),
                protocol: sum(list, (r) => r.creditedAsProtocol),
              },
              settlements: list.reduce((n, r) => n + r.settlements, 0),
              withdrawals: list.reduce((n, r) => n + r.withdrawals, 0),
              bySplit: list.map((r) => ({
                split: checksummed(r.split),
                asset: assetOf(r.split),
                credited: r.credited.toString(),
                withdrawn: r.withdrawn.toString(),
                claimable: r.claimable.toString(),
                settlements: r.settlements,
              })),
            })),
          latestSettlements: latest.map((l) => ({
            orderId: l.orderId === null ? null : (orderOf.get(l.orderId) ?? null),
            split: checksummed(l.split),
            asset: assetOf(l.split),
            token: tokenRef(symbolOf(l.token), l.token),
            gross: l.gross.toString(),
            credited: l.credited.toString(),
            transactionHash: l.transactionHash,
            settledAt: new Date(Number(l.blockTimestamp) * 1000).toISOString(),
          })),
        },
        200,
      );
    },
  );
  return api;
}

/** GET /v1/revenue/overview (computed by payments/revenue-overview.ts). A router of its own: v1/index.ts mounts
 * it after the other groups, where the OpenAPI document lists it. */
export function revenueOverviewRoutes(services: Services) {
  const api = createApi();
  const {
    database: { db },
    jwt,
  } = services;

  api.openapi(
    createRoute({
      method: "get",
      path: "/revenue/overview",
      operationId: "getRevenueOverview",
      tags: ["Revenue"],
      summary: "Revenue over time, latest splits and participants' earnings (portal JWT: the portal's revenue page)",
      security: [{ bearerJwt: [] }],
      middleware: [requireUser(db, jwt)] as const,
      request: { query: OverviewQuery },
      responses: {
        200: { description: "The overview", content: { "application/json": { schema: RevenueOverview } } },
        ...errorResponses(401, 422),
      },
    }),
    async (c) => c.json(await revenueOverview(services, c.get("identity").tenantId, c.req.valid("query").range), 200),
  );

  return api;
}
