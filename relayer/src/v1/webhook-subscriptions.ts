// Webhook subscriptions of the caller's tenant, with a portal JWT or a developer API key: create (the signing
// secret is shown once), list, read, update (disable, re-enable), delete, send a test, rotate the signing
// secret. The portal's Webhooks page does all of it through these routes; the delivery log is v1/webhook-deliveries.ts, the catalogue of event types
// v1/webhook-event-types.ts.
import { createRoute } from "@hono/zod-openapi";
import { generateSecret } from "../../../sdk/src/webhooks.ts";
import { requireUserOrApiKey } from "../auth/middleware.ts";
import { createApi } from "../http/api.ts";
import { errorResponses } from "../http/errors.ts";
import { errors } from "../errors.ts";
import { rateLimit } from "../http/middleware.ts";
import { newId } from "../ids.ts";
import type { Services } from "../services.ts";
import { createSecretBox, previousSecretLive } from "../webhooks/secrets.ts";
import {
  type DeliveryCounts,
  type SubscriptionRow,
  archiveSubscription,
  deliveryCounts,
  findSubscription,
  insertSubscription,
  listSubscriptions,
  queueTestPing,
  reactivateSubscription,
  rotateSubscriptionSecret,
  updateSubscription,
} from "../webhooks/subscriptions-store.ts";
import { UnsafeUrlError, checkCallbackUrl, webhookUrlPolicy } from "../webhooks/url-safety.ts";
import { callerOf } from "./caller.ts";
import {
  CreateWebhookSubscription,
  CreatedWebhookSubscription,
  RotatedWebhookSecret,
  SubscriptionIdParam,
  UpdateWebhookSubscription,
  WebhookSubscription,
  WebhookSubscriptionList,
  WebhookTestQueued,
} from "./webhook-subscriptions.schemas.ts";

function subscriptionView(row: SubscriptionRow, counts?: DeliveryCounts) {
  const previous = previousSecretLive(row, new Date());
  return {
    id: row.id,
    url: row.url,
    eventTypes: row.eventTypes,
    description: row.description,
    status: row.status,
    disabledReason: row.disabledReason,
    disabledAt: row.disabledAt?.toISOString() ?? null,
    secretHint: `whsec_...${row.secretLast4}`,
    previousSecretHint: previous ? `whsec_...${row.previousSecretLast4}` : null,
    previousSecretExpiresAt: previous ? row.previousSecretExpiresAt!.toISOString() : null,
    deliveries: counts ?? { pending: 0, succeeded: 0, failed: 0, lastActivityAt: null },
    createdAt: row.createdAt.toISOString(),
    updatedAt: row.updatedAt.toISOString(),
  };
}

