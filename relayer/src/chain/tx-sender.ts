// The relayer's outgoing transactions. Callers enqueue {kind, ref, to, data} (at most one per ref, in their
// own database transaction); one relayer process at a time, the holder of a lease, sends them from the hot
// wallet. Each transaction is signed and stored before it is broadcast, so after a crash the same signed
// transaction is broadcast again and never a second one: nonces cannot collide and a payment is never
// submitted twice. Sent transactions are watched until mined; one the node dropped is broadcast again.
import { and, asc, eq, gt, sql } from "drizzle-orm";
import { type Address, type Hex, keccak256 } from "viem";
import type { Database, DbOrTx } from "../db/client.ts";
import { chainTransactions } from "../db/schema.ts";
import { createLease } from "../jobs/lease.ts";
import { newId } from "../ids.ts";
import type { Logger } from "../logger.ts";
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

export function createTxSender(deps: { database: Database; chain: PaymentsChain; logger: Logger }) {
  const { database, chain } = deps;
  const db = database.db;
  const logger = deps.logger.child({ worker: "tx-sender" });
  const lease = createLease(db, LEASE, LEASE_MS);
  const handlers = new Map<string, FinalHandler[]>();
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<void> | undefined;
  let stopped = true;
  let wakeRequested = false;
  let nextNonce: number | undefined;

  /** Takes or renews the lease; true if this process is the sender. */
  async function holdLease(): Promise<boolean> {
    const held = await lease.hold();
    if (!held) nextNonce = undefined;
    return held;
  }

  async function finish(row: ChainTransaction, update: Partial<ChainTransaction>) {
    await db.transaction(async (tx) => {
      const [done] = await tx
        .update(chainTransactions)
        .set({ ...update, updatedAt: new Date() })
        .where(and(eq(chainTransactions.id, row.id), eq(chainTransactions.status, row.status)))
        .returning();
      if (!done) return;
      for (const handler of handlers.get(done.kind) ?? []) await handler(done, tx);
    });
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
      if (stopped) return;
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

  let watching = false;
  async function tick() {
    if (!(await holdLease())) return;
    await watchSent();
    await sendQueued();
    const [pending] = await db
      .select({ id: chainTransactions.id })
      .from(chainTransactions)
      .where(and(eq(chainTransactions.status, "sent"), gt(chainTransactions.sentAt, new Date(Date.now() - WATCH_WINDOW_MS))))
      .limit(1);
    watching = pending !== undefined;
  }

  function schedule(delay: number) {
    if (stopped) return;
    clearTimeout(timer);
    timer = setTimeout(run, delay);
  }

  function run() {
    if (running) {
      wakeRequested = true;
      return;
    }
    running = tick()
      .catch((error) => logger.warn("tx sender tick failed", { error: (error as Error).message }))
      .finally(() => {
        running = undefined;
        const again = wakeRequested;
        wakeRequested = false;
        schedule(again ? 0 : watching ? WATCH_MS : TICK_MS);
      });
  }

  return {
    /** Registers what happens when a transaction of `kind` is mined, reverts or fails (in the same
     * database transaction as its status change). */
    onFinal(kind: string, handler: FinalHandler) {
      handlers.set(kind, [...(handlers.get(kind) ?? []), handler]);
    },
    wake: () => run(),
    async start() {
      stopped = false;
      await database.listen(TX_CHANNEL, () => run());
      schedule(0);
    },
    async stop() {
      stopped = true;
      clearTimeout(timer);
      await running;
      await lease.release();
    },
  };
}

export type TxSender = ReturnType<typeof createTxSender>;
