// The energy cash-flow sandbox (/energy/v1): its OAuth clients, its metered devices and what follows their
// telemetry (batches, readings, idempotency records), and webhook registrations. Projects, distributions and
// evidence are fixed sample data in code (relayer/src/energy/sample-data.ts), not tables.
import { sql } from "drizzle-orm";
import { bigint, doublePrecision, index, integer, jsonb, pgTable, primaryKey, text, timestamp, unique } from "drizzle-orm/pg-core";
import { checkOneOf, foreignKeyTo } from "./constraints.ts";

/** OAuth clients of the client-credentials grant. Only the SHA-256 of a secret is stored. */
export const energyClients = pgTable("energy_clients", {
  clientId: text("client_id").primaryKey(),
  name: text("name").notNull(),
  /** SHA-256 of the client secret, hex. */
  secretHash: text("secret_hash").notNull(),
  createdAt: timestamp("created_at", { withTimezone: true }).notNull().defaultNow(),
  revokedAt: timestamp("revoked_at", { withTimezone: true }),
});

/** Metered devices and the state their accepted readings leave behind. */
export const energyDevices = pgTable("energy_devices", {
  deviceId: text("device_id").primaryKey(),
  projectId: text("project_id").notNull(),
  name: text("name").notNull(),
  /** Current meter epoch (the highest accepted). */
  meterEpoch: bigint("meter_epoch", { mode: "number" }).notNull().default(0),
  /** Last accepted sequence number (null: no reading yet). */
  lastSequenceNumber: bigint("last_sequence_number", { mode: "number" }),
  /** Cumulative value (Wh) of the latest reading of the current epoch. */
  lastEnergyWhCumulative: bigint("last_energy_wh_cumulative", { mode: "number" }),
  /** device_ts of that reading. */
  lastDeviceTs: timestamp("last_device_ts", { withTimezone: true }),
  /** The reading that set last_energy_wh_cumulative (a correction of it moves the record). */
  lastReadingId: text("last_reading_id"),
  /** Readings the baseline window needs; the baseline is complete once baseline_readings reaches it. */
  baselineReadingsRequired: integer("baseline_readings_required").notNull().default(0),
  baselineReadings: integer("baseline_readings").notNull().default(0),
  /** Registered Ed25519 public key (32 bytes, hex) that device signatures are verified against. */
  signingPublicKey: text("signing_public_key"),
  /** Attested batches so far: the last batch sequence number used. */
  batchSequence: bigint("batch_sequence", { mode: "number" }).notNull().default(0),
  /** Running statistics (Welford) of the device's interval power, for anomaly scores. */
  powerSamples: bigint("power_samples", { mode: "number" }).notNull().default(0),
  powerMean: doublePrecision("power_mean").notNull().default(0),
  powerM2: doublePrecision("power_m2").notNull().default(0),
  registeredAt: timestamp("registered_at", { withTimezone: true }).notNull().defaultNow(),
  deregisteredAt: timestamp("deregistered_at", { withTimezone: true }),
  updatedAt: timestamp("updated_at", { withTimezone: true }).notNull().defaultNow(),
});

export const batchContinuities = ["ok", "gap", "regression"] as const;
export const batchSignatures = ["valid", "invalid", "absent"] as const;
export const anomalyStatuses = ["provisional", "confirmed"] as const;
export const attestationStatuses = ["pending", "anchored", "failed", "not_attested"] as const;

export const anchorStatuses = ["pending", "anchored", "failed"] as const;

/** One TelemetryAnchor.anchorBatches transaction: the root of the batches tree it anchors (every energy_batches
 * row with this anchor_id is one of its leaves). Its chain transaction's ref is the anchor_id. */
