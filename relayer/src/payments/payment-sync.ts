// Follows the indexer's paid orders (a cursor stored in the database, advanced in the same transaction as
// the orders it settles, under a row lock: several relayer processes never handle a payment twice) and
// turns the matching orders to success. The move to success comes from the chain through the indexer,
// never from a client. With it: the order's events, the webhook events, and the job that powers the
// device on (at once when CONFIRMATIONS is 0 or the tenant powers on at 0 confirmations, otherwise when the
// payment is confirmed). A payment a reorganisation removed turns its order pending again, with
// payment.reverted on the order's stream and as a webhook.
//
// The worker reads when the indexer says the paid orders changed (a live query, indexer/client.ts
// watchPaidOrders, which also says when its connection is back after a drop), at once again while pages
// come full, and otherwise every SAFETY_POLL_MS (jobs/worker.ts). After a failed read it tries again after
// a growing delay, at most MAX_RETRY_MS. While paid orders wait for CONFIRMATIONS blocks it looks every
// CONFIRM_POLL_MS; if a read ends before the newest order the indexer announced (a result it had cached a
// moment too long), it reads again after STALE_RETRY_MS.
import { and, eq, gte, inArray, isNull, lte } from "drizzle-orm";
import {
  START_CURSOR,
  decodeCursor,
  type OrderCursor,
  type PaidOrder,
  type Settlement,
  type Subscription,
} from "../../../indexer/client.ts";
import type { Tx } from "../db/client.ts";
import { orders, syncState } from "../db/schema.ts";
import { recordOrderEvent, recordWebhookEvent } from "../events/record.ts";
import { enqueuePowerOn, powersOnAtPayment } from "../devices/power-on.ts";
import { SAFETY_POLL_MS, createWorker } from "../jobs/worker.ts";
import type { Services } from "../services.ts";
import { checksummed, tokenRef } from "../representation.ts";
import { usd } from "./pricing.ts";
import type { OrderRow } from "./orders.ts";
import { countPaidVolume } from "./usage-totals.ts";
import { countRevenue, moveRevenue } from "./revenue-days.ts";

const CURSOR = "payments_cursor";
const PAGE = 200;
const MAX_RETRY_MS = 5_000;
const CONFIRM_POLL_MS = 1_000;
const STALE_RETRY_MS = 100;
const STALE_RETRIES = 20;

export function paymentEventData(order: OrderRow, paid: PaidOrder) {
  return {
    orderId: order.id,
    deviceId: order.deviceId,
    amountUsd: usd(order.amountUsdMicros),
    token: tokenRef(order.token, order.tokenAddress),
    tokenAmount: order.tokenAmount,
    rail: paid.rail,
    payer: checksummed(paid.payer),
    transactionHash: paid.transactionHash,
    blockNumber: Number(paid.blockNumber),
    paidAt: new Date(Number(paid.blockTimestamp) * 1000).toISOString(),
  };
}

export function settlementEventData(order: OrderRow, s: Settlement) {
  return {
    orderId: order.id,
    ref: s.ref,
    split: checksummed(s.split),
    asset: { deviceId: order.deviceId, chainDeviceId: order.chainDeviceId },
    // The settlement's token is the order's (the order's split settles in it).
    token: tokenRef(order.token, s.token),
    gross: s.gross.toString(),
    grossUsd: usd(Number(s.grossUsdMicro)),
    legs: [
      { leg: "assetOwner" as const, recipient: checksummed(s.assetOwner), amount: s.assetOwnerAmount.toString() },
      { leg: "operator" as const, recipient: checksummed(s.operator), amount: s.operatorAmount.toString() },
      { leg: "protocol" as const, recipient: checksummed(s.protocol), amount: s.protocolAmount.toString() },
    ],
    transactionHash: s.transactionHash,
    blockNumber: Number(s.blockNumber),
    logIndex: s.logIndex,
  };
}

/** The payment of a paid order as payment.confirmed and payment.reverted carry it; undefined when the row lacks
 * one of its parts (markPaid sets them all: only a row changed by hand lacks one). */
