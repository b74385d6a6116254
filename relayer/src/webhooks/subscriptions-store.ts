// The webhook subscriptions of a tenant and their delivery log, as the /v1 webhook routes read and change
// them (v1/webhook-subscriptions.ts, v1/webhook-deliveries.ts). Lookups are scoped to the tenant: another
// tenant's subscription or delivery is 404, like one that does not exist.
import { and, count, desc, eq, inArray, isNull, lt, sql } from "drizzle-orm";
import type { Db, Tx } from "../db/client.ts";
import { tenants, webhookAttempts, webhookDeliveries, webhookDeliveryCounts, webhookEvents, webhookSubscriptions } from "../db/schema.ts";
import { recordWebhookEvent } from "../events/record.ts";
import { errors } from "../errors.ts";
import { countDeliveryChanges } from "./delivery-counters.ts";
import { DELIVERIES_CHANNEL, disableSubscription } from "./dispatcher.ts";

export type SubscriptionRow = typeof webhookSubscriptions.$inferSelect;
export type DeliveryRow = typeof webhookDeliveries.$inferSelect;
export type AttemptRow = typeof webhookAttempts.$inferSelect;
/** A subscription's deliveries by status, and when the latest of them last changed. */
export type DeliveryCounts = { pending: number; succeeded: number; failed: number; lastActivityAt: string | null };

/** Active subscriptions a tenant may have. */
export const MAX_ACTIVE_SUBSCRIPTIONS = 25;

/** Runs `fn` (which makes one more subscription of the tenant active) in a transaction that first locks
 * the tenant's row and counts its active subscriptions: 409 too_many_subscriptions at the cap. The lock
 * (FOR NO KEY UPDATE: rows that merely reference the tenant are not held up) serialises the tenant's
 * count-then-insert across requests and relayer processes, so parallel creates cannot pass the cap. */
async function withinSubscriptionCap<T>(db: Db, tenantId: string, message: string, fn: (tx: Tx) => Promise<T>): Promise<T> {
  return db.transaction(async (tx) => {
    await tx.select({ id: tenants.id }).from(tenants).where(eq(tenants.id, tenantId)).for("no key update");
    const [{ n }] = await tx
      .select({ n: count() })
      .from(webhookSubscriptions)
      .where(and(eq(webhookSubscriptions.tenantId, tenantId), eq(webhookSubscriptions.status, "active")));
    if (Number(n) >= MAX_ACTIVE_SUBSCRIPTIONS) throw errors.conflict("too_many_subscriptions", message);
    return fn(tx);
  });
}

/** Inserts an active subscription, within the tenant's cap (409 too_many_subscriptions). */
export function insertSubscription(db: Db, values: typeof webhookSubscriptions.$inferInsert): Promise<SubscriptionRow> {
  return withinSubscriptionCap(
    db,
    values.tenantId,
    `a tenant may have ${MAX_ACTIVE_SUBSCRIPTIONS} active subscriptions; disable one first`,
    async (tx) => (await tx.insert(webhookSubscriptions).values(values).returning())[0],
  );
}

/** Makes a disabled subscription active again with `changes`, within the tenant's cap (409
 * too_many_subscriptions). */
export async function reactivateSubscription(
  db: Db,
  tenantId: string,
  id: string,
  changes: Partial<typeof webhookSubscriptions.$inferInsert>,
): Promise<void> {
  await withinSubscriptionCap(db, tenantId, `a tenant may have ${MAX_ACTIVE_SUBSCRIPTIONS} active subscriptions`, (tx) =>
    tx
      .update(webhookSubscriptions)
      .set({ ...changes, status: "active", disabledReason: null, disabledAt: null })
      .where(eq(webhookSubscriptions.id, id)),
  );
}

/** Replaces the subscription's signing secret with `sealed` (secrets.ts; `last4`: its last four
 * characters). The secret it replaces keeps signing until `previousExpiresAt`; null: replaced at once. One
 * statement, so two rotations at once leave the later one's secret current and the earlier one's as the
 * previous. */
