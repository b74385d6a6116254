-- Tenants, portal users, API keys; devices, quotes, orders and what follows a payment.
create table tenants (
  id text primary key,
  name text not null,
  created_at timestamptz not null default now()
);

create table users (
  id text primary key,
  tenant_id text not null references tenants (id),
  email text not null unique,
  password_hash text not null,
  name text not null,
  created_at timestamptz not null default now()
);

create table api_keys (
  id text primary key,
  tenant_id text not null references tenants (id),
  name text not null,
  role text not null check (role in ('developer', 'agent')),
  key_hash text not null unique,
  last4 text not null,
  created_by text,
  created_at timestamptz not null default now(),
  last_used_at timestamptz,
  revoked_at timestamptz
);
create index api_keys_tenant_idx on api_keys (tenant_id, created_at);

create table devices (
  id text primary key,
  tenant_id text not null references tenants (id),
  name text not null,
  device_class text not null,
  region text not null,
  tiers jsonb not null,
  chain_device_id text not null unique,
  created_at timestamptz not null default now()
);
create index devices_tenant_idx on devices (tenant_id, id);

create table quotes (
  id text primary key,
  device_id text not null references devices (id),
  chain text not null,
  token text not null,
  tier text not null,
  duration_seconds integer not null,
  amount_usd_micros bigint not null,
  token_amount numeric(78, 0) not null,
  created_at timestamptz not null default now(),
  expires_at timestamptz not null
);

create sequence order_onchain_id_seq start with 1;

create table orders (
  id text primary key,
  tenant_id text not null references tenants (id),
  device_id text not null references devices (id),
  quote_id text not null unique references quotes (id),
  chain text not null,
  chain_id integer not null,
  token text not null,
  tier text not null,
  duration_seconds integer not null,
  amount_usd_micros bigint not null,
  token_address text not null,
  split_address text not null,
  router_address text not null,
  token_amount numeric(78, 0) not null,
  onchain_id bigint not null unique,
  chain_device_id text not null,
  voucher_signature text not null,
  expires_at timestamptz not null,
  status text not null default 'pending' check (status in ('pending', 'success', 'expired')),
  rail text check (rail in ('permit', 'approval', 'cash')),
  payer text,
  tx_hash text,
  block_number bigint,
  paid_at timestamptz,
  confirmed_at timestamptz,
  split_tx_hash text,
  powered_on_at timestamptz,
  session_ends_at timestamptz,
  energy_wh bigint,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now()
);
create index orders_tenant_idx on orders (tenant_id, created_at);
create index orders_pending_expiry_idx on orders (expires_at) where status = 'pending';
create index orders_unconfirmed_idx on orders (block_number) where status = 'success' and confirmed_at is null;

create table order_events (
  id bigserial primary key,
  order_id text not null references orders (id),
  type text not null,
  data json not null,
  created_at timestamptz not null default now()
);
create index order_events_order_idx on order_events (order_id, id);

create table chain_transactions (
  id text primary key,
  kind text not null,
  ref text not null unique,
  to_address text not null,
  calldata text not null,
  status text not null default 'queued' check (status in ('queued', 'sent', 'mined', 'reverted', 'failed')),
  nonce integer,
  tx_hash text,
  raw_transaction text,
  block_number bigint,
  attempts integer not null default 0,
  last_error text,
  sent_at timestamptz,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now()
);
create index chain_transactions_status_idx on chain_transactions (status, created_at);

create table jobs (
  id bigserial primary key,
  kind text not null,
  key text not null,
  payload jsonb not null,
  run_at timestamptz not null default now(),
  attempts integer not null default 0,
  last_error text,
  done_at timestamptz,
  created_at timestamptz not null default now(),
  constraint jobs_kind_key_uq unique (kind, key)
);
create index jobs_due_idx on jobs (run_at) where done_at is null;

create table participants (
  id text primary key,
  tenant_id text not null references tenants (id),
  name text not null,
  address text not null,
  created_at timestamptz not null default now(),
  constraint participants_tenant_address_uq unique (tenant_id, address)
);

create table sync_state (
  name text primary key,
  value text not null,
  updated_at timestamptz not null default now()
);

-- The outbox: every event integrators can subscribe to, written in the same transaction as the change
-- that causes it. The webhook dispatcher fans each event out to the matching subscriptions.
create table events (
  id text primary key,
  tenant_id text not null references tenants (id),
  type text not null,
  data json not null,
  created_at timestamptz not null default now(),
  dispatched_at timestamptz
);
create index events_undispatched_idx on events (created_at) where dispatched_at is null;
create index events_tenant_idx on events (tenant_id, created_at);
