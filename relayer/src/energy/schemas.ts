// Request and response schemas of the sandbox interface (the OpenAPI document is generated from them).
// Field names, types and rules are the interface's tables; where it leaves something open, the choice is
// documented in the schema's description.
import { z } from "@hono/zod-openapi";
import {
  BATCH_ACCEPTED_EXAMPLE,
  DEVICE_EXAMPLE,
  DISTRIBUTION_EXAMPLE,
  EVIDENCE_EXAMPLE,
  HEALTH_EXAMPLE,
  PROJECT_EXAMPLE,
  TELEMETRY_BATCH_EXAMPLE,
  TOKEN_REQUEST_EXAMPLE,
  TOKEN_RESPONSE_EXAMPLE,
  VERSION_EXAMPLE,
  WEBHOOK_REGISTERED_EXAMPLE,
  WEBHOOK_REGISTRATION_EXAMPLE,
} from "./examples.ts";
import { SPEC_VERSION, WATERFALL_LEGS } from "./sample-data.ts";

/** Readings per batch: at least 1 (the interface), at most this many (the sandbox's choice). */
export const MAX_READINGS_PER_BATCH = 5_000;
/** Body size limit of POST /telemetry:batch; every other route allows SMALL_BODY_BYTES. */
export const TELEMETRY_MAX_BODY_BYTES = 2 * 1024 * 1024;
export const SMALL_BODY_BYTES = 64 * 1024;
/** |device_ts - receipt time| beyond this is flagged (the reading is still accepted). */
export const DRIFT_LIMIT_SECONDS = 300;
export const TOKEN_LIFETIME_SECONDS = 3600;
/** POST /auth/token per client address: a burst of this many requests, then this many a minute. */
export const TOKEN_RATE_BURST = 20;
export const TOKEN_RATE_PER_MINUTE = 20;
export const IDEMPOTENCY_RETENTION_SECONDS = 24 * 3600;
export const MAX_ID_LENGTH = 128;

const rfc3339 = /^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(\.\d{1,9})?([Zz]|[+-](\d{2}):(\d{2}))$/;

const daysInMonth = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

/** Whether `value` is an RFC 3339 date-time (section 5.6) naming a real instant. Leap seconds are refused.
 * (Called for every reading: no allocation beyond the match.) */
export function isRfc3339(value: string): boolean {
  const m = rfc3339.exec(value);
  if (!m) return false;
  const month = +m[2];
  const day = +m[3];
  if (month < 1 || month > 12 || day < 1 || +m[4] > 23 || +m[5] > 59 || +m[6] > 59) return false;
  if (day > 28) {
    const year = +m[1];
    const leap = year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0);
    if (day > (month === 2 && leap ? 29 : daysInMonth[month - 1])) return false;
  }
  return m[9] === undefined || (+m[9] <= 23 && +m[10] <= 59);
}

const DateTime = z
  .string()
  .max(40)
  .refine(isRfc3339, { message: "must be an RFC 3339 date-time with a time zone, e.g. 2026-03-01T12:00:00Z" })
  .openapi({ format: "date-time", example: "2026-03-01T12:00:00Z" });

/** The device_ts values the sandbox takes, as instants (the offset applied): from the Unix epoch to the last
 * millisecond of year 9999, UTC. RFC 3339 goes further (0000-01-01T00:00:00Z, or 9999-12-31T23:59:59-23:59,
 * which is in year 10000 in UTC), but the database's timestamp cannot hold such a value and no meter read it. */
export const DEVICE_TS_MIN = "1970-01-01T00:00:00Z";
export const DEVICE_TS_MAX = "9999-12-31T23:59:59.999Z";
const DEVICE_TS_MIN_MS = Date.parse(DEVICE_TS_MIN);
const DEVICE_TS_MAX_MS = Date.parse(DEVICE_TS_MAX);

/** Whether an RFC 3339 date-time names an instant within [DEVICE_TS_MIN, DEVICE_TS_MAX]. */
export function isDeviceTsInRange(value: string): boolean {
  const ms = Date.parse(value);
  return ms >= DEVICE_TS_MIN_MS && ms <= DEVICE_TS_MAX_MS;
}

const DeviceTimestamp = z
  .string()
  .max(40)
  .refine(isRfc3339, { message: "must be an RFC 3339 date-time with a time zone, e.g. 2026-03-01T12:00:00Z", abort: true })
  .refine(isDeviceTsInRange, { message: `must be between ${DEVICE_TS_MIN} and ${DEVICE_TS_MAX} once its offset is applied` })
  .openapi({ format: "date-time", example: "2026-03-01T12:00:00Z" });

