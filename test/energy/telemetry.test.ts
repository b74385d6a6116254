// POST /telemetry:batch through HTTP against a running relayer: validation of every field, unknown and
// deregistered devices, and each rule (gap, regression within an epoch, reset with a new epoch, baseline
// window, drift flag, correction, duplicates, idempotent replay, device signatures, anomaly score), with
// the device's record following what was accepted.
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { SAMPLE_SIGNING_DEVICE } from "../../lib/sample-data.ts";
import { type DatabaseKind, selectedDatabaseKinds } from "../support/databases.ts";
import { type Stack, startStack } from "../support/stack.ts";
import { type Reading, accessToken, assertError, call, meter, postBatch, signBody } from "./helpers.ts";

const BATCH_KEYS = ["accepted", "attestation", "batch_id", "errors", "rejected", "verification"];

function reading(overrides: Record<string, unknown> = {}, omit: string[] = []): Record<string, unknown> {
  const base: Record<string, unknown> = {
    device_ts: new Date().toISOString(),
    energy_wh_cumulative: 99_000_000,
    meter_epoch: 1,
    sequence_number: 99_999,
    reading_id: "validation-probe",
    reset_reason: null,
    measurement_quality: "good",
    active_power_w: 2500,
    ...overrides,
  };
  for (const key of omit) delete base[key];
  return base;
}

