// The outbox of events integrators subscribe to (webhooks).
import { sql } from "drizzle-orm";
import { index, json, pgTable, text, timestamp } from "drizzle-orm/pg-core";
import { tenants } from "./accounts.ts";
import { foreignKeyTo } from "./constraints.ts";

export const events = pgTable(
  "events",
  {
    id: text("id").primaryKey(),
    tenantId: text("tenant_id").notNull(),
    type: text("type").notNull(),
    // json, not jsonb: the payload keeps the key order it was written in.
    data: json("data").$type<Record<string, unknown>>().notNull(),
    createdAt: timestamp("created_at", { withTimezone: true }).notNull().defaultNow(),
    /** When the dispatcher fanned the event out to the subscriptions (null: not yet). */
    dispatchedAt: timestamp("dispatched_at", { withTimezone: true }),
  },
  (t) => [
    foreignKeyTo("events", t.tenantId, tenants.id),
    index("events_undispatched_idx")
      .on(t.createdAt)
      .where(sql`dispatched_at is null`),
    index("events_tenant_idx").on(t.tenantId, t.createdAt),
  ],
);
