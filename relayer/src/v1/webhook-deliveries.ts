// The delivery log of the tenant's webhook subscriptions (portal JWT or developer API key): a subscription's
// deliveries with their attempts, one delivery with the envelope delivered, and redelivery by hand.
import { createRoute } from "@hono/zod-openapi";
import { requireUserOrApiKey } from "../auth/middleware.ts";
import { createApi } from "../http/api.ts";
import { errorResponses } from "../http/errors.ts";
import { errors } from "../errors.ts";
import type { Services } from "../services.ts";
import {
  type AttemptRow,
  type DeliveryRow,
  attemptsOf,
  eventOf,
  findDelivery,
  findSubscription,
  listDeliveries,
  requeueDelivery,
} from "../webhooks/subscriptions-store.ts";
import { callerOf } from "./caller.ts";
import {
  DeliveriesQuery,
  DeliveryIdParam,
  WebhookDelivery,
  WebhookDeliveryDetail,
  WebhookDeliveryPage,
} from "./webhook-deliveries.schemas.ts";
import { SubscriptionIdParam } from "./webhook-subscriptions.schemas.ts";

const iso = (d: Date | null | undefined) => (d ? d.toISOString() : null);

function attemptView(row: AttemptRow) {
  return {
    attempt: row.attempt,
    startedAt: row.startedAt.toISOString(),
    finishedAt: iso(row.finishedAt),
    durationMs: row.durationMs,
    statusCode: row.statusCode,
    error: row.error,
    responseExcerpt: row.responseExcerpt,
  };
}

/** The delivery with its own attempts (`attempts` may hold other deliveries' too). */
function deliveryView(row: DeliveryRow, attempts: AttemptRow[]) {
  return {
    id: row.id,
    subscriptionId: row.subscriptionId,
    eventId: row.eventId,
    eventType: row.eventType,
    status: row.status,
    attempts: row.attempts,
    attemptLimit: row.attemptLimit,
    nextAttemptAt: row.status === "pending" ? iso(row.nextAttemptAt) : null,
    lastStatusCode: row.lastStatusCode,
    lastError: row.lastError,
    createdAt: row.createdAt.toISOString(),
    completedAt: iso(row.completedAt),
    attemptLog: attempts
      .filter((a) => a.deliveryId === row.id)
      .sort((a, b) => a.attempt - b.attempt)
      .map(attemptView),
  };
}

export function webhookDeliveryRoutes(services: Services) {
  const api = createApi();
  const {
    database: { db },
    jwt,
  } = services;
  const auth = requireUserOrApiKey(db, jwt, ["developer"]);
  const security: Array<Record<string, string[]>> = [{ bearerJwt: [] }, { apiKey: ["developer"] }];
  const tags = ["Webhooks"];

  api.openapi(
    createRoute({
      method: "get",
      path: "/webhooks/subscriptions/{id}/deliveries",
      operationId: "listWebhookDeliveries",
      tags,
      summary: "The delivery log of a subscription: each delivery with its attempts, newest first",
      security,
      middleware: [auth] as const,
      request: { params: SubscriptionIdParam, query: DeliveriesQuery },
      responses: {
        200: { description: "A page of deliveries", content: { "application/json": { schema: WebhookDeliveryPage } } },
        ...errorResponses(401, 403, 404, 422),
      },
    }),
    async (c) => {
      const sub = await findSubscription(db, callerOf(c).tenantId, c.req.valid("param").id);
      const q = c.req.valid("query");
      const rows = await listDeliveries(db, sub.id, q);
      const page = rows.slice(0, q.limit);
      const attempts = await attemptsOf(
        db,
        page.map((r) => r.id),
      );
      return c.json(
        { data: page.map((r) => deliveryView(r, attempts)), nextCursor: rows.length > q.limit ? page[page.length - 1].id : null },
        200,
      );
    },
  );

  api.openapi(
    createRoute({
      method: "get",
      path: "/webhooks/deliveries/{id}",
      operationId: "getWebhookDelivery",
      tags,
      summary: "One delivery: its attempts and the envelope delivered",
      security,
      middleware: [auth] as const,
      request: { params: DeliveryIdParam },
      responses: {
        200: { description: "The delivery", content: { "application/json": { schema: WebhookDeliveryDetail } } },
        ...errorResponses(401, 403, 404),
      },
    }),
    async (c) => {
      const row = await findDelivery(db, callerOf(c).tenantId, c.req.valid("param").id);
      const event = await eventOf(db, row);
      return c.json(
        { ...deliveryView(row, await attemptsOf(db, [row.id])), payload: { type: event.type, data: event.data, id: row.id } },
        200,
      );
    },
  );

  api.openapi(
    createRoute({
      method: "post",
      path: "/webhooks/deliveries/{id}/redeliver",
      operationId: "redeliverWebhook",
      tags,
      summary: "Redeliver by hand: one more attempt at once, with the same id (for failed or succeeded deliveries)",
      security,
      middleware: [auth] as const,
      request: { params: DeliveryIdParam },
      responses: {
        202: { description: "Queued", content: { "application/json": { schema: WebhookDelivery } } },
        ...errorResponses(401, 403, 404, { 409: ["subscription_disabled", "delivery_pending"] }),
      },
    }),
    async (c) => {
      const user = callerOf(c);
      const row = await findDelivery(db, user.tenantId, c.req.valid("param").id);
      const sub = await findSubscription(db, user.tenantId, row.subscriptionId);
      if (sub.status !== "active") throw errors.conflict("subscription_disabled", `subscription ${sub.id} is disabled; enable it first`);
      if (row.status === "pending") throw errors.conflict("delivery_pending", `delivery ${row.id} is already queued`);
      const updated = await requeueDelivery(db, row);
      if (!updated) throw errors.conflict("delivery_pending", `delivery ${row.id} changed meanwhile; retry`);
      c.get("logger").info("webhook redelivery queued", { deliveryId: row.id });
      return c.json(deliveryView(updated, await attemptsOf(db, [row.id])), 202);
    },
  );

  return api;
}
