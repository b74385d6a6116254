// GET /v1/orders/{id}/events: the order's Server-Sent Events. The current state first (event `state`),
// then every change as it is committed, each with its id; a heartbeat comment every 15 s; resumable with
// Last-Event-ID (only the missed events are sent); closed after a terminal event, and at once when resumed
// after it. A Last-Event-ID this order's stream never sent (past its last event, or another order's) cannot
// say what the client missed: such a stream starts afresh with `state`. Streams count while they are open
// against a limit per client (http/middleware.ts clientIdentity: the address, an IPv6 client's /64, through
// trusted proxies) and one of the process.
import { createRoute } from "@hono/zod-openapi";
import { streamSSE } from "hono/streaming";
import { ORDER_EVENT_TYPES, TERMINAL_EVENTS } from "../events/order-events.ts";
import { createApi } from "../http/api.ts";
import { errorResponses } from "../http/errors.ts";
import { errors } from "../errors.ts";
import { clientIdentity } from "../http/middleware.ts";
import { findOrder, findOrderWithRelay, orderView } from "../payments/orders.ts";
import type { Services } from "../services.ts";
import { OrderEventStream, OrderEventsHeaders } from "./order-events.schemas.ts";
import { OrderIdParam } from "./shared-schemas.ts";

const TERMINAL_TYPES = [...TERMINAL_EVENTS];

const HEARTBEAT_MS = 15_000;
/** Seconds a client refused a stream is asked to wait. */
const RETRY_AFTER_SECONDS = 5;

export function orderEventRoutes(services: Services) {
  const api = createApi();
  const { ORDER_EVENT_STREAMS_PER_CLIENT: perClientCap, ORDER_EVENT_STREAMS_MAX: processCap } = services.config;
  const perClient = new Map<string, number>();
  let openStreams = 0;

  api.openapi(
    createRoute({
      method: "get",
      path: "/orders/{id}/events",
      operationId: "streamOrderEvents",
      tags: ["Payments"],
      summary: "Server-Sent Events of the order",
      description:
        `Event types: ${Object.entries(ORDER_EVENT_TYPES)
          .map(([type, text]) => `\`${type}\`: ${text}`)
          .join(" ")} Every event's data is JSON.\n\n` +
        "**Resuming**: reconnect with the Last-Event-ID header (the `id` of the last event received) to get " +
        "only the events after it, then the stream goes on as usual. Resumed at or after the order's terminal " +
        "event, nothing more is due: the stream closes at once. An id this order's stream never sent (past its " +
        "last event, or another stream's) cannot tell what was missed: the stream starts afresh, with `state`. " +
        "Last-Event-ID is a decimal event id of up to 15 digits; anything else (negative, not a number) is 422.\n\n" +
        `At most ${perClientCap} streams open at once per client (429 beyond): per client address (an IPv6 ` +
        `client's /64; behind a trusted proxy, the address it forwards for); a closed stream no longer counts. ` +
        `At most ${processCap} streams in all on one relayer process (503 with retry-after beyond).`,
      request: {
        params: OrderIdParam,
        headers: OrderEventsHeaders,
      },
      responses: {
        200: { description: "An event stream", content: { "text/event-stream": { schema: OrderEventStream } } },
        ...errorResponses(404, 422, 429, 503),
      },
    }),
    async (c) => {
      const order = await findOrder(services, c.req.valid("param").id);
      const lastEventHeader = c.req.valid("header")["last-event-id"];
      const client = clientIdentity(c);
      const open = perClient.get(client) ?? 0;
      if (open >= perClientCap) throw errors.rateLimited(RETRY_AFTER_SECONDS);
      if (openStreams >= processCap) {
        throw errors.unavailable("too many event streams are open; retry later", RETRY_AFTER_SECONDS);
      }
      perClient.set(client, open + 1);
      openStreams += 1;
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
          const claimed = lastEventHeader === undefined ? undefined : Number(lastEventHeader);
          // The ids this stream sends: its events' ids, and 0 (the `state` of an order without events yet).
          const resumes = claimed !== undefined && (claimed === 0 || (await hub.isEventOf(order.id, claimed)));
          let last = resumes ? claimed : await hub.lastEventId(order.id);
          // Read after `last`: a terminal event committed meanwhile is either at most `last` (seen here) or
          // after it (sent by the loop below, which then closes).
          const terminal = await hub.firstEventOf(order.id, TERMINAL_TYPES);
          const ended = terminal !== undefined && terminal <= last;
          if (!resumes) {
            const current = await findOrderWithRelay(services, order.id);
            await stream.writeSSE({
              id: String(last),
              event: "state",
              data: JSON.stringify(await orderView(services, current.order, current.relay)),
            });
          }
          if (ended) return;
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
          openStreams -= 1;
          const n = (perClient.get(client) ?? 1) - 1;
          if (n <= 0) perClient.delete(client);
          else perClient.set(client, n);
        }
      });
    },
  );

  return api;
}
