// Schemas of GET /v1/webhooks/event-types.
import { z } from "@hono/zod-openapi";
import { WEBHOOK_EVENT_TYPES_EXAMPLE } from "./examples.ts";

export const WebhookEventTypes = z
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
  .openapi("WebhookEventTypes", { example: WEBHOOK_EVENT_TYPES_EXAMPLE });
