// The delivery counters of the webhook subscriptions (table webhook_delivery_counts): every statement that
// adds deliveries, changes their status or touches their updated_at (dispatcher.ts, subscriptions-store.ts) or
// deletes them reports the change here, in its own transaction, so that the counters always equal what
// GET /v1/webhooks/subscriptions would count in the delivery log. Whatever deletes deliveries takes them out the
// same way (`to: undefined`: the events' retention, event-log.ts); the latest activity stays as it was then.
import { sql } from "drizzle-orm";
import type { DbOrTx } from "../db/client.ts";
import type { webhookDeliveryStatuses } from "../db/schema.ts";

type Status = (typeof webhookDeliveryStatuses)[number];

/** `n` deliveries of a subscription (default 1) went from status `from` to `to` (`from` undefined: new ones;
 * `to` undefined: deleted; both the same: only touched), the change made at `at` (their new updated_at; none for a
 * deletion, which leaves the latest activity as it was). */
export type DeliveryChange = { subscriptionId: string; from?: Status; to?: Status; n?: number; at?: Date };

/** Applies `changes` to the counters: one statement per subscription, in subscription id order (two
 * transactions counting for the same subscriptions lock their rows in the same order). */
export async function countDeliveryChanges(tx: DbOrTx, changes: readonly DeliveryChange[]): Promise<void> {
  const bySubscription = new Map<string, { pending: number; succeeded: number; failed: number; at?: Date }>();
  for (const change of changes) {
    const n = change.n ?? 1;
    if (n === 0) continue;
    const entry = bySubscription.get(change.subscriptionId) ?? { pending: 0, succeeded: 0, failed: 0, at: change.at };
    if (change.from !== undefined) entry[change.from] -= n;
    if (change.to !== undefined) entry[change.to] += n;
    if (change.at !== undefined && (entry.at === undefined || change.at > entry.at)) entry.at = change.at;
    bySubscription.set(change.subscriptionId, entry);
  }
  for (const id of [...bySubscription.keys()].sort()) {
    const d = bySubscription.get(id)!;
    await tx.execute(sql`
      insert into webhook_delivery_counts (subscription_id, pending, succeeded, failed, last_activity_at)
      values (${id}, ${d.pending}, ${d.succeeded}, ${d.failed}, ${d.at?.toISOString() ?? null}::timestamptz)
      on conflict (subscription_id) do update set
        pending = webhook_delivery_counts.pending + excluded.pending,
        succeeded = webhook_delivery_counts.succeeded + excluded.succeeded,
        failed = webhook_delivery_counts.failed + excluded.failed,
        last_activity_at = greatest(webhook_delivery_counts.last_activity_at, excluded.last_activity_at)`);
  }
}
