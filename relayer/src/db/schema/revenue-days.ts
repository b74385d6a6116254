// The tenants' paid revenue per UTC day, kept in the transaction that records each payment (or takes one a
// reorganisation removed back out), so that the revenue overview's day-bucketed ranges read a row per day
// (and per device and day) instead of every order paid in the window (payments/revenue-days.ts writes them,
// payments/revenue-overview.ts reads them).
import { bigint, date, integer, pgTable, primaryKey, text } from "drizzle-orm/pg-core";
import { tenants } from "./accounts.ts";
import { foreignKeyTo } from "./constraints.ts";
import { devices } from "./payments.ts";

/** The tenant's orders paid on `day` (UTC; orders.paid_at's date) and their gross, in micro-USD. */
export const tenantRevenueDays = pgTable(
  "tenant_revenue_days",
  {
    tenantId: text("tenant_id").notNull(),
    day: date("day", { mode: "string" }).notNull(),
    orders: integer("orders").notNull().default(0),
    amountUsdMicros: bigint("amount_usd_micros", { mode: "number" }).notNull().default(0),
  },
  (t) => [
    primaryKey({ name: "tenant_revenue_days_pkey", columns: [t.tenantId, t.day] }),
    foreignKeyTo("tenant_revenue_days", t.tenantId, tenants.id),
  ],
);

/** The same per device of the tenant: the overview's devices ranked by gross over its window. A row whose
 * orders a reorganisation took back out stays, with 0 orders. */
export const deviceRevenueDays = pgTable(
  "device_revenue_days",
  {
    tenantId: text("tenant_id").notNull(),
    day: date("day", { mode: "string" }).notNull(),
    deviceId: text("device_id").notNull(),
    orders: integer("orders").notNull().default(0),
    amountUsdMicros: bigint("amount_usd_micros", { mode: "number" }).notNull().default(0),
  },
  (t) => [
    primaryKey({ name: "device_revenue_days_pkey", columns: [t.tenantId, t.day, t.deviceId] }),
    foreignKeyTo("device_revenue_days", t.tenantId, tenants.id),
    foreignKeyTo("device_revenue_days", t.deviceId, devices.id),
  ],
);
