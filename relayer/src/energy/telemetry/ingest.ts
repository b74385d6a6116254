// POST /telemetry:batch: one database transaction per batch. The device's record is locked, the readings
// are checked (evaluate.ts), the accepted ones are written in one multi-row statement with the batch and the
// device's new record, and the transaction commits before the answer is sent: an accepted reading is never
// lost. Attested batches are then anchored by the anchor worker (anchoring/anchor-worker.ts).
import type { z } from "@hono/zod-openapi";
import { eq, sql } from "drizzle-orm";
import type { DbOrTx, Tx } from "../../db/client.ts";
import { ENERGY_READING_ID_CONSTRAINT, energyBatches, energyDevices } from "../../db/schema.ts";
import { newId } from "../../ids.ts";
import type { Services } from "../../services.ts";
import type { ServiceError } from "../../errors.ts";
import { sandboxErrors } from "../errors.ts";
import type { BatchAccepted, TelemetryBatchInput } from "../schemas.ts";
import { type DeviceState, type Evaluation, type SupersededReading, evaluateBatch } from "./evaluate.ts";
import { type StoredResponse, claimIdempotencyKey, requestFingerprint, storeIdempotentResponse } from "./idempotency.ts";
import { verifyDeviceSignature } from "./signature.ts";

/** Channel on which the anchor worker is woken when a batch awaits its Merkle root (and when an anchor
 * transaction is final: the next one can go). */
export const BATCHES_CHANNEL = "energy_batches";
/** attestation.expected_at: receipt plus this. */
export const ANCHOR_EXPECTED_SECONDS = 30;

export type IngestRequest = {
  clientId: string;
  batch: TelemetryBatchInput;
  /** The request body as received (what a device signature signs). */
  rawBody: string;
  signature?: string;
  idempotencyKey?: string;
  /** How the interface answers an outcome (its status and body): with an Idempotency-Key, the answer is stored
   * in the batch's transaction, so that a retry gets it back byte for byte. */
  answer: (outcome: IngestOutcome) => StoredResponse;
};

/** What a batch came to: taken (the answer's body), or refused with one of the sandbox's domain errors
 * (../errors.ts: device_not_found, signature_invalid, counter_regression, or baseline_incomplete once the
 * readings of a batch in the device's baseline window are stored). */
export type IngestOutcome = { taken: z.infer<typeof BatchAccepted> } | { refused: ServiceError };

/** The answer, and whether it is the stored answer of an earlier request with the same Idempotency-Key. */
export type IngestResult = StoredResponse & { replayed: boolean };

/** `readings`: how many of the batch's readings were accepted and rejected, when they were checked. */
type Outcome = { outcome: IngestOutcome; readings?: { accepted: number; rejected: number } };

function rowsOf<T>(result: unknown): T[] {
  return (result as { rows: T[] }).rows;
}

export async function ingestTelemetry(services: Services, req: IngestRequest): Promise<IngestResult> {
  const receivedAt = new Date();
  const requestHash = req.idempotencyKey ? requestFingerprint(req.batch) : "";
  // Reading ids accepted before are found by the insert itself (a unique index: no lookup per reading on
  // the common path). In the rare case there is one, the transaction is rolled back and the batch processed
  // again knowing them.
  let duplicates = new Set<string>();
  for (let attempt = 0; ; attempt++) {
    try {
      const result: IngestResult & Pick<Outcome, "readings"> = await services.database.db.transaction(async (tx) => {
        if (req.idempotencyKey) {
          const stored = await claimIdempotencyKey(tx, req.clientId, req.idempotencyKey, requestHash);
          if (stored) return { ...stored, replayed: true };
        }
        const { outcome, readings } = await processBatch(services, tx, req, receivedAt, duplicates);
        const response = req.answer(outcome);
        if (req.idempotencyKey) await storeIdempotentResponse(tx, req.clientId, req.idempotencyKey, response);
        return { ...response, readings, replayed: false };
      });
      if (!result.replayed) countIngest(services, result);
      return { status: result.status, body: result.body, replayed: result.replayed };
    } catch (caught) {
      if (!isDuplicateReadingId(caught) || attempt >= 3) throw caught;
      const known = await acceptedReadingIds(
        services.database.db,
        req.batch.device_id,
        req.batch.readings.map((r) => r.reading_id),
      );
      duplicates = new Set([...duplicates, ...known]);
    }
  }
}

function refused(error: ServiceError, readings?: Outcome["readings"]): Outcome {
  return { outcome: { refused: error }, readings };
}

/** The metrics of a committed batch (metrics/registry.ts), by the status of its answer. */
function countIngest(services: Services, outcome: Pick<IngestResult, "status"> & Pick<Outcome, "readings">) {
  const { telemetryBatches, telemetryReadings } = services.metrics;
  telemetryBatches.inc({ status: String(outcome.status) });
  if (!outcome.readings) return;
  telemetryReadings.inc({ outcome: "accepted" }, outcome.readings.accepted);
  telemetryReadings.inc({ outcome: "rejected" }, outcome.readings.rejected);
}

