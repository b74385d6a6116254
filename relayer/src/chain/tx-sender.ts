// The relayer's outgoing transactions. Callers enqueue {kind, ref, to, data} (at most one per ref, in their
// own database transaction); one relayer process at a time, the holder of a lease, sends them from the hot
// wallet. Each transaction is signed and stored before it is broadcast, so after a crash only signed
// transactions already stored are broadcast, never a new one: nonces cannot collide and a payment is never
// submitted twice.
//
// Sending: payments (every kind but the DEFERRED_KINDS, i.e. anchoring) go first, whatever the backlog of
// anchoring transactions; a payment enqueued while a batch is being sent is sent next. A transaction's
// nonce is the next one after the chain's pending count, this process's last nonce and every stored
// unmined one (so a restart on a node that lost the pending transactions never reuses a stored nonce). Its
// fees are the network's suggestion, capped at TX_MAX_FEE_PER_GAS_GWEI. The last look at the chain before a
// transaction is signed is its check: a payment whose voucher expires before the block
// RELAY_EXPIRY_MARGIN_BLOCKS after the next (chain time; payments/relay-guard.ts), or a call whose gas estimate
// reverts, is marked failed and never sent (payg_tx_dropped_total); gas spent on one that reverts all the same
// is counted (payg_tx_reverted_gas_total).
//
// Watching: sent transactions are watched until one of their signed versions is mined. What to do with each at
// a tick is a pure decision (sent-decision.ts decideSent: the stored row and what the chain says -> wait, final,
// replace, broadcast again, requeue); this file asks the chain and carries it out. One waiting in the
// node's pool, or holding the chain's next nonce (a node that forwards to a sequencer shows no pool),
// unmined for TX_REPLACE_AFTER_BLOCKS blocks, is replaced: the same nonce, gas, target and data, signed with fees
// raised by at least 12.5% (and at least to the network's current suggestion; fee-bump.ts), stored before it
// is broadcast like the original. Every signed hash of the nonce is kept (replaced_hashes), and the
// transaction is mined when any of them is: a receipt for an earlier version can come after its replacement
// was sent. It is final (mined or reverted) once its block is CONFIRMATIONS blocks deep (at once by default):
// until then it is watched as sent, so one that a reorganisation takes off the chain is broadcast again, or
// replaced when due, and waited for again, never left marked mined. One the node dropped is broadcast again
// (the latest signed version). A nonce below the stored unmined ones that no transaction holds, on the chain
// or in the node's pool (a nonce gap: the stored ones above it can never be mined), is filled with an empty
// transfer to the hot wallet itself, signed and stored the same way, lowest first.
//
// The worker is woken by NOTIFY chain_transactions (enqueueTransaction) and by wake(). While transactions
// are queued or unmined it ticks every TICK_MS (WATCH_MS just after a send), renewing its lease each time;
// with nothing in flight it only looks again after SAFETY_POLL_MS, and lets the lease run out meanwhile (a
// process needs it only to send; the next one to send takes it, and its nonce comes from the chain's pending
// count and the stored transactions, so one taking over from another never reuses a nonce). A process that
// does not hold the lease tries to take it every TICK_MS. A tick the RPC fails (a 429 or 5xx after the
// transport's own retries, an unreachable node) leaves everything as it is, and the next one waits longer
// each time, up to MAX_BACKOFF_MS.
import { and, asc, eq, inArray, max, sql } from "drizzle-orm";
import {
  type Address,
  BaseError,
  type Hex,
  TransactionNotFoundError,
  TransactionReceiptNotFoundError,
  type TransactionReceipt,
  keccak256,
  parseGwei,
  parseTransaction,
} from "viem";
import type { Config } from "../config.ts";
import type { Database, DbOrTx } from "../db/client.ts";
import { chainTransactions } from "../db/schema.ts";
import { createLease } from "../jobs/lease.ts";
import { SAFETY_POLL_MS, type TickContext, createWorker } from "../jobs/worker.ts";
import { newId } from "../ids.ts";
import type { Logger } from "../logger.ts";
import type { Metrics } from "../metrics/registry.ts";
import { type Fees, cappedFees, replacementFees } from "./fee-bump.ts";
import type { PaymentsChain } from "./payments-chain.ts";
import { revertReason } from "./revert-reason.ts";
import { type ChainView, type SenderSettings, type SentRow, decideSent } from "./sent-decision.ts";
import { chainClock, expiresTooSoon, relayHorizon, voucherExpiryOf } from "../payments/relay-guard.ts";