function paymentOf(order: OrderRow) {
  const { rail, payer, txHash, blockNumber } = order;
  if (rail === null || payer === null || txHash === null || blockNumber === null) return undefined;
  return {
    orderId: order.id,
    deviceId: order.deviceId,
    amountUsd: usd(order.amountUsdMicros),
    token: tokenRef(order.token, order.tokenAddress),
    tokenAmount: order.tokenAmount,
    rail,
    payer: checksummed(payer),
    transactionHash: txHash,
    blockNumber,
  };
}

export function createPaymentSync(services: Services) {
  const {
    database: { db },
    indexer,
    chain,
  } = services;
  const logger = services.logger.child({ worker: "payment-sync" });
  /** The newest paid order the indexer announced (its checkpoint), to tell a stale read. */
  let announced: string | undefined;
  /** For the lag metrics: the announced order's block, the cursor's after the last read, and since when
   * the cursor has been behind the announced order (undefined: caught up). */
  let announcedBlock = 0n;
  let cursorBlock = 0n;
  let behindSince: number | undefined;
  const isBehind = (cursor: OrderCursor) =>
    announced !== undefined && (cursor === START_CURSOR || decodeCursor(cursor).checkpoint < announced);
  let lastCursor: OrderCursor = START_CURSOR;
  services.metrics.trackPaymentSync(() => ({
    blocks: behindSince === undefined ? 0 : Math.max(0, Number(announcedBlock - cursorBlock)),
    seconds: behindSince === undefined ? 0 : (Date.now() - behindSince) / 1000,
  }));

  let cursorCreated = false;
  async function currentCursor(): Promise<string> {
    if (!cursorCreated) {
      await db.insert(syncState).values({ name: CURSOR, value: START_CURSOR }).onConflictDoNothing();
      cursorCreated = true;
    }
    const [row] = await db.select().from(syncState).where(eq(syncState.name, CURSOR));
    return row.value;
  }

  async function markPaid(tx: Tx, order: OrderRow, paid: PaidOrder, settlement: Settlement | undefined) {
    const paidAt = new Date(Number(paid.blockTimestamp) * 1000);
    const [updated] = await tx
      .update(orders)
      .set({
        status: "success",
        rail: paid.rail,
        payer: paid.payer,
        txHash: paid.transactionHash,
        blockNumber: Number(paid.blockNumber),
        paidAt,
        confirmedAt: null,
        splitTxHash: settlement?.transactionHash ?? null,
        updatedAt: new Date(),
      })
      .where(eq(orders.id, order.id))
      .returning();
    // Paid anew after a reorganisation, or for the first time: its volume counts (once: an order paid
    // already is only given its new transaction).
    if (order.status !== "success") {
      await countPaidVolume(tx, order.deviceId, order.amountUsdMicros);
      await countRevenue(tx, order, paidAt, 1);
    } else {
      // Its new transaction may be in a block of another day than the one it was counted on.
      await moveRevenue(tx, order, order.paidAt, paidAt);
    }
    const payment = paymentEventData(updated, paid);
    await recordOrderEvent(tx, order.id, "payment.succeeded", payment);
    await recordWebhookEvent(tx, order.tenantId, "payment.succeeded", payment);
    if (settlement) {
      const split = settlementEventData(updated, settlement);
      await recordOrderEvent(tx, order.id, "split.settled", split);
      await recordWebhookEvent(tx, order.tenantId, "payment.split", split);
      await recordWebhookEvent(tx, order.tenantId, "split.settled", split);
    }
    await recordWebhookEvent(tx, order.tenantId, "revenue.recorded", {
      orderId: order.id,
      deviceId: order.deviceId,
      tier: order.tier,
      amountUsd: usd(order.amountUsdMicros),
      token: tokenRef(order.token, order.tokenAddress),
      tokenAmount: order.tokenAmount,
      recordedAt: paidAt.toISOString(),
    });
    // With CONFIRMATIONS above 0 the device waits for payment.confirmed (confirm), unless the tenant powers on
    // at 0 confirmations.
    if (!order.poweredOnAt && (await powersOnAtPayment(tx, services.config, order.tenantId))) {
      await enqueuePowerOn(tx, order, paid.transactionHash, "paid");
    }
  }

  /** Orders held as paid at or after `fromBlock` that a reorganisation removed go back to pending. */
  async function undoReorganised(tx: Tx, held: OrderRow[], still: Set<bigint>) {
    for (const order of held) {
      if (still.has(order.onchainId)) continue;
      // Its volume comes back out of the usage totals; a session it started stays counted (it happened).
      await countPaidVolume(tx, order.deviceId, -order.amountUsdMicros);
      if (order.paidAt) await countRevenue(tx, order, order.paidAt, -1);
      await tx
        .update(orders)
        .set({
          status: "pending",
          rail: null,
          payer: null,
          txHash: null,
          blockNumber: null,
          paidAt: null,
          confirmedAt: null,
          splitTxHash: null,
          updatedAt: new Date(),
        })
        .where(eq(orders.id, order.id));
      await recordOrderEvent(tx, order.id, "payment.reverted", { reason: "chain reorganisation", transactionHash: order.txHash });
      const payment = paymentOf(order);
      if (!payment) {
        // A paid order always has its payment (markPaid sets all four): this row was changed by hand.
        logger.error("paid order without its payment; payment.reverted not sent", { orderId: order.id });
      } else {
        await recordWebhookEvent(tx, order.tenantId, "payment.reverted", {
          ...payment,
          reason: "chain_reorganisation",
          devicePoweredOn: order.poweredOnAt !== null,
          revertedAt: new Date().toISOString(),
        });
      }
      logger.warn("payment removed by a chain reorganisation", { orderId: order.id, devicePoweredOn: order.poweredOnAt !== null });
    }
  }

  /** Handles one page of new payments; returns how many orders it read and the cursor after them. The
   * indexer is read outside the database transaction, which only applies the page if the cursor is still the
   * one the page follows. */
  async function step(): Promise<{ read: number; cursor: OrderCursor }> {
    const cursor = await currentCursor();
    const page = await indexer.paidOrdersAfter(cursor, PAGE);
    if (page.orders.length === 0 && !page.reorg) return { read: 0, cursor };

    let reorganised: { held: OrderRow[]; still: Set<bigint> } | undefined;
    if (page.reorg) {
      const held = await db
        .select()
        .from(orders)
        .where(and(eq(orders.status, "success"), gte(orders.blockNumber, Number(page.reorg.fromBlock))));
      const still = new Set((await indexer.ordersByIds(held.map((o) => o.onchainId))).map((p) => p.orderId));
      reorganised = { held, still };
    }
    const ours = page.orders.filter((p) => p.chainId === chain.chainId);
    const settlements = new Map((await indexer.settlementsByOrderIds(ours.map((p) => p.orderId))).map((s) => [s.orderId, s]));
    // The router settles in the same transaction as it pays, so the indexer commits both together: a
    // payment without its settlement means an inconsistent read, to be retried, never a lost split event.
    const unsettled = ours.find((p) => !settlements.has(p.orderId));
    if (unsettled) throw new Error(`order ${unsettled.orderId} is indexed without its settlement; retrying`);
    const router = chain.router.toLowerCase();

    await db.transaction(async (tx) => {
      const [locked] = await tx.select().from(syncState).where(eq(syncState.name, CURSOR)).for("update");
      if (locked.value !== cursor) return; // another relayer process handled this page
      if (reorganised) await undoReorganised(tx, reorganised.held, reorganised.still);
      if (ours.length > 0) {
        const rows = await tx
          .select()
          .from(orders)
          .where(
            inArray(
              orders.onchainId,
              ours.map((p) => p.orderId),
            ),
          );
        const byOnchainId = new Map(rows.filter((o) => o.routerAddress.toLowerCase() === router).map((o) => [o.onchainId, o]));
        for (const paid of ours) {
          const order = byOnchainId.get(paid.orderId);
          if (!order) continue; // paid through the router, but not an order of this service
          if (order.status === "success" && order.txHash === paid.transactionHash) continue;
          await markPaid(tx, order, paid, settlements.get(paid.orderId));
          logger.info("order paid", { orderId: order.id, rail: paid.rail, tx: paid.transactionHash });
        }
      }
      await tx.update(syncState).set({ value: page.cursor, updatedAt: new Date() }).where(eq(syncState.name, CURSOR));
    });
    return { read: page.orders.length, cursor: page.cursor };
  }

  /** payment.confirmed for paid orders whose block is CONFIRMATIONS deep; resolves true if paid orders are
   * still waiting for theirs. */
  async function confirm(): Promise<boolean> {
    const depth = services.config.CONFIRMATIONS;
    const indexed = depth === 0 ? Number.MAX_SAFE_INTEGER : await indexer.indexedBlock();
    await db.transaction(async (tx) => {
      const due = await tx
        .select()
        .from(orders)
        .where(and(eq(orders.status, "success"), isNull(orders.confirmedAt), lte(orders.blockNumber, indexed - depth)))
        .limit(PAGE)
        .for("update", { skipLocked: true });
      for (const order of due) {
        await tx.update(orders).set({ confirmedAt: new Date(), updatedAt: new Date() }).where(eq(orders.id, order.id));
        const payment = paymentOf(order);
        if (!payment) {
          // A paid order always has its payment (markPaid sets all four): this row was changed by hand.
          logger.error("paid order without its payment; payment.confirmed not sent", { orderId: order.id });
          continue;
        }
        await recordWebhookEvent(tx, order.tenantId, "payment.confirmed", { ...payment, confirmations: depth });
        if (!order.poweredOnAt && !(await powersOnAtPayment(tx, services.config, order.tenantId))) {
          await enqueuePowerOn(tx, order, payment.transactionHash, "confirmed");
        }
      }
    });
    const [waiting] = await db
      .select({ id: orders.id })
      .from(orders)
      .where(and(eq(orders.status, "success"), isNull(orders.confirmedAt)))
      .limit(1);
    return waiting !== undefined;
  }

  let failures = 0;
  let lastConfirm = 0;
  // At start: orders a stopped process marked paid without confirming them yet.
  let awaitingConfirmation = true;
  let staleReads = 0;

  async function tick(): Promise<number> {
    const { read, cursor } = await step();
    lastCursor = cursor;
    cursorBlock = cursor === START_CURSOR ? 0n : decodeCursor(cursor).blockNumber;
    if (!isBehind(cursor)) behindSince = undefined;
    if (read > 0 || (awaitingConfirmation && Date.now() - lastConfirm >= CONFIRM_POLL_MS)) {
      awaitingConfirmation = await confirm();
      lastConfirm = Date.now();
    }
    failures = 0;
    if (read === PAGE) return 0;
    // The indexer announced an order after the cursor, yet the read did not reach it: read again shortly.
    if (isBehind(cursor)) {
      if (++staleReads <= STALE_RETRIES) return STALE_RETRY_MS;
    } else {
      staleReads = 0;
    }
    return awaitingConfirmation ? CONFIRM_POLL_MS : SAFETY_POLL_MS;
  }

  const worker = createWorker({
    name: "payment-sync",
    tick,
    onError(error) {
      failures++;
      if (failures === 1 || failures % 50 === 0) {
        logger.warn("payment sync failed; retrying", { error: (error as Error).message, failures });
      }
      return Math.min(MAX_RETRY_MS, 200 * failures);
    },
  });

  let live: Subscription | undefined;
  let liveFailures = 0;
  return {
    ...worker,
    async start() {
      live = indexer.watchPaidOrders({
        onChange(latest) {
          if (latest) {
            const newest = decodeCursor(latest);
            announced = newest.checkpoint;
            announcedBlock = newest.blockNumber;
            staleReads = 0;
            if (behindSince === undefined && isBehind(lastCursor)) behindSince = Date.now();
          }
          if (latest !== undefined && liveFailures > 0) {
            logger.info("indexer live query back", { failures: liveFailures });
            liveFailures = 0;
          }
          worker.wake();
        },
        onError(error) {
          liveFailures++;
          if (liveFailures === 1 || liveFailures % 60 === 0) {
            logger.warn("indexer live query failed; reconnecting", { error: error.message, failures: liveFailures });
          }
        },
      });
      await worker.start();
    },
    async stop() {
      live?.close();
      await worker.stop();
    },
  };
}
