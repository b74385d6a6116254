// Schemas of the events API (/v1/events): the tenant's webhook events, listed and read one at a time.
import { z } from "@hono/zod-openapi";
import { EVENT_FAMILIES, EVENT_TYPES } from "../webhooks/catalogue.ts";
import { EVENT_EXAMPLE, EVENT_PAGE_EXAMPLE } from "./examples.ts";
import { pathIdParam } from "./shared-schemas.ts";

export const EVENT_ID_PATTERN = /^evt_[0-9A-Z]{26}$/;

export const EventIdParam = pathIdParam(
  "An event id: evt_ followed by 26 characters (a delivery's eventId)",
  "evt_01JD2Y6Y8X3K5V4Q9T7R2M1N0P",
  EVENT_ID_PATTERN.source,
);

export const Event = z
  .object({
    id: z.string().openapi({ example: "evt_01JD2Y6Y8X3K5V4Q9T7R2M1N0P" }),
    type: z.enum(EVENT_TYPES).openapi({ example: "payment.succeeded" }),
    createdAt: z.string().openapi({ description: "When the event happened (ISO 8601, UTC)", example: "2026-01-01T12:00:00.000Z" }),
    data: z.record(z.string(), z.unknown()).openapi({
      description: "The event's data, as its webhook deliveries carry it (the schema of each type is under `webhooks` in this document)",
    }),
  })
  .openapi("Event", {
    example: EVENT_EXAMPLE,
    description:
      "A webhook event of the tenant: one of the events its subscriptions could receive (a test.ping included), whether " +
      "or not a subscription received it. Each delivery of it (GET /v1/webhooks/subscriptions/{id}/deliveries) names it " +
      "in `eventId`; the delivery's envelope carries `type` and `data` as here, with the delivery's own id.",
  });

export const EventPage = z
  .object({ data: z.array(Event), nextCursor: z.string().nullable() })
  .openapi("EventPage", { example: EVENT_PAGE_EXAMPLE });

const TYPE_FILTERS = [...EVENT_TYPES, ...EVENT_FAMILIES] as [string, ...string[]];

/** Event ids carry their time (ULID), and the database and ISO 8601's four-digit years stop at 9999: a time
 * outside 1970-9999 (UTC, once its offset is applied) is refused with the other invalid parameters. */
const LATEST_TIME = Date.UTC(10000, 0, 1);
const Timestamp = z.iso.datetime({ offset: true }).refine((value) => {
  const time = Date.parse(value);
  return time >= 0 && time < LATEST_TIME;
}, "a time from 1970 to 9999, UTC");

export const EventsQuery = z
  .object({
    limit: z.coerce.number().int().min(1).max(100).default(20),
    cursor: z.string().regex(EVENT_ID_PATTERN).optional().openapi({ description: "The nextCursor of the previous page" }),
    type: z.enum(TYPE_FILTERS).optional().openapi({
      description: "Only events of this type (e.g. payment.succeeded), or of this family (e.g. payment.*)",
      example: "payment.*",
    }),
    from: Timestamp.optional().openapi({
      description: "Only events created at or after this time (ISO 8601 with a time zone)",
      example: "2026-01-01T00:00:00Z",
    }),
    to: Timestamp.optional().openapi({
      description: "Only events created before this time (ISO 8601 with a time zone)",
      example: "2026-01-02T00:00:00Z",
    }),
  })
  .strict();
