// The telemetry rules, as a pure function of the device's record and the batch: which readings are
// accepted, which are rejected or flagged and why, the batch's continuity and provisional anomaly score,
// and the device's record after the accepted readings. Readings are taken in array order; each is checked
// against the record as the readings before it left it.
import type { z } from "@hono/zod-openapi";
import { DRIFT_LIMIT_SECONDS, type ReadingInput, type ReadingIssue } from "../schemas.ts";
import { type PowerStats, anomalyScore, zScore, withSample } from "./anomaly.ts";

export type DeviceState = {
  meterEpoch: number;
  lastSequenceNumber: number | null;
  lastEnergyWhCumulative: number | null;
  lastDeviceTsMs: number | null;
  /** The reading that set lastEnergyWhCumulative (a correction of it moves the record). */
  lastReadingId: string | null;
  power: PowerStats;
};

/** A reading of an earlier batch that a correction names. */
export type SupersededReading = { readingId: string; meterEpoch: number; supersededBy: string | null };

export type IssueCode =
  | "duplicate_reading_id"
  | "sequence_not_increasing"
  | "meter_epoch_regression"
  | "counter_regression"
  | "superseded_reading_not_found"
  | "reading_already_superseded"
  | "correction_epoch_mismatch"
  | "device_ts_drift"
  | "sequence_gap"
  | "meter_epoch_reset";

/** A rejection or flag of one reading, as the batch's answer lists it. */
type Issue = z.output<typeof ReadingIssue>;

export type AcceptedReading = {
  readingId: string;
  sequenceNumber: number;
  meterEpoch: number;
  energyWhCumulative: number;
  deviceTsMs: number;
  driftMs: number;
  resetReason: string | null;
  measurementQuality: string | null;
  activePowerW: number | null;
  supersedesReadingId: string | null;
  intervalPowerW: number | null;
};

export type Evaluation = {
  accepted: AcceptedReading[];
  issues: Issue[];
  rejectedCount: number;
  continuity: "ok" | "gap" | "regression";
  anomalyScore: number;
  /** Reading ids the batch's corrections supersede, with the correcting reading's id. */
  superseded: Array<{ readingId: string; by: string }>;
  state: DeviceState;
};

