// Fan-out of order events to the event streams open in this process. Writers NOTIFY the order id at
// commit (events/record.ts); every process LISTENs and wakes the streams following that order, which then
// read the new rows from order_events. Streams are bounded per client address.
import { and, asc, desc, eq, gt, inArray } from "drizzle-orm";
import type { Database } from "../db/client.ts";
import { orderEvents } from "../db/schema.ts";
import { ORDER_EVENTS_CHANNEL } from "../events/record.ts";

export type OrderEventRow = typeof orderEvents.$inferSelect;

/** The fields an event's data may show, by type, where the record holds more than the public stream may
 * show: a `payment.submitted` of the cash rail recorded by earlier releases named the agent's API key. */
const PUBLIC_FIELDS = new Map<string, readonly string[]>([["payment.submitted", ["rail", "payer"]]]);

/** `data` of an event of `type` as the public event stream shows it. */
export function publicEventData(type: string, data: Record<string, unknown>): Record<string, unknown> {
  const fields = PUBLIC_FIELDS.get(type);
  if (!fields) return data;
  return Object.fromEntries(fields.filter((field) => Object.hasOwn(data, field)).map((field) => [field, data[field]]));
}

export function createOrderEventHub(database: Database) {
  const waiters = new Map<string, Set<() => void>>();
  let listening: Promise<void> | undefined;

  function ensureListening() {
    listening ??= database.listen(ORDER_EVENTS_CHANNEL, (orderId) => {
      // No order id: the listener is back after a lost connection; any stream may have missed an event.
      const woken = orderId === undefined ? [...waiters.values()] : [waiters.get(orderId) ?? []];
      for (const set of woken) for (const wake of set) wake();
    });
    return listening;
  }

  return {
    start: () => ensureListening(),
    /** Events of `orderId` after event id `afterId`, oldest first, with their data as the public stream
     * shows it (publicEventData). */
    async eventsAfter(orderId: string, afterId: number, limit = 100): Promise<OrderEventRow[]> {
      const rows = await database.db
        .select()
        .from(orderEvents)
        .where(and(eq(orderEvents.orderId, orderId), gt(orderEvents.id, afterId)))
        .orderBy(asc(orderEvents.id))
        .limit(limit);
      return rows.map((row) => ({ ...row, data: publicEventData(row.type, row.data) }));
    },
    /** The id of the latest event of `orderId` (0: none yet). */
    async lastEventId(orderId: string): Promise<number> {
      const [row] = await database.db
        .select({ id: orderEvents.id })
        .from(orderEvents)
        .where(eq(orderEvents.orderId, orderId))
        .orderBy(desc(orderEvents.id))
        .limit(1);
      return row?.id ?? 0;
    },
    /** The id of the first event of `orderId` whose type is one of `types`, if any. */
    async firstEventOf(orderId: string, types: readonly string[]): Promise<number | undefined> {
      const [row] = await database.db
        .select({ id: orderEvents.id })
        .from(orderEvents)
        .where(and(eq(orderEvents.orderId, orderId), inArray(orderEvents.type, [...types])))
        .orderBy(asc(orderEvents.id))
        .limit(1);
      return row?.id;
    },
    /** Whether `id` is the id of an event of `orderId`. */
    async isEventOf(orderId: string, id: number): Promise<boolean> {
      const [row] = await database.db
        .select({ id: orderEvents.id })
        .from(orderEvents)
        .where(and(eq(orderEvents.orderId, orderId), eq(orderEvents.id, id)))
        .limit(1);
      return row !== undefined;
    },
    /** Calls `wake` whenever an event of `orderId` is committed; returns the unsubscribe function. */
    subscribe(orderId: string, wake: () => void): () => void {
      void ensureListening();
      const set = waiters.get(orderId) ?? new Set();
      set.add(wake);
      waiters.set(orderId, set);
      return () => {
        set.delete(wake);
        if (set.size === 0) waiters.delete(orderId);
      };
    },
    /** Open streams, for the limits and for operators. */
    openStreams: () => [...waiters.values()].reduce((n, s) => n + s.size, 0),
  };
}

export type OrderEventHub = ReturnType<typeof createOrderEventHub>;
