// Each webhook subscription's deliveries by status and its latest delivery change, kept by the dispatcher
// (webhooks/delivery-counters.ts) in the transaction of each change, so that GET /v1/webhooks/subscriptions
// reads a row per subscription rather than every delivery it ever had.
import { integer, pgTable, text, timestamp } from "drizzle-orm/pg-core";
import { foreignKeyTo } from "./constraints.ts";
import { webhookSubscriptions } from "./webhooks.ts";

/** A subscription gets its row with its first delivery. */
export const webhookDeliveryCounts = pgTable(
  "webhook_delivery_counts",
  {
    subscriptionId: text("subscription_id").primaryKey(),
    pending: integer("pending").notNull().default(0),
    succeeded: integer("succeeded").notNull().default(0),
    failed: integer("failed").notNull().default(0),
    /** The latest updated_at of the subscription's deliveries. */
    lastActivityAt: timestamp("last_activity_at", { withTimezone: true }),
  },
  (t) => [foreignKeyTo("webhook_delivery_counts", t.subscriptionId, webhookSubscriptions.id)],
);