export async function rotateSubscriptionSecret(
  db: Db,
  id: string,
  sealed: string,
  last4: string,
  previousExpiresAt: Date | null,
): Promise<void> {
  const keep = previousExpiresAt !== null;
  await db
    .update(webhookSubscriptions)
    .set({
      secretCiphertext: sealed,
      secretLast4: last4,
      previousSecretCiphertext: keep ? sql`${webhookSubscriptions.secretCiphertext}` : null,
      previousSecretLast4: keep ? sql`${webhookSubscriptions.secretLast4}` : null,
      previousSecretExpiresAt: previousExpiresAt,
      updatedAt: new Date(),
    })
    .where(eq(webhookSubscriptions.id, id));
}

/** The tenant's subscriptions (not deleted ones), newest first. */
export function listSubscriptions(db: Db, tenantId: string): Promise<SubscriptionRow[]> {
  return db
    .select()
    .from(webhookSubscriptions)
    .where(and(eq(webhookSubscriptions.tenantId, tenantId), isNull(webhookSubscriptions.archivedAt)))
    .orderBy(desc(webhookSubscriptions.createdAt));
}

/** One of the tenant's subscriptions, not deleted (404 otherwise). */
export async function findSubscription(db: Db, tenantId: string, id: string): Promise<SubscriptionRow> {
  const [row] = await db
    .select()
    .from(webhookSubscriptions)
    .where(and(eq(webhookSubscriptions.id, id), eq(webhookSubscriptions.tenantId, tenantId), isNull(webhookSubscriptions.archivedAt)));
  if (!row) throw errors.notFound(`webhook subscription ${id}`);
  return row;
}

/** Applies `changes`; with `disableReason`, also disables the subscription (its pending deliveries fail), in
 * the same transaction. */
export async function updateSubscription(
  db: Db,
  id: string,
  changes: Partial<typeof webhookSubscriptions.$inferInsert>,
  disableReason?: string,
): Promise<void> {
  await db.transaction(async (tx) => {
    await tx.update(webhookSubscriptions).set(changes).where(eq(webhookSubscriptions.id, id));
    if (disableReason !== undefined) await disableSubscription(tx, id, disableReason);
  });
}

/** Deletes the subscription (an archive): disabled (its pending deliveries fail, no new ones), then hidden from
 * lists and reads. Its rows stay, so the delivery log's references hold until the events' retention removes
 * them. False when it was deleted already (by a concurrent request). */
export async function archiveSubscription(db: Db, id: string, reason: string): Promise<boolean> {
  return db.transaction(async (tx) => {
    const now = new Date();
    const archived = await tx
      .update(webhookSubscriptions)
      .set({ archivedAt: now, updatedAt: now })
      .where(and(eq(webhookSubscriptions.id, id), isNull(webhookSubscriptions.archivedAt)))
      .returning({ id: webhookSubscriptions.id, status: webhookSubscriptions.status });
    if (archived.length === 0) return false;
    if (archived[0].status === "active") await disableSubscription(tx, id, reason);
    return true;
  });
}

/** Disables the subscription and fails its pending deliveries, in one transaction. */
export async function disableSubscriptionNow(db: Db, id: string, reason: string): Promise<void> {
  await db.transaction((tx) => disableSubscription(tx, id, reason));
}

/** Records a test.ping event for this subscription only; returns the event's id. `sentBy`: the portal user's
 * id, or the API key's (key_...); `message` says which. */
export function queueTestPing(db: Db, tenantId: string, subscriptionId: string, sentBy: string, message: string): Promise<string> {
  return db.transaction((tx) =>
    recordWebhookEvent(tx, tenantId, "test.ping", {
      subscriptionId,
      message,
      sentAt: new Date().toISOString(),
      sentBy,
    }),
  );
}

