// POST /v1/devices/{id}/tickets: a customer reports a problem on a device (public, like the quote: the
// customer has no credential; rate-limited per client address). The ticket and its ticket.created event
// are written in one transaction.
import { createRoute } from "@hono/zod-openapi";
import { and, eq } from "drizzle-orm";
import { devices, orders, tickets } from "../db/schema.ts";
import { recordWebhookEvent } from "../events/record.ts";
import { createApi } from "../http/api.ts";
import { errorResponses } from "../http/errors.ts";
import { errors } from "../errors.ts";
import { rateLimit } from "../http/middleware.ts";
import { newId } from "../ids.ts";
import type { Services } from "../services.ts";
import { DeviceIdParam } from "./shared-schemas.ts";
import { Ticket, TicketRequest } from "./tickets.schemas.ts";

export function ticketRoutes(services: Services) {
  const api = createApi();
  const {
    database: { db },
  } = services;

  api.openapi(
    createRoute({
      method: "post",
      path: "/devices/{id}/tickets",
      operationId: "reportDeviceProblem",
      tags: ["Devices"],
      summary: "Report a problem on a device (public); the device's tenant gets a ticket.created webhook",
      middleware: [rateLimit({ capacity: 5, perSecond: 1 / 12 })] as const,
      request: {
        params: DeviceIdParam,
        body: { content: { "application/json": { schema: TicketRequest } }, required: true },
      },
      responses: {
        201: { description: "Recorded", content: { "application/json": { schema: Ticket } } },
        ...errorResponses(400, 404, 422, 429),
      },
    }),
    async (c) => {
      const { id: deviceId } = c.req.valid("param");
      const body = c.req.valid("json");
      const [device] = await db.select({ id: devices.id, tenantId: devices.tenantId }).from(devices).where(eq(devices.id, deviceId));
      if (!device) throw errors.notFound(`device ${deviceId}`);
      if (body.orderId) {
        const [order] = await db
          .select({ id: orders.id })
          .from(orders)
          .where(and(eq(orders.id, body.orderId), eq(orders.deviceId, deviceId)));
        if (!order)
          throw errors.invalid("the order is not an order of this device", [{ path: "orderId", message: "unknown order for this device" }]);
      }
      const row = await db.transaction(async (tx) => {
        const [ticket] = await tx
          .insert(tickets)
          .values({
            id: newId("tkt"),
            tenantId: device.tenantId,
            deviceId,
            orderId: body.orderId ?? null,
            category: body.category,
            message: body.message,
            contact: body.contact || null,
          })
          .returning();
        await recordWebhookEvent(tx, device.tenantId, "ticket.created", {
          ticketId: ticket.id,
          deviceId,
          orderId: ticket.orderId,
          category: ticket.category,
          message: ticket.message,
          contact: ticket.contact,
          createdAt: ticket.createdAt.toISOString(),
        });
        return ticket;
      });
      c.get("logger").info("ticket created", { ticketId: row.id, deviceId, category: row.category });
      return c.json(
        { id: row.id, deviceId, orderId: row.orderId, category: row.category, status: row.status, createdAt: row.createdAt.toISOString() },
        201,
      );
    },
  );

  return api;
}
