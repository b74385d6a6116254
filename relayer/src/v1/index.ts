// The payment service's interface under /v1: every route of the interface (one file a route group in this
// folder, its zod schemas beside it in <group>.schemas.ts), its OpenAPI 3.1 document at /v1/openapi.json and
// the reference page at /v1/docs.
import { ROLE_SCOPES, documentAccess } from "../auth/access-docs.ts";
import { createApi } from "../http/api.ts";
import { docsPage } from "../http/docs-page.ts";
import { documentIdempotency, idempotency, idempotencyScope } from "../http/idempotency.ts";
import type { Services } from "../services.ts";
import { WEBHOOKS_GUIDE, registerWebhookDocs } from "../webhooks/catalogue.ts";
import { apiKeyRoutes } from "./api-keys.ts";
import { assetRoutes } from "./assets.ts";
import { authRoutes } from "./auth.ts";
import { deviceRoutes } from "./devices.ts";
import { eventRoutes } from "./events.ts";
import { healthRoutes } from "./health.ts";
import { orderEventRoutes } from "./order-events.ts";
import { orderRoutes } from "./orders.ts";
import { quoteRoutes } from "./quote.ts";
import { revenueOverviewRoutes, revenueRoutes } from "./revenue.ts";
import { statsRoutes } from "./stats.ts";
import { ticketRoutes } from "./tickets.ts";
import { webhookDeliveryRoutes } from "./webhook-deliveries.ts";
import { webhookEventTypeRoutes } from "./webhook-event-types.ts";
import { webhookSubscriptionRoutes } from "./webhook-subscriptions.ts";

export const PAYMENT_API_VERSION = "1.0.0";

export function paymentsApi(services: Services) {
  // No onError of its own: the app's (app.ts) answers errors in the same envelope. A sub-app with an error
  // handler has Hono wrap each of its handlers in one more composed layer, on every request.
  const api = createApi();

  api.openAPIRegistry.registerComponent("securitySchemes", "apiKey", {
    type: "http",
    scheme: "bearer",
    description:
      "An API key (`payg_` + 38 characters) from the portal's API Keys page: `Authorization: Bearer payg_...`. " +
      "A key belongs to one tenant and has one role; an operation's `apiKey` requirement lists the roles it " +
      `takes (any one of them): developer, to ${ROLE_SCOPES.developer}; agent, to ${ROLE_SCOPES.agent}. ` +
      "No key takes the portal's own operations (API keys, the revenue overview); the webhook and event operations take " +
      "a developer key or a portal JWT. A request without a " +
      "credential the operation takes (none; an unknown, revoked or malformed one; a portal JWT where a key is " +
      "needed; a key where a portal session is needed) is 401 `unauthorized`; a key whose role the operation " +
      "does not take is 403 `forbidden`. Public operations ignore any credential sent to them.",
  });
  api.openAPIRegistry.registerComponent("securitySchemes", "bearerJwt", {
    type: "http",
    scheme: "bearer",
    bearerFormat: "JWT",
    description:
      "The portal's session token from POST /v1/auth/login, as `Authorization: Bearer <JWT>` (the /v1 routes " +
      "read no cookie: the portal's pages forward their session cookie as this header). It takes the portal's " +
      "operations and GET /v1/auth/me, no operation documented for API keys alone.",
  });

  // Idempotency-Key on every POST (http/idempotency.ts): only POST requests pass through it.
  api.on(
    "POST",
    "*",
    idempotency({
      db: services.database.db,
      secretKey: services.config.WEBHOOK_SECRET_KEY,
      scopeOf: idempotencyScope(services.database.db, services.jwt),
    }),
  );

  // The OpenAPI document lists the operations in this order.
  api.route("/", healthRoutes(services, PAYMENT_API_VERSION));
  api.route("/", authRoutes(services));
  api.route("/", apiKeyRoutes(services));
  api.route("/", deviceRoutes(services));
  api.route("/", quoteRoutes(services));
  api.route("/", orderRoutes(services));
  api.route("/", orderEventRoutes(services));
  api.route("/", revenueRoutes(services));
  api.route("/", statsRoutes(services));
  api.route("/", ticketRoutes(services));
  api.route("/", webhookEventTypeRoutes(services));
  api.route("/", webhookSubscriptionRoutes(services));
  api.route("/", webhookDeliveryRoutes(services));
  api.route("/", eventRoutes(services));
  api.route("/", revenueOverviewRoutes(services));
  api.route("/", assetRoutes(services));
  registerWebhookDocs(api.openAPIRegistry);
  documentAccess(api.openAPIRegistry);
  documentIdempotency(api.openAPIRegistry);

  api.doc31("/openapi.json", {
    openapi: "3.1.0",
    info: {
      title: "Device payment and revenue service",
      version: PAYMENT_API_VERSION,
      description:
        "Pay-as-you-go energy: quote, order and pay a device session on any rail, follow the order, read revenue " +
        "splits, earnings and network statistics. Errors share one envelope: " +
        '`{"error": {"code", "message", "details"?}, "requestId"}`. Any route may answer 503 `unavailable` with ' +
        "Retry-After while a dependency (its database, the chain, the indexer) cannot be reached: retry then. " +
        "Bodies are at most 1 MiB (413 `body_too_large`); a JSON body nesting arrays or objects more than 32 " +
        "levels deep, or with an object of more than 256 members, is 422 `invalid_parameters` before it is parsed.",
    },
    servers: [{ url: `${services.config.publicBaseUrl}/v1` }],
    tags: [{ name: "Webhooks", description: WEBHOOKS_GUIDE }],
  });
  api.route("/docs", docsPage("Payment API reference", "/v1/openapi.json"));
  return api;
}