export const energyAnchors = pgTable(
  "energy_anchors",
  {
    anchorId: text("anchor_id").primaryKey(),
    batchesRoot: text("batches_root").notNull(),
    batches: integer("batches").notNull(),
    /** pending until the transaction is final, then anchored (mined) or failed. */
    status: text("status", { enum: anchorStatuses }).notNull().default("pending"),
    txHash: text("tx_hash"),
    blockNumber: bigint("block_number", { mode: "number" }),
    error: text("error"),
    createdAt: timestamp("created_at", { withTimezone: true }).notNull().defaultNow(),
    finalAt: timestamp("final_at", { withTimezone: true }),
  },
  (t) => [checkOneOf("energy_anchors", t.status, anchorStatuses), unique("energy_anchors_batches_root_uq").on(t.batchesRoot)],
);

/** One row per ingested batch that stored readings (or was answered 200). */
export const energyBatches = pgTable(
  "energy_batches",
  {
    batchId: text("batch_id").primaryKey(),
    deviceId: text("device_id").notNull(),
    projectId: text("project_id").notNull(),
    clientId: text("client_id").notNull(),
    /** The batch's sequence among the device's attested batches (null: not attested). */
    batchSequence: bigint("batch_sequence", { mode: "number" }),
    readings: integer("readings").notNull(),
    rejected: integer("rejected").notNull(),
    /** Sequence numbers of the batch's first and last accepted readings (null: none accepted). */
    firstSequenceNumber: bigint("first_sequence_number", { mode: "number" }),
    lastSequenceNumber: bigint("last_sequence_number", { mode: "number" }),
    continuity: text("continuity", { enum: batchContinuities }).notNull(),
    signature: text("signature", { enum: batchSignatures }).notNull(),
    anomalyScore: doublePrecision("anomaly_score").notNull(),
    anomalyStatus: text("anomaly_status", { enum: anomalyStatuses }).notNull(),
    /** pending, anchored or failed; not_attested for baseline batches. */
    attestationStatus: text("attestation_status", { enum: attestationStatuses }).notNull(),
    expectedAt: timestamp("expected_at", { withTimezone: true }),
    merkleRoot: text("merkle_root"),
    /** The anchor (batches tree) the batch went into: set once, when that anchor's transaction is queued. */
    anchorId: text("anchor_id"),
    /** The Merkle proof of the batch's leaf in its anchor's batches tree. */
    batchProof: jsonb("batch_proof").$type<string[]>(),
    anchorTxHash: text("anchor_tx_hash"),
    anchorBlockNumber: bigint("anchor_block_number", { mode: "number" }),
    anchorError: text("anchor_error"),
    receivedAt: timestamp("received_at", { withTimezone: true }).notNull().defaultNow(),
    anchoredAt: timestamp("anchored_at", { withTimezone: true }),
    anomalyConfirmedAt: timestamp("anomaly_confirmed_at", { withTimezone: true }),
  },
  (t) => [
    foreignKeyTo("energy_batches", t.deviceId, energyDevices.deviceId),
    foreignKeyTo("energy_batches", t.clientId, energyClients.clientId),
    checkOneOf("energy_batches", t.continuity, batchContinuities),
    checkOneOf("energy_batches", t.signature, batchSignatures),
    checkOneOf("energy_batches", t.anomalyStatus, anomalyStatuses),
    checkOneOf("energy_batches", t.attestationStatus, attestationStatuses),
    unique("energy_batches_device_sequence_uq").on(t.deviceId, t.batchSequence),
    index("energy_batches_unrooted_idx")
      .on(t.receivedAt)
      .where(sql`attestation_status = 'pending' and merkle_root is null`),
    foreignKeyTo("energy_batches", t.anchorId, energyAnchors.anchorId),
    index("energy_batches_unanchored_idx")
      .on(t.receivedAt)
      .where(sql`attestation_status = 'pending' and merkle_root is not null and anchor_id is null`),
    index("energy_batches_anchor_idx")
      .on(t.anchorId)
      .where(sql`anchor_id is not null`),
    index("energy_batches_project_rooted_idx")
      .on(t.projectId, t.receivedAt)
      .where(sql`merkle_root is not null`),
    index("energy_batches_provisional_idx")
      .on(t.receivedAt)
      .where(sql`anomaly_status = 'provisional'`),
  ],
);