/** A unique violation of (device_id, reading_id), from node-postgres or PGlite (possibly wrapped). */
function isDuplicateReadingId(error: unknown): boolean {
  for (let e = error as { code?: string; constraint?: string; message?: string; cause?: unknown } | undefined; e; e = e.cause as typeof e) {
    if (e.code === "23505" && (e.constraint === ENERGY_READING_ID_CONSTRAINT || e.message?.includes(ENERGY_READING_ID_CONSTRAINT))) {
      return true;
    }
  }
  return false;
}

async function processBatch(
  services: Services,
  tx: Tx,
  req: IngestRequest,
  receivedAt: Date,
  existingReadingIds: ReadonlySet<string>,
): Promise<Outcome> {
  const deviceId = req.batch.device_id;
  const [device] = await tx.select().from(energyDevices).where(eq(energyDevices.deviceId, deviceId)).for("update");
  if (!device || device.deregisteredAt) {
    return refused(sandboxErrors.deviceNotFound(deviceId));
  }
  const signature = verifyDeviceSignature(req.rawBody, req.signature, device.signingPublicKey);
  if (signature === "invalid") {
    return refused(
      sandboxErrors.signatureInvalid(`the Device-Signature header does not verify against the registered public key of device ${deviceId}`),
    );
  }

  const readings = req.batch.readings;
  const initial: DeviceState = {
    meterEpoch: device.meterEpoch,
    lastSequenceNumber: device.lastSequenceNumber,
    lastEnergyWhCumulative: device.lastEnergyWhCumulative,
    lastDeviceTsMs: device.lastDeviceTs?.getTime() ?? null,
    lastReadingId: device.lastReadingId,
    power: { samples: device.powerSamples, mean: device.powerMean, m2: device.powerM2 },
  };
  const superseded = await supersededReadings(tx, deviceId, readings);
  const inBaseline = device.baselineReadings < device.baselineReadingsRequired;
  const batchId = newId("bat");
  const receivedAtMs = receivedAt.getTime();

  const evaluation = evaluateBatch(initial, readings, { existingReadingIds, superseded }, receivedAtMs);
  const accepted = evaluation.accepted.length;
  if (accepted === 0 && evaluation.continuity === "regression") {
    const regressions = evaluation.issues.filter((i) => i.code === "counter_regression");
    const first = regressions[0];
    const more = regressions.length > 1 ? ` (and ${regressions.length - 1} more readings)` : "";
    return refused(
      sandboxErrors.counterRegression(`no reading was accepted: reading ${first.reading_id}: ${first.message}${more}; nothing was stored`),
      { accepted: 0, rejected: evaluation.rejectedCount },
    );
  }

  const attested = !inBaseline && accepted > 0;
  const batchSequence = attested ? device.batchSequence + 1 : null;
  const expectedAt = attested ? new Date(receivedAtMs + ANCHOR_EXPECTED_SECONDS * 1000) : receivedAt;
  const attestationStatus = inBaseline ? "not_attested" : attested ? "pending" : "failed";
  const state = evaluation.state;

  if (accepted > 0) await insertReadings(tx, deviceId, batchId, receivedAt, evaluation);
  if (evaluation.superseded.length > 0) {
    await tx.execute(sql`
      update energy_readings r set superseded_by = v.by
      from json_to_recordset(${JSON.stringify(evaluation.superseded.map((s) => ({ id: s.readingId, by: s.by })))}::json)
        as v(id text, by text)
      where r.device_id = ${deviceId} and r.reading_id = v.id`);
  }
  await tx.insert(energyBatches).values({
    batchId,
    deviceId,
    projectId: device.projectId,
    clientId: req.clientId,
    batchSequence,
    readings: accepted,
    rejected: evaluation.rejectedCount,
    firstSequenceNumber: accepted > 0 ? evaluation.accepted[0].sequenceNumber : null,
    lastSequenceNumber: accepted > 0 ? evaluation.accepted[accepted - 1].sequenceNumber : null,
    continuity: evaluation.continuity,
    signature,
    anomalyScore: evaluation.anomalyScore,
    anomalyStatus: "provisional",
    attestationStatus,
    expectedAt: attested ? expectedAt : null,
    anchorError: attested || inBaseline ? null : "no reading was accepted: nothing to anchor",
    receivedAt,
  });
  const baselineReadings = inBaseline ? device.baselineReadings + accepted : device.baselineReadings;
  await tx
    .update(energyDevices)
    .set({
      meterEpoch: state.meterEpoch,
      lastSequenceNumber: state.lastSequenceNumber,
      lastEnergyWhCumulative: state.lastEnergyWhCumulative,
      lastDeviceTs: state.lastDeviceTsMs === null ? null : new Date(state.lastDeviceTsMs),
      lastReadingId: state.lastReadingId,
      baselineReadings,
      batchSequence: batchSequence ?? device.batchSequence,
      powerSamples: state.power.samples,
      powerMean: state.power.mean,
      powerM2: state.power.m2,
      updatedAt: receivedAt,
    })
    .where(eq(energyDevices.deviceId, deviceId));
  if (attested) await tx.execute(sql`select pg_notify(${BATCHES_CHANNEL}, ${batchId})`);

  if (inBaseline) {
    const complete = baselineReadings >= device.baselineReadingsRequired;
    return refused(
      sandboxErrors.baselineIncomplete(
        `device ${deviceId} is in its baseline window (${baselineReadings} of ${device.baselineReadingsRequired} ` +
          `readings): ${accepted} readings of batch ${batchId} stored, not attested` +
          (complete ? "; the window is now complete and later batches are attested" : ""),
      ),
      { accepted, rejected: evaluation.rejectedCount },
    );
  }
  const body = {
    accepted,
    rejected: evaluation.rejectedCount,
    batch_id: batchId,
    errors: evaluation.issues,
    verification: {
      signature,
      continuity: evaluation.continuity,
      anomaly_score: evaluation.anomalyScore,
      anomaly_status: "provisional" as const,
    },
    attestation: { status: attested ? ("pending" as const) : ("failed" as const), expected_at: expectedAt.toISOString() },
  };
  return { outcome: { taken: body }, readings: { accepted, rejected: evaluation.rejectedCount } };
}

