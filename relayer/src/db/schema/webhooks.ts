// Webhook subscriptions and their delivery log; the last known online state of each device (for
// device.online / device.offline); tickets customers open on a device (ticket.created).
import { sql } from "drizzle-orm";
import { bigserial, boolean, index, integer, pgTable, text, timestamp, unique } from "drizzle-orm/pg-core";
import { tenants } from "./accounts.ts";
import { checkOneOf, foreignKeyTo } from "./constraints.ts";
import { webhookEvents } from "./webhook-events.ts";
import { devices, orders } from "./payments.ts";

export const webhookSubscriptionStatuses = ["active", "disabled"] as const;

/** Where a tenant wants events delivered, and which ones. */
export const webhookSubscriptions = pgTable(
  "webhook_subscriptions",
  {
    /** whs_ + ULID. */
    id: text("id").primaryKey(),
    tenantId: text("tenant_id").notNull(),
    /** The callback URL (checked by webhooks/url-safety.ts when saved and before every attempt). */
    url: text("url").notNull(),
    /** Event types (e.g. payment.succeeded), families (device.*) or * for all. */
    eventTypes: text("event_types").array().notNull(),
    description: text("description"),
    /** The signing secret (whsec_...), AES-256-GCM encrypted: v1.<iv>.<ciphertext>.<tag>, base64url. */
    secretCiphertext: text("secret_ciphertext").notNull(),
    /** The secret's last four characters, to tell secrets apart. */
    secretLast4: text("secret_last4").notNull(),
    /** After a rotation (POST .../rotate-secret): the secret it replaced, encrypted like the current one,
     * which still signs deliveries until `previous_secret_expires_at`; null when there is none. */
    previousSecretCiphertext: text("previous_secret_ciphertext"),
    previousSecretLast4: text("previous_secret_last4"),
    previousSecretExpiresAt: timestamp("previous_secret_expires_at", { withTimezone: true }),
    status: text("status", { enum: webhookSubscriptionStatuses }).notNull().default("active"),
    /** Why it was disabled: by a user, or because the endpoint answered 410 Gone. */
    disabledReason: text("disabled_reason"),
    disabledAt: timestamp("disabled_at", { withTimezone: true }),
    /** When it was deleted (DELETE /v1/webhooks/subscriptions/{id}): disabled, gone from lists and reads
     * (404), its delivery log kept until its events' retention ends. Null: not deleted. */
    archivedAt: timestamp("archived_at", { withTimezone: true }),
    createdBy: text("created_by"),
    createdAt: timestamp("created_at", { withTimezone: true }).notNull().defaultNow(),
    updatedAt: timestamp("updated_at", { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [
    foreignKeyTo("webhook_subscriptions", t.tenantId, tenants.id),
    checkOneOf("webhook_subscriptions", t.status, webhookSubscriptionStatuses),
    index("webhook_subscriptions_tenant_idx").on(t.tenantId, t.createdAt),
  ],
);

export const webhookDeliveryStatuses = ["pending", "succeeded", "failed"] as const;

/** One event for one subscription: its id is the envelope's `id` and the webhook-id header, the same on
 * every attempt. `next_attempt_at` is when a pending delivery is due; while an attempt is under way it is
 * the end of the claiming process's lease. */
export const webhookDeliveries = pgTable(
  "webhook_deliveries",
  {
    /** msg_ + ULID. */
    id: text("id").primaryKey(),
    eventId: text("event_id").notNull(),
    subscriptionId: text("subscription_id").notNull(),
    tenantId: text("tenant_id").notNull(),
    eventType: text("event_type").notNull(),
    status: text("status", { enum: webhookDeliveryStatuses }).notNull().default("pending"),
    /** Attempts made so far (all rounds, a redelivery included). */
    attempts: integer("attempts").notNull().default(0),
    /** The delivery fails once `attempts` reaches this (5; a redelivery by hand adds one). */
    attemptLimit: integer("attempt_limit").notNull().default(5),
    nextAttemptAt: timestamp("next_attempt_at", { withTimezone: true }),
    lastStatusCode: integer("last_status_code"),
    lastError: text("last_error"),
    completedAt: timestamp("completed_at", { withTimezone: true }),
    createdAt: timestamp("created_at", { withTimezone: true }).notNull().defaultNow(),
    updatedAt: timestamp("updated_at", { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [
    foreignKeyTo("webhook_deliveries", t.eventId, webhookEvents.id),
    foreignKeyTo("webhook_deliveries", t.subscriptionId, webhookSubscriptions.id),
    foreignKeyTo("webhook_deliveries", t.tenantId, tenants.id),
    checkOneOf("webhook_deliveries", t.status, webhookDeliveryStatuses),
    unique("webhook_deliveries_event_subscription_uq").on(t.eventId, t.subscriptionId),
    index("webhook_deliveries_due_idx")
      .on(t.nextAttemptAt)
      .where(sql`status = 'pending'`),
    // The dispatcher's fair claim: the tenants with due deliveries (a skip scan), then each one's oldest.
    index("webhook_deliveries_tenant_due_idx")
      .on(t.tenantId, t.nextAttemptAt)
      .where(sql`status = 'pending'`),
    // A subscription's deliveries newest first (msg_ ids are ULIDs), all or of one status
    // (GET /v1/webhooks/subscriptions/{id}/deliveries), and its counts by status.
    index("webhook_deliveries_subscription_idx").on(t.subscriptionId, t.id),
    index("webhook_deliveries_subscription_status_idx").on(t.subscriptionId, t.status, t.id),
  ],
);

/** Every attempt of a delivery: written when the attempt starts, completed with its result. */
export const webhookAttempts = pgTable(
  "webhook_attempts",
  {
    id: bigserial("id", { mode: "number" }).primaryKey(),
    deliveryId: text("delivery_id").notNull(),
    attempt: integer("attempt").notNull(),
    /** The relayer process that made it (host:pid). */
    worker: text("worker").notNull(),
    startedAt: timestamp("started_at", { withTimezone: true }).notNull().defaultNow(),
    finishedAt: timestamp("finished_at", { withTimezone: true }),
    durationMs: integer("duration_ms"),
    /** The HTTP status the endpoint answered (null: no answer). */
    statusCode: integer("status_code"),
    error: text("error"),
    /** The first bytes of the endpoint's answer. */
    responseExcerpt: text("response_excerpt"),
  },
  (t) => [
    foreignKeyTo("webhook_attempts", t.deliveryId, webhookDeliveries.id),
    unique("webhook_attempts_delivery_attempt_uq").on(t.deliveryId, t.attempt),
  ],
);

/** The last online state the device cloud reported for each device. */
export const deviceStatus = pgTable(
  "device_status",
  {
    deviceId: text("device_id").primaryKey(),
    online: boolean("online").notNull(),
    /** When the device cloud was read for the state stored here. */
    observedAt: timestamp("observed_at", { withTimezone: true }).notNull(),
    /** When the state last changed (first observation: then). */
    changedAt: timestamp("changed_at", { withTimezone: true }).notNull(),
  },
  (t) => [foreignKeyTo("device_status", t.deviceId, devices.id)],
);

export const ticketCategories = ["no_power", "payment", "damaged", "other"] as const;
export const ticketStatuses = ["open", "closed"] as const;

/** A problem a customer reported on a device (POST /v1/devices/{id}/tickets). */
export const tickets = pgTable(
  "tickets",
  {
    /** tkt_ + ULID. */
    id: text("id").primaryKey(),
    tenantId: text("tenant_id").notNull(),
    deviceId: text("device_id").notNull(),
    orderId: text("order_id"),
    category: text("category", { enum: ticketCategories }).notNull(),
    message: text("message").notNull(),
    contact: text("contact"),
    status: text("status", { enum: ticketStatuses }).notNull().default("open"),
    createdAt: timestamp("created_at", { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [
    foreignKeyTo("tickets", t.tenantId, tenants.id),
    foreignKeyTo("tickets", t.deviceId, devices.id),
    foreignKeyTo("tickets", t.orderId, orders.id),
    checkOneOf("tickets", t.category, ticketCategories),
    checkOneOf("tickets", t.status, ticketStatuses),
    index("tickets_tenant_idx").on(t.tenantId, t.createdAt),
  ],
);
