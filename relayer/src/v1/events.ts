// The events API: the tenant's webhook events (every event its subscriptions could receive), newest first,
// kept for WEBHOOK_EVENT_RETENTION_DAYS, so that an integrator can reconcile what its endpoint missed. Read
// with a developer API key or a portal JWT; the events are webhooks/event-log.ts's.
import { createRoute } from "@hono/zod-openapi";
import { requireUserOrApiKey } from "../auth/middleware.ts";
import { createApi } from "../http/api.ts";
import { errorResponses } from "../http/errors.ts";
import type { Services } from "../services.ts";
import type { EventType } from "../webhooks/catalogue.ts";
import { type EventRow, findEvent, listEvents } from "../webhooks/event-log.ts";
import { Event, EventIdParam, EventPage, EventsQuery } from "./events.schemas.ts";

function eventView(row: EventRow) {
  // The table holds only catalogue types (events/record.ts takes no other).
  return { id: row.id, type: row.type as EventType, createdAt: row.createdAt.toISOString(), data: row.data };
}

export function eventRoutes(services: Services) {
  const api = createApi();
  const {
    database: { db },
    jwt,
    config,
  } = services;
  const auth = requireUserOrApiKey(db, jwt, ["developer"]);
  const security: Array<Record<string, string[]>> = [{ bearerJwt: [] }, { apiKey: ["developer"] }];
  const tags = ["Events"];
  const kept = `Events are kept ${config.WEBHOOK_EVENT_RETENTION_DAYS} days (WEBHOOK_EVENT_RETENTION_DAYS), then deleted with their deliveries.`;

  api.openapi(
    createRoute({
      method: "get",
      path: "/events",
      operationId: "listEvents",
      tags,
      summary: "The tenant's webhook events, newest first: to reconcile what an endpoint missed",
      description:
        "Every webhook event of the tenant, whether or not a subscription received it, newest first, a page at a " +
        "time (`nextCursor` is the next page's `cursor`; null on the last). Filter by `type` (a type, or a family " +
        `such as payment.*) and by creation time (\`from\` inclusive, \`to\` exclusive). ${kept}`,
      security,
      middleware: [auth] as const,
      request: { query: EventsQuery },
      responses: {
        200: { description: "A page of events", content: { "application/json": { schema: EventPage } } },
        ...errorResponses(401, 403, 422),
      },
    }),
    async (c) => {
      const q = c.req.valid("query");
      const family = q.type?.endsWith(".*") ? q.type.slice(0, -2) : undefined;
      const rows = await listEvents(db, c.get("identity").tenantId, {
        limit: q.limit,
        cursor: q.cursor,
        type: family === undefined ? q.type : undefined,
        family,
        from: q.from ? new Date(q.from) : undefined,
        to: q.to ? new Date(q.to) : undefined,
      });
      const page = rows.slice(0, q.limit);
      return c.json({ data: page.map(eventView), nextCursor: rows.length > q.limit ? page[page.length - 1].id : null }, 200);
    },
  );

  api.openapi(
    createRoute({
      method: "get",
      path: "/events/{id}",
      operationId: "getEvent",
      tags,
      summary: "One webhook event of the tenant (a delivery's eventId)",
      description: `404 for an event of another tenant, or one past its retention. ${kept}`,
      security,
      middleware: [auth] as const,
      request: { params: EventIdParam },
      responses: {
        200: { description: "The event", content: { "application/json": { schema: Event } } },
        ...errorResponses(401, 403, 404),
      },
    }),
    async (c) => c.json(eventView(await findEvent(db, c.get("identity").tenantId, c.req.valid("param").id)), 200),
  );

  return api;
}
