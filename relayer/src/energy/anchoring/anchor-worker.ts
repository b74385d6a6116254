// Anchors attested telemetry batches. For each batch awaiting its root (oldest first), the worker reads
// the batch's readings, builds their Merkle tree on the Merkle thread, stores the root and queues the
// TelemetryAnchor.anchor transaction with the relayer's single transaction sender, both in one database
// transaction. When the transaction is final the batch becomes anchored (mined) or failed (reverted,
// failed). Woken by ingest (NOTIFY energy_batches); a batch that could not be handled is tried again after
// RETRY_MS, and an idle worker looks every SAFETY_POLL_MS (jobs/worker.ts; the database listener's return
// after a lost connection wakes it too). Several relayer processes may run it (a batch is only ever queued once: its root is set
// once and the sender keeps one transaction per batch).
import { and, asc, eq, isNull, sql } from "drizzle-orm";
import { type Address, encodeFunctionData } from "viem";
import { telemetryAnchorAbi } from "../../../../generated/abis.ts";
import { enqueueTransaction } from "../../chain/tx-sender.ts";
import { energyBatches } from "../../db/schema.ts";
import type { Services } from "../../services.ts";
import { BATCHES_CHANNEL } from "../telemetry/ingest.ts";
import { type LeafReading, idKey } from "./merkle.ts";
import { SAFETY_POLL_MS, createWorker } from "../../jobs/worker.ts";
import { createMerkleBuilder } from "./merkle-builder.ts";

export const ANCHOR_TX_KIND = "anchor";
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

/** Why an anchor transaction did not succeed. The sender names custom errors (TelemetryAnchor's too, e.g.
 * BatchAlreadyAnchored) in `lastError` (chain/revert-reason.ts). */
export function anchorFailure(lastError: string | null, status: string): string {
  return lastError ?? `transaction ${status}`;
}

export function createAnchorWorker(services: Services) {
  const { db, database, chain, txSender } = services;
  const logger = services.logger.child({ worker: "energy-anchor" });
  const anchorAddress = chain.deployment.contracts.TelemetryAnchor?.address as Address | undefined;
  const merkle = createMerkleBuilder(logger);

  txSender.onFinal(ANCHOR_TX_KIND, async (row, tx) => {
    const anchored = row.status === "mined";
    await tx
      .update(energyBatches)
      .set({
        attestationStatus: anchored ? "anchored" : "failed",
        anchorTxHash: row.txHash,
        anchorBlockNumber: row.blockNumber,
        anchorError: anchored ? null : anchorFailure(row.lastError, row.status),
        anchoredAt: anchored ? new Date() : null,
      })
      .where(and(eq(energyBatches.batchId, row.ref), eq(energyBatches.attestationStatus, "pending")));
    if (!anchored) logger.warn("anchoring failed", { batchId: row.ref, status: row.status, error: anchorFailure(row.lastError, row.status) });
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

  async function anchorBatch(batch: DueBatch) {
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
    const data = encodeFunctionData({
      abi: telemetryAnchorAbi,
      functionName: "anchor",
      args: [idKey(batch.projectId), idKey(batch.deviceId), BigInt(batch.batchSequence), root, leaves.length],
    });
    await db.transaction(async (tx) => {
      const [claimed] = await tx
        .update(energyBatches)
        .set({ merkleRoot: root })
        .where(
          and(
            eq(energyBatches.batchId, batch.batchId),
            eq(energyBatches.attestationStatus, "pending"),
            isNull(energyBatches.merkleRoot),
          ),
        )
        .returning({ batchId: energyBatches.batchId });
      if (!claimed) return; // another process got there first
      await enqueueTransaction(tx, { kind: ANCHOR_TX_KIND, ref: batch.batchId, to: anchorAddress, data });
    });
    txSender.wake();
  }

  /** Anchors due batches; resolves with the delay before the next pass. */
  async function tick(): Promise<number> {
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
        await anchorBatch(batch);
      } catch (error) {
        failed++;
        logger.warn("could not anchor a batch; will retry", { batchId: batch.batchId, error: (error as Error).message });
      }
    }
    if (failed > 0) return RETRY_MS;
    return due.length === BATCHES_PER_TICK ? 0 : SAFETY_POLL_MS;
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
