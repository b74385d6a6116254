// GET /v1/webhooks/event-types (public): the catalogue of webhook event types and the delivery policy.
import { createRoute } from "@hono/zod-openapi";
import { createApi } from "../http/api.ts";
import type { Services } from "../services.ts";
import { EVENT_CATALOGUE, EVENT_FAMILIES, SUBSCRIBABLE_TYPES } from "../webhooks/catalogue.ts";
import { BACKOFF_FACTOR, LEASE_MARGIN_MS, MAX_ATTEMPTS } from "../webhooks/schedule.ts";
import { WebhookEventTypes } from "./webhook-event-types.schemas.ts";

export function webhookEventTypeRoutes(services: Services) {
  const api = createApi();
  const { config } = services;

  api.openapi(
    createRoute({
      method: "get",
      path: "/webhooks/event-types",
      operationId: "listWebhookEventTypes",
      tags: ["Webhooks"],
      summary: "The webhook event types, when each fires, and the delivery policy",
      description: "The `data` of each event is documented under `webhooks` in this document.",
      responses: { 200: { description: "Event types", content: { "application/json": { schema: WebhookEventTypes } } } },
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

  return api;
}
