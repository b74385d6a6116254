// The transfer rail's watcher. A wallet that can only send a plain ERC-20 transfer pays an order from its EIP-681
// payment request (paymentDetails.transfer): the order amount goes to the order's deposit address
// (PaymentRouter.depositAddress, computed off-chain). This worker reads the balances of the deposit addresses of
// pending, unexpired orders (at most PAGE orders a tick, by expiry from where the last tick stopped, so every
// open order is read in turn however many there are, and no expired or closed one is; the reads batched:
// chain.balancesOf) and, for each address
// that holds at least the amount, submits PaymentRouter.payFromDeposit through the transaction sender, after
// the checks and the simulation every relayed rail has (relay.ts relayDeposit): the hot wallet never pays for a
// call that would revert, and sends nothing for a deposit short of the amount. The order then turns to success
// the way every payment does: the indexer sees OrderPaid (rail transfer, payer the deposit address) and the
// payment sync records it.
//
// Tokens the order will not take stay at its address: an overpayment, a second transfer, a transfer after the
// order expired or was cancelled. For DEPOSIT_STRAY_WATCH_HOURS after an order is paid or expires the watcher
// reads its address too (PAGE orders a tick, in turn) and reports a balance found there once, as a warning and
// payg_deposit_stray_total: the operator sends it back with PaymentRouter.recoverDeposit (README, Operating it).
//
// One relayer process at a time watches (a lease): the others would read the same balances.
import { and, asc, eq, getTableColumns, gt, ne, sql } from "drizzle-orm";
import type { Address } from "viem";
import type { Db } from "../db/client.ts";
import { orders } from "../db/schema.ts";
import { ServiceError } from "../errors.ts";
import { createLease } from "../jobs/lease.ts";
import { createWorker } from "../jobs/worker.ts";
import type { Services } from "../services.ts";
import { type OrderRow, voucherOf } from "./orders.ts";
import { relayDeposit } from "./relay.ts";

const LEASE = "deposit_watch_lease";
/** Orders read a tick, of each kind (pending, and recently paid or expired). */
const PAGE = 200;
/** Stray balances remembered as reported (the oldest forgotten first): each is reported once. */
const REPORTED_LIMIT = 10_000;

/** Where a page ends: the last order's (expires_at, id) among pending orders, its (updated_at, id) among closed ones.
 * The time is PostgreSQL's own text of it (`at`): a JavaScript Date keeps milliseconds, the column microseconds,
 * and a cursor that rounded would read the last rows of its page again (for ever, were a page's rows all within one
 * millisecond). */
type Cursor = { at: string; id: string };

/** The next PAGE pending orders not expired at `now`, after `after`, by (expires_at, id)
 * (orders_pending_expiry_id_idx: the open orders only, however long the history). */
export function pendingOrdersPage(db: Db, now: Date, after: Cursor | undefined) {
  return db
    .select({ ...getTableColumns(orders), at: sql<string>`${orders.expiresAt}::text` })
    .from(orders)
    .where(
      and(
        eq(orders.status, "pending"),
        gt(orders.expiresAt, now),
        after ? sql`(${orders.expiresAt}, ${orders.id}) > (${after.at}::timestamptz, ${after.id})` : undefined,
      ),
    )
    .orderBy(asc(orders.expiresAt), asc(orders.id))
    .limit(PAGE);
}

/** The next PAGE orders closed (paid or expired: a status change sets updated_at) since `since`, after `after`, by
 * (updated_at, id) (orders_closed_updated_idx: the window's orders only, read in the index's order). */
export function closedOrdersPage(db: Db, since: Date, after: Cursor | undefined) {
  return db
    .select({ ...getTableColumns(orders), at: sql<string>`${orders.updatedAt}::text` })
    .from(orders)
    .where(
      and(
        ne(orders.status, "pending"),
        gt(orders.updatedAt, since),
        after ? sql`(${orders.updatedAt}, ${orders.id}) > (${after.at}::timestamptz, ${after.id})` : undefined,
      ),
    )
    .orderBy(asc(orders.updatedAt), asc(orders.id))
    .limit(PAGE);
}

