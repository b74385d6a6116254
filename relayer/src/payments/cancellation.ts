// Cancelling an unpaid order before its expiry: POST /v1/orders/{id}/cancel (the tenant's developer key).
// The voucher the order carries pays on-chain until its expiry, whoever holds it, so cancelling only in the
// database would void nothing: the relayer sends PaymentRouter.cancelOrder through the durable transaction
// sender (its hot wallet holds the router's order-canceller role), and the order moves to `expired` only
// once that transaction is mined. From then on no rail can pay it. Until then the order stays `pending`;
// the relayer refuses to relay a payment for it, and a payment someone else already had mined wins: the
// cancellation reverts with OrderAlreadyPaid and the payment sync records the payment as usual.
//
// At its expiry an order needs no transaction: the router refuses an expired voucher by itself (expiry.ts).
import { and, eq, inArray } from "drizzle-orm";
import { type Hex, encodeFunctionData } from "viem";
import { paymentRouterAbi } from "../../../generated/abis.ts";
import { type ChainTransaction, enqueueTransaction } from "../chain/tx-sender.ts";
import { type DbOrTx } from "../db/client.ts";
import { chainTransactions, orders } from "../db/schema.ts";
import { recordOrderEvent } from "../events/record.ts";
import { errors } from "../errors.ts";
import type { Services } from "../services.ts";
import type { OrderRow } from "./orders.ts";
import { assertTenantRevertBudget } from "./relay-guard.ts";

export const CANCEL_ORDER_TX_KIND = "cancel_order";

/** The chain transaction ref of an order's cancellation (a payment's ref is the order id itself). */
export const cancellationRef = (orderId: string) => `cancel:${orderId}`;

export type Cancellation = { orderId: string; status: ChainTransaction["status"]; transactionHash: Hex | null };

/** The order's cancellation that is queued, under way or mined, if any (one that failed or reverted does not
 * count: the order may then be paid or cancelled again). */
export async function activeCancellation(db: DbOrTx, orderId: string): Promise<ChainTransaction | undefined> {
  const [row] = await db
    .select()
    .from(chainTransactions)
    .where(eq(chainTransactions.ref, cancellationRef(orderId)));
  return row && row.status !== "failed" && row.status !== "reverted" ? row : undefined;
}

async function assertPaymentNotUnderWay(db: DbOrTx, orderId: string) {
  const [payment] = await db.select().from(chainTransactions).where(eq(chainTransactions.ref, orderId));
  if (payment && payment.status !== "failed" && payment.status !== "reverted") {
    throw errors.conflict("payment_in_progress", `a payment of order ${orderId} is already under way`);
  }
}

/** Queues the order's cancellation; repeating the request returns the one under way. */
export async function cancelOrder(services: Services, order: OrderRow): Promise<Cancellation> {
  const view = (row: ChainTransaction): Cancellation => ({
    orderId: order.id,
    status: row.status,
    transactionHash: row.txHash as Hex | null,
  });
  const active = await activeCancellation(services.database.db, order.id);
  if (active) return view(active);
  if (order.status === "success") throw errors.conflict("order_already_paid", `order ${order.id} is paid already`);
  if (order.status === "expired" || order.expiresAt.getTime() <= Date.now()) {
    throw errors.conflict("order_expired", `order ${order.id} expired at ${order.expiresAt.toISOString()}: there is nothing to cancel`);
  }
  await assertPaymentNotUnderWay(services.database.db, order.id);
  await assertTenantRevertBudget(services.database.db, services.config, order.tenantId);
  const data = encodeFunctionData({ abi: paymentRouterAbi, functionName: "cancelOrder", args: [order.onchainId] });
  const row = await services.database.db.transaction(async (tx) => {
    // The order's row orders this against a relay of its payment queued at the same moment (relay.ts holds
    // it too): whichever comes second sees the other's transaction and answers 409.
    await tx.select({ id: orders.id }).from(orders).where(eq(orders.id, order.id)).for("update");
    await assertPaymentNotUnderWay(tx, order.id);
    await tx
      .delete(chainTransactions)
      .where(and(eq(chainTransactions.ref, cancellationRef(order.id)), inArray(chainTransactions.status, ["failed", "reverted"])));
    const { row, created } = await enqueueTransaction(tx, {
      kind: CANCEL_ORDER_TX_KIND,
      ref: cancellationRef(order.id),
      to: services.chain.router,
      data,
    });
    if (created) await recordOrderEvent(tx, order.id, "order.cancel_requested", {});
    return row;
  });
  services.txSender.wake();
  return view(row);
}

/** The order a cancellation transaction is for (its ref). */
export function orderOfCancellation(row: ChainTransaction): string {
  return row.ref.slice("cancel:".length);
}

/** Whether a final cancellation transaction voided the order: mined, or refused because it was cancelled
 * already (a cancellation sent again after a crash). */
export function cancelled(row: ChainTransaction): boolean {
  return row.status === "mined" || (row.lastError ?? "").startsWith("OrderIsCancelled(");
}

/** Marks the order expired if it still is pending; whether it was. */
export async function markCancelledOrderExpired(tx: DbOrTx, orderId: string): Promise<OrderRow | undefined> {
  const [updated] = await tx
    .update(orders)
    .set({ status: "expired", updatedAt: new Date() })
    .where(and(eq(orders.id, orderId), eq(orders.status, "pending")))
    .returning();
  return updated;
}
