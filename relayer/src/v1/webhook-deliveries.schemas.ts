// Schemas of the webhook delivery log (/v1/webhooks/subscriptions/{id}/deliveries, /v1/webhooks/deliveries,
// portal JWT).
import { z } from "@hono/zod-openapi";
import { pathIdParam } from "./shared-schemas.ts";
import { WEBHOOK_DELIVERY_DETAIL_EXAMPLE, WEBHOOK_DELIVERY_EXAMPLE, WEBHOOK_DELIVERY_PAGE_EXAMPLE } from "./examples.ts";

export const DeliveryIdParam = pathIdParam(
  "A delivery id: msg_ followed by 26 characters",
  "msg_01JD2Y6Y8X3K5V4Q9T7R2M1N0P",
  "^msg_[0-9A-Z]{26}$",
);

const WebhookAttempt = z
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

export const WebhookDelivery = z
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
    attemptLog: z.array(WebhookAttempt),
  })
  .openapi("WebhookDelivery", { example: WEBHOOK_DELIVERY_EXAMPLE });

export const WebhookDeliveryPage = z
  .object({ data: z.array(WebhookDelivery), nextCursor: z.string().nullable() })
  .openapi({ example: WEBHOOK_DELIVERY_PAGE_EXAMPLE });

export const WebhookDeliveryDetail = WebhookDelivery.extend({
  payload: z
    .object({ type: z.string(), data: z.record(z.string(), z.unknown()), id: z.string() })
    .openapi({ description: "The envelope as delivered" }),
}).openapi("WebhookDeliveryDetail", { example: WEBHOOK_DELIVERY_DETAIL_EXAMPLE });

export const DeliveriesQuery = z
  .object({
    limit: z.coerce.number().int().min(1).max(100).default(20),
    cursor: z
      .string()
      .regex(/^msg_[0-9A-Z]{26}$/)
      .optional()
      .openapi({ description: "The nextCursor of the previous page" }),
    status: z.enum(["pending", "succeeded", "failed"]).optional(),
  })
  .strict();