export function evaluateBatch(
  device: DeviceState,
  readings: ReadingInput[],
  lookups: { existingReadingIds: ReadonlySet<string>; superseded: ReadonlyMap<string, SupersededReading> },
  receivedAtMs: number,
): Evaluation {
  const state: DeviceState = { ...device };
  const accepted: AcceptedReading[] = [];
  const issues: Issue[] = [];
  const seen = new Set<string>();
  const superseded: Array<{ readingId: string; by: string }> = [];
  const supersededNow = new Set<string>();
  let rejectedCount = 0;
  let gap = false;
  let regression = false;
  let maxZ = 0;
  const driftLimitMs = DRIFT_LIMIT_SECONDS * 1000;

  readings.forEach((reading, index) => {
    const id = reading.reading_id;
    const reject = (code: IssueCode, message: string) => {
      issues.push({ index, reading_id: id, code, message, outcome: "rejected" });
      rejectedCount++;
    };
    const flag = (code: IssueCode, message: string) => issues.push({ index, reading_id: id, code, message, outcome: "flagged" });

    if (lookups.existingReadingIds.has(id) || seen.has(id)) {
      return reject("duplicate_reading_id", `reading_id ${id} was accepted already for this device`);
    }
    if (state.lastSequenceNumber !== null && reading.sequence_number <= state.lastSequenceNumber) {
      return reject(
        "sequence_not_increasing",
        `sequence_number ${reading.sequence_number} is not above the last accepted ${state.lastSequenceNumber}`,
      );
    }
    if (reading.meter_epoch < state.meterEpoch) {
      return reject("meter_epoch_regression", `meter_epoch ${reading.meter_epoch} is below the device's epoch ${state.meterEpoch}`);
    }

    const supersedes = reading.supersedes_reading_id ?? null;
    const deviceTsMs = Date.parse(reading.device_ts);
    let intervalPowerW: number | null = null;
    if (supersedes !== null) {
      const target = lookups.superseded.get(supersedes);
      if (!target) {
        return reject("superseded_reading_not_found", `no reading ${supersedes} of this device was accepted in an earlier batch`);
      }
      if (target.supersededBy !== null || supersededNow.has(supersedes)) {
        return reject("reading_already_superseded", `reading ${supersedes} was corrected already`);
      }
      if (target.meterEpoch !== reading.meter_epoch) {
        return reject(
          "correction_epoch_mismatch",
          `a correction must keep the meter_epoch (${target.meterEpoch}) of the reading it supersedes`,
        );
      }
      supersededNow.add(supersedes);
      superseded.push({ readingId: supersedes, by: id });
      if (supersedes === state.lastReadingId) {
        state.lastEnergyWhCumulative = reading.energy_wh_cumulative;
        state.lastReadingId = id;
      }
    } else if (reading.meter_epoch > state.meterEpoch) {
      flag(
        "meter_epoch_reset",
        `meter_epoch ${state.meterEpoch} -> ${reading.meter_epoch}: the counter restarts` +
          ` (reset_reason: ${reading.reset_reason ?? "not given"})`,
      );
      state.meterEpoch = reading.meter_epoch;
      state.lastEnergyWhCumulative = reading.energy_wh_cumulative;
      state.lastDeviceTsMs = deviceTsMs;
      state.lastReadingId = id;
    } else {
      const last = state.lastEnergyWhCumulative;
      if (last !== null && reading.energy_wh_cumulative < last) {
        regression = true;
        return reject(
          "counter_regression",
          `energy_wh_cumulative ${reading.energy_wh_cumulative} is below the last accepted ${last} in meter_epoch ${reading.meter_epoch}`,
        );
      }
      if (last !== null && state.lastDeviceTsMs !== null && deviceTsMs > state.lastDeviceTsMs) {
        intervalPowerW = ((reading.energy_wh_cumulative - last) * 3_600_000) / (deviceTsMs - state.lastDeviceTsMs);
      }
      state.lastEnergyWhCumulative = reading.energy_wh_cumulative;
      state.lastDeviceTsMs = deviceTsMs;
      state.lastReadingId = id;
    }

    // Accepted.
    if (state.lastSequenceNumber !== null && reading.sequence_number > state.lastSequenceNumber + 1) {
      gap = true;
      const missing = reading.sequence_number - state.lastSequenceNumber - 1;
      flag("sequence_gap", `sequence_number ${reading.sequence_number} follows ${state.lastSequenceNumber}: ${missing} missing`);
    }
    state.lastSequenceNumber = reading.sequence_number;
    seen.add(id);
    const driftMs = deviceTsMs - receivedAtMs;
    if (Math.abs(driftMs) > driftLimitMs) {
      flag(
        "device_ts_drift",
        `device_ts is ${Math.round(Math.abs(driftMs) / 1000)} s ${driftMs > 0 ? "ahead of" : "behind"} the time of receipt (limit ±${DRIFT_LIMIT_SECONDS} s)`,
      );
    }
    if (intervalPowerW !== null) {
      maxZ = Math.max(maxZ, zScore(state.power, intervalPowerW));
      state.power = withSample(state.power, intervalPowerW);
    }
    accepted.push({
      readingId: id,
      sequenceNumber: reading.sequence_number,
      meterEpoch: reading.meter_epoch,
      energyWhCumulative: reading.energy_wh_cumulative,
      deviceTsMs,
      driftMs,
      resetReason: reading.reset_reason ?? null,
      measurementQuality: reading.measurement_quality ?? null,
      activePowerW: reading.active_power_w ?? null,
      supersedesReadingId: supersedes,
      intervalPowerW,
    });
  });

  return {
    accepted,
    issues,
    rejectedCount,
    continuity: regression ? "regression" : gap ? "gap" : "ok",
    anomalyScore: anomalyScore(maxZ),
    superseded,
    state,
  };
}