const Identifier = z.string().min(1).max(MAX_ID_LENGTH);

export const RESET_REASONS = ["power_cycle", "firmware", "meter_swap", "unknown"] as const;
export const MEASUREMENT_QUALITIES = ["good", "estimated", "degraded"] as const;

export const Reading = z
  .object({
    device_ts: DeviceTimestamp.openapi({
      description:
        `The meter's time of the reading. A reading whose device_ts differs from the time the sandbox received ` +
        `the batch by more than ±${DRIFT_LIMIT_SECONDS} s is flagged (an \`errors\` item with code ` +
        "`device_ts_drift` and `outcome: flagged`), not rejected. Sub-millisecond digits are kept in the request " +
        "but the reading is stored and attested to the millisecond. Accepted range: from " +
        `${DEVICE_TS_MIN} to ${DEVICE_TS_MAX} once the offset is applied (so 9999-12-31T23:59:59-01:00, in ` +
        "year 10000 in UTC, is out of range); a device_ts outside it, like one that is not RFC 3339, makes the " +
        "whole batch 400 invalid_request and nothing of it is stored.",
    }),
    energy_wh_cumulative: z.int().min(0).openapi({
      description: "Lifetime counter in Wh. Monotonic within one meter_epoch only.",
      example: 18_544_625,
    }),
    meter_epoch: z
      .int()
      .min(0)
      .openapi({
        description:
          "Increments on meter replacement or counter reset. A higher epoch than the device's resets the counter " +
          "(any cumulative value is accepted; reset_reason is recorded); a lower one is rejected.",
        example: 1,
      }),
    sequence_number: z
      .int()
      .min(0)
      .openapi({
        description:
          "Monotonic per device, corrections included. A value at or below the device's last_sequence_number is " +
          "rejected (`sequence_not_increasing`); a skipped value is accepted and makes continuity `gap`.",
        example: 4321,
      }),
    reading_id: Identifier.openapi({ description: "Identifier of the reading, unique per device.", example: "rd-4321" }),
    reset_reason: z.enum(RESET_REASONS).nullable().optional().openapi({
      description: "Why the counter restarted; recorded with the reading (null or absent: not given).",
    }),
    measurement_quality: z.enum(MEASUREMENT_QUALITIES).optional(),
    supersedes_reading_id: Identifier.optional().openapi({
      description:
        "Set when correcting a reading accepted in an earlier batch of the same device and meter_epoch. The " +
        "correction takes its own (next) sequence number, its value replaces the superseded one, and it is not " +
        "checked against the counter (a correction exists to fix a wrong value). A reading can be superseded once.",
    }),
    active_power_w: z.int().optional().openapi({ description: "Active power in W." }),
  })
  .strict()
  .openapi("Reading");

export const TelemetryBatch = z
  .object({
    device_id: Identifier.openapi({ description: "A registered device.", example: "mtr-kibera-001" }),
    readings: z
      .array(Reading)
      .min(1)
      .max(MAX_READINGS_PER_BATCH)
      .openapi({ description: `At least 1 and at most ${MAX_READINGS_PER_BATCH} readings, processed in array order.` }),
  })
  .strict()
  .openapi("TelemetryBatch", { example: TELEMETRY_BATCH_EXAMPLE });

export type TelemetryBatchInput = z.infer<typeof TelemetryBatch>;
export type ReadingInput = z.infer<typeof Reading>;

export const READING_ISSUE_CODES = [
  "duplicate_reading_id",
  "sequence_not_increasing",
  "meter_epoch_regression",
  "counter_regression",
  "superseded_reading_not_found",
  "reading_already_superseded",
  "correction_epoch_mismatch",
  "device_ts_drift",
  "sequence_gap",
  "meter_epoch_reset",
] as const;

export const ReadingIssue = z
  .object({
    index: z.int().openapi({ description: "Position of the reading in the request's readings array (from 0)." }),
    reading_id: z.string(),
    code: z.enum(READING_ISSUE_CODES).openapi({
      description:
        "Rejections (outcome rejected): duplicate_reading_id (already accepted for the device, or twice in the " +
        "batch), sequence_not_increasing, meter_epoch_regression (below the device's epoch), counter_regression " +
        "(below the last accepted cumulative value of the same epoch), superseded_reading_not_found (no reading " +
        "of the device accepted in an earlier batch has that id), reading_already_superseded, " +
        "correction_epoch_mismatch. Flags on accepted readings (outcome flagged): device_ts_drift, sequence_gap " +
        "(sequence numbers were skipped before this reading), meter_epoch_reset (this reading opened a new epoch).",
    }),
    message: z.string(),
    outcome: z.enum(["rejected", "flagged"]).openapi({
      description:
        "rejected: the reading was not stored (it counts in the batch's `rejected`); flagged: the reading was accepted " +
        "and stored, with this flag.",
    }),
  })
  .openapi("ReadingIssue");

