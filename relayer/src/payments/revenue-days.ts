// The revenue per tenant and UTC day, and per device and day (db/schema/revenue-days.ts), changed in the
// caller's transaction together with the payment it counts: an order becoming paid adds it to its payment's
// day, a reorganisation removing the payment takes it back out of that day, and an order paid already that
// is given a new transaction (paid anew on another fork) moves to the new payment's day if that differs.
// Two upserts on primary keys per change: nothing here reads rows that grow with history. The callers make
// each change at most once (a conditional update of the order), so a retried page never counts twice.
import { type SQL, sql } from "drizzle-orm";
import type { DbOrTx } from "../db/client.ts";

type PaidOrderRef = { tenantId: string; deviceId: string; amountUsdMicros: number };

/** The UTC day of `at`, as the rollup keys it (YYYY-MM-DD). */
export const revenueDay = (at: Date) => at.toISOString().slice(0, 10);

/** Adds the order paid at `paidAt` to its day (`sign` 1), or takes it back out (-1). */
export async function countRevenue(tx: DbOrTx, order: PaidOrderRef, paidAt: Date, sign: 1 | -1): Promise<void> {
  for (const statement of revenueDayUpserts(order, paidAt, sign)) await tx.execute(statement);
}

/** countRevenue's statements: an upsert of the tenant's day and one of the device's. */
export function revenueDayUpserts(order: PaidOrderRef, paidAt: Date, sign: 1 | -1): SQL[] {
  const day = revenueDay(paidAt);
  const micros = sign * order.amountUsdMicros;
  return [
    sql`
      insert into tenant_revenue_days (tenant_id, day, orders, amount_usd_micros)
      values (${order.tenantId}, ${day}::date, ${sign}, ${micros}::bigint)
      on conflict (tenant_id, day) do update set
        orders = tenant_revenue_days.orders + excluded.orders,
        amount_usd_micros = tenant_revenue_days.amount_usd_micros + excluded.amount_usd_micros`,
    sql`
      insert into device_revenue_days (tenant_id, day, device_id, orders, amount_usd_micros)
      values (${order.tenantId}, ${day}::date, ${order.deviceId}, ${sign}, ${micros}::bigint)
      on conflict (tenant_id, day, device_id) do update set
        orders = device_revenue_days.orders + excluded.orders,
        amount_usd_micros = device_revenue_days.amount_usd_micros + excluded.amount_usd_micros`,
  ];
}

/** An order paid at `before` (null: never) that its payment now dates `after`: moved between days. */
export async function moveRevenue(tx: DbOrTx, order: PaidOrderRef, before: Date | null, after: Date): Promise<void> {
  if (before && revenueDay(before) === revenueDay(after)) return;
  if (before) await countRevenue(tx, order, before, -1);
  await countRevenue(tx, order, after, 1);
}