/** The readings the batch's corrections name (accepted in earlier batches of the device). */
async function supersededReadings(
  tx: DbOrTx,
  deviceId: string,
  readings: TelemetryBatchInput["readings"],
): Promise<Map<string, SupersededReading>> {
  const ids = [...new Set(readings.flatMap((r) => (r.supersedes_reading_id ? [r.supersedes_reading_id] : [])))];
  const found = new Map<string, SupersededReading>();
  if (ids.length === 0) return found;
  const rows = rowsOf<{ reading_id: string; meter_epoch: string | number; superseded_by: string | null }>(
    await tx.execute(sql`
      select reading_id, meter_epoch, superseded_by from energy_readings
      where device_id = ${deviceId} and reading_id in (select json_array_elements_text(${JSON.stringify(ids)}::json))`),
  );
  for (const row of rows) {
    found.set(row.reading_id, {
      readingId: row.reading_id,
      meterEpoch: Number(row.meter_epoch),
      supersededBy: row.superseded_by,
    });
  }
  return found;
}

/** Which of `ids` the device has accepted already. */
async function acceptedReadingIds(tx: DbOrTx, deviceId: string, ids: string[]): Promise<Set<string>> {
  const rows = rowsOf<{ reading_id: string }>(
    await tx.execute(sql`
      select r.reading_id from json_array_elements_text(${JSON.stringify(ids)}::json) as ids(id)
      join energy_readings r on r.device_id = ${deviceId} and r.reading_id = ids.id`),
  );
  return new Set(rows.map((r) => r.reading_id));
}

/** Writes the accepted readings in one statement (a unique violation when a reading id was accepted before). */
async function insertReadings(tx: DbOrTx, deviceId: string, batchId: string, receivedAt: Date, evaluation: Evaluation): Promise<void> {
  // Short keys, and no key for a null value (json_to_recordset reads a missing key as null): less to send
  // and to parse. device_ts goes as float8 milliseconds (exact to the microsecond PostgreSQL keeps).
  const rows = evaluation.accepted.map((r) => {
    const row: Record<string, string | number> = { s: r.sequenceNumber, i: r.readingId, e: r.meterEpoch, w: r.energyWhCumulative };
    row.t = r.deviceTsMs;
    row.d = r.driftMs;
    if (r.resetReason !== null) row.rr = r.resetReason;
    if (r.measurementQuality !== null) row.q = r.measurementQuality;
    if (r.activePowerW !== null) row.p = r.activePowerW;
    if (r.supersedesReadingId !== null) row.sup = r.supersedesReadingId;
    if (r.intervalPowerW !== null) row.ip = r.intervalPowerW;
    return row;
  });
  await tx.execute(sql`
    insert into energy_readings (device_id, sequence_number, reading_id, batch_id, meter_epoch, energy_wh_cumulative,
      device_ts, device_ts_drift_ms, reset_reason, measurement_quality, active_power_w, supersedes_reading_id,
      interval_power_w, received_at)
    select ${deviceId}, r.s, r.i, ${batchId}, r.e, r.w, to_timestamp(r.t / 1000), r.d, r.rr, r.q, r.p, r.sup, r.ip,
      ${receivedAt.toISOString()}::timestamptz
    from json_to_recordset(${JSON.stringify(rows)}::json)
      as r(s bigint, i text, e bigint, w bigint, t float8, d bigint, rr text, q text, p bigint, sup text, ip float8)`);
}