/** Delivery counts of each subscription in `ids` (a subscription without deliveries has no entry): its
 * counters (delivery-counters.ts), a row per subscription. */
export async function deliveryCounts(db: Db, ids: string[]): Promise<Map<string, DeliveryCounts>> {
  const out = new Map<string, DeliveryCounts>();
  if (ids.length === 0) return out;
  for (const row of await deliveryCountsQuery(db, ids)) {
    out.set(row.subscriptionId, {
      pending: row.pending,
      succeeded: row.succeeded,
      failed: row.failed,
      lastActivityAt: row.lastActivityAt?.toISOString() ?? null,
    });
  }
  return out;
}

/** The statement of deliveryCounts: the subscriptions' counters. */
export function deliveryCountsQuery(db: Db, ids: string[]) {
  return db.select().from(webhookDeliveryCounts).where(inArray(webhookDeliveryCounts.subscriptionId, ids));
}

/** A page of a subscription's deliveries, newest first: up to `limit + 1` rows (one more says a next page). */
export function listDeliveries(db: Db, subscriptionId: string, page: { limit: number; cursor?: string; status?: DeliveryRow["status"] }) {
  const conditions = [eq(webhookDeliveries.subscriptionId, subscriptionId)];
  if (page.status) conditions.push(eq(webhookDeliveries.status, page.status));
  if (page.cursor) conditions.push(lt(webhookDeliveries.id, page.cursor));
  return db
    .select()
    .from(webhookDeliveries)
    .where(and(...conditions))
    .orderBy(desc(webhookDeliveries.id))
    .limit(page.limit + 1);
}

/** The attempts of these deliveries, in no particular order. */
export async function attemptsOf(db: Db, deliveryIds: string[]): Promise<AttemptRow[]> {
  if (deliveryIds.length === 0) return [];
  return attemptsQuery(db, deliveryIds);
}

/** The statement of attemptsOf (`deliveryIds` not empty). */
export function attemptsQuery(db: Db, deliveryIds: string[]) {
  return db.select().from(webhookAttempts).where(inArray(webhookAttempts.deliveryId, deliveryIds));
}

/** One of the tenant's deliveries (404 otherwise). */
export async function findDelivery(db: Db, tenantId: string, id: string): Promise<DeliveryRow> {
  const [row] = await db
    .select()
    .from(webhookDeliveries)
    .where(and(eq(webhookDeliveries.id, id), eq(webhookDeliveries.tenantId, tenantId)));
  if (!row) throw errors.notFound(`webhook delivery ${id}`);
  return row;
}

/** The event a delivery carries. */
export async function eventOf(db: Db, delivery: DeliveryRow): Promise<typeof webhookEvents.$inferSelect> {
  const [event] = await db.select().from(webhookEvents).where(eq(webhookEvents.id, delivery.eventId));
  return event;
}

/** Queues one more attempt of a finished delivery, at once, and wakes the dispatchers. Undefined when the
 * delivery was attempted or requeued meanwhile (its attempt count or status changed). */
export async function requeueDelivery(db: Db, delivery: DeliveryRow): Promise<DeliveryRow | undefined> {
  const now = new Date();
  const [updated] = await db.transaction(async (tx) => {
    const result = await tx
      .update(webhookDeliveries)
      .set({ status: "pending", attemptLimit: delivery.attempts + 1, nextAttemptAt: now, completedAt: null, updatedAt: now })
      .where(
        and(
          eq(webhookDeliveries.id, delivery.id),
          eq(webhookDeliveries.attempts, delivery.attempts),
          // and its status: the counters move it from that one.
          eq(webhookDeliveries.status, delivery.status),
        ),
      )
      .returning();
    if (result.length > 0) {
      await countDeliveryChanges(tx, [{ subscriptionId: delivery.subscriptionId, from: delivery.status, to: "pending", at: now }]);
      await tx.execute(sql`select pg_notify(${DELIVERIES_CHANNEL}, '')`);
    }
    return result;
  });
  return updated;
}