export const TX_CHANNEL = "chain_transactions";
const LEASE = "tx_sender_lease";
const TICK_MS = 500;
/** For a few seconds after a transaction is sent, poll for its receipt faster (a local chain mines at
 * once); then back to TICK_MS, so a slow public chain's RPC is not hammered. */
const WATCH_MS = 50;
const WATCH_WINDOW_MS = 5_000;
/** The longest wait after ticks that failed in a row (TICK_MS doubled after each). */
const MAX_BACKOFF_MS = 10_000;
const GAS_HEADROOM = 1.25;
/** Kinds sent only when no other transaction is queued: anchoring (energy/anchoring/anchor-worker.ts,
 * ANCHOR_TX_KIND) can wait; a payment cannot. */
export const DEFERRED_KINDS: readonly string[] = ["anchor"];
/** The kind of the empty self-transfers that fill a nonce gap. */
export const NONCE_GAP_KIND = "nonce_gap";

export type ChainTransaction = typeof chainTransactions.$inferSelect;
export type FinalHandler = (row: ChainTransaction, tx: DbOrTx) => Promise<void>;

/** Queues a transaction; returns the existing one if `ref` was queued before. Wakes the sender at commit. */
export async function enqueueTransaction(
  db: DbOrTx,
  req: { kind: string; ref: string; to: Address; data: Hex },
): Promise<{ row: ChainTransaction; created: boolean }> {
  const [inserted] = await db
    .insert(chainTransactions)
    .values({ id: newId("ctx"), kind: req.kind, ref: req.ref, toAddress: req.to, calldata: req.data })
    .onConflictDoNothing({ target: chainTransactions.ref })
    .returning();
  if (inserted) {
    await db.execute(sql`select pg_notify(${TX_CHANNEL}, ${inserted.id})`);
    return { row: inserted, created: true };
  }
  const [existing] = await db.select().from(chainTransactions).where(eq(chainTransactions.ref, req.ref));
  return { row: existing, created: false };
}