for (const database of selectedDatabaseKinds()) {
  describe(`energy sandbox telemetry (${database})`, { timeout: 300_000 }, () => {
    let stack: Stack;
    let token: string;
    const device = async (id: string) => (await call(stack, token, "GET", `/devices/${id}`)).body;

    before(async () => {
      stack = await startStack({ label: `energy-tel-${database}`, database: database as DatabaseKind, indexer: false });
      token = await accessToken(stack);
    });
    after(() => stack?.stop());

    describe("validation: 400 invalid_request", () => {
      it("checks every field of the Reading table", async () => {
        const cases: Array<[string, Record<string, unknown>, string]> = [
          ["device_ts with a space", reading({ device_ts: "2026-03-01 12:00:00Z" }), "readings.0.device_ts"],
          ["device_ts without a zone", reading({ device_ts: "2026-03-01T12:00:00" }), "readings.0.device_ts"],
          ["device_ts without seconds", reading({ device_ts: "2026-03-01T12:00Z" }), "readings.0.device_ts"],
          ["device_ts not a day", reading({ device_ts: "2026-02-30T00:00:00Z" }), "readings.0.device_ts"],
          ["device_ts words", reading({ device_ts: "yesterday" }), "readings.0.device_ts"],
          ["device_ts a number", reading({ device_ts: 1_772_366_400 }), "readings.0.device_ts"],
          ["device_ts missing", reading({}, ["device_ts"]), "readings.0.device_ts"],
          ["energy_wh_cumulative a string", reading({ energy_wh_cumulative: "100" }), "readings.0.energy_wh_cumulative"],
          ["energy_wh_cumulative a fraction", reading({ energy_wh_cumulative: 100.5 }), "readings.0.energy_wh_cumulative"],
          ["energy_wh_cumulative negative", reading({ energy_wh_cumulative: -1 }), "readings.0.energy_wh_cumulative"],
          ["energy_wh_cumulative missing", reading({}, ["energy_wh_cumulative"]), "readings.0.energy_wh_cumulative"],
          ["meter_epoch a fraction", reading({ meter_epoch: 1.5 }), "readings.0.meter_epoch"],
          ["meter_epoch a string", reading({ meter_epoch: "1" }), "readings.0.meter_epoch"],
          ["meter_epoch missing", reading({}, ["meter_epoch"]), "readings.0.meter_epoch"],
          ["sequence_number a fraction", reading({ sequence_number: 7.25 }), "readings.0.sequence_number"],
          ["sequence_number beyond 2^53", reading({ sequence_number: 2 ** 53 }), "readings.0.sequence_number"],
          ["sequence_number null", reading({ sequence_number: null }), "readings.0.sequence_number"],
          ["sequence_number missing", reading({}, ["sequence_number"]), "readings.0.sequence_number"],
          ["reading_id empty", reading({ reading_id: "" }), "readings.0.reading_id"],
          ["reading_id a number", reading({ reading_id: 7 }), "readings.0.reading_id"],
          ["reading_id too long", reading({ reading_id: "r".repeat(129) }), "readings.0.reading_id"],
          ["reading_id missing", reading({}, ["reading_id"]), "readings.0.reading_id"],
          ["reset_reason not in the list", reading({ reset_reason: "reboot" }), "readings.0.reset_reason"],
          ["reset_reason a number", reading({ reset_reason: 3 }), "readings.0.reset_reason"],
          ["measurement_quality not in the list", reading({ measurement_quality: "bad" }), "readings.0.measurement_quality"],
          ["measurement_quality null", reading({ measurement_quality: null }), "readings.0.measurement_quality"],
          ["supersedes_reading_id a number", reading({ supersedes_reading_id: 5 }), "readings.0.supersedes_reading_id"],
          ["supersedes_reading_id empty", reading({ supersedes_reading_id: "" }), "readings.0.supersedes_reading_id"],
          ["active_power_w a fraction", reading({ active_power_w: 12.5 }), "readings.0.active_power_w"],
          ["active_power_w a string", reading({ active_power_w: "12" }), "readings.0.active_power_w"],
          ["an unknown field", reading({ signature: "abc" }), "readings.0"],
        ];
        for (const [name, r, where] of cases) {
          const response = await postBatch(stack, token, { device_id: "mtr-kibera-001", readings: [r] });
          assertError(response, 400, "invalid_request", name);
          assert.ok(response.body.error.message.includes(where), `${name}: ${response.body.error.message}`);
        }
        // The second reading of a batch is named by its index.
        const second = await postBatch(stack, token, { device_id: "mtr-kibera-001", readings: [reading(), reading({ meter_epoch: -1 })] });
        assertError(second, 400, "invalid_request");
        assert.match(second.body.error.message, /readings\.1\.meter_epoch/);
      });

      it("checks the batch: device_id, at least one reading, at most 5,000, nothing else", async () => {
        const many = Array.from({ length: 5001 }, (_, i) => reading({ reading_id: `r-${i}`, sequence_number: 100_000 + i }));
        const cases: Array<[string, unknown]> = [
          ["no readings", { device_id: "mtr-kibera-001", readings: [] }],
          ["readings missing", { device_id: "mtr-kibera-001" }],
          ["readings not an array", { device_id: "mtr-kibera-001", readings: reading() }],
          ["a reading not an object", { device_id: "mtr-kibera-001", readings: [5] }],
          ["device_id missing", { readings: [reading()] }],
          ["device_id a number", { device_id: 5, readings: [reading()] }],
          ["device_id empty", { device_id: "", readings: [reading()] }],
          ["an unknown field", { device_id: "mtr-kibera-001", readings: [reading()], signature: "x" }],
          ["more than 5,000 readings", { device_id: "mtr-kibera-001", readings: many }],
          ["an array", [{ device_id: "mtr-kibera-001", readings: [reading()] }]],
          ["a string", "batch"],
          ["null", null],
        ];
        for (const [name, body] of cases) {
          assertError(await postBatch(stack, token, JSON.stringify(body)), 400, "invalid_request", name);
        }
        for (const key of ["has space", "x".repeat(256), "tab\there"]) {
          const response = await postBatch(
            stack,
            token,
            { device_id: "mtr-kibera-001", readings: [reading()] },
            { "idempotency-key": key },
          );
          assertError(response, 400, "invalid_request", `Idempotency-Key ${JSON.stringify(key).slice(0, 20)}`);
        }
        const record = await device("mtr-kibera-001");
        assert.equal(record.last_sequence_number, 4320, "nothing was stored");
      });

      it("refuses a device_ts outside 1970 to 9999 (UTC, its offset applied) with 400, storing nothing of the batch", async () => {
        // Each is RFC 3339, but no timestamp the database holds: they used to fail there, with a 500.
        const outside = [
          "0000-01-01T00:00:00Z",
          "0001-01-01T00:00:00+00:00",
          "1969-12-31T23:59:59.999Z",
          "1970-01-01T00:59:59+01:00",
          "9999-12-31T23:59:59-23:59",
          "9999-12-31T23:59:59.999-00:01",
        ];
        for (const deviceTs of outside) {
          const response = await postBatch(stack, token, { device_id: "mtr-kibera-001", readings: [reading({ device_ts: deviceTs })] });
          assertError(response, 400, "invalid_request", deviceTs);
          assert.match(
            response.body.error.message,
            /readings\.0\.device_ts: must be between 1970-01-01T00:00:00Z and 9999-12-31T23:59:59\.999Z/,
            deviceTs,
          );
        }
        // One such reading refuses the whole batch, as a malformed device_ts does.
        const mixed = await postBatch(stack, token, {
          device_id: "mtr-kibera-001",
          readings: [reading(), reading({ reading_id: "far-future", sequence_number: 100_000, device_ts: "9999-12-31T23:59:59-23:59" })],
        });
        assertError(mixed, 400, "invalid_request");
        assert.match(mixed.body.error.message, /readings\.1\.device_ts/);
        const record = await device("mtr-kibera-001");
        assert.equal(record.last_sequence_number, 4320, "nothing was stored");
        assert.equal(record.last_energy_wh_cumulative, 18_544_000);
      });

      it("is 404 device_not_found for an unknown or deregistered device", async () => {
        assertError(await postBatch(stack, token, { device_id: "mtr-nope", readings: [reading()] }), 404, "device_not_found", "unknown");
        assertError(
          await postBatch(stack, token, { device_id: "mtr-kibera-003", readings: [reading({ sequence_number: 1211 })] }),
          404,
          "device_not_found",
          "deregistered",
        );
      });
    });

    describe("continuity and the counter (mtr-kibera-001)", () => {
      const m = meter("mtr-kibera-001", { sequence: 4320, cumulative: 18_544_000, epoch: 1 });

      it("accepts a batch: verification and pending attestation; the device's record follows", async () => {
        const before = Date.now();
        const response = await postBatch(stack, token, m.batch(3));
        assert.equal(response.status, 200, response.text);
        const b = response.body;
        assert.deepEqual(Object.keys(b).sort(), BATCH_KEYS);
        assert.equal(b.accepted, 3);
        assert.equal(b.rejected, 0);
        assert.deepEqual(b.errors, []);
        assert.match(b.batch_id, /^bat_[0-9A-Z]{26}$/);
        assert.deepEqual(Object.keys(b.verification).sort(), ["anomaly_score", "anomaly_status", "continuity", "signature"]);
        assert.equal(b.verification.signature, "absent");
        assert.equal(b.verification.continuity, "ok");
        assert.equal(b.verification.anomaly_status, "provisional");
        assert.ok(b.verification.anomaly_score >= 0 && b.verification.anomaly_score < 0.1, String(b.verification.anomaly_score));
        assert.deepEqual(Object.keys(b.attestation).sort(), ["expected_at", "status"]);
        assert.equal(b.attestation.status, "pending");
        const expected = Date.parse(b.attestation.expected_at);
        assert.ok(expected > before && expected <= Date.now() + 31_000, b.attestation.expected_at);
        assert.deepEqual(await device("mtr-kibera-001"), {
          device_id: "mtr-kibera-001",
          project_id: "prj_kibera_solar",
          meter_epoch: 1,
          last_sequence_number: 4323,
          last_energy_wh_cumulative: m.state.cumulative,
          baseline_complete: true,
        });
      });

      it("reports a skipped sequence number as continuity gap (before the batch and inside it), accepting the readings", async () => {
        const [, ...afterSkip] = m.readings(3); // 4324 is never sent
        const response = await postBatch(stack, token, { device_id: m.deviceId, readings: afterSkip });
        assert.equal(response.status, 200, response.text);
        assert.equal(response.body.accepted, 2);
        assert.equal(response.body.verification.continuity, "gap");
        assert.deepEqual(response.body.errors, [
          {
            index: 0,
            reading_id: afterSkip[0].reading_id,
            code: "sequence_gap",
            message: response.body.errors[0].message,
            outcome: "flagged",
          },
        ]);
        assert.match(response.body.errors[0].message, /4325 follows 4323: 1 missing/);

        const inside = m.readings(3);
        const gapInside = await postBatch(stack, token, { device_id: m.deviceId, readings: [inside[0], inside[2]] });
        assert.equal(gapInside.body.verification.continuity, "gap");
        assert.equal(gapInside.body.errors[0].index, 1);
        assert.equal((await device(m.deviceId)).last_sequence_number, inside[2].sequence_number);
        const ok = await postBatch(stack, token, m.batch(1));
        assert.equal(ok.body.verification.continuity, "ok");
      });

      it("rejects a cumulative value below the last accepted one in the same epoch: per reading, or 422 when none is accepted", async () => {
        const [first, regressed, third] = m.readings(3);
        regressed.energy_wh_cumulative = first.energy_wh_cumulative - 1;
        const mixed = await postBatch(stack, token, { device_id: m.deviceId, readings: [first, regressed, third] });
        assert.equal(mixed.status, 200, mixed.text);
        assert.equal(mixed.body.accepted, 2);
        assert.equal(mixed.body.rejected, 1);
        assert.equal(mixed.body.verification.continuity, "regression", "regression outranks the gap the rejection leaves");
        assert.deepEqual(
          mixed.body.errors.map((e: Record<string, unknown>) => ({ ...e, message: undefined })),
          [
            { index: 1, reading_id: regressed.reading_id, code: "counter_regression", message: undefined, outcome: "rejected" },
            { index: 2, reading_id: third.reading_id, code: "sequence_gap", message: undefined, outcome: "flagged" },
          ],
        );
        assert.match(mixed.body.errors[0].message, /below the last accepted/);
        let record = await device(m.deviceId);
        assert.equal(record.last_sequence_number, third.sequence_number);
        assert.equal(record.last_energy_wh_cumulative, third.energy_wh_cumulative);

        const [alone] = m.readings(1);
        alone.energy_wh_cumulative = third.energy_wh_cumulative - 500;
        const rejected = await postBatch(stack, token, { device_id: m.deviceId, readings: [alone] });
        assertError(rejected, 422, "counter_regression");
        assert.match(rejected.body.error.message, new RegExp(alone.reading_id));
        record = await device(m.deviceId);
        assert.equal(record.last_sequence_number, third.sequence_number, "nothing was stored");
        assert.equal(record.last_energy_wh_cumulative, third.energy_wh_cumulative);
        m.state.sequence -= 1; // the meter sends that sequence number again
        m.state.cumulative = third.energy_wh_cumulative;
      });

      it("resets the counter on a higher meter_epoch (reset_reason recorded) and rejects readings of an older epoch", async () => {
        m.state.epoch = 2;
        m.state.cumulative = 0;
        const [swap] = m.readings(1, { reset_reason: "meter_swap" });
        const response = await postBatch(stack, token, { device_id: m.deviceId, readings: [swap] });
        assert.equal(response.status, 200, response.text);
        assert.equal(response.body.accepted, 1);
        assert.equal(response.body.verification.continuity, "ok");
        assert.equal(response.body.errors[0].code, "meter_epoch_reset");
        assert.equal(response.body.errors[0].outcome, "flagged");
        assert.match(response.body.errors[0].message, /meter_swap/);
        let record = await device(m.deviceId);
        assert.equal(record.meter_epoch, 2);
        assert.equal(record.last_energy_wh_cumulative, swap.energy_wh_cumulative);

        const [stale, fresh] = m.readings(2);
        stale.meter_epoch = 1;
        stale.energy_wh_cumulative = 99_999_999;
        const mixed = await postBatch(stack, token, { device_id: m.deviceId, readings: [stale, fresh] });
        assert.equal(mixed.status, 200, mixed.text);
        assert.deepEqual(
          mixed.body.errors.map((e: { code: string; outcome: string }) => [e.code, e.outcome]),
          [
            ["meter_epoch_regression", "rejected"],
            ["sequence_gap", "flagged"],
          ],
        );
        record = await device(m.deviceId);
        assert.equal(record.meter_epoch, 2);
        assert.equal(record.last_energy_wh_cumulative, fresh.energy_wh_cumulative);
        // Within the new epoch the counter is monotonic again.
        const [next] = m.readings(1);
        next.energy_wh_cumulative = fresh.energy_wh_cumulative - 1;
        assertError(await postBatch(stack, token, { device_id: m.deviceId, readings: [next] }), 422, "counter_regression");
        m.state.sequence -= 1;
        m.state.cumulative = fresh.energy_wh_cumulative;
      });

      it("rejects duplicate reading ids and sequence numbers that do not increase; a batch of duplicates has nothing to attest", async () => {
        const first = m.readings(2);
        assert.equal((await postBatch(stack, token, { device_id: m.deviceId, readings: first })).status, 200);
        const [fresh] = m.readings(1);
        const reusedId = { ...fresh, reading_id: first[0].reading_id, sequence_number: fresh.sequence_number };
        const oldSequence = { ...fresh, reading_id: `${fresh.reading_id}-b`, sequence_number: first[1].sequence_number };
        const twiceInBatch = { ...fresh };
        const response = await postBatch(stack, token, { device_id: m.deviceId, readings: [oldSequence, reusedId, fresh, twiceInBatch] });
        assert.equal(response.status, 200, response.text);
        assert.equal(response.body.accepted, 1);
        assert.equal(response.body.rejected, 3);
        assert.deepEqual(
          response.body.errors.map((e: { index: number; code: string }) => [e.index, e.code]),
          [
            [0, "sequence_not_increasing"],
            [1, "duplicate_reading_id"],
            [3, "duplicate_reading_id"],
          ],
        );
        const again = await postBatch(stack, token, { device_id: m.deviceId, readings: first });
        assert.equal(again.status, 200);
        assert.equal(again.body.accepted, 0);
        assert.equal(again.body.rejected, 2);
        assert.equal(again.body.attestation.status, "failed", "nothing to anchor");
        assert.equal((await device(m.deviceId)).last_sequence_number, fresh.sequence_number);
      });
    });

    describe("corrections and drift (mtr-yaba-001)", () => {
      const m = meter("mtr-yaba-001", { sequence: 2016, cumulative: 6_210_000, epoch: 1 });

      it("supersedes_reading_id corrects an accepted reading (the latest one moves the device's record)", async () => {
        const original = m.readings(3);
        assert.equal((await postBatch(stack, token, { device_id: m.deviceId, readings: original })).status, 200);
        const [fixLatest] = m.readings(1, { supersedes_reading_id: original[2].reading_id });
        fixLatest.energy_wh_cumulative = original[2].energy_wh_cumulative + 4;
        const response = await postBatch(stack, token, { device_id: m.deviceId, readings: [fixLatest] });
        assert.equal(response.status, 200, response.text);
        assert.equal(response.body.accepted, 1);
        assert.deepEqual(response.body.errors, []);
        let record = await device(m.deviceId);
        assert.equal(record.last_sequence_number, fixLatest.sequence_number);
        assert.equal(record.last_energy_wh_cumulative, fixLatest.energy_wh_cumulative, "the corrected value");
        m.state.cumulative = fixLatest.energy_wh_cumulative;

        const [fixFirst] = m.readings(1, { supersedes_reading_id: original[0].reading_id });
        fixFirst.energy_wh_cumulative = original[0].energy_wh_cumulative - 3; // a correction is not checked against the counter
        assert.equal((await postBatch(stack, token, { device_id: m.deviceId, readings: [fixFirst] })).body.accepted, 1);
        record = await device(m.deviceId);
        assert.equal(record.last_energy_wh_cumulative, fixLatest.energy_wh_cumulative, "an older reading's correction leaves it");
        m.state.cumulative = fixLatest.energy_wh_cumulative;

        const [again] = m.readings(1, { supersedes_reading_id: original[0].reading_id });
        const [unknown] = m.readings(1, { supersedes_reading_id: "no-such-reading" });
        const [otherEpoch] = m.readings(1, { supersedes_reading_id: original[1].reading_id, meter_epoch: 2 });
        const [plain] = m.readings(1);
        const [sameBatch] = m.readings(1, { supersedes_reading_id: plain.reading_id });
        const rejected = await postBatch(stack, token, { device_id: m.deviceId, readings: [again, unknown, otherEpoch, plain, sameBatch] });
        assert.equal(rejected.status, 200, rejected.text);
        assert.deepEqual(
          rejected.body.errors
            .filter((e: { outcome: string }) => e.outcome === "rejected")
            .map((e: { index: number; code: string }) => [e.index, e.code]),
          [
            [0, "reading_already_superseded"],
            [1, "superseded_reading_not_found"],
            [2, "correction_epoch_mismatch"],
            [4, "superseded_reading_not_found"],
          ],
        );
        assert.equal(rejected.body.accepted, 1);
        assert.equal((await device(m.deviceId)).meter_epoch, 1);
      });

      it("flags device_ts drift beyond ±300 s without rejecting the reading", async () => {
        const [ahead, behind, close] = m.readings(3);
        ahead.device_ts = new Date(Date.now() + 10 * 60_000).toISOString();
        behind.device_ts = new Date(Date.now() - 10 * 60_000).toISOString();
        close.device_ts = new Date(Date.now() + 240_000).toISOString();
        const response = await postBatch(stack, token, { device_id: m.deviceId, readings: [ahead, behind, close] });
        assert.equal(response.status, 200, response.text);
        assert.equal(response.body.accepted, 3);
        assert.equal(response.body.rejected, 0);
        const drift = response.body.errors.filter((e: { code: string }) => e.code === "device_ts_drift");
        assert.deepEqual(
          drift.map((e: { index: number; outcome: string }) => [e.index, e.outcome]),
          [
            [0, "flagged"],
            [1, "flagged"],
          ],
        );
        assert.match(drift[0].message, /ahead/);
        assert.match(drift[1].message, /behind/);
        assert.equal((await device(m.deviceId)).last_sequence_number, close.sequence_number);
      });
    });

    describe("baseline window (mtr-yaba-002: 90 of 96 readings)", () => {
      const m = meter("mtr-yaba-002", { sequence: 90, cumulative: 201_600, epoch: 1 });

      it("stores readings without attesting them (409 baseline_incomplete) until the window completes", async () => {
        const first = m.readings(4);
        const response = await postBatch(stack, token, { device_id: m.deviceId, readings: first });
        assertError(response, 409, "baseline_incomplete");
        assert.match(response.body.error.message, /94 of 96/);
        let record = await device(m.deviceId);
        assert.equal(record.baseline_complete, false);
        assert.equal(record.last_sequence_number, 94, "the readings were stored");
        assert.equal(record.last_energy_wh_cumulative, first[3].energy_wh_cumulative);

        // Stored: sending one again is a duplicate.
        const [next] = m.readings(1);
        const duplicate = await postBatch(stack, token, { device_id: m.deviceId, readings: [first[0], next] });
        assertError(duplicate, 409, "baseline_incomplete");
        assert.match(duplicate.body.error.message, /95 of 96/);

        const completing = await postBatch(stack, token, m.batch(1));
        assertError(completing, 409, "baseline_incomplete");
        assert.match(completing.body.error.message, /96 of 96.*now complete/);
        record = await device(m.deviceId);
        assert.equal(record.baseline_complete, true);
        assert.equal(record.last_sequence_number, 96);

        const attested = await postBatch(stack, token, m.batch(2));
        assert.equal(attested.status, 200, attested.text);
        assert.equal(attested.body.attestation.status, "pending");
        assert.equal(attested.body.verification.continuity, "ok");
      });
    });

    describe("Idempotency-Key (mtr-yaba-003)", () => {
      const m = meter("mtr-yaba-003", { sequence: 1440, cumulative: 3_980_000, epoch: 1 });

      it("replays the original status and body byte for byte, and stores nothing again", async () => {
        const body = m.batch(3);
        const key = `key-${Date.now()}`;
        const first = await postBatch(stack, token, body, { "Idempotency-Key": key });
        assert.equal(first.status, 200, first.text);
        assert.equal(first.headers.get("idempotent-replayed"), null);
        const recordAfterFirst = await device(m.deviceId);

        const replay = await postBatch(stack, token, body, { "Idempotency-Key": key });
        assert.equal(replay.status, 200);
        assert.equal(replay.text, first.text, "byte for byte");
        assert.equal(replay.headers.get("idempotent-replayed"), "true");
        // The same JSON with its keys in another order and other spacing is the same body.
        const reordered = JSON.stringify(
          { readings: body.readings.map((r) => Object.fromEntries(Object.entries(r).reverse())), device_id: body.device_id },
          null,
          2,
        );
        const replay2 = await postBatch(stack, token, reordered, { "Idempotency-Key": key });
        assert.equal(replay2.text, first.text);
        assert.deepEqual(await device(m.deviceId), recordAfterFirst);

        // Without the key the same batch is processed again: its readings are duplicates.
        const noKey = await postBatch(stack, token, body);
        assert.equal(noKey.body.accepted, 0);
        assert.notEqual(noKey.body.batch_id, first.body.batch_id);
      });

      it("is 422 idempotency_key_reused for the same key with another body", async () => {
        const key = `reuse-${Date.now()}`;
        assert.equal((await postBatch(stack, token, m.batch(1), { "Idempotency-Key": key })).status, 200);
        const other = await postBatch(stack, token, m.batch(1), { "Idempotency-Key": key });
        assertError(other, 422, "idempotency_key_reused");
        m.state.sequence -= 1;
      });

      it("replays error outcomes too (404, 422 counter_regression, 409), and concurrent retries get one outcome", async () => {
        const unknown = { device_id: "mtr-unknown", readings: [reading()] };
        const k404 = `k404-${Date.now()}`;
        const a = await postBatch(stack, token, unknown, { "Idempotency-Key": k404 });
        const b = await postBatch(stack, token, unknown, { "Idempotency-Key": k404 });
        assertError(a, 404, "device_not_found");
        assert.equal(b.status, 404);
        assert.equal(b.text, a.text);
        assert.equal(b.headers.get("idempotent-replayed"), "true");

        const [regressed] = m.readings(1);
        regressed.energy_wh_cumulative = 1;
        const k422 = `k422-${Date.now()}`;
        const c = await postBatch(stack, token, { device_id: m.deviceId, readings: [regressed] }, { "Idempotency-Key": k422 });
        assertError(c, 422, "counter_regression");
        assert.equal(
          (await postBatch(stack, token, { device_id: m.deviceId, readings: [regressed] }, { "Idempotency-Key": k422 })).text,
          c.text,
        );
        m.state.sequence -= 1;
        m.state.cumulative = (await device(m.deviceId)).last_energy_wh_cumulative;

        const concurrent = m.batch(2);
        const kc = `kc-${Date.now()}`;
        const results = await Promise.all([1, 2, 3, 4].map(() => postBatch(stack, token, concurrent, { "Idempotency-Key": kc })));
        for (const r of results) {
          assert.equal(r.status, 200, r.text);
          assert.equal(r.text, results[0].text);
        }
        assert.equal(results[0].body.accepted, 2);
        assert.equal(results.filter((r) => r.headers.get("idempotent-replayed") === "true").length, 3);
        assert.equal((await device(m.deviceId)).last_sequence_number, concurrent.readings[1].sequence_number);
      });
    });

    describe("device signatures", () => {
      const m = meter(SAMPLE_SIGNING_DEVICE.deviceId, { sequence: 4320, cumulative: 17_980_250, epoch: 1 });

      it("valid against the registered public key; 401 signature_invalid when present and failing; absent without", async () => {
        const body = JSON.stringify(m.batch(2));
        const signed = await postBatch(stack, token, body, { "Device-Signature": signBody(body, SAMPLE_SIGNING_DEVICE.ed25519Seed) });
        assert.equal(signed.status, 200, signed.text);
        assert.equal(signed.body.verification.signature, "valid");

        const next = JSON.stringify(m.batch(1));
        const wrongBody = await postBatch(stack, token, next, { "Device-Signature": signBody(body, SAMPLE_SIGNING_DEVICE.ed25519Seed) });
        assertError(wrongBody, 401, "signature_invalid", "a signature of another body");
        const otherKey = await postBatch(stack, token, next, { "Device-Signature": signBody(next, "11".repeat(32)) });
        assertError(otherKey, 401, "signature_invalid", "another key");
        for (const garbage of ["not-base64!", "AAAA", Buffer.alloc(64).toString("base64")]) {
          assertError(await postBatch(stack, token, next, { "Device-Signature": garbage }), 401, "signature_invalid", garbage);
        }
        // base64url works too; nothing of the rejected requests was stored.
        const urlSafe = signBody(next, SAMPLE_SIGNING_DEVICE.ed25519Seed).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
        const ok = await postBatch(stack, token, next, { "Device-Signature": urlSafe });
        assert.equal(ok.status, 200, ok.text);
        assert.equal(ok.body.verification.signature, "valid");
        assert.equal(ok.body.accepted, 1);

        const unsigned = await postBatch(stack, token, m.batch(1));
        assert.equal(unsigned.body.verification.signature, "absent");
      });

      it("is absent for a device without a registered key, whatever the header", async () => {
        const other = meter("mtr-kariakoo-001", { sequence: 672, cumulative: 1_612_800, epoch: 1 });
        const body = JSON.stringify(other.batch(1));
        const response = await postBatch(stack, token, body, { "Device-Signature": "bm90IGEgc2lnbmF0dXJl" });
        assert.equal(response.status, 200, response.text);
        assert.equal(response.body.verification.signature, "absent");
      });
    });

    describe("device_ts range (mtr-kariakoo-001)", () => {
      it("accepts the first and the last instant of the range, whatever the offset, flagged for drift", async () => {
        const edges = [
          { device_ts: "1970-01-01T01:00:00+01:00", sequence_number: 700, energy_wh_cumulative: 1_700_000 },
          { device_ts: "9999-12-31T22:59:59.999-01:00", sequence_number: 701, energy_wh_cumulative: 1_700_010 },
        ].map((r) => ({ ...r, meter_epoch: 1, reading_id: `mtr-kariakoo-001-edge-${r.sequence_number}` }));
        const response = await postBatch(stack, token, { device_id: "mtr-kariakoo-001", readings: edges });
        assert.equal(response.status, 200, response.text);
        assert.equal(response.body.accepted, 2);
        assert.deepEqual(
          response.body.errors
            .filter((e: { code: string }) => e.code === "device_ts_drift")
            .map((e: { index: number; outcome: string }) => [e.index, e.outcome]),
          [
            [0, "flagged"],
            [1, "flagged"],
          ],
        );
        assert.equal((await device("mtr-kariakoo-001")).last_sequence_number, 701);
      });

      it("takes integers up to 2^53 - 1, which the database's bigint columns hold, and refuses larger ones with 400", async () => {
        const max = Number.MAX_SAFE_INTEGER;
        const huge = { device_ts: new Date().toISOString(), reading_id: "mtr-kariakoo-001-max", reset_reason: "meter_swap" };
        for (const field of ["energy_wh_cumulative", "meter_epoch", "sequence_number", "active_power_w"]) {
          const r = { ...huge, energy_wh_cumulative: max, meter_epoch: max, sequence_number: max, active_power_w: -max, [field]: 2 ** 53 };
          const response = await postBatch(stack, token, { device_id: "mtr-kariakoo-001", readings: [r] });
          assertError(response, 400, "invalid_request", field);
          assert.ok(response.body.error.message.includes(`readings.0.${field}`), response.body.error.message);
        }
        const reading = { ...huge, energy_wh_cumulative: max, meter_epoch: max, sequence_number: max, active_power_w: -max };
        const response = await postBatch(stack, token, { device_id: "mtr-kariakoo-001", readings: [reading] });
        assert.equal(response.status, 200, response.text);
        assert.equal(response.body.accepted, 1);
        const record = await device("mtr-kariakoo-001");
        assert.deepEqual([record.meter_epoch, record.last_sequence_number, record.last_energy_wh_cumulative], [max, max, max]);
      });
    });

    describe("anomaly score (mtr-kibera-004)", () => {
      it("is low for readings like the device's history and high for a power spike", async () => {
        const m = meter("mtr-kibera-004", { sequence: 980, cumulative: 2_402_000, epoch: 2 });
        const steady = await postBatch(stack, token, m.batch(5));
        assert.equal(steady.status, 200, steady.text);
        assert.ok(steady.body.verification.anomaly_score < 0.1, String(steady.body.verification.anomaly_score));
        const [spike]: Reading[] = m.readings(1);
        spike.energy_wh_cumulative += 60; // 10 s at about 24 kW instead of 2.5 kW
        const response = await postBatch(stack, token, { device_id: m.deviceId, readings: [spike] });
        assert.equal(response.status, 200, response.text);
        assert.equal(response.body.verification.anomaly_score, 1);
        assert.equal(response.body.verification.anomaly_status, "provisional");
      });
    });
  });
}