export const BatchAccepted = z
  .object({
    accepted: z.int().openapi({ description: "Count of accepted (stored) readings." }),
    rejected: z.int().openapi({ description: "Count of rejected readings: the errors items with outcome rejected." }),
    batch_id: z.string().openapi({ example: "bat_01JQ3Z6Y8X3K5V4Q9T7R2M1N0P" }),
    errors: z.array(ReadingIssue).openapi({ description: "Per-reading rejections and flags, in reading order." }),
    verification: z.object({
      signature: z.enum(["valid", "invalid", "absent"]).openapi({
        description:
          "Decided synchronously on receipt. valid: the Device-Signature header verified against the device's " +
          "registered public key. absent: no signature was sent, or the device has no registered key (the " +
          "sandbox does not verify such devices). A signature that fails is answered 401 signature_invalid, so " +
          "`invalid` never appears in a 200.",
      }),
      continuity: z.enum(["ok", "gap", "regression"]).openapi({
        description:
          "regression: at least one reading was rejected for counter_regression; else gap: sequence numbers " +
          "were skipped (before the batch or inside it); else ok.",
      }),
      anomaly_score: z.number().openapi({
        description:
          "Provisional score in [0, 1]. Each accepted reading's interval power (Wh since the previous reading of " +
          "the epoch, per hour) is compared with the device's history (running mean and standard deviation of " +
          "its interval power, updated reading by reading): z = |p - mean| / max(std, 5% of |mean|, 1 W). The " +
          "score is max(z) / 6, capped at 1 (0.5 is 3 standard deviations). 0 while the device has fewer than 8 " +
          "intervals of history or the batch has no interval.",
        example: 0.0412,
      }),
      anomaly_status: z.enum(["provisional", "confirmed"]).openapi({
        description:
          "provisional at ingest. Later (ENERGY_ANOMALY_CONFIRM_SECONDS, 300 s by default) the sandbox re-scores " +
          "the batch against the device's history at that time and records it as confirmed; the ingest " +
          "response itself never changes (an idempotent replay returns it as it was).",
      }),
    }),
    attestation: z.object({
      status: z.enum(["pending", "anchored", "failed"]).openapi({
        description:
          "pending at ingest: the batch's readings become a Merkle tree whose root the relayer anchors on " +
          "chain with the other batches waiting (TelemetryAnchor.anchorBatches), asynchronously. The status then becomes anchored (or failed) in the " +
          "energy_evidence cluster of the project's latest evidence. A batch with no accepted reading has " +
          "nothing to anchor and is failed at once.",
      }),
      expected_at: DateTime.openapi({ description: "When anchoring is expected (receipt + 30 s on a healthy chain)." }),
    }),
  })
  .openapi("BatchAccepted", { example: BATCH_ACCEPTED_EXAMPLE });

export const MAX_CLIENT_SECRET_LENGTH = 256;

// client_id and client_secret are optional here only because a client may send them by HTTP Basic instead
// (auth/client-authentication.ts): without Basic credentials, both are required.
export const TokenRequest = z
  .object({
    grant_type: z.literal("client_credentials").openapi({ description: "Only client_credentials." }),
    client_id: Identifier.optional().openapi({
      description:
        "Required, with client_secret, unless the client authenticates with HTTP Basic; then it may be left out " +
        "(if sent, it must be the Basic credentials' client).",
    }),
    client_secret: z.string().min(1).max(MAX_CLIENT_SECRET_LENGTH).optional().openapi({
      description: "Required unless the client authenticates with HTTP Basic; never both (400 invalid_request).",
    }),
  })
  .openapi("TokenRequest", {
    example: TOKEN_REQUEST_EXAMPLE,
    description:
      "Without an `Authorization: Basic` header, grant_type, client_id and client_secret are all required. Other form " +
      "fields (such as `scope`) are ignored: the sandbox has no scopes.",
  });

export const TokenResponse = z
  .object({
    access_token: z.string().openapi({ description: "A JWT (HS256); treat it as opaque." }),
    token_type: z.literal("Bearer"),
    expires_in: z.int().openapi({ description: "Seconds until the token expires.", example: TOKEN_LIFETIME_SECONDS }),
  })
  .openapi("TokenResponse", { example: TOKEN_RESPONSE_EXAMPLE });

