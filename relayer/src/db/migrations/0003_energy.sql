-- The energy cash-flow sandbox (/energy/v1): OAuth clients, metered devices, telemetry batches and their
-- readings, idempotency records and webhook registrations. Projects, distributions and evidence are fixed
-- sample data in code.
create table energy_clients (
  client_id text primary key,
  name text not null,
  secret_hash text not null,
  created_at timestamptz not null default now(),
  revoked_at timestamptz
);

create table energy_devices (
  device_id text primary key,
  project_id text not null,
  name text not null,
  meter_epoch bigint not null default 0,
  last_sequence_number bigint,
  last_energy_wh_cumulative bigint,
  last_device_ts timestamptz,
  last_reading_id text,
  baseline_readings_required integer not null default 0,
  baseline_readings integer not null default 0,
  signing_public_key text,
  batch_sequence bigint not null default 0,
  power_samples bigint not null default 0,
  power_mean double precision not null default 0,
  power_m2 double precision not null default 0,
  registered_at timestamptz not null default now(),
  deregistered_at timestamptz,
  updated_at timestamptz not null default now()
);

create table energy_batches (
  batch_id text primary key,
  device_id text not null references energy_devices (device_id),
  project_id text not null,
  client_id text not null references energy_clients (client_id),
  batch_sequence bigint,
  readings integer not null,
  rejected integer not null,
  first_sequence_number bigint,
  last_sequence_number bigint,
  continuity text not null check (continuity in ('ok', 'gap', 'regression')),
  signature text not null check (signature in ('valid', 'invalid', 'absent')),
  anomaly_score double precision not null,
  anomaly_status text not null check (anomaly_status in ('provisional', 'confirmed')),
  attestation_status text not null check (attestation_status in ('pending', 'anchored', 'failed', 'not_attested')),
  expected_at timestamptz,
  merkle_root text,
  anchor_tx_hash text,
  anchor_block_number bigint,
  anchor_error text,
  received_at timestamptz not null default now(),
  anchored_at timestamptz,
  anomaly_confirmed_at timestamptz,
  constraint energy_batches_device_sequence_uq unique (device_id, batch_sequence)
);
create index energy_batches_unrooted_idx on energy_batches (received_at)
  where attestation_status = 'pending' and merkle_root is null;
create index energy_batches_project_rooted_idx on energy_batches (project_id, received_at) where merkle_root is not null;
create index energy_batches_provisional_idx on energy_batches (received_at) where anomaly_status = 'provisional';

-- No foreign key to energy_batches: ingest writes a batch's readings in one statement, and a check per row
-- would slow it down for nothing (both are written in the same transaction).
create table energy_readings (
  device_id text not null,
  sequence_number bigint not null,
  reading_id text not null,
  batch_id text not null,
  meter_epoch bigint not null,
  energy_wh_cumulative bigint not null,
  device_ts timestamptz not null,
  device_ts_drift_ms bigint not null,
  reset_reason text check (reset_reason in ('power_cycle', 'firmware', 'meter_swap', 'unknown')),
  measurement_quality text check (measurement_quality in ('good', 'estimated', 'degraded')),
  active_power_w bigint,
  supersedes_reading_id text,
  superseded_by text,
  interval_power_w double precision,
  received_at timestamptz not null,
  constraint energy_readings_pkey primary key (device_id, sequence_number),
  constraint energy_readings_device_reading_uq unique (device_id, reading_id)
);

create table energy_idempotency_keys (
  client_id text not null,
  idempotency_key text not null,
  request_hash text not null,
  status integer not null,
  response_body text not null,
  created_at timestamptz not null default now(),
  constraint energy_idempotency_keys_pkey primary key (client_id, idempotency_key)
);
create index energy_idempotency_keys_created_idx on energy_idempotency_keys (created_at);

create table energy_webhooks (
  webhook_id text primary key,
  client_id text not null references energy_clients (client_id),
  url text not null,
  events jsonb not null,
  created_at timestamptz not null default now()
);
