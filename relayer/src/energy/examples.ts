// Examples of the sandbox's bodies, for the OpenAPI document: drawn from its sample data (sample-data.ts), so
// an example shows what the seeded sandbox answers. schemas.ts sets its schemas' `example` from here (plain
// values: typed by the schemas, schemas and examples would be typed by each other); the capabilities report's
// example is the report itself (routes/public.ts). test/relayer/openapi-examples.test.ts checks each one
// satisfies its schema.
import { SAMPLE_DISTRIBUTIONS, SAMPLE_EVIDENCE, SAMPLE_PROJECTS, SPEC_VERSION } from "./sample-data.ts";

const { unit_token_id, ...project } = SAMPLE_PROJECTS[0];

export const PROJECT_EXAMPLE = { ...project, chain_refs: { chain: "base-sepolia", unit_token: { token_id: unit_token_id } } };

export const DEVICE_EXAMPLE = {
  device_id: "mtr-kibera-001",
  project_id: "prj_kibera_solar",
  meter_epoch: 1,
  last_sequence_number: 4320,
  last_energy_wh_cumulative: 18_544_000,
  baseline_complete: true,
};

export const DISTRIBUTION_EXAMPLE = SAMPLE_DISTRIBUTIONS[0];
export const EVIDENCE_EXAMPLE = SAMPLE_EVIDENCE[0];

export const TELEMETRY_BATCH_EXAMPLE = {
  device_id: "mtr-kibera-001",
  readings: [
    { device_ts: "2026-03-01T12:00:00Z", energy_wh_cumulative: 18_544_625, meter_epoch: 1, sequence_number: 4321, reading_id: "rd-4321" },
    {
      device_ts: "2026-03-01T12:15:00Z",
      energy_wh_cumulative: 18_545_210,
      meter_epoch: 1,
      sequence_number: 4322,
      reading_id: "rd-4322",
      active_power_w: 2340,
    },
  ],
};

export const BATCH_ACCEPTED_EXAMPLE = {
  accepted: 2,
  rejected: 0,
  batch_id: "bat_01JQ3Z6Y8X3K5V4Q9T7R2M1N0P",
  errors: [],
  verification: { signature: "absent", continuity: "ok", anomaly_score: 0.0412, anomaly_status: "provisional" },
  attestation: { status: "pending", expected_at: "2026-03-01T12:15:32Z" },
};

export const TOKEN_REQUEST_EXAMPLE = {
  grant_type: "client_credentials",
  client_id: "sandbox-client",
  client_secret: "s3cr3t-from-the-operator",
};

export const TOKEN_RESPONSE_EXAMPLE = {
  access_token: "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJzYW5kYm94LWNsaWVudCJ9.c2lnbmF0dXJl",
  token_type: "Bearer",
  expires_in: 3600,
};

export const WEBHOOK_REGISTRATION_EXAMPLE = { url: "https://example.com/hooks/energy", events: ["distribution.executed"] };

export const WEBHOOK_REGISTERED_EXAMPLE = {
  webhook_id: "whk_01JQ3Z6Y8X3K5V4Q9T7R2M1N0P",
  url: "https://example.com/hooks/energy",
  events: ["distribution.executed"],
  created_at: "2026-03-01T12:00:00Z",
  delivery: "never",
};

export const HEALTH_EXAMPLE = { status: "ok", environment: "sandbox" };
export const VERSION_EXAMPLE = { specification_version: SPEC_VERSION, api_version: "v1", environment: "sandbox" };
