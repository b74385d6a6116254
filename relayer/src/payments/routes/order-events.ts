// GET /v1/orders/{id}/events: the order's Server-Sent Events. The current state first (event `state`),
// then every change as it is committed, each with its id; a heartbeat comment every 15 s; resumable with
// Last-Event-ID (only the missed events are sent); closed after a terminal event.
import { createRoute, z } from "@hono/zod-openapi";
import { streamSSE } from "hono/streaming";
import { createApi } from "../../http/api.ts";
import { errorResponses, errors } from "../../http/errors.ts";
import { clientAddress } from "../../http/middleware.ts";
import type { Services } from "../../services.ts";
import { findOrder, findOrderWithRelay, orderView } from "../orders.ts";
import { OrderIdParam } from "../schemas.ts";

/** Events after which nothing more is streamed for the order. */
export const TERMINAL_EVENTS = new Set(["order.expired", "device.powered_on", "device.power_on_failed"]);
export const ORDER_EVENT_TYPES = {
  state: "The order as GET /v1/orders/{id} returns it (first event of a new stream).",
  "order.created": "The order was created.",
  "payment.submitted": "The relayer queued a payment transaction for the order (relayed permit or cash).",
  "payment.failed": "The relayer's payment transaction failed or reverted; the order stays pending and can be retried.",
  "payment.succeeded": "The payment was indexed on-chain: the order is success.",
  "split.settled": "The payment was split 50/40/10 on-chain (same transaction).",
  "device.powered_on": "The device was powered on for the session (terminal).",
  "device.power_on_failed": "The device cloud could not power the device on after retries (terminal).",
  "order.expired": "The order expired unpaid (terminal).",
} as const;

const HEARTBEAT_MS = 15_000;
const MAX_STREAMS_PER_CLIENT = 20;

export function orderEventRoutes(services: Services) {
  const api = createApi();
  const perClient = new Map<string, number>();

  api.openapi(
    createRoute({
      method: "get",
      path: "/orders/{id}/events",
      tags: ["Payments"],
      summary: "Server-Sent Events of the order",
      description: `Event types: ${Object.entries(ORDER_EVENT_TYPES)
        .map(([type, text]) => `\`${type}\`: ${text}`)
        .join(" ")} Every event's data is JSON. Reconnect with the Last-Event-ID header to resume. At most ${MAX_STREAMS_PER_CLIENT} open streams per client address (429 beyond).`,
      request: {
        params: OrderIdParam,
        headers: z.object({ "last-event-id": z.string().regex(/^\d{1,15}$/).optional() }),
      },
      responses: {
        200: { description: "An event stream", content: { "text/event-stream": { schema: z.string() } } },
        ...errorResponses(404, 422, 429),
      },
    }),
    async (c) => {
      const order = await findOrder(services, c.req.valid("param").id);
      const lastEventHeader = c.req.valid("header")["last-event-id"];
      const client = clientAddress(c);
      const open = perClient.get(client) ?? 0;
      if (open >= MAX_STREAMS_PER_CLIENT) throw errors.rateLimited(5);
      perClient.set(client, open + 1);
      const hub = services.orderEvents;

      return streamSSE(c, async (stream) => {
        let wake: () => void = () => undefined;
        const unsubscribe = hub.subscribe(order.id, () => wake());
        let closed = false;
        stream.onAbort(() => {
          closed = true;
          wake();
        });
        try {
          let last = lastEventHeader ? Number(lastEventHeader) : 0;
          if (!lastEventHeader) {
            const history = await hub.eventsAfter(order.id, 0, 1_000);
            last = history.at(-1)?.id ?? 0;
            const current = await findOrderWithRelay(services, order.id);
            await stream.writeSSE({ id: String(last), event: "state", data: JSON.stringify(await orderView(services, current.order, current.relay)) });
            if (history.some((e) => TERMINAL_EVENTS.has(e.type))) return;
          }
          while (!closed) {
            const woken = new Promise<void>((resolve) => {
              wake = resolve;
              setTimeout(resolve, HEARTBEAT_MS);
            });
            const events = await hub.eventsAfter(order.id, last);
            for (const event of events) {
              await stream.writeSSE({ id: String(event.id), event: event.type, data: JSON.stringify(event.data) });
              last = event.id;
              if (TERMINAL_EVENTS.has(event.type)) return;
            }
            if (events.length > 0) continue;
            await woken;
            if (!closed && (await hub.eventsAfter(order.id, last, 1)).length === 0) await stream.write(": heartbeat\n\n");
          }
        } finally {
          unsubscribe();
          const n = (perClient.get(client) ?? 1) - 1;
          if (n <= 0) perClient.delete(client);
          else perClient.set(client, n);
        }
      });
    },
  );

  return api;
}
