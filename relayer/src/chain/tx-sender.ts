// The relayer's outgoing transactions. Callers enqueue {kind, ref, to, data} (at most one per ref, in their
// own database transaction); one relayer process at a time, the holder of a lease, sends them from the hot
// wallet. Each transaction is signed and stored before it is broadcast, so after a crash the same signed
// transaction is broadcast again and never a second one: nonces cannot collide and a payment is never
// submitted twice. Sent transactions are watched until mined; one the node dropped is broadcast again.
//
// The worker is woken by NOTIFY chain_transactions (enqueueTransaction) and by wake(). While transactions
// are queued or unmined it ticks every TICK_MS (WATCH_MS just after a send), renewing its lease each time;
// with nothing in flight it only looks again after SAFETY_POLL_MS, and lets the lease run out meanwhile (a
// process needs it only to send; the next one to send takes it, and its nonce comes from the chain's pending
// count, so one taking over from another never reuses a nonce). A process that does not hold the lease
// tries to take it every TICK_MS.
import { and, asc, eq, inArray, max, sql } from "drizzle-orm";
import { type Address, type Hex, keccak256 } from "viem";
import type { Database, DbOrTx } from "../db/client.ts";
import { chainTransactions } from "../db/schema.ts";
import { createLease } from "../jobs/lease.ts";
import { SAFETY_POLL_MS, createWorker } from "../jobs/worker.ts";
import { newId } from "../ids.ts";
import type { Logger } from "../logger.ts";
import type { Metrics } from "../metrics/registry.ts";
import type { PaymentsChain } from "./payments-chain.ts";
import { revertReason } from "./revert-reason.ts";

export const TX_CHANNEL = "chain_transactions";
const LEASE = "tx_sender_lease";
const LEASE_MS = 15_000;
const TICK_MS = 500;
/** For a few seconds after a transaction is sent, poll for its receipt faster (a local chain mines at
 * once); then back to TICK_MS, so a slow public chain's RPC is not hammered. */
const WATCH_MS = 50;
const WATCH_WINDOW_MS = 5_000;
const REBROADCAST_AFTER_MS = 12_000;
const GAS_HEADROOM = 1.25;

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

