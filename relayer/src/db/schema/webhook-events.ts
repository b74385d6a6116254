// The tenant's webhook events: what each tenant's subscriptions could receive, kept for
// WEBHOOK_EVENT_RETENTION_DAYS (GET /v1/events reads it, so an integrator can reconcile what it missed), and
// the dispatcher's outbox (`dispatched_at` null: not fanned out to the subscriptions yet). One table for both:
// an event is written once, in the transaction of the change it reports, and is then both delivered and
// listed from the same row.
import { sql } from "drizzle-orm";
import { index, json, pgTable, text, timestamp } from "drizzle-orm/pg-core";
import { tenants } from "./accounts.ts";
import { foreignKeyTo } from "./constraints.ts";

export const webhookEvents = pgTable(
  "webhook_events",
  {
    /** evt_ + ULID, whose time is `created_at` (events/record.ts takes both from one clock reading). */
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
    foreignKeyTo("webhook_events", t.tenantId, tenants.id),
    index("webhook_events_undispatched_idx")
      .on(t.createdAt)
      .where(sql`dispatched_at is null`),
    // GET /v1/events newest first (by id: evt_ ids are ULIDs, whose time is `created_at`): all of a tenant's,
    // of one type, or of one family (`payment.*`: the part of the type before its first dot). The retention
    // deletes by id range, through the primary key.
    index("webhook_events_tenant_idx").on(t.tenantId, t.id),
    index("webhook_events_tenant_type_idx").on(t.tenantId, t.type, t.id),
    index("webhook_events_tenant_family_idx").on(t.tenantId, sql`split_part("type", '.', 1)`, t.id),
  ],
);