export const resetReasons = ["power_cycle", "firmware", "meter_swap", "unknown"] as const;
export const measurementQualities = ["good", "estimated", "degraded"] as const;

/** The unique constraint on (device_id, reading_id): a reading id is accepted once per device. Ingest
 * recognises a concurrent duplicate by this name (energy/telemetry/ingest.ts). */
export const ENERGY_READING_ID_CONSTRAINT = "energy_readings_device_reading_uq";

/** Accepted readings (baseline readings too). Rejected readings are not stored. No foreign key to
 * energy_batches: ingest writes a batch's readings in one statement, and a check per row would slow it
 * down for nothing (both are written in the same transaction). */
export const energyReadings = pgTable(
  "energy_readings",
  {
    deviceId: text("device_id").notNull(),
    sequenceNumber: bigint("sequence_number", { mode: "number" }).notNull(),
    readingId: text("reading_id").notNull(),
    batchId: text("batch_id").notNull(),
    meterEpoch: bigint("meter_epoch", { mode: "number" }).notNull(),
    energyWhCumulative: bigint("energy_wh_cumulative", { mode: "number" }).notNull(),
    deviceTs: timestamp("device_ts", { withTimezone: true }).notNull(),
    /** device_ts minus the time the batch was received, in milliseconds. */
    deviceTsDriftMs: bigint("device_ts_drift_ms", { mode: "number" }).notNull(),
    resetReason: text("reset_reason", { enum: resetReasons }),
    measurementQuality: text("measurement_quality", { enum: measurementQualities }),
    activePowerW: bigint("active_power_w", { mode: "number" }),
    supersedesReadingId: text("supersedes_reading_id"),
    /** The reading that corrected this one (null: current). */
    supersededBy: text("superseded_by"),
    /** Average power since the previous reading of the epoch (W), the input of anomaly scores. */
    intervalPowerW: doublePrecision("interval_power_w"),
    receivedAt: timestamp("received_at", { withTimezone: true }).notNull(),
  },
  (t) => [
    primaryKey({ name: "energy_readings_pkey", columns: [t.deviceId, t.sequenceNumber] }),
    unique(ENERGY_READING_ID_CONSTRAINT).on(t.deviceId, t.readingId),
    checkOneOf("energy_readings", t.resetReason, resetReasons),
    checkOneOf("energy_readings", t.measurementQuality, measurementQualities),
  ],
);

/** Responses of telemetry batches sent with an Idempotency-Key, replayed byte for byte for 24 hours. */
export const energyIdempotencyKeys = pgTable(
  "energy_idempotency_keys",
  {
    clientId: text("client_id").notNull(),
    idempotencyKey: text("idempotency_key").notNull(),
    /** SHA-256 of the request (canonical JSON of the body), hex. */
    requestHash: text("request_hash").notNull(),
    status: integer("status").notNull(),
    responseBody: text("response_body").notNull(),
    createdAt: timestamp("created_at", { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [
    primaryKey({ name: "energy_idempotency_keys_pkey", columns: [t.clientId, t.idempotencyKey] }),
    index("energy_idempotency_keys_created_idx").on(t.createdAt),
  ],
);

/** Webhook registrations: stored and echoed, never delivered. */
export const energyWebhooks = pgTable(
  "energy_webhooks",
  {
    webhookId: text("webhook_id").primaryKey(),
    clientId: text("client_id").notNull(),
    url: text("url").notNull(),
    events: jsonb("events").$type<string[]>().notNull(),
    createdAt: timestamp("created_at", { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [foreignKeyTo("energy_webhooks", t.clientId, energyClients.clientId)],
);
