// Webhook subscriptions and their delivery log, for the signed-in portal user's tenant (portal JWT):
// create (the signing secret is shown once), list, read, update, disable, send a test, list deliveries,
// read one, redeliver. The portal's Webhooks page does all of it through these routes. Plus the public
// catalogue of event types.
import { createRoute, z } from "@hono/zod-openapi";
import { and, count, desc, eq, inArray, lt, max, sql } from "drizzle-orm";
import { generateSecret } from "../../../sdk/webhooks.ts";
import { requireUser } from "../auth/middleware.ts";
import { events, webhookAttempts, webhookDeliveries, webhookSubscriptions } from "../db/schema.ts";
import { recordWebhookEvent } from "../events/record.ts";
import { createApi } from "../http/api.ts";
import { errorResponses, errors } from "../http/errors.ts";
import { newId } from "../ids.ts";
import { pathIdParam } from "../payments/schemas.ts";
import type { Services } from "../services.ts";
import { EVENT_CATALOGUE, EVENT_FAMILIES, SUBSCRIBABLE_TYPES, SUBSCRIPTION_PATTERNS } from "./catalogue.ts";
import { DELIVERIES_CHANNEL, disableSubscription } from "./dispatcher.ts";
import { BACKOFF_FACTOR, LEASE_MARGIN_MS, MAX_ATTEMPTS } from "./schedule.ts";
import { createSecretBox } from "./secrets.ts";
import { UnsafeUrlError, checkCallbackUrl, webhookUrlPolicy } from "./url-safety.ts";

/** Active subscriptions a tenant may have. */
export const MAX_SUBSCRIPTIONS = 25;

const SubscriptionIdParam = pathIdParam("A subscription id: whs_ followed by 26 characters", "whs_01JD2Y6Y8X3K5V4Q9T7R2M1N0P", "^whs_[0-9A-Z]{26}$");
const DeliveryIdParam = pathIdParam("A delivery id: msg_ followed by 26 characters", "msg_01JD2Y6Y8X3K5V4Q9T7R2M1N0P", "^msg_[0-9A-Z]{26}$");

const EventPattern = z.enum(SUBSCRIPTION_PATTERNS).openapi({
  description:
    "An event type of GET /v1/webhooks/event-types, a family such as device.*, or * (every type, including types added later). " +
    "test.ping may be listed; a test.ping is delivered only to the subscription whose test was asked for, whatever its types.",
  example: "payment.succeeded",
});

const CallbackUrl = z.string().max(2048).trim().min(1).openapi({
  example: "https://example.com/webhooks/payg",
  description:
    "https (http only for hosts in WEBHOOK_ALLOWED_PRIVATE_HOSTS); the host must resolve to public addresses only (private, loopback, link-local and other special-purpose addresses are refused unless the host, or host:port, is allowlisted); never an endpoint of the service itself (its own API, chain RPC, indexer, device cloud or database), allowlisted or not; no credentials, no fragment",
});

const CreateSubscription = z
  .object({
    url: CallbackUrl,
    eventTypes: z.array(EventPattern).min(1).max(50),
    description: z.string().max(200).trim().optional(),
  })
  .strict()
  .openapi("CreateWebhookSubscription");

const UpdateSubscription = z
  .object({
    url: CallbackUrl.optional(),
    eventTypes: z.array(EventPattern).min(1).max(50).optional(),
    description: z.string().max(200).trim().nullable().optional(),
    status: z.enum(["active", "disabled"]).optional().openapi({ description: "disabled stops deliveries (pending ones fail); active resumes" }),
  })
  .strict()
  .refine((b) => Object.keys(b).length > 0, "at least one field")
  .openapi("UpdateWebhookSubscription");

