// Marks unpaid orders expired. An order is expired once its voucher's expiry has passed (plus a grace for
// clock skew) and the indexer has caught up with the chain head without seeing it paid: from then on the
// router rejects it, so no later payment can arrive. An order cancelled by its tenant (cancellation.ts) is
// expired here too, as soon as its cancellation transaction is mined.
//
// The worker sleeps until the next pending order is due (at most ORDER_TTL_SECONDS + grace: an order created
// meanwhile is due no sooner, and at most SAFETY_POLL_MS, for orders created by a process configured
// otherwise); while due orders wait for the indexer, or for the payment sync to record their payment, it
// looks again every RETRY_MS.
import { and, eq, inArray, lt, min } from "drizzle-orm";
import type { DbOrTx } from "../db/client.ts";
import { orders } from "../db/schema.ts";
import { recordOrderEvent, recordWebhookEvent } from "../events/record.ts";
import { SAFETY_POLL_MS, createWorker } from "../jobs/worker.ts";
import type { Services } from "../services.ts";
import { CANCEL_ORDER_TX_KIND, cancelled, markCancelledOrderExpired, orderOfCancellation } from "./cancellation.ts";
import type { OrderRow } from "./orders.ts";
import { usd } from "./pricing.ts";

const RETRY_MS = 1_000;
const PAGE = 200;

/** Records an order's move into expired: the end of its stream, and the tenant's payment.expired webhook. */
async function recordExpired(tx: DbOrTx, order: OrderRow, expiredAt: Date, reason: "expired" | "cancelled") {
  const data = {
    orderId: order.id,
    deviceId: order.deviceId,
    amountUsd: usd(order.amountUsdMicros),
    expiredAt: expiredAt.toISOString(),
    reason,
  };
  await recordOrderEvent(tx, order.id, "order.expired", data);
  await recordWebhookEvent(tx, order.tenantId, "payment.expired", data);
}

export function createExpiry(services: Services) {
  const {
    database: { db },
    indexer,
    chain,
    config,
  } = services;
  const logger = services.logger.child({ worker: "expiry" });
  const graceMs = config.EXPIRY_GRACE_SECONDS * 1000;

  services.txSender.onFinal(CANCEL_ORDER_TX_KIND, async (row, tx) => {
    const orderId = orderOfCancellation(row);
    if (!cancelled(row)) {
      // OrderAlreadyPaid: a payment was mined first, and the payment sync records it.
      logger.warn("an order's cancellation did not void it", { orderId, status: row.status, error: row.lastError });
      return;
    }
    const order = await markCancelledOrderExpired(tx, orderId);
    if (order) await recordExpired(tx, order, new Date(), "cancelled");
    logger.info("order cancelled", { orderId, transactionHash: row.txHash });
  });

  /** Expires due orders; resolves with the delay before the next sweep. */
  async function sweep(): Promise<number> {
    const cutoff = new Date(Date.now() - graceMs);
    const due = await db
      .select()
      .from(orders)
      .where(and(eq(orders.status, "pending"), lt(orders.expiresAt, cutoff)))
      .limit(PAGE);
    if (due.length === 0) return untilNextDue();
    const [head, indexed] = await Promise.all([chain.publicClient.getBlockNumber(), indexer.indexedBlock()]);
    if (BigInt(indexed) < head) return RETRY_MS; // the indexer is behind: a payment may still show up
    const paid = new Set((await indexer.ordersByIds(due.map((o) => o.onchainId))).map((p) => p.orderId));
    const expire = due.filter((o) => !paid.has(o.onchainId));
    if (expire.length === 0) return RETRY_MS; // paid: the payment sync is about to record it
    await db.transaction(async (tx) => {
      const updated = await tx
        .update(orders)
        .set({ status: "expired", updatedAt: new Date() })
        .where(
          and(
            inArray(
              orders.id,
              expire.map((o) => o.id),
            ),
            eq(orders.status, "pending"),
          ),
        )
        .returning();
      for (const order of updated) await recordExpired(tx, order, order.expiresAt, "expired");
    });
    logger.info("orders expired", { count: expire.length });
    if (expire.length < due.length) return RETRY_MS; // some were paid: the payment sync is about to record them
    return due.length === PAGE ? 0 : untilNextDue();
  }

  /** The delay until the earliest pending order is due. */
  async function untilNextDue(): Promise<number> {
    const [next] = await db
      .select({ at: min(orders.expiresAt) })
      .from(orders)
      .where(eq(orders.status, "pending"));
    const now = Date.now();
    const latest = Math.min(SAFETY_POLL_MS, config.ORDER_TTL_SECONDS * 1000 + graceMs);
    if (!next?.at) return latest;
    // +1 ms: due once the expiry is strictly before the cutoff.
    return Math.min(latest, Math.max(0, new Date(next.at).getTime() + graceMs + 1 - now));
  }

  return createWorker({
    name: "expiry",
    tick: sweep,
    onError(error) {
      logger.warn("expiry sweep failed", { error: (error as Error).message });
      return RETRY_MS;
    },
    firstDelayMs: RETRY_MS,
  });
}