export function createTxSender(deps: { database: Database; chain: PaymentsChain; logger: Logger; metrics: Metrics }) {
  const { database, chain, metrics } = deps;
  const db = database.db;
  const logger = deps.logger.child({ worker: "tx-sender" });
  const lease = createLease(db, LEASE, LEASE_MS);
  const handlers = new Map<string, FinalHandler[]>();
  let nextNonce: number | undefined;

  /** Takes or renews the lease; true if this process is the sender. */
  async function holdLease(): Promise<boolean> {
    const held = await lease.hold();
    if (!held) nextNonce = undefined;
    return held;
  }

  async function finish(row: ChainTransaction, update: Partial<ChainTransaction>) {
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
  }

  async function watchSent() {
    const sent = await db
      .select()
      .from(chainTransactions)
      .where(eq(chainTransactions.status, "sent"))
      .orderBy(asc(chainTransactions.nonce))
      .limit(100);
    for (const row of sent) {
      const hash = row.txHash as Hex;
      const receipt = await chain.publicClient.getTransactionReceipt({ hash }).catch(() => undefined);
      if (receipt) {
        const status = receipt.status === "success" ? "mined" : "reverted";
        let lastError: string | null = null;
        if (status === "reverted") lastError = await explainRevert(row, receipt.blockNumber);
        await finish(row, { status, blockNumber: Number(receipt.blockNumber), lastError });
        logger.info("transaction final", { id: row.id, kind: row.kind, ref: row.ref, hash, status });
        continue;
      }
      if (row.sentAt && Date.now() - row.sentAt.getTime() > REBROADCAST_AFTER_MS && row.rawTransaction) {
        const confirmedNonce = await chain.publicClient.getTransactionCount({
          address: chain.relayerAccount.address,
          blockTag: "latest",
        });
        if (row.nonce !== null && confirmedNonce > row.nonce) {
          // The nonce was used and this transaction is not the one mined: something else spent it.
          await finish(row, { status: "failed", lastError: `nonce ${row.nonce} was used by another transaction` });
          continue;
        }
        await chain.publicClient.sendRawTransaction({ serializedTransaction: row.rawTransaction as Hex }).catch(() => undefined);
        await db
          .update(chainTransactions)
          .set({ sentAt: new Date(), attempts: row.attempts + 1, updatedAt: new Date() })
          .where(eq(chainTransactions.id, row.id));
        metrics.txRebroadcasts.inc();
        logger.warn("transaction not mined yet; broadcast again", { id: row.id, hash, attempts: row.attempts + 1 });
      }
    }
  }

  async function explainRevert(row: ChainTransaction, blockNumber: bigint): Promise<string> {
    try {
      await chain.publicClient.call({
        account: chain.relayerAccount.address,
        to: row.toAddress as Address,
        data: row.calldata as Hex,
        blockNumber,
      });
      return "reverted";
    } catch (error) {
      return revertReason(error)?.text ?? "reverted";
    }
  }

  async function sendQueued() {
    const queued = await db
      .select()
      .from(chainTransactions)
      .where(eq(chainTransactions.status, "queued"))
      .orderBy(asc(chainTransactions.createdAt))
      .limit(50);
    for (const row of queued) {
      if (worker.isStopped()) return;
      const account = chain.relayerAccount;
      let gas: bigint;
      try {
        gas = await chain.publicClient.estimateGas({
          account: account.address,
          to: row.toAddress as Address,
          data: row.calldata as Hex,
        });
      } catch (error) {
        const reason = revertReason(error);
        if (!reason) throw error; // the node is unreachable: leave it queued
        await finish(row, { status: "failed", lastError: reason.text });
        logger.warn("transaction would revert; not sent", { id: row.id, kind: row.kind, ref: row.ref, reason: reason.text });
        continue;
      }
      const pending = await chain.publicClient.getTransactionCount({ address: account.address, blockTag: "pending" });
      const nonce = Math.max(pending, nextNonce ?? 0);
      const fees = await chain.publicClient.estimateFeesPerGas();
      const raw = await account.signTransaction({
        chainId: chain.chainId,
        type: "eip1559",
        to: row.toAddress as Address,
        data: row.calldata as Hex,
        nonce,
        gas: (gas * BigInt(Math.round(GAS_HEADROOM * 100))) / 100n,
        maxFeePerGas: fees.maxFeePerGas,
        maxPriorityFeePerGas: fees.maxPriorityFeePerGas,
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
          sentAt: new Date(),
          attempts: row.attempts + 1,
          updatedAt: new Date(),
        })
        .where(and(eq(chainTransactions.id, row.id), eq(chainTransactions.status, "queued")))
        .returning();
      if (!claimed) continue;
      nextNonce = nonce + 1;
      try {
        await chain.publicClient.sendRawTransaction({ serializedTransaction: raw });
        logger.info("transaction sent", { id: row.id, kind: row.kind, ref: row.ref, hash, nonce });
      } catch (error) {
        logger.warn("broadcast failed; will retry", { id: row.id, hash, error: (error as Error).message });
      }
    }
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
  async function tick(): Promise<number> {
    if (!(await inFlight()).any) return SAFETY_POLL_MS;
    await watchSent();
    await sendQueued();
    const now = await inFlight();
    if (now.lastSent && now.lastSent.getTime() > Date.now() - WATCH_WINDOW_MS) return WATCH_MS;
    return now.any ? TICK_MS : SAFETY_POLL_MS;
  }

  const worker = createWorker({
    name: "tx-sender",
    tick,
    onError(error) {
      logger.warn("tx sender tick failed", { error: (error as Error).message });
      return TICK_MS;
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