const Subscription = z
  .object({
    id: z.string().openapi({ example: "whs_01JD2Y6Y8X3K5V4Q9T7R2M1N0P" }),
    url: z.string(),
    eventTypes: z.array(z.string()),
    description: z.string().nullable(),
    status: z.enum(["active", "disabled"]),
    disabledReason: z.string().nullable(),
    disabledAt: z.string().nullable(),
    secretHint: z.string().openapi({ description: "whsec_ and the secret's last four characters", example: "whsec_...k9Q=" }),
    deliveries: z.object({
      pending: z.number().int(),
      succeeded: z.number().int(),
      failed: z.number().int(),
      lastActivityAt: z.string().nullable(),
    }),
    createdAt: z.string(),
    updatedAt: z.string(),
  })
  .openapi("WebhookSubscription");

const CreatedSubscription = Subscription.extend({
  secret: z.string().openapi({ description: "The signing secret (whsec_...). Shown this once: store it now." }),
}).openapi("CreatedWebhookSubscription");

const Attempt = z
  .object({
    attempt: z.number().int(),
    startedAt: z.string(),
    finishedAt: z.string().nullable(),
    durationMs: z.number().int().nullable(),
    statusCode: z.number().int().nullable().openapi({ description: "The endpoint's HTTP status; null: no answer (see error)" }),
    error: z.string().nullable(),
    responseExcerpt: z.string().nullable().openapi({ description: "The first 512 bytes of the endpoint's answer" }),
  })
  .openapi("WebhookAttempt");

const Delivery = z
  .object({
    id: z.string().openapi({ description: "The delivery id: the envelope's id and webhook-id, the same on every attempt" }),
    subscriptionId: z.string(),
    eventId: z.string(),
    eventType: z.string(),
    status: z.enum(["pending", "succeeded", "failed"]),
    attempts: z.number().int(),
    attemptLimit: z.number().int(),
    nextAttemptAt: z.string().nullable().openapi({ description: "When the next attempt is due (pending only)" }),
    lastStatusCode: z.number().int().nullable(),
    lastError: z.string().nullable(),
    createdAt: z.string(),
    completedAt: z.string().nullable(),
    attemptLog: z.array(Attempt),
  })
  .openapi("WebhookDelivery");

const DeliveryDetail = Delivery.extend({
  payload: z.object({ type: z.string(), data: z.record(z.string(), z.unknown()), id: z.string() }).openapi({ description: "The envelope as delivered" }),
}).openapi("WebhookDeliveryDetail");

const DeliveriesQuery = z
  .object({
    limit: z.coerce.number().int().min(1).max(100).default(20),
    cursor: z.string().regex(/^msg_[0-9A-Z]{26}$/).optional().openapi({ description: "The nextCursor of the previous page" }),
    status: z.enum(["pending", "succeeded", "failed"]).optional(),
  })
  .strict();

const TestQueued = z
  .object({ eventId: z.string(), type: z.literal("test.ping"), subscriptionId: z.string() })
  .openapi("WebhookTestQueued");

const EventTypes = z
  .object({
    data: z.array(z.object({ type: z.string(), summary: z.string(), fires: z.string(), subscribable: z.boolean() })),
    families: z.array(z.string()),
    delivery: z.object({
      maxAttempts: z.number().int(),
      timeoutMs: z.number().int(),
      retryDelaysMs: z.array(z.number().int()).openapi({ description: "Nominal delays before attempts 2..5 (each +-20% jitter)" }),
      leaseMs: z.number().int(),
    }),
  })
  .openapi("WebhookEventTypes");

type SubscriptionRow = typeof webhookSubscriptions.$inferSelect;
type DeliveryRow = typeof webhookDeliveries.$inferSelect;
type AttemptRow = typeof webhookAttempts.$inferSelect;
type Stats = { pending: number; succeeded: number; failed: number; lastActivityAt: string | null };

const iso = (d: Date | null | undefined) => (d ? d.toISOString() : null);

