// Follows the indexer's paid orders (a cursor stored in the database, advanced in the same transaction as
// the orders it settles, under a row lock: several relayer processes never handle a payment twice) and
// turns the matching orders to success. The move to success comes from the chain through the indexer,
// never from a client. With it: the order's events, the webhook events, and the job that powers the
// device on.
import { and, eq, gte, inArray, isNull, lte } from "drizzle-orm";
import type { Hex } from "viem";
import { START_CURSOR, type PaidOrder, type Settlement } from "../../../indexer/client.ts";
import type { Tx } from "../db/client.ts";
import { orders, syncState } from "../db/schema.ts";
import { recordOrderEvent, recordWebhookEvent } from "../events/record.ts";
import { enqueueJob } from "../jobs/queue.ts";
import type { Services } from "../services.ts";
import { usd } from "./pricing.ts";
import type { OrderRow } from "./orders.ts";

const CURSOR = "payments_cursor";
const PAGE = 200;
const IDLE_MS = 50;

export function paymentEventData(order: OrderRow, paid: PaidOrder) {
  return {
    orderId: order.id,
    deviceId: order.deviceId,
    amountUsd: usd(order.amountUsdMicros),
    token: order.token,
    tokenAmount: order.tokenAmount,
    rail: paid.rail,
    payer: paid.payer,
    transactionHash: paid.transactionHash,
    blockNumber: Number(paid.blockNumber),
    paidAt: new Date(Number(paid.blockTimestamp) * 1000).toISOString(),
  };
}

export function settlementEventData(order: OrderRow, s: Settlement) {
  return {
    orderId: order.id,
    ref: s.ref,
    split: s.split,
    token: s.token,
    gross: s.gross.toString(),
    grossUsd: Number(s.grossUsdMicro) / 1e6,
    legs: [
      { leg: "assetOwner", recipient: s.assetOwner, amount: s.assetOwnerAmount.toString() },
      { leg: "operator", recipient: s.operator, amount: s.operatorAmount.toString() },
      { leg: "protocol", recipient: s.protocol, amount: s.protocolAmount.toString() },
    ],
    transactionHash: s.transactionHash,
    blockNumber: Number(s.blockNumber),
    logIndex: s.logIndex,
  };
}

export function createPaymentSync(services: Services) {
  const { db, indexer, chain } = services;
  const logger = services.logger.child({ worker: "payment-sync" });
  const controller = new AbortController();
  let loop: Promise<void> | undefined;

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
      token: order.token,
      tokenAmount: order.tokenAmount,
      recordedAt: paidAt.toISOString(),
    });
    if (!order.poweredOnAt) {
      await enqueueJob(tx, { kind: "device.power_on", key: order.id, payload: { orderId: order.id } });
    }
  }

  /** Orders held as paid at or after `fromBlock` that a reorganisation removed go back to pending. */
  async function undoReorganised(tx: Tx, held: OrderRow[], still: Set<bigint>) {
    for (const order of held) {
      if (still.has(order.onchainId)) continue;
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
      logger.warn("payment removed by a chain reorganisation", { orderId: order.id });
    }
  }

  /** Handles one page of new payments; returns how many orders it read. The indexer is read outside the
   * database transaction, which only applies the page if the cursor is still the one the page follows. */
  async function step(): Promise<number> {
    const cursor = await currentCursor();
    const page = await indexer.paidOrdersAfter(cursor, PAGE);
    if (page.orders.length === 0 && !page.reorg) return 0;

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
    const settlements = new Map(
      (await indexer.settlementsByOrderIds(ours.map((p) => p.orderId))).map((s) => [s.orderId, s]),
    );
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
          .where(inArray(orders.onchainId, ours.map((p) => p.orderId)));
        const byOnchainId = new Map(
          rows.filter((o) => o.routerAddress.toLowerCase() === router).map((o) => [o.onchainId, o]),
        );
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
    return page.orders.length;
  }

  /** payment.confirmed for paid orders whose block is CONFIRMATIONS deep. */
  async function confirm() {
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
        await recordWebhookEvent(tx, order.tenantId, "payment.confirmed", {
          orderId: order.id,
          deviceId: order.deviceId,
          amountUsd: usd(order.amountUsdMicros),
          token: order.token,
          tokenAmount: order.tokenAmount,
          rail: order.rail,
          payer: order.payer,
          transactionHash: order.txHash as Hex,
          blockNumber: order.blockNumber,
          confirmations: depth,
        });
      }
    });
  }

  async function run() {
    let failures = 0;
    let lastConfirm = 0;
    while (!controller.signal.aborted) {
      try {
        const read = await step();
        if (read > 0 || Date.now() - lastConfirm > 1_000) {
          await confirm();
          lastConfirm = Date.now();
        }
        failures = 0;
        if (read < PAGE) await sleep(IDLE_MS, controller.signal);
      } catch (error) {
        failures++;
        if (failures === 1 || failures % 50 === 0) {
          logger.warn("payment sync failed; retrying", { error: (error as Error).message, failures });
        }
        await sleep(Math.min(5_000, 200 * failures), controller.signal);
      }
    }
  }

  return {
    name: "payment-sync",
    start: async () => {
      loop = run();
    },
    stop: async () => {
      controller.abort();
      await loop;
    },
    /** One pass, for tests. */
    step,
  };
}

function sleep(ms: number, signal: AbortSignal) {
  return new Promise<void>((resolve) => {
    const timer = setTimeout(resolve, ms);
    signal.addEventListener("abort", () => {
      clearTimeout(timer);
      resolve();
    }, { once: true });
  });
}

