// The tenant's webhook events as GET /v1/events reads them (the table webhook_events, which is also the
// dispatcher's outbox), and their retention. Pages are newest first by id: an event's id is a ULID whose time
// is its created_at (events/record.ts), so a time range is an id range too, and every list reads one index
// range of the tenant's events (all, one type, or one family such as payment.*) however many there are.
import { and, desc, eq, gte, inArray, isNotNull, lt, sql } from "drizzle-orm";
import type { Db } from "../db/client.ts";
import { webhookAttempts, webhookDeliveries, webhookEvents } from "../db/schema.ts";
import { errors } from "../errors.ts";
import { ulid } from "../ids.ts";
import { countDeliveryChanges } from "./delivery-counters.ts";

export type EventRow = typeof webhookEvents.$inferSelect;

/** A page's request: at most `limit` events, older than the event `cursor` (its id), of `type` (an exact type)
 * or `family` (e.g. `payment`), created at or after `from` and before `to`. */
export type EventPage = { limit: number; cursor?: string; type?: string; family?: string; from?: Date; to?: Date };

/** The smallest event id of the millisecond `at`: ids at or after it were created at or after `at`. */
function firstIdAt(at: Date): string {
  return `evt_${ulid(at.getTime()).slice(0, 10)}`;
}

/** A page of the tenant's events, newest first: up to `limit + 1` rows (one more says a next page). */
export function listEvents(db: Db, tenantId: string, page: EventPage) {
  const conditions = [eq(webhookEvents.tenantId, tenantId)];
  if (page.type) conditions.push(eq(webhookEvents.type, page.type));
  if (page.family) conditions.push(sql`split_part(${webhookEvents.type}, '.', 1) = ${page.family}`);
  if (page.cursor) conditions.push(lt(webhookEvents.id, page.cursor));
  // The id bounds make the index range; created_at decides exactly (the same instant for events recorded
  // by events/record.ts).
  if (page.from) conditions.push(gte(webhookEvents.id, firstIdAt(page.from)), gte(webhookEvents.createdAt, page.from));
  if (page.to) conditions.push(lt(webhookEvents.id, firstIdAt(page.to)), lt(webhookEvents.createdAt, page.to));
  return db
    .select()
    .from(webhookEvents)
    .where(and(...conditions))
    .orderBy(desc(webhookEvents.id))
    .limit(page.limit + 1);
}

/** One of the tenant's events (404 otherwise, and once its retention has ended). */
export async function findEvent(db: Db, tenantId: string, id: string): Promise<EventRow> {
  const [row] = await db
    .select()
    .from(webhookEvents)
    .where(and(eq(webhookEvents.id, id), eq(webhookEvents.tenantId, tenantId)));
  if (!row) throw errors.notFound(`event ${id}`);
  return row;
}

/** Events deleted per statement by deleteExpiredEvents. */
const EXPIRY_BATCH = 500;

/** Deletes up to EXPIRY_BATCH events created before `cutoff`, with their deliveries and the deliveries'
 * attempts; returns how many events. An event not fanned out yet, or with a delivery still pending, is
 * kept until it is done. Several processes may run it at once: the events are locked SKIP LOCKED. */
export async function deleteExpiredEvents(db: Db, cutoff: Date): Promise<number> {
  return db.transaction(async (tx) => {
    const due = await tx
      .select({ id: webhookEvents.id })
      .from(webhookEvents)
      .where(
        and(
          lt(webhookEvents.id, firstIdAt(cutoff)),
          lt(webhookEvents.createdAt, cutoff),
          isNotNull(webhookEvents.dispatchedAt),
          sql`not exists (select 1 from ${webhookDeliveries} d where d.event_id = ${webhookEvents.id} and d.status = 'pending')`,
        ),
      )
      .orderBy(webhookEvents.id)
      .limit(EXPIRY_BATCH)
      .for("update", { skipLocked: true });
    if (due.length === 0) return 0;
    const ids = due.map((e) => e.id);
    const deliveries = tx.select({ id: webhookDeliveries.id }).from(webhookDeliveries).where(inArray(webhookDeliveries.eventId, ids));
    await tx.delete(webhookAttempts).where(inArray(webhookAttempts.deliveryId, deliveries));
    const deleted = await tx
      .delete(webhookDeliveries)
      .where(inArray(webhookDeliveries.eventId, ids))
      .returning({ subscriptionId: webhookDeliveries.subscriptionId, status: webhookDeliveries.status });
    // Out of their subscriptions' counts too (the counts are of the log).
    await countDeliveryChanges(
      tx,
      deleted.map((d) => ({ subscriptionId: d.subscriptionId, from: d.status })),
    );
    await tx.delete(webhookEvents).where(inArray(webhookEvents.id, ids));
    return ids.length;
  });
}