export const Project = z
  .object({
    project_id: z.string().openapi({ example: "prj_kibera_solar" }),
    name: z.string(),
    data_assurance: z.string().openapi({ description: "Sample values: metered." }),
    asset_readiness: z.string().openapi({ description: "Sample values: operational, commissioning." }),
    assurance_state: z.string().openapi({ description: "Sample values: assured, provisionally_downgraded, pending." }),
    status: z.string().openapi({ description: "Sample values: active, commissioning." }),
    installed_capacity_w: z.int(),
    lifetime_generation_wh: z.int(),
    performance_ratio: z.number(),
    chain_refs: z.object({
      chain: z.string().openapi({ description: "The chain the relayer anchors telemetry on (CHAIN_NAME).", example: "local" }),
      unit_token: z.object({ token_id: z.string().openapi({ description: "Sample value; no unit token contract exists." }) }),
    }),
  })
  .openapi("Project", { example: PROJECT_EXAMPLE });

export const SandboxDevice = z
  .object({
    device_id: z.string().openapi({ example: "mtr-kibera-001" }),
    project_id: z.string(),
    meter_epoch: z.int(),
    last_sequence_number: z.int().openapi({ description: "Last accepted sequence number (0 before the first)." }),
    last_energy_wh_cumulative: z
      .int()
      .openapi({ description: "Cumulative value (Wh) of the latest reading of the current epoch (0 before the first)." }),
    baseline_complete: z.boolean().openapi({
      description:
        "False while the device is in its baseline window: until it has accepted the window's number of " +
        "readings (96 for the sample devices).",
    }),
  })
  .openapi("Device", { example: DEVICE_EXAMPLE });

export const Distribution = z
  .object({
    distribution_id: z.string().openapi({ example: "dst_kibera_2026_02" }),
    project_id: z.string(),
    epoch: z.int(),
    status: z.string().openapi({ description: "Sample value: executed." }),
    currency: z.string().openapi({ example: "KES" }),
    gross_minor: z.int(),
    waterfall: z
      .array(z.object({ leg: z.enum(WATERFALL_LEGS), amount_minor: z.int() }))
      .openapi({ description: "The legs opex_reserve, operator, protocol_fee and unit_holders; they sum to gross_minor." }),
    per_unit_minor: z.int(),
    evidence_ref: z.string().openapi({ example: "ev_kibera_2026_02" }),
  })
  .openapi("Distribution", { example: DISTRIBUTION_EXAMPLE });

export const Evidence = z
  .object({
    evidence_ref: z.string().openapi({ example: "ev_kibera_2026_02" }),
    project_id: z.string(),
    distribution_id: z.string(),
    clusters: z.object({
      energy_evidence: z
        .object({
          readings: z.int().openapi({ description: "Readings (leaves) under merkle_root." }),
          merkle_root: z.string().openapi({ description: "The root of the batch's tree of readings (the batch root)." }),
          device_id: z.string().nullable().openapi({
            description: "The batch's device (its leaf in the batches tree binds keccak256 of it). null in historical sample evidence.",
          }),
          batch_sequence: z.int().nullable().openapi({
            description:
              "The batch's sequence among the device's attested batches, from 1 (bound in every leaf). null in historical sample evidence.",
          }),
          anchor: z.object({
            chain: z.string(),
            tx: z.string().openapi({ description: "Transaction hash; an empty string while no transaction is sent." }),
            status: z.string().openapi({ description: "pending, anchored or failed." }),
            batches_root: z.string().openapi({
              description:
                "The root of the batches tree that one TelemetryAnchor.anchorBatches transaction anchored (event " +
                "BatchesAnchored), with this batch as one of its leaves; an empty string until the batch is put into " +
                "an anchor. Illustrative in historical sample evidence.",
            }),
            batch_proof: z.array(z.string()).openapi({
              description:
                "The Merkle proof of this batch's leaf (keccak256(project_id), keccak256(device_id), batch_sequence, " +
                "merkle_root, readings) in the batches tree: with a reading's proof in the batch's tree, what " +
                "TelemetryAnchor.verifyReading takes. Empty until the batch is put into an anchor (and for a tree of one batch).",
            }),
          }),
        })
        .openapi({
          description:
            "Historical evidence shows fixed sample values (chain `sample`: illustrative, on no chain). A " +
            "project's latest evidence is live: once one of its devices has an attested batch with a Merkle " +
            "root, this cluster describes the project's latest such batch (its readings, root, device, batch " +
            "sequence, and anchor on the relayer's chain, pending until the transaction is final).",
        }),
      legal_evidence: z.object({ documents: z.array(z.string()), status: z.string().openapi({ example: "verified" }) }),
      settlement_evidence: z.object({ bank_confirmation: z.string(), status: z.string().openapi({ example: "confirmed" }) }),
      distribution_evidence: z.object({ audit_trail: z.string(), status: z.string().openapi({ example: "complete" }) }),
    }),
  })
  .openapi("Evidence", { example: EVIDENCE_EXAMPLE });

