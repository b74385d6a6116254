// Anchors attested telemetry batches, many per transaction. Two steps, each pass:
// 1. Roots: for each batch awaiting its root (oldest first), the worker reads the batch's readings, builds
//    their Merkle tree on the Merkle thread and stores the root (once: a conditional update).
// 2. Anchors: when no anchor transaction is queued or unmined, every batch with a root and no anchor yet
//    (oldest first, at most MAX_BATCHES_PER_ANCHOR) becomes a leaf of one batches tree (merkle.ts), and ONE
//    TelemetryAnchor.anchorBatches transaction anchors its root. The anchor (energy_anchors: its batches root;
//    on each batch: its anchor_id and its proof in the batches tree) is claimed and the transaction queued
//    with the relayer's single transaction sender in one database transaction, whose ref is the anchor's id.
// While a transaction is on its way, batches simply accumulate: the number of anchor transactions follows the
// chain's block time (one in flight at a time), not the ingest rate.
//
// When the transaction is final its batches become anchored (mined) or failed (reverted, failed), and the
// worker is woken (NOTIFY energy_batches, in the same database transaction) to anchor what accumulated. Woken
// by ingest too; a batch that could not be handled is tried again after RETRY_MS, and an idle worker looks
// every SAFETY_POLL_MS (jobs/worker.ts; the database listener's return after a lost connection wakes it
// too). Several relayer processes may run it: a root is set once, and a batch goes into exactly one anchor
// (the claim only takes batches without one, and is rolled back unless it took every batch of the tree).
import { and, asc, eq, inArray, isNotNull, isNull, sql } from "drizzle-orm";
import { type Address, type Hex, encodeFunctionData } from "viem";
import { telemetryAnchorAbi } from "../../../../generated/abis.ts";
import { enqueueTransaction } from "../../chain/tx-sender.ts";
import { chainTransactions, energyAnchors, energyBatches } from "../../db/schema.ts";
import { newId } from "../../ids.ts";
import type { Services } from "../../services.ts";
import { BATCHES_CHANNEL } from "../telemetry/ingest.ts";
import { type BatchLeaf, type LeafReading, batchesTree } from "./merkle.ts";
import { SAFETY_POLL_MS, createWorker } from "../../jobs/worker.ts";
import { createMerkleBuilder } from "./merkle-builder.ts";

export const ANCHOR_TX_KIND = "anchor";
/** The most batches one anchorBatches transaction takes. Its gas hardly depends on the count (the calldata
 * is a root and a count); the cap bounds the tree built here and the claim's statement. */
export const MAX_BATCHES_PER_ANCHOR = 1_000;
const RETRY_MS = 1_000;
const BATCHES_PER_TICK = 16;

type DueBatch = {
  batchId: string;
  deviceId: string;
  projectId: string;
  batchSequence: number | null;
  readings: number;
  firstSequenceNumber: number | null;
  lastSequenceNumber: number | null;
};

/** Another process claimed one of the batches first: the claim is rolled back and tried again. */
class ClaimLost extends Error {}

/** Why an anchor transaction did not succeed. The sender names custom errors (TelemetryAnchor's too, e.g.
 * BatchesRootAlreadyAnchored) in `lastError` (chain/revert-reason.ts). */
export function anchorFailure(lastError: string | null, status: string): string {
  return lastError ?? `transaction ${status}`;
}