export function webhookSubscriptionRoutes(services: Services) {
  const api = createApi();
  const {
    database: { db },
    jwt,
    config,
  } = services;
  const auth = requireUserOrApiKey(db, jwt, ["developer"]);
  const box = createSecretBox(config.WEBHOOK_SECRET_KEY);
  // Test pings per tenant: each is a delivery to the tenant's endpoint, which may be slow.
  const testPingsPerMinute = config.WEBHOOK_TEST_PINGS_PER_MINUTE;
  const testPingLimit = rateLimit({
    capacity: testPingsPerMinute,
    perSecond: testPingsPerMinute / 60,
    key: (c) => `tenant:${callerOf(c).tenantId}`,
  });
  const policy = webhookUrlPolicy(config);
  const security: Array<Record<string, string[]>> = [{ bearerJwt: [] }, { apiKey: ["developer"] }];
  const tags = ["Webhooks"];

  async function checkUrl(url: string) {
    try {
      return (await checkCallbackUrl(url, policy)).toString();
    } catch (error) {
      if (error instanceof UnsafeUrlError)
        throw errors.invalid(`the callback URL is not allowed: ${error.message}`, [{ path: "url", message: error.message }]);
      throw error;
    }
  }

  /** The subscription as the routes answer it, read again with its delivery counts. */
  async function currentView(tenantId: string, id: string) {
    const row = await findSubscription(db, tenantId, id);
    return subscriptionView(row, (await deliveryCounts(db, [row.id])).get(row.id));
  }

  api.openapi(
    createRoute({
      method: "post",
      path: "/webhooks/subscriptions",
      operationId: "createWebhookSubscription",
      tags,
      summary: "Subscribe a callback URL to event types; the response is the only time the signing secret is shown",
      security,
      middleware: [auth] as const,
      request: { body: { content: { "application/json": { schema: CreateWebhookSubscription } }, required: true } },
      responses: {
        201: { description: "Created", content: { "application/json": { schema: CreatedWebhookSubscription } } },
        ...errorResponses(400, 401, 403, { 409: ["too_many_subscriptions"] }, 422),
      },
    }),
    async (c) => {
      const user = callerOf(c);
      const body = c.req.valid("json");
      const url = await checkUrl(body.url);
      // Within the tenant's cap of active subscriptions, enforced in the database (409 past it).
      const id = newId("whs");
      const secret = generateSecret();
      const row = await insertSubscription(db, {
        id,
        tenantId: user.tenantId,
        url,
        eventTypes: [...new Set(body.eventTypes)],
        description: body.description || null,
        secretCiphertext: box.seal(secret, id),
        secretLast4: secret.slice(-4),
        createdBy: user.id,
      });
      c.get("logger").info("webhook subscription created", { subscriptionId: id, host: new URL(url).host });
      return c.json({ ...subscriptionView(row), secret }, 201);
    },
  );

  api.openapi(
    createRoute({
      method: "get",
      path: "/webhooks/subscriptions",
      operationId: "listWebhookSubscriptions",
      tags,
      summary: "List the tenant's webhook subscriptions (never their secrets)",
      security,
      middleware: [auth] as const,
      responses: {
        200: { description: "Subscriptions, newest first", content: { "application/json": { schema: WebhookSubscriptionList } } },
        ...errorResponses(401, 403),
      },
    }),
    async (c) => {
      const rows = await listSubscriptions(db, callerOf(c).tenantId);
      const counts = await deliveryCounts(
        db,
        rows.map((r) => r.id),
      );
      return c.json({ data: rows.map((r) => subscriptionView(r, counts.get(r.id))) }, 200);
    },
  );

  api.openapi(
    createRoute({
      method: "get",
      path: "/webhooks/subscriptions/{id}",
      operationId: "getWebhookSubscription",
      tags,
      summary: "One webhook subscription",
      security,
      middleware: [auth] as const,
      request: { params: SubscriptionIdParam },
      responses: {
        200: { description: "The subscription", content: { "application/json": { schema: WebhookSubscription } } },
        ...errorResponses(401, 403, 404),
      },
    }),
    async (c) => c.json(await currentView(callerOf(c).tenantId, c.req.valid("param").id), 200),
  );

  api.openapi(
    createRoute({
      method: "patch",
      path: "/webhooks/subscriptions/{id}",
      operationId: "updateWebhookSubscription",
      tags,
      summary: "Change a subscription's URL, event types or description, or disable or re-enable it",
      security,
      middleware: [auth] as const,
      request: {
        params: SubscriptionIdParam,
        body: { content: { "application/json": { schema: UpdateWebhookSubscription } }, required: true },
      },
      responses: {
        200: { description: "The updated subscription", content: { "application/json": { schema: WebhookSubscription } } },
        ...errorResponses(400, 401, 403, 404, { 409: ["too_many_subscriptions"] }, 422),
      },
    }),
    async (c) => {
      const user = callerOf(c);
      const current = await findSubscription(db, user.tenantId, c.req.valid("param").id);
      const body = c.req.valid("json");
      const changes: Parameters<typeof updateSubscription>[2] = { updatedAt: new Date() };
      if (body.url !== undefined) changes.url = await checkUrl(body.url);
      if (body.eventTypes !== undefined) changes.eventTypes = [...new Set(body.eventTypes)];
      if (body.description !== undefined) changes.description = body.description || null;
      const disabling = body.status === "disabled" && current.status === "active";
      // Re-enabling counts against the cap, in the database like a create (409 past it).
      if (body.status === "active" && current.status === "disabled") await reactivateSubscription(db, user.tenantId, current.id, changes);
      else await updateSubscription(db, current.id, changes, disabling ? `disabled by ${user.label}` : undefined);
      c.get("logger").info("webhook subscription updated", { subscriptionId: current.id, fields: Object.keys(body) });
      return c.json(await currentView(user.tenantId, current.id), 200);
    },
  );

  api.openapi(
    createRoute({
      method: "delete",
      path: "/webhooks/subscriptions/{id}",
      operationId: "deleteWebhookSubscription",
      tags,
      summary: "Delete a subscription: no more deliveries (pending ones fail), gone from the list and from reads",
      description:
        "Deletes the subscription for good: it is disabled (no new deliveries; pending ones fail), it no longer counts " +
        "towards the tenant's cap, and from then on it is absent from the list and every route naming it answers 404 " +
        "(its delivery log included). Its deliveries are kept, like the events they carry, until the events' retention " +
        "(WEBHOOK_EVENT_RETENTION_DAYS) ends; GET /v1/events still lists the events. To stop deliveries for a while " +
        'instead, PATCH it with `{"status": "disabled"}`.',
      security,
      middleware: [auth] as const,
      request: { params: SubscriptionIdParam },
      responses: {
        204: { description: "Deleted" },
        ...errorResponses(401, 403, 404),
      },
    }),
    async (c) => {
      const user = callerOf(c);
      const current = await findSubscription(db, user.tenantId, c.req.valid("param").id);
      if (!(await archiveSubscription(db, current.id, `deleted by ${user.label}`)))
        throw errors.notFound(`webhook subscription ${current.id}`);
      c.get("logger").info("webhook subscription deleted", { subscriptionId: current.id });
      return c.body(null, 204);
    },
  );

  api.openapi(
    createRoute({
      method: "post",
      path: "/webhooks/subscriptions/{id}/test",
      operationId: "sendTestWebhook",
      tags,
      summary: "Send a test: queues a test.ping event for this subscription only",
      description:
        `Rate-limited per tenant (all its users and subscriptions together): ${testPingsPerMinute} at once, then ` +
        `${testPingsPerMinute} a minute in each relayer process (WEBHOOK_TEST_PINGS_PER_MINUTE); beyond that 429 ` +
        "`rate_limited` with a Retry-After header (seconds).",
      security,
      middleware: [auth, testPingLimit] as const,
      request: { params: SubscriptionIdParam },
      responses: {
        202: { description: "Queued", content: { "application/json": { schema: WebhookTestQueued } } },
        ...errorResponses(401, 403, 404, { 409: ["subscription_disabled"] }, 429),
      },
    }),
    async (c) => {
      const user = callerOf(c);
      const sub = await findSubscription(db, user.tenantId, c.req.valid("param").id);
      if (sub.status !== "active") throw errors.conflict("subscription_disabled", `subscription ${sub.id} is disabled`);
      const message =
        c.get("identity").kind === "user" ? "A test delivery from the developer portal." : "A test delivery requested with an API key.";
      const eventId = await queueTestPing(db, user.tenantId, sub.id, user.id, message);
      return c.json({ eventId, type: "test.ping" as const, subscriptionId: sub.id }, 202);
    },
  );

  api.openapi(
    createRoute({
      method: "post",
      path: "/webhooks/subscriptions/{id}/rotate-secret",
      operationId: "rotateWebhookSecret",
      tags,
      summary:
        "Issue a new signing secret; the old one keeps signing for a grace period. The response is the only time the new secret is shown",
      description:
        "Replaces the subscription's signing secret with a new one (whsec_...), returned in `secret` this once. For " +
        "WEBHOOK_SECRET_GRACE_SECONDS (24 hours by default; `previousSecretExpiresAt` says until when) every delivery " +
        "is signed with both secrets: `webhook-signature` carries two space-separated signatures, `v1,<new> v1,<old>` " +
        "(Standard Webhooks: a receiver accepts the delivery if one of them verifies with the secret it has), while " +
        "`x-service-signature`, which holds one signature only, stays signed with the old secret until the grace " +
        "period ends and with the new one from then on. So a receiver that checks `webhook-signature` can switch to " +
        "the new secret at once; one that checks only `x-service-signature` must switch at `previousSecretExpiresAt` " +
        "(or accept either secret meanwhile). A rotation during a grace period replaces the older secret at once: " +
        "the secret current before the call becomes the previous one, so rotating twice retires a leaked secret " +
        "immediately. x-service-signature signs no time: a captured delivery verifies for as long as its secret is " +
        "accepted, which is one reason to verify `webhook-signature` with `webhook-timestamp`.",
      security,
      middleware: [auth] as const,
      request: { params: SubscriptionIdParam },
      responses: {
        200: { description: "Rotated", content: { "application/json": { schema: RotatedWebhookSecret } } },
        ...errorResponses(401, 403, 404),
      },
    }),
    async (c) => {
      const user = callerOf(c);
      const sub = await findSubscription(db, user.tenantId, c.req.valid("param").id);
      const secret = generateSecret();
      const graceMs = config.WEBHOOK_SECRET_GRACE_SECONDS * 1000;
      await rotateSubscriptionSecret(
        db,
        sub.id,
        box.seal(secret, sub.id),
        secret.slice(-4),
        graceMs > 0 ? new Date(Date.now() + graceMs) : null,
      );
      c.get("logger").info("webhook signing secret rotated", { subscriptionId: sub.id, graceSeconds: config.WEBHOOK_SECRET_GRACE_SECONDS });
      return c.json({ ...(await currentView(user.tenantId, sub.id)), secret }, 200);
    },
  );

  return api;
}
