-- Webhook subscriptions and the delivery log, device online states (device.online / device.offline) and
-- customer tickets (ticket.created). The events themselves are the outbox of 0001 (table events).

create table webhook_subscriptions (
  id text primary key,
  tenant_id text not null references tenants (id),
  url text not null,
  event_types text[] not null,
  description text,
  secret_ciphertext text not null,
  secret_last4 text not null,
  status text not null default 'active' check (status in ('active', 'disabled')),
  disabled_reason text,
  disabled_at timestamptz,
  created_by text,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now()
);
create index webhook_subscriptions_tenant_idx on webhook_subscriptions (tenant_id, created_at);

create table webhook_deliveries (
  id text primary key,
  event_id text not null references events (id),
  subscription_id text not null references webhook_subscriptions (id),
  tenant_id text not null references tenants (id),
  event_type text not null,
  status text not null default 'pending' check (status in ('pending', 'succeeded', 'failed')),
  attempts integer not null default 0,
  attempt_limit integer not null default 5,
  next_attempt_at timestamptz,
  last_status_code integer,
  last_error text,
  completed_at timestamptz,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  constraint webhook_deliveries_event_subscription_uq unique (event_id, subscription_id)
);
create index webhook_deliveries_due_idx on webhook_deliveries (next_attempt_at) where status = 'pending';
create index webhook_deliveries_subscription_idx on webhook_deliveries (subscription_id, created_at);

create table webhook_attempts (
  id bigserial primary key,
  delivery_id text not null references webhook_deliveries (id),
  attempt integer not null,
  worker text not null,
  started_at timestamptz not null default now(),
  finished_at timestamptz,
  duration_ms integer,
  status_code integer,
  error text,
  response_excerpt text,
  constraint webhook_attempts_delivery_attempt_uq unique (delivery_id, attempt)
);

create table device_status (
  device_id text primary key references devices (id),
  online boolean not null,
  observed_at timestamptz not null,
  changed_at timestamptz not null
);

create table tickets (
  id text primary key,
  tenant_id text not null references tenants (id),
  device_id text not null references devices (id),
  order_id text references orders (id),
  category text not null check (category in ('no_power', 'payment', 'damaged', 'other')),
  message text not null,
  contact text,
  status text not null default 'open' check (status in ('open', 'closed')),
  created_at timestamptz not null default now()
);
create index tickets_tenant_idx on tickets (tenant_id, created_at);
