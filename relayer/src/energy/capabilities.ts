// GET /capabilities: what this environment implements, simulates and omits, built from the same constants
// and deployment the code runs with.
import type { Services } from "../services.ts";
import { MAX_BATCHES_PER_ANCHOR } from "./anchoring/anchor-worker.ts";
import { BATCH_LEAF_ENCODING, LEAF_ENCODING } from "./anchoring/merkle.ts";
import { IDEMPOTENCY_KEY_MAX_LENGTH } from "./telemetry/idempotency.ts";
import { ANCHOR_EXPECTED_SECONDS } from "./telemetry/ingest.ts";
import { MIN_HISTORY, Z_AT_SCORE_ONE } from "./telemetry/anomaly.ts";
import {
  SAMPLE_ANCHOR_CHAIN,
  SAMPLE_DISTRIBUTIONS,
  SAMPLE_ENERGY_DEVICES,
  SAMPLE_EVIDENCE,
  SAMPLE_PROJECTS,
  SPEC_VERSION,
  liveEvidenceRef,
} from "./sample-data.ts";
import {
  DRIFT_LIMIT_SECONDS,
  IDEMPOTENCY_RETENTION_SECONDS,
  MAX_READINGS_PER_BATCH,
  SMALL_BODY_BYTES,
  TELEMETRY_MAX_BODY_BYTES,
  TOKEN_LIFETIME_SECONDS,
  TOKEN_RATE_BURST,
  TOKEN_RATE_PER_MINUTE,
} from "./schemas.ts";

type Item = { name: string; description: string };

function deviceNote(d: (typeof SAMPLE_ENERGY_DEVICES)[number]): string {
  if (d.deregistered) return "deregistered: 404 device_not_found";
  if (d.baselineReadings < d.baselineReadingsRequired) {
    return `in its baseline window (${d.baselineReadings} of ${d.baselineReadingsRequired} readings): 409 baseline_incomplete until it completes`;
  }
  if (d.signingPublicKey) return "has a registered Ed25519 key: Device-Signature is verified";
  return "registered";
}