export function createTxSender(deps: {
  database: Database;
  chain: PaymentsChain;
  logger: Logger;
  metrics: Metrics;
  config: Pick<
    Config,
    | "TX_REPLACE_AFTER_BLOCKS"
    | "TX_MAX_FEE_PER_GAS_GWEI"
    | "TX_SENDER_LEASE_SECONDS"
    | "CONFIRMATIONS"
    | "RELAY_EXPIRY_MARGIN_BLOCKS"
    | "CHAIN_BLOCK_SECONDS"
  >;
}) {
  const { database, chain, metrics } = deps;
  const db = database.db;
  const logger = deps.logger.child({ worker: "tx-sender" });
  const lease = createLease(db, LEASE, deps.config.TX_SENDER_LEASE_SECONDS * 1000);
  const handlers = new Map<string, FinalHandler[]>();
  const account = chain.relayerAccount;
  const replaceAfterBlocks = BigInt(deps.config.TX_REPLACE_AFTER_BLOCKS);
  const confirmations = BigInt(deps.config.CONFIRMATIONS);
  const feeCeiling = parseGwei(String(deps.config.TX_MAX_FEE_PER_GAS_GWEI));
  const settings: SenderSettings = { confirmations, replaceAfterBlocks };
  let nextNonce: number | undefined;
  /** Sent transactions whose nonce the chain had used while none of their receipts was found, with the head
   * when that was first seen (this process's own view: a restart only waits longer). */
  const nonceUsedSince = new Map<string, bigint>();
  let failedTicks = 0;

  /** Takes or renews the lease; true if this process is the sender. */
  async function holdLease(): Promise<boolean> {
    const held = await lease.hold();
    if (!held) nextNonce = undefined;
    return held;
  }

  async function finish(row: ChainTransaction, update: Partial<ChainTransaction>): Promise<ChainTransaction | undefined> {
    const done = await db.transaction(async (tx) => {
      const [done] = await tx
        .update(chainTransactions)
        .set({ ...update, updatedAt: new Date() })
        .where(and(eq(chainTransactions.id, row.id), eq(chainTransactions.status, row.status)))
        .returning();
      if (!done) return undefined;
      for (const handler of handlers.get(done.kind) ?? []) await handler(done, tx);
      return done;
    });
    // Counted once committed, by the process that made the change.
    if (done) metrics.txFinished.inc({ kind: done.kind, status: done.status });
    return done;
  }

  /** Every signed version of the row's nonce, the latest first. */
  const signedHashes = (row: ChainTransaction): Hex[] => [row.txHash as Hex, ...([...row.replacedHashes].reverse() as Hex[])];

  /** The receipt of whichever signed version of the row was mined, if one was. Any other failure (a 429,
   * an unreachable node) is thrown: not finding a receipt must mean the node has none. */
  async function minedReceipt(row: ChainTransaction): Promise<TransactionReceipt | undefined> {
    for (const hash of signedHashes(row)) {
      try {
        return await chain.publicClient.getTransactionReceipt({ hash });
      } catch (error) {
        if (!(error instanceof TransactionReceiptNotFoundError)) throw error;
      }
    }
    return undefined;
  }

  /** A sent transaction whose nonce another transaction used (something else signing with the hot wallet's
   * key, or a node that reported a stale pending count after a restart), none of its versions mined: none of
   * them can be now, so it is queued again, to be signed with a new nonce (a payment is not lost, nor can it be
   * made twice). A nonce-gap filler has served its purpose: failed. */
  async function nonceSpent(row: ChainTransaction) {
    const lastError = `nonce ${row.nonce} was used by another transaction`;
    if (row.kind === NONCE_GAP_KIND) return finish(row, { status: "failed", lastError });
    const [queued] = await db
      .update(chainTransactions)
      .set({
        status: "queued",
        nonce: null,
        txHash: null,
        rawTransaction: null,
        replacedHashes: [],
        sentBlock: null,
        sentAt: null,
        lastError,
        updatedAt: new Date(),
      })
      .where(and(eq(chainTransactions.id, row.id), eq(chainTransactions.status, "sent"), eq(chainTransactions.txHash, row.txHash!)))
      .returning();
    if (!queued) return;
    metrics.txRequeued.inc({ kind: row.kind });
    logger.warn("transaction's nonce used by another transaction; queued again for a new nonce", {
      id: row.id,
      kind: row.kind,
      ref: row.ref,
      nonce: row.nonce,
      hashes: signedHashes(row),
    });
    worker.wake();
  }

  /** Whether the node holds the row's latest signed version unmined. A failure other than "not found" is
   * thrown, as for receipts. */
  async function waitsInPool(row: ChainTransaction): Promise<boolean> {
    try {
      const tx = await chain.publicClient.getTransaction({ hash: row.txHash as Hex });
      return tx.blockNumber === null;
    } catch (error) {
      if (error instanceof TransactionNotFoundError) return false;
      throw error;
    }
  }

  async function broadcast(row: Pick<ChainTransaction, "id" | "kind">, raw: Hex, hash: Hex): Promise<boolean> {
    try {
      await chain.publicClient.sendRawTransaction({ serializedTransaction: raw });
      return true;
    } catch (error) {
      // Already known, or a replacement the node refused while the previous version is still pending: the
      // stored transaction is watched and broadcast again either way.
      logger.warn("broadcast failed; will retry", { id: row.id, kind: row.kind, hash, error: (error as Error).message });
      return false;
    }
  }

  async function watchSent(head: bigint) {
    const sent = await db
      .select()
      .from(chainTransactions)
      .where(eq(chainTransactions.status, "sent"))
      .orderBy(asc(chainTransactions.nonce))
      .limit(100);
    if (sent.length === 0) return;
    // Read before the receipts: a nonce the chain had used by then belongs to a transaction whose receipt
    // is there already (if it is one of ours). The pending count runs on through the node's pool up to its
    // first missing nonce: a transaction below it waits in the pool, ready to be mined.
    const [confirmedNonce, pendingNonce] = await Promise.all([
      chain.publicClient.getTransactionCount({ address: account.address, blockTag: "latest" }),
      chain.publicClient.getTransactionCount({ address: account.address, blockTag: "pending" }),
    ]);
    const gap = lowestGap(
      sent.flatMap((r) => (r.nonce === null ? [] : [r.nonce])),
      confirmedNonce,
    );
    for (const row of sent) {
      const receipt = await minedReceipt(row);
      const view: ChainView = {
        head,
        receipt: receipt && { blockNumber: receipt.blockNumber, success: receipt.status === "success" },
        confirmedNonce,
        pendingNonce,
        gap,
        nonceUsedSince: nonceUsedSince.get(row.id),
        inPool: "unknown",
        nowMs: Date.now(),
      };
      const stored: SentRow = {
        nonce: row.nonce,
        signed: row.rawTransaction !== null,
        sentAtMs: row.sentAt?.getTime() ?? null,
        sentBlock: row.sentBlock,
      };
      let decision = decideSent(stored, view, settings);
      if (decision.action === "ask_pool") decision = decideSent(stored, { ...view, inPool: await waitsInPool(row) }, settings);
      if (decision.action === "nonce_used") nonceUsedSince.set(row.id, decision.since);
      else nonceUsedSince.delete(row.id);
      switch (decision.action) {
        case "wait":
        case "nonce_used":
        case "ask_pool":
          break;
        case "final":
          await finalise(row, receipt!, decision.status);
          break;
        case "nonce_spent":
          await nonceSpent(row);
          break;
        case "count_from_head":
          await db
            .update(chainTransactions)
            .set({ sentBlock: Number(head) })
            .where(eq(chainTransactions.id, row.id));
          break;
        case "resend": {
          let countFrom = row.sentBlock!;
          if (decision.replace) {
            if (await replace(row, head)) break;
            // At the fee ceiling: replace() counts its blocks again from this one.
            countFrom = Number(head);
          }
          if (decision.rebroadcast) await rebroadcast(row, decision.keepsCount ? countFrom : Number(head));
          break;
        }
      }
    }
    await fillNonceGap(head, confirmedNonce, pendingNonce);
  }

  /** Marks a transaction final, mined or reverted, as its receipt says (CONFIRMATIONS deep). */
  async function finalise(row: ChainTransaction, receipt: TransactionReceipt, status: "mined" | "reverted") {
    const lastError = status === "reverted" ? await explainRevert(row, receipt.blockNumber) : null;
    const hash = receipt.transactionHash;
    const done = await finish(row, {
      status,
      blockNumber: Number(receipt.blockNumber),
      lastError,
      txHash: hash,
      replacedHashes: signedHashes(row)
        .filter((h) => h !== hash)
        .reverse(),
    });
    if (done && status === "reverted") {
      // The gas the hot wallet paid for nothing: payg_tx_reverted_gas_total (alerted on).
      metrics.txRevertedGas.inc({ kind: row.kind }, Number(receipt.gasUsed));
      metrics.txRevertedFees.inc({ kind: row.kind }, Number(receipt.gasUsed * receipt.effectiveGasPrice));
    }
    logger.info("transaction final", {
      id: row.id,
      kind: row.kind,
      ref: row.ref,
      hash,
      status,
      block: Number(receipt.blockNumber),
      versions: row.replacedHashes.length + 1,
    });
  }

  /** Broadcasts the latest signed version again; its blocks count from `countFrom` (a transaction the node had
   * lost is back in its pool from now on). */
  async function rebroadcast(row: ChainTransaction, countFrom: number) {
    await db
      .update(chainTransactions)
      .set({ sentAt: new Date(), sentBlock: countFrom, attempts: row.attempts + 1, updatedAt: new Date() })
      .where(and(eq(chainTransactions.id, row.id), eq(chainTransactions.txHash, row.txHash!)));
    // Usually "already known" when the node still has it; the node's answer is logged either way (an
    // "underpriced" or "insufficient funds" says why the transaction waits).
    const refused = await chain.publicClient
      .sendRawTransaction({ serializedTransaction: row.rawTransaction as Hex })
      .then(() => undefined)
      .catch((error: Error) => (error instanceof BaseError ? error.details || error.shortMessage : error.message));
    metrics.txRebroadcasts.inc();
    logger.warn("transaction not mined yet; broadcast again", {
      id: row.id,
      hash: row.txHash,
      nonce: row.nonce,
      attempts: row.attempts + 1,
      ...(refused ? { nodeAnswer: refused } : {}),
    });
  }

  /** Replaces a transaction left unmined with the same one at higher fees: signed, stored, then broadcast.
   * False when the fee ceiling leaves no room for a bump. */
  async function replace(row: ChainTransaction, head: bigint): Promise<boolean> {
    const previous = parseTransaction(row.rawTransaction as Hex);
    const previousFees: Fees = {
      maxFeePerGas: previous.maxFeePerGas ?? 0n,
      maxPriorityFeePerGas: previous.maxPriorityFeePerGas ?? 0n,
    };
    const suggested = await chain.publicClient.estimateFeesPerGas();
    const fees = replacementFees(previousFees, suggested, feeCeiling);
    if (!fees) {
      // Counted again from this block: the warning comes once every TX_REPLACE_AFTER_BLOCKS blocks.
      await db
        .update(chainTransactions)
        .set({ sentBlock: Number(head) })
        .where(eq(chainTransactions.id, row.id));
      logger.warn("transaction not mined, and its fees are at the ceiling (TX_MAX_FEE_PER_GAS_GWEI): it waits for the base fee to fall", {
        id: row.id,
        kind: row.kind,
        hash: row.txHash,
        nonce: row.nonce,
        maxFeePerGas: previousFees.maxFeePerGas.toString(),
        suggestedMaxFeePerGas: suggested.maxFeePerGas.toString(),
      });
      return false;
    }
    const raw = await account.signTransaction({
      chainId: chain.chainId,
      type: "eip1559",
      to: row.toAddress as Address,
      data: row.calldata as Hex,
      nonce: row.nonce!,
      gas: previous.gas,
      ...fees,
    });
    const hash = keccak256(raw);
    if (!(await holdLease())) return true;
    const [stored] = await db
      .update(chainTransactions)
      .set({
        txHash: hash,
        rawTransaction: raw,
        replacedHashes: [...row.replacedHashes, row.txHash!],
        sentBlock: Number(head),
        sentAt: new Date(),
        attempts: row.attempts + 1,
        updatedAt: new Date(),
      })
      .where(and(eq(chainTransactions.id, row.id), eq(chainTransactions.status, "sent"), eq(chainTransactions.txHash, row.txHash!)))
      .returning();
    if (!stored) return true;
    metrics.txReplacements.inc({ kind: row.kind });
    logger.warn("transaction not mined in time; replaced with higher fees", {
      id: row.id,
      kind: row.kind,
      ref: row.ref,
      nonce: row.nonce,
      blocks: Number(head - BigInt(row.sentBlock!)),
      replaced: row.txHash,
      hash,
      maxFeePerGas: `${previousFees.maxFeePerGas} -> ${fees.maxFeePerGas}`,
      maxPriorityFeePerGas: `${previousFees.maxPriorityFeePerGas} -> ${fees.maxPriorityFeePerGas}`,
    });
    if (!(await broadcast(row, raw, hash))) await markUnbroadcast(row.id, hash);
    return true;
  }

  /** A stored transaction whose broadcast failed: broadcast again at the next tick, not REBROADCAST_AFTER_MS
   * later. */
  async function markUnbroadcast(id: string, hash: Hex) {
    await db
      .update(chainTransactions)
      .set({ sentAt: null })
      .where(and(eq(chainTransactions.id, id), eq(chainTransactions.txHash, hash)));
  }

  /** Fills the lowest nonce gap, if any: a nonce at or above the chain's confirmed count, below a stored
   * unmined transaction, that no stored transaction holds and the node's pool does not either. Those above
   * it could never be mined. */
  async function fillNonceGap(head: bigint, confirmedNonce: number, pendingNonce: number) {
    const held = await db
      .select({ nonce: chainTransactions.nonce })
      .from(chainTransactions)
      .where(and(eq(chainTransactions.status, "sent"), sql`${chainTransactions.nonce} >= ${confirmedNonce}`))
      .orderBy(asc(chainTransactions.nonce));
    if (held.length === 0) return;
    const nonces = new Set(held.map((r) => r.nonce!));
    const gap = lowestGap([...nonces], confirmedNonce);
    if (gap === undefined) return;
    // The node's pending count runs up to its first missing nonce: above `gap`, the pool holds a transaction
    // with that nonce (sent by other means), and it will be mined.
    if (pendingNonce > gap) return;
    if (!(await holdLease())) return;
    const fees = cappedFees(await chain.publicClient.estimateFeesPerGas(), feeCeiling);
    const raw = await account.signTransaction({
      chainId: chain.chainId,
      type: "eip1559",
      to: account.address,
      value: 0n,
      data: "0x",
      nonce: gap,
      gas: 21_000n,
      ...fees,
    });
    const hash = keccak256(raw);
    const id = newId("ctx");
    await db.insert(chainTransactions).values({
      id,
      kind: NONCE_GAP_KIND,
      ref: `${NONCE_GAP_KIND}:${gap}:${id}`,
      toAddress: account.address,
      calldata: "0x",
      status: "sent",
      nonce: gap,
      txHash: hash,
      rawTransaction: raw,
      sentBlock: Number(head),
      sentAt: new Date(),
      attempts: 1,
    });
    logger.warn("nonce gap below stored unmined transactions; filled with an empty transfer", {
      nonce: gap,
      confirmedNonce,
      pendingNonce,
      storedAbove: [...nonces].filter((n) => n > gap).length,
      hash,
    });
    if (!(await broadcast({ id, kind: NONCE_GAP_KIND }, raw, hash))) await markUnbroadcast(id, hash);
  }

  async function explainRevert(row: ChainTransaction, blockNumber: bigint): Promise<string> {
    try {
      await chain.publicClient.call({
        account: account.address,
        to: row.toAddress as Address,
        data: row.calldata as Hex,
        blockNumber,
      });
      return "reverted";
    } catch (error) {
      return revertReason(error)?.text ?? "reverted";
    }
  }

  /** The next nonce: after the chain's pending count, this process's last one, and every stored unmined
   * transaction's (a node that lost its pool, e.g. restarted, reports a pending count below them). */
  async function nonceForNext(): Promise<number> {
    const [pending, [stored]] = await Promise.all([
      chain.publicClient.getTransactionCount({ address: account.address, blockTag: "pending" }),
      db
        .select({ highest: max(chainTransactions.nonce) })
        .from(chainTransactions)
        .where(eq(chainTransactions.status, "sent")),
    ]);
    const afterStored = stored?.highest === null || stored?.highest === undefined ? 0 : stored.highest + 1;
    return Math.max(pending, nextNonce ?? 0, afterStored);
  }

  async function sendQueued(ctx: TickContext, head: bigint) {
    const queued = await db
      .select()
      .from(chainTransactions)
      .where(eq(chainTransactions.status, "queued"))
      // false sorts first: payments before anchoring, then oldest first.
      .orderBy(inArray(chainTransactions.kind, [...DEFERRED_KINDS]), asc(chainTransactions.createdAt))
      .limit(50);
    for (const row of queued) {
      if (worker.isStopped()) return;
      // Something was enqueued meanwhile (perhaps a payment, which must not wait behind this batch): the
      // worker runs the next tick at once, which picks again.
      if (ctx.woken()) return;
      const nonce = await nonceForNext();
      const fees = cappedFees(await chain.publicClient.estimateFeesPerGas(), feeCeiling);
      // The last look at the chain before the transaction is signed, stored and broadcast: what would revert
      // now, or be mined too late for its order, is dropped (failed) instead of paid for.
      const expiring = await expiringVoucher(row);
      if (expiring) {
        await drop(row, "expiring", expiring);
        continue;
      }
      let gas: bigint;
      try {
        gas = await chain.publicClient.estimateGas({
          account: account.address,
          to: row.toAddress as Address,
          data: row.calldata as Hex,
        });
      } catch (error) {
        const reason = revertReason(error);
        if (!reason) throw error; // the node is unreachable or refused the call: leave it queued
        await drop(row, "would_revert", reason.text);
        continue;
      }
      const raw = await account.signTransaction({
        chainId: chain.chainId,
        type: "eip1559",
        to: row.toAddress as Address,
        data: row.calldata as Hex,
        nonce,
        gas: (gas * BigInt(Math.round(GAS_HEADROOM * 100))) / 100n,
        ...fees,
      });
      const hash = keccak256(raw);
      if (!(await holdLease())) return;
      const [claimed] = await db
        .update(chainTransactions)
        .set({
          status: "sent",
          nonce,
          txHash: hash,
          rawTransaction: raw,
          sentBlock: Number(head),
          sentAt: new Date(),
          attempts: row.attempts + 1,
          updatedAt: new Date(),
        })
        .where(and(eq(chainTransactions.id, row.id), eq(chainTransactions.status, "queued")))
        .returning();
      if (!claimed) continue;
      nextNonce = nonce + 1;
      if (await broadcast(row, raw, hash)) logger.info("transaction sent", { id: row.id, kind: row.kind, ref: row.ref, hash, nonce });
      else await markUnbroadcast(row.id, hash);
    }
  }

  /** Why a payment of an order (a router call carrying a voucher) would be mined too late: its voucher
   * expires before the chain's block RELAY_EXPIRY_MARGIN_BLOCKS after the next one. */
  async function expiringVoucher(row: ChainTransaction): Promise<string | undefined> {
    if (row.toAddress.toLowerCase() !== chain.router.toLowerCase()) return undefined;
    const expiry = voucherExpiryOf(row.calldata as Hex);
    if (expiry === undefined) return undefined;
    const clock = await chainClock(chain.publicClient, deps.config);
    const margin = deps.config.RELAY_EXPIRY_MARGIN_BLOCKS;
    if (!expiresTooSoon(expiry, clock, margin)) return undefined;
    return `OrderExpiring(${expiry}): the voucher expires before chain time ${relayHorizon(clock, margin)}`;
  }

  /** Marks a queued transaction failed without sending it (payg_tx_dropped_total). */
  async function drop(row: ChainTransaction, reason: "would_revert" | "expiring", text: string) {
    if (await finish(row, { status: "failed", lastError: text })) metrics.txDropped.inc({ kind: row.kind, reason });
    logger.warn("transaction would revert; not sent", { id: row.id, kind: row.kind, ref: row.ref, reason: text });
  }

  /** What is in flight: whether transactions are queued or sent (awaiting their receipt), and the latest
   * send. */
  async function inFlight(): Promise<{ any: boolean; lastSent: Date | null }> {
    const rows = await db
      .select({ status: chainTransactions.status, lastSent: max(chainTransactions.sentAt) })
      .from(chainTransactions)
      .where(inArray(chainTransactions.status, ["queued", "sent"]))
      .groupBy(chainTransactions.status);
    const sent = rows.find((row) => row.status === "sent");
    return { any: rows.length > 0, lastSent: sent?.lastSent ? new Date(sent.lastSent) : null };
  }

  /** One pass of the lease's holder; resolves with the delay before the next. */
  async function tick(ctx: TickContext): Promise<number> {
    if (!(await inFlight()).any) {
      failedTicks = 0;
      return SAFETY_POLL_MS;
    }
    const head = await chain.publicClient.getBlockNumber({ cacheTime: 0 });
    await watchSent(head);
    await sendQueued(ctx, head);
    failedTicks = 0;
    const now = await inFlight();
    if (now.lastSent && now.lastSent.getTime() > Date.now() - WATCH_WINDOW_MS) return WATCH_MS;
    return now.any ? TICK_MS : SAFETY_POLL_MS;
  }

  const worker = createWorker({
    name: "tx-sender",
    tick,
    onError(error) {
      // Backs off while the RPC keeps failing (a rate limit, an outage): nothing was lost, what was queued
      // stays queued and what was sent stays watched.
      failedTicks++;
      const delay = Math.min(TICK_MS * 2 ** (failedTicks - 1), MAX_BACKOFF_MS);
      logger.warn("tx sender tick failed; backing off", { error: (error as Error).message, failedTicks, retryInMs: delay });
      return delay;
    },
    wakeOn: { database, channels: [TX_CHANNEL] },
    lease: { lease, retryMs: TICK_MS, onLost: () => (nextNonce = undefined) },
  });

  return {
    ...worker,
    /** Registers what happens when a transaction of `kind` is mined, reverts or fails (in the same
     * database transaction as its status change). */
    onFinal(kind: string, handler: FinalHandler) {
      handlers.set(kind, [...(handlers.get(kind) ?? []), handler]);
    },
  };
}

export type TxSender = ReturnType<typeof createTxSender>;

/** The lowest nonce from `confirmedNonce` up that none of `held` (the stored unmined transactions' nonces)
 * has, below the highest of them: the transactions above it cannot be mined until it is used. */
export function lowestGap(held: readonly number[], confirmedNonce: number): number | undefined {
  const nonces = new Set(held);
  const highest = held.reduce((a, b) => (b > a ? b : a), -1);
  for (let n = confirmedNonce; n < highest; n++) if (!nonces.has(n)) return n;
  return undefined;
}