export function createAnchorWorker(services: Services) {
  const { database, chain, txSender } = services;
  const db = database.db;
  const logger = services.logger.child({ worker: "energy-anchor" });
  const anchorAddress = chain.deployment.contracts.TelemetryAnchor?.address as Address | undefined;
  const merkle = createMerkleBuilder(logger);

  txSender.onFinal(ANCHOR_TX_KIND, async (row, tx) => {
    const anchored = row.status === "mined";
    const error = anchored ? null : anchorFailure(row.lastError, row.status);
    const now = new Date();
    await tx
      .update(energyAnchors)
      .set({ status: anchored ? "anchored" : "failed", txHash: row.txHash, blockNumber: row.blockNumber, error, finalAt: now })
      .where(eq(energyAnchors.anchorId, row.ref));
    const batches = await tx
      .update(energyBatches)
      .set({
        attestationStatus: anchored ? "anchored" : "failed",
        anchorTxHash: row.txHash,
        anchorBlockNumber: row.blockNumber,
        anchorError: error,
        anchoredAt: anchored ? now : null,
      })
      .where(and(eq(energyBatches.anchorId, row.ref), eq(energyBatches.attestationStatus, "pending")))
      .returning({ batchId: energyBatches.batchId });
    // The next anchor can go now: wake the worker (of whichever process) at commit.
    await tx.execute(sql`select pg_notify(${BATCHES_CHANNEL}, ${row.ref})`);
    if (!anchored) logger.warn("anchoring failed", { anchorId: row.ref, batches: batches.length, status: row.status, error });
  });

  async function fail(batchId: string, reason: string) {
    await db
      .update(energyBatches)
      .set({ attestationStatus: "failed", anchorError: reason })
      .where(and(eq(energyBatches.batchId, batchId), eq(energyBatches.attestationStatus, "pending")));
    logger.warn("anchoring failed", { batchId, error: reason });
  }

  async function leavesOf(batch: DueBatch): Promise<LeafReading[]> {
    const result = await db.execute(sql`
      select reading_id, sequence_number, meter_epoch, energy_wh_cumulative,
        round(extract(epoch from device_ts) * 1000) as device_ts_ms, supersedes_reading_id
      from energy_readings
      where device_id = ${batch.deviceId} and batch_id = ${batch.batchId}
        and sequence_number between ${batch.firstSequenceNumber} and ${batch.lastSequenceNumber}`);
    type Row = {
      reading_id: string;
      sequence_number: string | number;
      meter_epoch: string | number;
      energy_wh_cumulative: string | number;
      device_ts_ms: string | number;
      supersedes_reading_id: string | null;
    };
    return (result as unknown as { rows: Row[] }).rows.map((r) => ({
      readingId: r.reading_id,
      sequenceNumber: Number(r.sequence_number),
      meterEpoch: Number(r.meter_epoch),
      energyWhCumulative: Number(r.energy_wh_cumulative),
      deviceTsMs: Number(r.device_ts_ms),
      supersedesReadingId: r.supersedes_reading_id,
    }));
  }

  /** Builds and stores the batch's root (step 1). */
  async function rootBatch(batch: DueBatch) {
    if (!anchorAddress) return fail(batch.batchId, `deployment ${chain.deployment.deploymentId} has no TelemetryAnchor`);
    if (batch.batchSequence === null) return fail(batch.batchId, "the batch has no batch sequence");
    const leaves = await leavesOf(batch);
    if (leaves.length !== batch.readings || leaves.length === 0) {
      return fail(batch.batchId, `found ${leaves.length} readings of the batch's ${batch.readings}`);
    }
    const binding = {
      chainId: chain.chainId,
      projectId: batch.projectId,
      deviceId: batch.deviceId,
      batchSequence: batch.batchSequence,
    };
    const root = await merkle.root(binding, leaves);
    // Conditional: another process may have stored it first (the same root, from the same readings).
    await db
      .update(energyBatches)
      .set({ merkleRoot: root })
      .where(
        and(eq(energyBatches.batchId, batch.batchId), eq(energyBatches.attestationStatus, "pending"), isNull(energyBatches.merkleRoot)),
      );
  }

  /** Step 1; resolves with the number of batches due, and of those that could not be handled. */
  async function rootDueBatches(): Promise<{ due: number; failed: number }> {
    const due: DueBatch[] = await db
      .select({
        batchId: energyBatches.batchId,
        deviceId: energyBatches.deviceId,
        projectId: energyBatches.projectId,
        batchSequence: energyBatches.batchSequence,
        readings: energyBatches.readings,
        firstSequenceNumber: energyBatches.firstSequenceNumber,
        lastSequenceNumber: energyBatches.lastSequenceNumber,
      })
      .from(energyBatches)
      .where(and(eq(energyBatches.attestationStatus, "pending"), isNull(energyBatches.merkleRoot)))
      .orderBy(asc(energyBatches.receivedAt))
      .limit(BATCHES_PER_TICK);
    let failed = 0;
    for (const batch of due) {
      if (worker.isStopped()) break;
      try {
        await rootBatch(batch);
      } catch (error) {
        failed++;
        logger.warn("could not build a batch's root; will retry", { batchId: batch.batchId, error: (error as Error).message });
      }
    }
    return { due: due.length, failed };
  }

  /** Step 2: anchors the accumulated batches in one transaction, unless one is on its way already. Resolves
   * with the number of batches anchored. */
  async function anchorAccumulated(): Promise<number> {
    if (!anchorAddress) return 0;
    const [inFlight] = await db
      .select({ id: chainTransactions.id })
      .from(chainTransactions)
      .where(and(eq(chainTransactions.kind, ANCHOR_TX_KIND), inArray(chainTransactions.status, ["queued", "sent"])))
      .limit(1);
    if (inFlight) return 0;
    const rooted = await db
      .select({
        batchId: energyBatches.batchId,
        projectId: energyBatches.projectId,
        deviceId: energyBatches.deviceId,
        batchSequence: energyBatches.batchSequence,
        root: energyBatches.merkleRoot,
        readings: energyBatches.readings,
      })
      .from(energyBatches)
      .where(and(eq(energyBatches.attestationStatus, "pending"), isNotNull(energyBatches.merkleRoot), isNull(energyBatches.anchorId)))
      .orderBy(asc(energyBatches.receivedAt), asc(energyBatches.batchId))
      .limit(MAX_BATCHES_PER_ANCHOR);
    if (rooted.length === 0) return 0;
    // A root is only stored for a batch with a batch sequence (rootBatch).
    const leaves: BatchLeaf[] = rooted.map((b) => ({
      projectId: b.projectId,
      deviceId: b.deviceId,
      batchSequence: b.batchSequence!,
      root: b.root as Hex,
      readings: b.readings,
    }));
    // One leaf per batch: small next to the batch trees, so it is built here rather than on the Merkle thread.
    const tree = batchesTree(leaves);
    const anchorId = newId("anc");
    const data = encodeFunctionData({ abi: telemetryAnchorAbi, functionName: "anchorBatches", args: [tree.root, leaves.length] });
    const proofs = JSON.stringify(rooted.map((b, i) => ({ batch_id: b.batchId, root: b.root, proof: tree.proofs[i] })));
    try {
      await db.transaction(async (tx) => {
        await tx.insert(energyAnchors).values({ anchorId, batchesRoot: tree.root, batches: leaves.length });
        const claimed = await tx.execute(sql`
          update energy_batches b set anchor_id = ${anchorId}, batch_proof = p.proof
          from jsonb_to_recordset(${proofs}::jsonb) as p(batch_id text, root text, proof jsonb)
          where b.batch_id = p.batch_id and b.merkle_root = p.root and b.anchor_id is null
            and b.attestation_status = 'pending'
          returning b.batch_id`);
        const count = (claimed as unknown as { rows: unknown[] }).rows.length;
        // Another process took some of them (or one failed meanwhile): this tree is not the one to anchor.
        if (count !== leaves.length) throw new ClaimLost(`claimed ${count} of ${leaves.length} batches`);
        await enqueueTransaction(tx, { kind: ANCHOR_TX_KIND, ref: anchorId, to: anchorAddress, data });
      });
    } catch (error) {
      if (error instanceof ClaimLost) {
        logger.info("another process claimed batches first; will look again", { anchorId, reason: error.message });
        return 0;
      }
      throw error;
    }
    txSender.wake();
    logger.info("anchor queued", { anchorId, batchesRoot: tree.root, batches: leaves.length });
    return leaves.length;
  }

  /** Roots due batches and anchors the accumulated ones; resolves with the delay before the next pass. */
  async function tick(): Promise<number> {
    const roots = await rootDueBatches();
    if (worker.isStopped()) return SAFETY_POLL_MS;
    const anchored = await anchorAccumulated();
    if (roots.failed > 0) return RETRY_MS;
    // More batches await their root, or the cap left some out of this anchor: go on at once (the next anchor
    // waits for this one's transaction anyway).
    if (roots.due === BATCHES_PER_TICK || anchored === MAX_BATCHES_PER_ANCHOR) return 0;
    return SAFETY_POLL_MS;
  }

  const worker = createWorker({
    name: "energy-anchor",
    tick,
    onError(error) {
      logger.warn("anchor tick failed", { error: (error as Error).message });
      return RETRY_MS;
    },
    wakeOn: { database, channels: [BATCHES_CHANNEL] },
    onStop: () => merkle.close(),
  });

  return {
    ...worker,
    async start() {
      if (!anchorAddress) logger.warn("no TelemetryAnchor in the deployment: attested telemetry batches will fail");
      await worker.start();
    },
  };
}