export const WEBHOOK_EVENTS = [
  "distribution.executed",
  "assurance.provisionally_downgraded",
  "assurance.restored",
  "telemetry.anomaly_detected",
] as const;

export const WebhookRegistration = z
  .object({
    url: z
      .url({ protocol: /^https?$/, hostname: z.regexes.hostname })
      .max(2048)
      .openapi({ description: "Callback address: an absolute http or https URL.", example: "https://example.com/hooks/energy" }),
    events: z
      .array(z.enum(WEBHOOK_EVENTS))
      .min(1)
      .max(WEBHOOK_EVENTS.length)
      .refine((events) => new Set(events).size === events.length, { message: "each event at most once" }),
  })
  .strict()
  .openapi("WebhookRegistration", { example: WEBHOOK_REGISTRATION_EXAMPLE });

export const WebhookRegistered = z
  .object({
    webhook_id: z.string().openapi({ example: "whk_01JQ3Z6Y8X3K5V4Q9T7R2M1N0P" }),
    url: z.string(),
    events: z.array(z.enum(WEBHOOK_EVENTS)),
    created_at: DateTime,
    delivery: z.literal("never").openapi({ description: "The sandbox never delivers events." }),
  })
  .openapi("WebhookRegistered", { example: WEBHOOK_REGISTERED_EXAMPLE });

export const Health = z
  .object({ status: z.literal("ok"), environment: z.literal("sandbox") })
  .openapi("Health", { example: HEALTH_EXAMPLE });

export const Version = z
  .object({
    specification_version: z.literal(SPEC_VERSION),
    api_version: z.literal("v1"),
    environment: z.literal("sandbox"),
  })
  .openapi("Version", { example: VERSION_EXAMPLE });

const CapabilityItem = z.object({ name: z.string(), description: z.string() });

export const Capabilities = z
  .object({
    environment: z.literal("sandbox"),
    specification_version: z.literal(SPEC_VERSION),
    implements: z.array(CapabilityItem).openapi({ description: "Behaves as the interface describes." }),
    simulates: z.array(CapabilityItem).openapi({ description: "Present, but with sample or stand-in behaviour." }),
    omits: z.array(CapabilityItem).openapi({ description: "Not available in this environment." }),
    limits: z.object({
      min_readings_per_batch: z.int(),
      max_readings_per_batch: z.int(),
      max_telemetry_body_bytes: z.int(),
      max_body_bytes: z.int(),
      device_ts_drift_seconds: z.int(),
      token_lifetime_seconds: z.int(),
      idempotency_key_max_length: z.int(),
      idempotency_key_retention_seconds: z.int(),
      rate_limits: z
        .object({
          auth_token: z.object({ burst: z.int(), per_minute: z.int() }),
          telemetry_batch: z.object({ burst: z.int(), per_second: z.number() }),
        })
        .openapi({
          description:
            "POST /auth/token per client address; POST /telemetry:batch per OAuth client (per relayer process). " +
            "Beyond either: 429 rate_limited with Retry-After.",
        }),
    }),
    anchoring: z.object({
      chain: z.string(),
      chain_id: z.int(),
      contract: z.string().nullable().openapi({ description: "TelemetryAnchor's address; null: not deployed, batches fail." }),
      leaf_encoding: z.array(z.string()),
      leaf_values: z.array(z.string()),
      batch_leaf_encoding: z.array(z.string()).openapi({ description: "ABI types of a leaf of the batches tree." }),
      batch_leaf_values: z.array(z.string()).openapi({ description: "What each value of a batches-tree leaf is." }),
      max_batches_per_anchor: z.int().openapi({ description: "The most batches one anchor transaction takes." }),
      how_to_verify: z.string().openapi({ description: "How to verify a reading on chain from the evidence." }),
    }),
    sample_data: z.object({
      projects: z.array(z.string()),
      devices: z.array(z.object({ device_id: z.string(), note: z.string() })),
      distributions: z.array(z.string()),
      evidence: z.array(z.object({ evidence_ref: z.string(), live: z.boolean() })),
    }),
  })
  .openapi("Capabilities");
