// Schemas of GET /v1/orders/{id}/events.
import { z } from "@hono/zod-openapi";
import { ORDER_EVENT_STREAM_EXAMPLE } from "./examples.ts";

export const OrderEventsHeaders = z.object({
  "last-event-id": z
    .string()
    .regex(/^\d{1,15}$/)
    .optional()
    .openapi({ description: "The id of the last event received, to resume after it", example: "42" }),
});

/** The body is a text/event-stream. */
export const OrderEventStream = z.string().openapi({ example: ORDER_EVENT_STREAM_EXAMPLE });
