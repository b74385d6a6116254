// Webhook subscriptions of the signed-in portal user's tenant (portal JWT): create (the signing secret is
// shown once), list, read, update, disable, send a test. The portal's Webhooks page does all of it through
// these routes; the delivery log is v1/webhook-deliveries.ts, the catalogue of event types
// v1/webhook-event-types.ts.
import { createRoute } from "@hono/zod-openapi";
import { generateSecret } from "../../../sdk/webhooks.ts";
import { requireUser } from "../auth/middleware.ts";
import { createApi } from "../http/api.ts";
import { errorResponses, errors } from "../http/errors.ts";
import { newId } from "../ids.ts";
import type { Services } from "../services.ts";
import { createSecretBox } from "../webhooks/secrets.ts";
import {
  type DeliveryCounts,
  type SubscriptionRow,
  countActiveSubscriptions,
  deliveryCounts,
  disableSubscriptionNow,
  findSubscription,
  insertSubscription,
  listSubscriptions,
  queueTestPing,
  updateSubscription,
} from "../webhooks/subscriptions-store.ts";
import { UnsafeUrlError, checkCallbackUrl, webhookUrlPolicy } from "../webhooks/url-safety.ts";
import { portalUser } from "./portal-user.ts";
import {
  CreateWebhookSubscription,
  CreatedWebhookSubscription,
  SubscriptionIdParam,
  UpdateWebhookSubscription,
  WebhookSubscription,
  WebhookSubscriptionList,
  WebhookTestQueued,
} from "./webhook-subscriptions.schemas.ts";

/** Active subscriptions a tenant may have. */
const MAX_SUBSCRIPTIONS = 25;

function subscriptionView(row: SubscriptionRow, counts?: DeliveryCounts) {
  return {
    id: row.id,
    url: row.url,
    eventTypes: row.eventTypes,
    description: row.description,
    status: row.status,
    disabledReason: row.disabledReason,
    disabledAt: row.disabledAt?.toISOString() ?? null,
    secretHint: `whsec_...${row.secretLast4}`,
    deliveries: counts ?? { pending: 0, succeeded: 0, failed: 0, lastActivityAt: null },
    createdAt: row.createdAt.toISOString(),
    updatedAt: row.updatedAt.toISOString(),
  };
}

export function webhookSubscriptionRoutes(services: Services) {
  const api = createApi();
  const { db, jwt, config } = services;
  const portal = requireUser(db, jwt);
  const box = createSecretBox(config.WEBHOOK_SECRET_KEY);
  const policy = webhookUrlPolicy(config);
  const security = [{ bearerJwt: [] }];
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
      tags,
      summary: "Subscribe a callback URL to event types; the response is the only time the signing secret is shown",
      security,
      middleware: [portal] as const,
      request: { body: { content: { "application/json": { schema: CreateWebhookSubscription } }, required: true } },
      responses: {
        201: { description: "Created", content: { "application/json": { schema: CreatedWebhookSubscription } } },
        ...errorResponses(400, 401, 409, 422),
      },
    }),
    async (c) => {
      const user = portalUser(c);
      const body = c.req.valid("json");
      const url = await checkUrl(body.url);
      if ((await countActiveSubscriptions(db, user.tenantId)) >= MAX_SUBSCRIPTIONS) {
        throw errors.conflict("too_many_subscriptions", `a tenant may have ${MAX_SUBSCRIPTIONS} active subscriptions; disable one first`);
      }
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
        createdBy: user.userId,
      });
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
        200: { description: "Subscriptions, newest first", content: { "application/json": { schema: WebhookSubscriptionList } } },
        ...errorResponses(401),
      },
    }),
    async (c) => {
      const rows = await listSubscriptions(db, portalUser(c).tenantId);
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
      tags,
      summary: "One webhook subscription",
      security,
      middleware: [portal] as const,
      request: { params: SubscriptionIdParam },
      responses: {
        200: { description: "The subscription", content: { "application/json": { schema: WebhookSubscription } } },
        ...errorResponses(401, 404),
      },
    }),
    async (c) => c.json(await currentView(portalUser(c).tenantId, c.req.valid("param").id), 200),
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
        body: { content: { "application/json": { schema: UpdateWebhookSubscription } }, required: true },
      },
      responses: {
        200: { description: "The updated subscription", content: { "application/json": { schema: WebhookSubscription } } },
        ...errorResponses(400, 401, 404, 409, 422),
      },
    }),
    async (c) => {
      const user = portalUser(c);
      const current = await findSubscription(db, user.tenantId, c.req.valid("param").id);
      const body = c.req.valid("json");
      const changes: Parameters<typeof updateSubscription>[2] = { updatedAt: new Date() };
      if (body.url !== undefined) changes.url = await checkUrl(body.url);
      if (body.eventTypes !== undefined) changes.eventTypes = [...new Set(body.eventTypes)];
      if (body.description !== undefined) changes.description = body.description || null;
      if (body.status === "active" && current.status === "disabled") {
        if ((await countActiveSubscriptions(db, user.tenantId)) >= MAX_SUBSCRIPTIONS) {
          throw errors.conflict("too_many_subscriptions", `a tenant may have ${MAX_SUBSCRIPTIONS} active subscriptions`);
        }
        Object.assign(changes, { status: "active", disabledReason: null, disabledAt: null });
      }
      const disabling = body.status === "disabled" && current.status === "active";
      await updateSubscription(db, current.id, changes, disabling ? `disabled by ${user.email}` : undefined);
      c.get("logger").info("webhook subscription updated", { subscriptionId: current.id, fields: Object.keys(body) });
      return c.json(await currentView(user.tenantId, current.id), 200);
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
        200: { description: "Disabled", content: { "application/json": { schema: WebhookSubscription } } },
        ...errorResponses(401, 404),
      },
    }),
    async (c) => {
      const user = portalUser(c);
      const current = await findSubscription(db, user.tenantId, c.req.valid("param").id);
      if (current.status === "active") {
        await disableSubscriptionNow(db, current.id, `disabled by ${user.email}`);
        c.get("logger").info("webhook subscription disabled", { subscriptionId: current.id });
      }
      return c.json(await currentView(user.tenantId, current.id), 200);
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
        202: { description: "Queued", content: { "application/json": { schema: WebhookTestQueued } } },
        ...errorResponses(401, 404, 409),
      },
    }),
    async (c) => {
      const user = portalUser(c);
      const sub = await findSubscription(db, user.tenantId, c.req.valid("param").id);
      if (sub.status !== "active") throw errors.conflict("subscription_disabled", `subscription ${sub.id} is disabled`);
      const eventId = await queueTestPing(db, user.tenantId, sub.id, user.userId);
      return c.json({ eventId, type: "test.ping" as const, subscriptionId: sub.id }, 202);
    },
  );

  return api;
}
