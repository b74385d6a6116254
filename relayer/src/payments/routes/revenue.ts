// GET /v1/revenue/splits and GET /v1/participants/{id}/earnings: an API key with the developer role, the
// tenant's own only. Not an agent key (an agent confirms cash; the tenant's revenue is not its business), not
// the portal's JWT (the portal's revenue page reads GET /v1/revenue/overview).
import { createRoute, z } from "@hono/zod-openapi";
import { and, desc, eq, lt, or } from "drizzle-orm";
import { formatUsdMicro } from "../../../../indexer/client.ts";
import { requireApiKey } from "../../auth/middleware.ts";
import { orders, participants } from "../../db/schema.ts";
import { createApi } from "../../http/api.ts";
import { errorResponses, errors } from "../../http/errors.ts";
import type { Services } from "../../services.ts";
import { DeviceId, pathIdParam } from "../schemas.ts";

const Leg = z.object({
  leg: z.enum(["assetOwner", "operator", "protocol"]),
  recipient: z.string(),
  amount: z.string().openapi({ description: "Token base units" }),
});

const SplitItem = z
  .object({
    orderId: z.string(),
    deviceId: z.string(),
    ref: z.string().openapi({ description: "The on-chain settlement reference: bytes32 of the order's on-chain id" }),
    split: z.string(),
    token: z.object({ symbol: z.string(), address: z.string() }),
    gross: z.string().openapi({ description: "Token base units" }),
    grossUsd: z.string().openapi({ description: "Exact decimal string of dollars" }),
    legs: z.array(Leg),
    transactionHash: z.string(),
    blockNumber: z.number().int(),
    settledAt: z.string(),
  })
  .openapi("RevenueSplit");

const SplitsQuery = z
  .object({
    limit: z.coerce.number().int().min(1).max(100).default(20),
    cursor: z
      .string()
      .regex(/^ord_[0-9A-Z]{26}$/)
      .optional()
      .openapi({ description: "The nextCursor of the previous page" }),
    deviceId: DeviceId.optional(),
  })
  .strict();

const ParticipantParam = pathIdParam(
  "A participant id (pt_ followed by 26 characters) or the participant's address (0x and 40 hex digits)",
  "pt_01JD2Y6Y8X3K5V4Q9T7R2M1N0P",
  "^(pt_[0-9A-Z]{26}|0x[0-9a-fA-F]{40})$",
);

const Earnings = z
  .object({
    participant: z.object({ id: z.string(), name: z.string(), address: z.string() }),
    earnings: z.array(
      z.object({
        token: z.object({ symbol: z.string().nullable(), address: z.string() }),
        credited: z.string(),
        withdrawn: z.string(),
        claimable: z.string(),
        byLeg: z.object({ assetOwner: z.string(), operator: z.string(), protocol: z.string() }),
        settlements: z.number().int(),
        withdrawals: z.number().int(),
      }),
    ),
  })
  .openapi("Earnings");

export function revenueRoutes(services: Services) {
  const api = createApi();
  const { db, indexer, chain } = services;
  const apiKey = requireApiKey(db, ["developer"]);
  const security = [{ apiKey: ["developer"] }];

  async function symbols() {
    const tokens = await chain.stablecoins().catch(() => new Map());
    return new Map([...tokens.values()].map((t) => [t.address.toLowerCase(), t.symbol as string]));
  }

  api.openapi(
    createRoute({
      method: "get",
      path: "/revenue/splits",
      tags: ["Revenue"],
      summary: "The 50/40/10 settlements of the tenant's paid orders, newest first",
      security,
      middleware: [apiKey] as const,
      request: { query: SplitsQuery },
      responses: {
        200: {
          description: "A page of splits",
          content: { "application/json": { schema: z.object({ data: z.array(SplitItem), nextCursor: z.string().nullable() }) } },
        },
        ...errorResponses(401, 403, 422, 503),
      },
    }),
    async (c) => {
      const q = c.req.valid("query");
      const tenantId = c.get("identity").tenantId;
      const conditions = [eq(orders.tenantId, tenantId), eq(orders.status, "success")];
      if (q.deviceId) conditions.push(eq(orders.deviceId, q.deviceId));
      if (q.cursor) {
        const [at] = await db.select().from(orders).where(and(eq(orders.id, q.cursor), eq(orders.tenantId, tenantId)));
        if (!at?.paidAt) throw errors.invalid("unknown cursor", [{ path: "cursor", message: "not a cursor of this list" }]);
        const cursorCondition = or(lt(orders.paidAt, at.paidAt), and(eq(orders.paidAt, at.paidAt), lt(orders.id, at.id)));
        if (cursorCondition) conditions.push(cursorCondition);
      }
      const rows = await db
        .select()
        .from(orders)
        .where(and(...conditions))
        .orderBy(desc(orders.paidAt), desc(orders.id))
        .limit(q.limit + 1);
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
            split: s.split,
            token: { symbol: names.get(s.token) ?? order.token, address: s.token },
            gross: s.gross.toString(),
            grossUsd: formatUsdMicro(s.grossUsdMicro),
            legs: [
              { leg: "assetOwner" as const, recipient: s.assetOwner, amount: s.assetOwnerAmount.toString() },
              { leg: "operator" as const, recipient: s.operator, amount: s.operatorAmount.toString() },
              { leg: "protocol" as const, recipient: s.protocol, amount: s.protocolAmount.toString() },
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
      tags: ["Revenue"],
      summary: "Earnings of one of the tenant's participants (split recipients): credited, withdrawn, claimable",
      description:
        "Per token, in base units, from the chain through the indexer: credited is every leg paid to the " +
        "recipient's address, withdrawn what it took out, claimable the rest. `id` is the participant id or its address.",
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
      const [participant] = await db.select().from(participants).where(and(match, eq(participants.tenantId, tenantId)));
      if (!participant) throw errors.notFound(`participant ${id}`);
      const rows = await indexer.participantEarnings(participant.address as `0x${string}`).catch(() => {
        throw errors.unavailable("the indexer is not reachable; retry shortly");
      });
      const names = await symbols();
      return c.json(
        {
          participant: { id: participant.id, name: participant.name, address: participant.address },
          earnings: rows.map((r) => ({
            token: { symbol: names.get(r.token) ?? null, address: r.token },
            credited: r.credited.toString(),
            withdrawn: r.withdrawn.toString(),
            claimable: r.claimable.toString(),
            byLeg: {
              assetOwner: r.creditedAsAssetOwner.toString(),
              operator: r.creditedAsOperator.toString(),
              protocol: r.creditedAsProtocol.toString(),
            },
            settlements: r.settlements,
            withdrawals: r.withdrawals,
          })),
        },
        200,
      );
    },
  );
  return api;
}
