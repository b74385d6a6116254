// The tenant's paid orders, newest first, a page at a time: what GET /v1/revenue/splits lists (with each order's
// settlement from the indexer). A page is one range of the index orders_tenant_paid_idx (with a device,
// orders_tenant_device_paid_idx): the cursor, the last order of the previous page, is a bound of that range, so a
// page deep in the history reads no more rows than the first (test/relayer/query-plans.test.ts).
import { type SQL, and, desc, eq, sql } from "drizzle-orm";
import type { DbOrTx } from "../db/client.ts";
import { orders } from "../db/schema.ts";

/** Where a page starts: after the paid order `id`, paid at `paidAt`. */
export type PaidOrderCursor = { id: string; paidAt: Date };

/** The paid order `id` of the tenant as a cursor, or undefined when it is not one (unknown, another tenant's,
 * unpaid). */
export async function paidOrderCursor(db: DbOrTx, tenantId: string, id: string): Promise<PaidOrderCursor | undefined> {
  const [at] = await db
    .select({ id: orders.id, paidAt: orders.paidAt })
    .from(orders)
    .where(and(eq(orders.id, id), eq(orders.tenantId, tenantId), eq(orders.status, "success")));
  return at?.paidAt ? { id: at.id, paidAt: at.paidAt } : undefined;
}

/** The tenant's paid orders after `cursor`, newest first (by paid time, then id), at most `limit` + 1 (the one
 * more says whether a next page exists). */
export function paidOrdersPage(db: DbOrTx, tenantId: string, q: { limit: number; deviceId?: string; cursor?: PaidOrderCursor }) {
  const conditions: SQL[] = [eq(orders.tenantId, tenantId), eq(orders.status, "success")];
  if (q.deviceId !== undefined) conditions.push(eq(orders.deviceId, q.deviceId));
  // A row comparison, which the index's (paid_at desc, id desc) bounds, rather than `paid_at < $1 or (paid_at = $1
  // and id < $2)`, which it can only filter by.
  if (q.cursor) conditions.push(sql`(${orders.paidAt}, ${orders.id}) < (${q.cursor.paidAt.toISOString()}::timestamptz, ${q.cursor.id})`);
  return db
    .select()
    .from(orders)
    .where(and(...conditions))
    .orderBy(desc(orders.paidAt), desc(orders.id))
    .limit(q.limit + 1);
}