export function createDepositWatch(services: Services) {
  const {
    database: { db },
    chain,
    config,
    metrics,
  } = services;
  const logger = services.logger.child({ worker: "deposit-watch" });
  const interval = config.DEPOSIT_WATCH_INTERVAL_MS;
  const lease = createLease(db, LEASE, Math.max(interval * 5, 15_000));
  /** Where the next tick goes on among pending orders, and among recently closed ones. */
  let pendingAfter: Cursor | undefined;
  let closedAfter: Cursor | undefined;
  /** Order id -> the stray balance last reported for it. */
  const reported = new Map<string, bigint>();
  /** Orders whose payment from the deposit this process queued (logged once). */
  const submitted = new Set<string>();

  /** The balances of the orders' deposit addresses, in the order's token (all of one chain's stablecoin). */
  async function deposits(rows: OrderRow[]): Promise<Array<{ order: OrderRow; deposit: Address; balance: bigint }>> {
    const byToken = new Map<Address, Array<{ order: OrderRow; deposit: Address }>>();
    for (const order of rows) {
      const voucher = voucherOf(order);
      const entry = { order, deposit: chain.depositAddress(voucher) };
      const list = byToken.get(voucher.token);
      if (list) list.push(entry);
      else byToken.set(voucher.token, [entry]);
    }
    const out: Array<{ order: OrderRow; deposit: Address; balance: bigint }> = [];
    for (const [token, list] of byToken) {
      const balances = await chain.balancesOf(
        token,
        list.map((e) => e.deposit),
      );
      list.forEach((e, i) => out.push({ ...e, balance: balances[i]! }));
    }
    return out;
  }

  /** Pays the pending orders whose deposit address holds the amount. */
  async function payFunded(now: Date) {
    // A router without the transfer rail gave no order a deposit address.
    if (![...(await chain.stablecoins()).values()].some((t) => t.transfer)) return;
    const rows = await pendingOrdersPage(db, now, pendingAfter);
    const lastPending = rows[rows.length - 1];
    pendingAfter = rows.length === PAGE && lastPending ? { at: lastPending.at, id: lastPending.id } : undefined;
    if (rows.length === 0) return;
    for (const { order, deposit, balance } of await deposits(rows)) {
      if (balance < BigInt(order.tokenAmount)) continue;
      try {
        await relayDeposit(services, order, deposit);
        if (!submitted.has(order.id)) {
          submitted.add(order.id);
          if (submitted.size > REPORTED_LIMIT) submitted.delete(submitted.values().next().value!);
          logger.info("deposit found: payFromDeposit queued", { orderId: order.id, deposit, balance: balance.toString() });
        }
      } catch (error) {
        if (!(error instanceof ServiceError)) throw error;
        // Paid or being paid on another rail, being cancelled, expiring, over the revert budget, or the simulation
        // reverted: nothing was sent. Tokens the order does not take are reported once it is closed.
        logger.debug("deposit not paid out", { orderId: order.id, deposit, code: error.code, error: error.message });
      }
    }
  }

  /** Reports tokens at the deposit addresses of orders paid or expired in the last DEPOSIT_STRAY_WATCH_HOURS. */
  async function reportStray(now: Date) {
    const since = new Date(now.getTime() - config.DEPOSIT_STRAY_WATCH_HOURS * 3_600_000);
    const rows = await closedOrdersPage(db, since, closedAfter);
    const last = rows[rows.length - 1];
    closedAfter = rows.length === PAGE && last ? { at: last.at, id: last.id } : undefined;
    if (rows.length === 0) return;
    for (const { order, deposit, balance } of await deposits(rows)) {
      if (balance === 0n || reported.get(order.id) === balance) continue;
      const reason = order.status === "success" ? "paid" : "expired";
      reported.delete(order.id);
      reported.set(order.id, balance);
      if (reported.size > REPORTED_LIMIT) reported.delete(reported.keys().next().value!);
      metrics.depositStray.inc({ reason });
      logger.warn("tokens at a deposit address the order will not take: recover them with PaymentRouter.recoverDeposit", {
        orderId: order.id,
        onchainOrderId: order.onchainId.toString(),
        reason,
        deposit,
        token: order.tokenAddress,
        balance: balance.toString(),
      });
    }
  }

  return createWorker({
    name: "deposit-watch",
    async tick() {
      const now = new Date();
      await payFunded(now);
      if (config.DEPOSIT_STRAY_WATCH_HOURS > 0) await reportStray(now);
      // A full page: the next one at once.
      return pendingAfter !== undefined || closedAfter !== undefined ? 0 : interval;
    },
    onError(error) {
      logger.warn("deposit watch failed", { error: (error as Error).message });
      return interval;
    },
    firstDelayMs: interval,
    lease: { lease, retryMs: interval },
  });
}
