// Fan-out of order events to the event streams open in this process. Writers NOTIFY the order id at
// commit (events/record.ts); every process LISTENs and wakes the streams following that order, which then
// read the new rows from order_events. Streams are bounded per client address.
import { and, asc, eq, gt } from "drizzle-orm";
import type { Database } from "../db/client.ts";
import { orderEvents } from "../db/schema.ts";
import { ORDER_EVENTS_CHANNEL } from "../events/record.ts";

export type OrderEventRow = typeof orderEvents.$inferSelect;

export function createOrderEventHub(database: Database) {
  const waiters = new Map<string, Set<() => void>>();
  let listening: Promise<void> | undefined;

  function ensureListening() {
    listening ??= database.listen(ORDER_EVENTS_CHANNEL, (orderId) => {
      for (const wake of waiters.get(orderId) ?? []) wake();
    });
    return listening;
  }

  return {
    start: () => ensureListening(),
    /** Events of `orderId` after event id `afterId`, oldest first. */
    async eventsAfter(orderId: string, afterId: number, limit = 100): Promise<OrderEventRow[]> {
      return database.db
        .select()
        .from(orderEvents)
        .where(and(eq(orderEvents.orderId, orderId), gt(orderEvents.id, afterId)))
        .orderBy(asc(orderEvents.id))
        .limit(limit);
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