export function capabilities(services: Services) {
  const { config, chain } = services;
  const anchor = chain.deployment.contracts.TelemetryAnchor?.address ?? null;
  const signed = SAMPLE_ENERGY_DEVICES.filter((d) => d.signingPublicKey).map((d) => d.deviceId);

  const implementsList: Item[] = [
    { name: "public_routes", description: "GET /health, GET /version (specification 0.2.0) and GET /capabilities, without a token." },
    {
      name: "oauth_client_credentials",
      description: `POST /auth/token, form-urlencoded client_credentials grant; the client authenticates with client_id and client_secret in the form or by HTTP Basic (client_secret_basic), one of the two. Access tokens are HS256 JWTs valid ${TOKEN_LIFETIME_SECONDS} s. Client secrets are stored as SHA-256 hashes.`,
    },
    {
      name: "bearer_authentication",
      description:
        "Every route but the four public ones needs Authorization: Bearer <token>; a missing, malformed, expired or unknown token is 401 unauthorized.",
    },
    {
      name: "error_envelope",
      description:
        'Every error is {"error": {"svc_code", "message"}, "environment": "sandbox"}, unknown routes (404 not_found) and bodies that are not JSON (400 invalid_request) included.',
    },
    {
      name: "telemetry_ingest",
      description:
        "POST /telemetry:batch validates every reading field (400 invalid_request), rejects unknown or deregistered devices " +
        "(404 device_not_found), stores readings in its baseline window without attesting them (409 baseline_incomplete), " +
        "rejects counter regressions within a meter_epoch (per reading; 422 counter_regression when no reading is accepted), " +
        "resets the counter on a higher meter_epoch (reset_reason recorded), reports sequence gaps, flags device_ts drift " +
        `beyond ±${DRIFT_LIMIT_SECONDS} s, and applies corrections (supersedes_reading_id). Accepted readings are committed before the 200.`,
    },
    {
      name: "device_records",
      description:
        "GET /devices/{device_id}: meter_epoch, last_sequence_number, last_energy_wh_cumulative and baseline_complete follow the accepted readings.",
    },
    {
      name: "idempotency",
      description: `Idempotency-Key on POST /telemetry:batch (per client, 1-${IDEMPOTENCY_KEY_MAX_LENGTH} visible ASCII characters, kept ${IDEMPOTENCY_RETENTION_SECONDS / 3600} h): a replay returns the original status and body byte for byte (header Idempotent-Replayed: true); the same key with another body is 422 idempotency_key_reused.`,
    },
    {
      name: "anomaly_scoring",
      description:
        `Interval power of each reading against the device's running mean and standard deviation: z = |p - mean| / max(std, 5% of |mean|, 1 W), ` +
        `score = min(1, max z / ${Z_AT_SCORE_ONE}); 0 with fewer than ${MIN_HISTORY} intervals of history. Provisional at ingest; a background worker ` +
        `confirms it after ${config.ENERGY_ANOMALY_CONFIRM_SECONDS} s against the history at that time.`,
    },
    ...(anchor
      ? [
          {
            name: "attestation",
            description:
              `The readings of each attested batch become a Merkle tree (OpenZeppelin standard tree, leaves bound to chain id, project, ` +
              `device and batch sequence), the batch root. The batches waiting (up to ${MAX_BATCHES_PER_ANCHOR}) become the leaves of a ` +
              `batches tree whose root TelemetryAnchor ${anchor} anchors on ${config.CHAIN_NAME} (chain id ${chain.chainId}) in one ` +
              `transaction, one at a time: asynchronously (expected within ${ANCHOR_EXPECTED_SECONDS} s). The status (pending, anchored, ` +
              "failed), the batches root and the batch's proof show in the energy cluster of the project's latest evidence, and on " +
              "chain in TelemetryAnchor's BatchesAnchored event.",
          },
        ]
      : []),
    {
      name: "device_signatures",
      description: `Ed25519 signatures of the exact request body in the Device-Signature header (base64), verified for devices with a registered public key (${signed.join(", ")}): valid, or 401 signature_invalid.`,
    },
    { name: "webhook_registration", description: "POST /webhooks validates {url, events}, stores the registration and echoes it (201)." },
    {
      name: "rate_limiting",
      description:
        `POST /auth/token: a burst of ${TOKEN_RATE_BURST} requests per client address, then ${TOKEN_RATE_PER_MINUTE} a minute. ` +
        `POST /telemetry:batch: a burst of ${config.ENERGY_INGEST_BURST} batches per OAuth client, then ${config.ENERGY_INGEST_PER_SECOND} a second ` +
        "(per relayer process). Beyond either, 429 rate_limited with Retry-After (seconds). No other route is rate-limited.",
    },
  ];

  const simulates: Item[] = [
    { name: "projects", description: "Fixed sample projects; their figures do not follow telemetry." },
    { name: "distributions", description: "Fixed sample distributions (status executed); the waterfall legs sum to gross_minor." },
    {
      name: "evidence",
      description:
        `Fixed sample evidence. Historical energy anchors are illustrative (chain "${SAMPLE_ANCHOR_CHAIN}", on no chain); each project's ` +
        "latest evidence shows its latest attested batch once there is one. Legal, settlement and distribution clusters are sample references.",
    },
    { name: "unit_tokens", description: "chain_refs.unit_token.token_id is a sample value; no unit token contract exists." },
    {
      name: "devices",
      description: "The sample devices are registered by seeding; their history before the sandbox started is a sample record.",
    },
    {
      name: "device_signatures",
      description:
        "Devices without a registered key are not verified: verification.signature is absent for them, whether or not a signature is sent.",
    },
  ];

  const omits: Item[] = [
    { name: "webhook_delivery", description: "Registrations are never delivered to; no event is emitted." },
    { name: "device_management", description: "No route registers or deregisters devices or their keys." },
    { name: "client_management", description: "Client credentials are issued by seeding only; tokens carry no scopes." },
    {
      name: "production_signing_rules",
      description: "Transport, canonical serialisation, algorithm choice and key rotation of production device signing.",
    },
    {
      name: "confirmed_anomaly_readback",
      description: "The confirmed anomaly status is recorded, but no route of this interface returns it after ingest.",
    },
    {
      name: "wider_interface",
      description: "Routes of the wider interface are not callable: anything but the ten routes is 404 not_found.",
    },
    ...(anchor ? [] : [{ name: "attestation", description: "No TelemetryAnchor in this deployment: attested batches fail." }]),
  ];

  return {
    environment: "sandbox" as const,
    specification_version: SPEC_VERSION as typeof SPEC_VERSION,
    implements: implementsList,
    simulates,
    omits,
    limits: {
      min_readings_per_batch: 1,
      max_readings_per_batch: MAX_READINGS_PER_BATCH,
      max_telemetry_body_bytes: TELEMETRY_MAX_BODY_BYTES,
      max_body_bytes: SMALL_BODY_BYTES,
      device_ts_drift_seconds: DRIFT_LIMIT_SECONDS,
      token_lifetime_seconds: TOKEN_LIFETIME_SECONDS,
      idempotency_key_max_length: IDEMPOTENCY_KEY_MAX_LENGTH,
      idempotency_key_retention_seconds: IDEMPOTENCY_RETENTION_SECONDS,
      rate_limits: {
        auth_token: { burst: TOKEN_RATE_BURST, per_minute: TOKEN_RATE_PER_MINUTE },
        telemetry_batch: { burst: config.ENERGY_INGEST_BURST, per_second: config.ENERGY_INGEST_PER_SECOND },
      },
    },
    anchoring: {
      chain: config.CHAIN_NAME,
      chain_id: chain.chainId,
      contract: anchor,
      leaf_encoding: [...LEAF_ENCODING],
      leaf_values: [
        "chain id",
        "keccak256(project_id)",
        "keccak256(device_id)",
        "batch sequence (the device's attested batches, from 1)",
        "reading_id",
        "sequence_number",
        "meter_epoch",
        "energy_wh_cumulative",
        "device_ts in Unix milliseconds",
        'supersedes_reading_id ("" if none)',
      ],
      batch_leaf_encoding: [...BATCH_LEAF_ENCODING],
      batch_leaf_values: [
        "keccak256(device's project_id)",
        "keccak256(device_id)",
        "batch sequence",
        "batch root (merkle_root)",
        "readings (the batch's leaves)",
      ],
      max_batches_per_anchor: MAX_BATCHES_PER_ANCHOR,
      how_to_verify:
        "A reading is verified on chain with TelemetryAnchor.verifyReading(reading, readingProof, batch, batchProof), a view. " +
        'reading: the reading\'s fields as sent (device_ts in Unix milliseconds, supersedes_reading_id or ""). readingProof: ' +
        "its proof in the batch's tree, rebuilt from the batch's readings (leaf_encoding). batch: {projectId: keccak256(project_id), " +
        "deviceId: keccak256(energy_evidence.device_id), root: energy_evidence.merkle_root, batchSequence: " +
        "energy_evidence.batch_sequence, readings: energy_evidence.readings}. batchProof: energy_evidence.anchor.batch_proof. " +
        "It is true once energy_evidence.anchor.batches_root is anchored (TelemetryAnchor.isAnchored, event BatchesAnchored).",
    },
    sample_data: {
      projects: SAMPLE_PROJECTS.map((p) => p.project_id),
      devices: SAMPLE_ENERGY_DEVICES.map((d) => ({ device_id: d.deviceId, note: deviceNote(d) })),
      distributions: SAMPLE_DISTRIBUTIONS.map((d) => d.distribution_id),
      evidence: SAMPLE_EVIDENCE.map((e) => ({ evidence_ref: e.evidence_ref, live: liveEvidenceRef(e.project_id) === e.evidence_ref })),
    },
  };
}