function subscriptionView(row: SubscriptionRow, stats?: Stats) {
  return {
    id: row.id,
    url: row.url,
    eventTypes: row.eventTypes,
    description: row.description,
    status: row.status,
    disabledReason: row.disabledReason,
    disabledAt: iso(row.disabledAt),
    secretHint: `whsec_...${row.secretLast4}`,
    deliveries: stats ?? { pending: 0, succeeded: 0, failed: 0, lastActivityAt: null },
    createdAt: row.createdAt.toISOString(),
    updatedAt: row.updatedAt.toISOString(),
  };
}

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
    attemptLog: attempts.filter((a) => a.deliveryId === row.id).sort((a, b) => a.attempt - b.attempt).map(attemptView),
  };
}

export function webhookRoutes(services: Services) {
  const api = createApi();
  const { db, jwt, config } = services;
  const portal = requireUser(db, jwt);
  const box = createSecretBox(config.WEBHOOK_SECRET_KEY);
  const policy = webhookUrlPolicy(config);
  const security = [{ bearerJwt: [] }];
  const tags = ["Webhooks"];

  function userOf(c: { get(key: "identity"): import("../http/env.ts").Identity }) {
    const identity = c.get("identity");
    if (identity.kind !== "user") throw errors.unauthorized();
    return identity;
  }

  async function checkUrl(url: string) {
    try {
      return (await checkCallbackUrl(url, policy)).toString();
    } catch (error) {
      if (error instanceof UnsafeUrlError) throw errors.invalid(`the callback URL is not allowed: ${error.message}`, [{ path: "url", message: error.message }]);
      throw error;
    }
  }

  async function findSubscription(tenantId: string, id: string) {
    const [row] = await db
      .select()
      .from(webhookSubscriptions)
      .where(and(eq(webhookSubscriptions.id, id), eq(webhookSubscriptions.tenantId, tenantId)));
    if (!row) throw errors.notFound(`webhook subscription ${id}`);
    return row;
  }

  async function statsOf(ids: string[]): Promise<Map<string, Stats>> {
    const out = new Map<string, Stats>();
    if (ids.length === 0) return out;
    const rows = await db
      .select({
        subscriptionId: webhookDeliveries.subscriptionId,
        status: webhookDeliveries.status,
        n: count(),
        last: max(webhookDeliveries.updatedAt),
      })
      .from(webhookDeliveries)
      .where(inArray(webhookDeliveries.subscriptionId, ids))
      .groupBy(webhookDeliveries.subscriptionId, webhookDeliveries.status);
    for (const row of rows) {
      const stats = out.get(row.subscriptionId) ?? { pending: 0, succeeded: 0, failed: 0, lastActivityAt: null };
      stats[row.status] = Number(row.n);
      const last = row.last ? new Date(row.last).toISOString() : null;
      if (last && (!stats.lastActivityAt || last > stats.lastActivityAt)) stats.lastActivityAt = last;
      out.set(row.subscriptionId, stats);
    }
    return out;
  }

  async function attemptsOf(deliveryIds: string[]) {
    if (deliveryIds.length === 0) return [];
    return db.select().from(webhookAttempts).where(inArray(webhookAttempts.deliveryId, deliveryIds));
  }

  async function findDelivery(tenantId: string, id: string) {
    const [row] = await db
      .select()
      .from(webhookDeliveries)
      .where(and(eq(webhookDeliveries.id, id), eq(webhookDeliveries.tenantId, tenantId)));
    if (!row) throw errors.notFound(`webhook delivery ${id}`);
    return row;
  }

  api.openapi(
    createRoute({
      method: "get",
      path: "/webhooks/event-types",
      tags,
      summary: "The webhook event types, when each fires, and the delivery policy",
      description: "The `data` of each event is documented under `webhooks` in this document.",
      responses: { 200: { description: "Event types", content: { "application/json": { schema: EventTypes } } } },
    }),
    (c) =>
      c.json(
        {
          data: Object.entries(EVENT_CATALOGUE).map(([type, e]) => ({
            type,
            summary: e.summary,
            fires: e.fires,
            subscribable: (SUBSCRIBABLE_TYPES as string[]).includes(type),
          })),
          families: EVENT_FAMILIES,
          delivery: {
            maxAttempts: MAX_ATTEMPTS,
            timeoutMs: config.WEBHOOK_TIMEOUT_MS,
            retryDelaysMs: [1, 2, 3, 4].map((n) => config.WEBHOOK_RETRY_BASE_MS * BACKOFF_FACTOR ** (n - 1)),
            leaseMs: config.WEBHOOK_TIMEOUT_MS + LEASE_MARGIN_MS,
          },
        },
        200,
      ),
  );

  api.openapi(
    createRoute({
      method: "post",
      path: "/webhooks/subscriptions",
      tags,
      summary: "Subscribe a callback URL to event types; the response is the only time the signing secret is shown",
      security,
      middleware: [portal] as const,
      request: { body: { content: { "application/json": { schema: CreateSubscription } }, required: true } },
      responses: {
        201: { description: "Created", content: { "application/json": { schema: CreatedSubscription } } },
        ...errorResponses(400, 401, 409, 422),
      },
    }),
    async (c) => {
      const user = userOf(c);
      const body = c.req.valid("json");
      const url = await checkUrl(body.url);
      const [{ n }] = await db
        .select({ n: count() })
        .from(webhookSubscriptions)
        .where(and(eq(webhookSubscriptions.tenantId, user.tenantId), eq(webhookSubscriptions.status, "active")));
      if (Number(n) >= MAX_SUBSCRIPTIONS) {
        throw errors.conflict("too_many_subscriptions", `a tenant may have ${MAX_SUBSCRIPTIONS} active subscriptions; disable one first`);
      }
      const id = newId("whs");
      const secret = generateSecret();
      const [row] = await db
        .insert(webhookSubscriptions)
        .values({
          id,
          tenantId: user.tenantId,
          url,
          eventTypes: [...new Set(body.eventTypes)],
          description: body.description || null,
          secretCiphertext: box.seal(secret, id),
          secretLast4: secret.slice(-4),
          createdBy: user.userId,
        })
        .returning();
      c.get("logger").info("webhook subscription created", { subscriptionId: id, host: new URL(url).host });
      return c.json({ ...subscriptionView(row), secret }, 201);
    },
  );

  api.openapi(
    createRoute({
      method: "get",
      path: "/webhooks/subscriptions",
      tags,
      summary: "List the tenant's webhook subscriptions (never their secrets)",
      security,
      middleware: [portal] as const,
      responses: {
        200: { description: "Subscriptions, newest first", content: { "application/json": { schema: z.object({ data: z.array(Subscription) }) } } },
        ...errorResponses(401),
      },
    }),
    async (c) => {
      const user = userOf(c);
      const rows = await db
        .select()
        .from(webhookSubscriptions)
        .where(eq(webhookSubscriptions.tenantId, user.tenantId))
        .orderBy(desc(webhookSubscriptions.createdAt));
      const stats = await statsOf(rows.map((r) => r.id));
      return c.json({ data: rows.map((r) => subscriptionView(r, stats.get(r.id))) }, 200);
    },
  );

  api.openapi(
    createRoute({
      method: "get",
      path: "/webhooks/subscriptions/{id}",
      tags,
      summary: "One webhook subscription",
      security,
      middleware: [portal] as const,
      request: { params: SubscriptionIdParam },
      responses: {
        200: { description: "The subscription", content: { "application/json": { schema: Subscription } } },
        ...errorResponses(401, 404),
      },
    }),
    async (c) => {
      const row = await findSubscription(userOf(c).tenantId, c.req.valid("param").id);
      return c.json(subscriptionView(row, (await statsOf([row.id])).get(row.id)), 200);
    },
  );

  api.openapi(
    createRoute({
      method: "patch",
      path: "/webhooks/subscriptions/{id}",
      tags,
      summary: "Change a subscription's URL, event types or description, or disable or re-enable it",
      security,
      middleware: [portal] as const,
      request: {
        params: SubscriptionIdParam,
        body: { content: { "application/json": { schema: UpdateSubscription } }, required: true },
      },
      responses: {
        200: { description: "The updated subscription", content: { "application/json": { schema: Subscription } } },
        ...errorResponses(400, 401, 404, 409, 422),
      },
    }),
    async (c) => {
      const user = userOf(c);
      const current = await findSubscription(user.tenantId, c.req.valid("param").id);
      const body = c.req.valid("json");
      const changes: Partial<typeof webhookSubscriptions.$inferInsert> = { updatedAt: new Date() };
      if (body.url !== undefined) changes.url = await checkUrl(body.url);
      if (body.eventTypes !== undefined) changes.eventTypes = [...new Set(body.eventTypes)];
      if (body.description !== undefined) changes.description = body.description || null;
      if (body.status === "active" && current.status === "disabled") {
        const [{ n }] = await db
          .select({ n: count() })
          .from(webhookSubscriptions)
          .where(and(eq(webhookSubscriptions.tenantId, user.tenantId), eq(webhookSubscriptions.status, "active")));
        if (Number(n) >= MAX_SUBSCRIPTIONS) {
          throw errors.conflict("too_many_subscriptions", `a tenant may have ${MAX_SUBSCRIPTIONS} active subscriptions`);
        }
        Object.assign(changes, { status: "active", disabledReason: null, disabledAt: null });
      }
      await db.transaction(async (tx) => {
        await tx.update(webhookSubscriptions).set(changes).where(eq(webhookSubscriptions.id, current.id));
        if (body.status === "disabled" && current.status === "active") {
          await disableSubscription(tx, current.id, `disabled by ${user.email}`);
        }
      });
      c.get("logger").info("webhook subscription updated", { subscriptionId: current.id, fields: Object.keys(body) });
      const row = await findSubscription(user.tenantId, current.id);
      return c.json(subscriptionView(row, (await statsOf([row.id])).get(row.id)), 200);
    },
  );

  api.openapi(
    createRoute({
      method: "delete",
      path: "/webhooks/subscriptions/{id}",
      tags,
      summary: "Disable a subscription: no more deliveries, pending ones fail; its delivery log is kept",
      security,
      middleware: [portal] as const,
      request: { params: SubscriptionIdParam },
      responses: {
        200: { description: "Disabled", content: { "application/json": { schema: Subscription } } },
        ...errorResponses(401, 404),
      },
    }),
    async (c) => {
      const user = userOf(c);
      const current = await findSubscription(user.tenantId, c.req.valid("param").id);
      if (current.status === "active") {
        await db.transaction((tx) => disableSubscription(tx, current.id, `disabled by ${user.email}`));
        c.get("logger").info("webhook subscription disabled", { subscriptionId: current.id });
      }
      const row = await findSubscription(user.tenantId, current.id);
      return c.json(subscriptionView(row, (await statsOf([row.id])).get(row.id)), 200);
    },
  );

  api.openapi(
    createRoute({
      method: "post",
      path: "/webhooks/subscriptions/{id}/test",
      tags,
      summary: "Send a test: queues a test.ping event for this subscription only",
      security,
      middleware: [portal] as const,
      request: { params: SubscriptionIdParam },
      responses: {
        202: { description: "Queued", content: { "application/json": { schema: TestQueued } } },
        ...errorResponses(401, 404, 409),
      },
    }),
    async (c) => {
      const user = userOf(c);
      const sub = await findSubscription(user.tenantId, c.req.valid("param").id);
      if (sub.status !== "active") throw errors.conflict("subscription_disabled", `subscription ${sub.id} is disabled`);
      const eventId = await db.transaction((tx) =>
        recordWebhookEvent(tx, user.tenantId, "test.ping", {
          subscriptionId: sub.id,
          message: "A test delivery from the developer portal.",
          sentAt: new Date().toISOString(),
          sentBy: user.userId,
        }),
      );
      return c.json({ eventId, type: "test.ping" as const, subscriptionId: sub.id }, 202);
    },
  );

  api.openapi(
    createRoute({
      method: "get",
      path: "/webhooks/subscriptions/{id}/deliveries",
      tags,
      summary: "The delivery log of a subscription: each delivery with its attempts, newest first",
      security,
      middleware: [portal] as const,
      request: { params: SubscriptionIdParam, query: DeliveriesQuery },
      responses: {
        200: {
          description: "A page of deliveries",
          content: { "application/json": { schema: z.object({ data: z.array(Delivery), nextCursor: z.string().nullable() }) } },
        },
        ...errorResponses(401, 404, 422),
      },
    }),
    async (c) => {
      const user = userOf(c);
      const sub = await findSubscription(user.tenantId, c.req.valid("param").id);
      const q = c.req.valid("query");
      const conditions = [eq(webhookDeliveries.subscriptionId, sub.id)];
      if (q.status) conditions.push(eq(webhookDeliveries.status, q.status));
      if (q.cursor) conditions.push(lt(webhookDeliveries.id, q.cursor));
      const rows = await db
        .select()
        .from(webhookDeliveries)
        .where(and(...conditions))
        .orderBy(desc(webhookDeliveries.id))
        .limit(q.limit + 1);
      const page = rows.slice(0, q.limit);
      const attempts = await attemptsOf(page.map((r) => r.id));
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
      tags,
      summary: "One delivery: its attempts and the envelope delivered",
      security,
      middleware: [portal] as const,
      request: { params: DeliveryIdParam },
      responses: {
        200: { description: "The delivery", content: { "application/json": { schema: DeliveryDetail } } },
        ...errorResponses(401, 404),
      },
    }),
    async (c) => {
      const row = await findDelivery(userOf(c).tenantId, c.req.valid("param").id);
      const [event] = await db.select().from(events).where(eq(events.id, row.eventId));
      return c.json(
        { ...deliveryView(row, await attemptsOf([row.id])), payload: { type: event.type, data: event.data, id: row.id } },
        200,
      );
    },
  );

  api.openapi(
    createRoute({
      method: "post",
      path: "/webhooks/deliveries/{id}/redeliver",
      tags,
      summary: "Redeliver by hand: one more attempt at once, with the same id (for failed or succeeded deliveries)",
      security,
      middleware: [portal] as const,
      request: { params: DeliveryIdParam },
      responses: {
        202: { description: "Queued", content: { "application/json": { schema: Delivery } } },
        ...errorResponses(401, 404, 409),
      },
    }),
    async (c) => {
      const user = userOf(c);
      const row = await findDelivery(user.tenantId, c.req.valid("param").id);
      const sub = await findSubscription(user.tenantId, row.subscriptionId);
      if (sub.status !== "active") throw errors.conflict("subscription_disabled", `subscription ${sub.id} is disabled; enable it first`);
      if (row.status === "pending") throw errors.conflict("delivery_pending", `delivery ${row.id} is already queued`);
      const now = new Date();
      const [updated] = await db.transaction(async (tx) => {
        const result = await tx
          .update(webhookDeliveries)
          .set({ status: "pending", attemptLimit: row.attempts + 1, nextAttemptAt: now, completedAt: null, updatedAt: now })
          .where(and(eq(webhookDeliveries.id, row.id), eq(webhookDeliveries.attempts, row.attempts)))
          .returning();
        if (result.length > 0) await tx.execute(sql`select pg_notify(${DELIVERIES_CHANNEL}, '')`);
        return result;
      });
      if (!updated) throw errors.conflict("delivery_pending", `delivery ${row.id} changed meanwhile; retry`);
      c.get("logger").info("webhook redelivery queued", { deliveryId: row.id });
      return c.json(deliveryView(updated, await attemptsOf([row.id])), 202);
    },
  );

  return api;
}
