CREATE SEQUENCE "public"."order_onchain_id_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 9223372036854775807 START WITH 1 CACHE 1;--> statement-breakpoint
CREATE TABLE "api_keys" (
	"id" text PRIMARY KEY NOT NULL,
	"tenant_id" text NOT NULL,
	"name" text NOT NULL,
	"role" text NOT NULL,
	"key_hash" text NOT NULL,
	"last4" text NOT NULL,
	"created_by" text,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"last_used_at" timestamp with time zone,
	"revoked_at" timestamp with time zone,
	CONSTRAINT "api_keys_key_hash_key" UNIQUE("key_hash"),
	CONSTRAINT "api_keys_role_check" CHECK ("role" in ('developer', 'agent'))
);
--> statement-breakpoint
CREATE TABLE "tenants" (
	"id" text PRIMARY KEY NOT NULL,
	"name" text NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "users" (
	"id" text PRIMARY KEY NOT NULL,
	"tenant_id" text NOT NULL,
	"email" text NOT NULL,
	"password_hash" text NOT NULL,
	"name" text NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "users_email_key" UNIQUE("email")
);
--> statement-breakpoint
CREATE TABLE "events" (
	"id" text PRIMARY KEY NOT NULL,
	"tenant_id" text NOT NULL,
	"type" text NOT NULL,
	"data" json NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"dispatched_at" timestamp with time zone
);
--> statement-breakpoint
CREATE TABLE "chain_transactions" (
	"id" text PRIMARY KEY NOT NULL,
	"kind" text NOT NULL,
	"ref" text NOT NULL,
	"to_address" text NOT NULL,
	"calldata" text NOT NULL,
	"status" text DEFAULT 'queued' NOT NULL,
	"nonce" integer,
	"tx_hash" text,
	"raw_transaction" text,
	"block_number" bigint,
	"attempts" integer DEFAULT 0 NOT NULL,
	"last_error" text,
	"sent_at" timestamp with time zone,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "chain_transactions_ref_key" UNIQUE("ref"),
	CONSTRAINT "chain_transactions_status_check" CHECK ("status" in ('queued', 'sent', 'mined', 'reverted', 'failed'))
);
--> statement-breakpoint
CREATE TABLE "devices" (
	"id" text PRIMARY KEY NOT NULL,
	"tenant_id" text NOT NULL,
	"name" text NOT NULL,
	"device_class" text NOT NULL,
	"region" text NOT NULL,
	"tiers" jsonb NOT NULL,
	"chain_device_id" text NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "devices_chain_device_id_key" UNIQUE("chain_device_id")
);
--> statement-breakpoint
CREATE TABLE "jobs" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"kind" text NOT NULL,
	"key" text NOT NULL,
	"payload" jsonb NOT NULL,
	"run_at" timestamp with time zone DEFAULT now() NOT NULL,
	"attempts" integer DEFAULT 0 NOT NULL,
	"last_error" text,
	"done_at" timestamp with time zone,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "jobs_kind_key_uq" UNIQUE("kind","key")
);
--> statement-breakpoint
CREATE TABLE "order_events" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"order_id" text NOT NULL,
	"type" text NOT NULL,
	"data" json NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "orders" (
	"id" text PRIMARY KEY NOT NULL,
	"tenant_id" text NOT NULL,
	"device_id" text NOT NULL,
	"quote_id" text NOT NULL,
	"chain" text NOT NULL,
	"chain_id" integer NOT NULL,
	"token" text NOT NULL,
	"tier" text NOT NULL,
	"duration_seconds" integer NOT NULL,
	"amount_usd_micros" bigint NOT NULL,
	"token_address" text NOT NULL,
	"split_address" text NOT NULL,
	"router_address" text NOT NULL,
	"token_amount" numeric(78, 0) NOT NULL,
	"onchain_id" bigint NOT NULL,
	"chain_device_id" text NOT NULL,
	"voucher_signature" text NOT NULL,
	"expires_at" timestamp with time zone NOT NULL,
	"status" text DEFAULT 'pending' NOT NULL,
	"rail" text,
	"payer" text,
	"tx_hash" text,
	"block_number" bigint,
	"paid_at" timestamp with time zone,
	"confirmed_at" timestamp with time zone,
	"split_tx_hash" text,
	"powered_on_at" timestamp with time zone,
	"session_ends_at" timestamp with time zone,
	"energy_wh" bigint,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "orders_quote_id_key" UNIQUE("quote_id"),
	CONSTRAINT "orders_onchain_id_key" UNIQUE("onchain_id"),
	CONSTRAINT "orders_status_check" CHECK ("status" in ('pending', 'success', 'expired')),
	CONSTRAINT "orders_rail_check" CHECK ("rail" in ('permit', 'approval', 'cash'))
);
--> statement-breakpoint
CREATE TABLE "participants" (
	"id" text PRIMARY KEY NOT NULL,
	"tenant_id" text NOT NULL,
	"name" text NOT NULL,
	"address" text NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "participants_tenant_address_uq" UNIQUE("tenant_id","address")
);
--> statement-breakpoint
CREATE TABLE "quotes" (
	"id" text PRIMARY KEY NOT NULL,
	"device_id" text NOT NULL,
	"chain" text NOT NULL,
	"token" text NOT NULL,
	"tier" text NOT NULL,
	"duration_seconds" integer NOT NULL,
	"amount_usd_micros" bigint NOT NULL,
	"token_amount" numeric(78, 0) NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"expires_at" timestamp with time zone NOT NULL
);
--> statement-breakpoint
CREATE TABLE "sync_state" (
	"name" text PRIMARY KEY NOT NULL,
	"value" text NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "device_status" (
	"device_id" text PRIMARY KEY NOT NULL,
	"online" boolean NOT NULL,
	"observed_at" timestamp with time zone NOT NULL,
	"changed_at" timestamp with time zone NOT NULL
);
--> statement-breakpoint
CREATE TABLE "tickets" (
	"id" text PRIMARY KEY NOT NULL,
	"tenant_id" text NOT NULL,
	"device_id" text NOT NULL,
	"order_id" text,
	"category" text NOT NULL,
	"message" text NOT NULL,
	"contact" text,
	"status" text DEFAULT 'open' NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "tickets_category_check" CHECK ("category" in ('no_power', 'payment', 'damaged', 'other')),
	CONSTRAINT "tickets_status_check" CHECK ("status" in ('open', 'closed'))
);
--> statement-breakpoint
CREATE TABLE "webhook_attempts" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"delivery_id" text NOT NULL,
	"attempt" integer NOT NULL,
	"worker" text NOT NULL,
	"started_at" timestamp with time zone DEFAULT now() NOT NULL,
	"finished_at" timestamp with time zone,
	"duration_ms" integer,
	"status_code" integer,
	"error" text,
	"response_excerpt" text,
	CONSTRAINT "webhook_attempts_delivery_attempt_uq" UNIQUE("delivery_id","attempt")
);
--> statement-breakpoint
CREATE TABLE "webhook_deliveries" (
	"id" text PRIMARY KEY NOT NULL,
	"event_id" text NOT NULL,
	"subscription_id" text NOT NULL,
	"tenant_id" text NOT NULL,
	"event_type" text NOT NULL,
	"status" text DEFAULT 'pending' NOT NULL,
	"attempts" integer DEFAULT 0 NOT NULL,
	"attempt_limit" integer DEFAULT 5 NOT NULL,
	"next_attempt_at" timestamp with time zone,
	"last_status_code" integer,
	"last_error" text,
	"completed_at" timestamp with time zone,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "webhook_deliveries_event_subscription_uq" UNIQUE("event_id","subscription_id"),
	CONSTRAINT "webhook_deliveries_status_check" CHECK ("status" in ('pending', 'succeeded', 'failed'))
);
--> statement-breakpoint
CREATE TABLE "webhook_subscriptions" (
	"id" text PRIMARY KEY NOT NULL,
	"tenant_id" text NOT NULL,
	"url" text NOT NULL,
	"event_types" text[] NOT NULL,
	"description" text,
	"secret_ciphertext" text NOT NULL,
	"secret_last4" text NOT NULL,
	"status" text DEFAULT 'active' NOT NULL,
	"disabled_reason" text,
	"disabled_at" timestamp with time zone,
	"created_by" text,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "webhook_subscriptions_status_check" CHECK ("status" in ('active', 'disabled'))
);
--> statement-breakpoint
CREATE TABLE "energy_batches" (
	"batch_id" text PRIMARY KEY NOT NULL,
	"device_id" text NOT NULL,
	"project_id" text NOT NULL,
	"client_id" text NOT NULL,
	"batch_sequence" bigint,
	"readings" integer NOT NULL,
	"rejected" integer NOT NULL,
	"first_sequence_number" bigint,
	"last_sequence_number" bigint,
	"continuity" text NOT NULL,
	"signature" text NOT NULL,
	"anomaly_score" double precision NOT NULL,
	"anomaly_status" text NOT NULL,
	"attestation_status" text NOT NULL,
	"expected_at" timestamp with time zone,
	"merkle_root" text,
	"anchor_tx_hash" text,
	"anchor_block_number" bigint,
	"anchor_error" text,
	"received_at" timestamp with time zone DEFAULT now() NOT NULL,
	"anchored_at" timestamp with time zone,
	"anomaly_confirmed_at" timestamp with time zone,
	CONSTRAINT "energy_batches_device_sequence_uq" UNIQUE("device_id","batch_sequence"),
	CONSTRAINT "energy_batches_continuity_check" CHECK ("continuity" in ('ok', 'gap', 'regression')),
	CONSTRAINT "energy_batches_signature_check" CHECK ("signature" in ('valid', 'invalid', 'absent')),
	CONSTRAINT "energy_batches_anomaly_status_check" CHECK ("anomaly_status" in ('provisional', 'confirmed')),
	CONSTRAINT "energy_batches_attestation_status_check" CHECK ("attestation_status" in ('pending', 'anchored', 'failed', 'not_attested'))
);
--> statement-breakpoint
CREATE TABLE "energy_clients" (
	"client_id" text PRIMARY KEY NOT NULL,
	"name" text NOT NULL,
	"secret_hash" text NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"revoked_at" timestamp with time zone
);
--> statement-breakpoint
CREATE TABLE "energy_devices" (
	"device_id" text PRIMARY KEY NOT NULL,
	"project_id" text NOT NULL,
	"name" text NOT NULL,
	"meter_epoch" bigint DEFAULT 0 NOT NULL,
	"last_sequence_number" bigint,
	"last_energy_wh_cumulative" bigint,
	"last_device_ts" timestamp with time zone,
	"last_reading_id" text,
	"baseline_readings_required" integer DEFAULT 0 NOT NULL,
	"baseline_readings" integer DEFAULT 0 NOT NULL,
	"signing_public_key" text,
	"batch_sequence" bigint DEFAULT 0 NOT NULL,
	"power_samples" bigint DEFAULT 0 NOT NULL,
	"power_mean" double precision DEFAULT 0 NOT NULL,
	"power_m2" double precision DEFAULT 0 NOT NULL,
	"registered_at" timestamp with time zone DEFAULT now() NOT NULL,
	"deregistered_at" timestamp with time zone,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "energy_idempotency_keys" (
	"client_id" text NOT NULL,
	"idempotency_key" text NOT NULL,
	"request_hash" text NOT NULL,
	"status" integer NOT NULL,
	"response_body" text NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "energy_idempotency_keys_pkey" PRIMARY KEY("client_id","idempotency_key")
);
--> statement-breakpoint
CREATE TABLE "energy_readings" (
	"device_id" text NOT NULL,
	"sequence_number" bigint NOT NULL,
	"reading_id" text NOT NULL,
	"batch_id" text NOT NULL,
	"meter_epoch" bigint NOT NULL,
	"energy_wh_cumulative" bigint NOT NULL,
	"device_ts" timestamp with time zone NOT NULL,
	"device_ts_drift_ms" bigint NOT NULL,
	"reset_reason" text,
	"measurement_quality" text,
	"active_power_w" bigint,
	"supersedes_reading_id" text,
	"superseded_by" text,
	"interval_power_w" double precision,
	"received_at" timestamp with time zone NOT NULL,
	CONSTRAINT "energy_readings_pkey" PRIMARY KEY("device_id","sequence_number"),
	CONSTRAINT "energy_readings_device_reading_uq" UNIQUE("device_id","reading_id"),
	CONSTRAINT "energy_readings_reset_reason_check" CHECK ("reset_reason" in ('power_cycle', 'firmware', 'meter_swap', 'unknown')),
	CONSTRAINT "energy_readings_measurement_quality_check" CHECK ("measurement_quality" in ('good', 'estimated', 'degraded'))
);
--> statement-breakpoint
CREATE TABLE "energy_webhooks" (
	"webhook_id" text PRIMARY KEY NOT NULL,
	"client_id" text NOT NULL,
	"url" text NOT NULL,
	"events" jsonb NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "api_keys" ADD CONSTRAINT "api_keys_tenant_id_fkey" FOREIGN KEY ("tenant_id") REFERENCES "public"."tenants"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "users" ADD CONSTRAINT "users_tenant_id_fkey" FOREIGN KEY ("tenant_id") REFERENCES "public"."tenants"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "events" ADD CONSTRAINT "events_tenant_id_fkey" FOREIGN KEY ("tenant_id") REFERENCES "public"."tenants"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "devices" ADD CONSTRAINT "devices_tenant_id_fkey" FOREIGN KEY ("tenant_id") REFERENCES "public"."tenants"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "order_events" ADD CONSTRAINT "order_events_order_id_fkey" FOREIGN KEY ("order_id") REFERENCES "public"."orders"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "orders" ADD CONSTRAINT "orders_tenant_id_fkey" FOREIGN KEY ("tenant_id") REFERENCES "public"."tenants"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "orders" ADD CONSTRAINT "orders_device_id_fkey" FOREIGN KEY ("device_id") REFERENCES "public"."devices"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "orders" ADD CONSTRAINT "orders_quote_id_fkey" FOREIGN KEY ("quote_id") REFERENCES "public"."quotes"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "participants" ADD CONSTRAINT "participants_tenant_id_fkey" FOREIGN KEY ("tenant_id") REFERENCES "public"."tenants"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "quotes" ADD CONSTRAINT "quotes_device_id_fkey" FOREIGN KEY ("device_id") REFERENCES "public"."devices"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "device_status" ADD CONSTRAINT "device_status_device_id_fkey" FOREIGN KEY ("device_id") REFERENCES "public"."devices"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "tickets" ADD CONSTRAINT "tickets_tenant_id_fkey" FOREIGN KEY ("tenant_id") REFERENCES "public"."tenants"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "tickets" ADD CONSTRAINT "tickets_device_id_fkey" FOREIGN KEY ("device_id") REFERENCES "public"."devices"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "tickets" ADD CONSTRAINT "tickets_order_id_fkey" FOREIGN KEY ("order_id") REFERENCES "public"."orders"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "webhook_attempts" ADD CONSTRAINT "webhook_attempts_delivery_id_fkey" FOREIGN KEY ("delivery_id") REFERENCES "public"."webhook_deliveries"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "webhook_deliveries" ADD CONSTRAINT "webhook_deliveries_event_id_fkey" FOREIGN KEY ("event_id") REFERENCES "public"."events"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "webhook_deliveries" ADD CONSTRAINT "webhook_deliveries_subscription_id_fkey" FOREIGN KEY ("subscription_id") REFERENCES "public"."webhook_subscriptions"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "webhook_deliveries" ADD CONSTRAINT "webhook_deliveries_tenant_id_fkey" FOREIGN KEY ("tenant_id") REFERENCES "public"."tenants"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "webhook_subscriptions" ADD CONSTRAINT "webhook_subscriptions_tenant_id_fkey" FOREIGN KEY ("tenant_id") REFERENCES "public"."tenants"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "energy_batches" ADD CONSTRAINT "energy_batches_device_id_fkey" FOREIGN KEY ("device_id") REFERENCES "public"."energy_devices"("device_id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "energy_batches" ADD CONSTRAINT "energy_batches_client_id_fkey" FOREIGN KEY ("client_id") REFERENCES "public"."energy_clients"("client_id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "energy_webhooks" ADD CONSTRAINT "energy_webhooks_client_id_fkey" FOREIGN KEY ("client_id") REFERENCES "public"."energy_clients"("client_id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "api_keys_tenant_idx" ON "api_keys" USING btree ("tenant_id","created_at");--> statement-breakpoint
CREATE INDEX "events_undispatched_idx" ON "events" USING btree ("created_at") WHERE dispatched_at is null;--> statement-breakpoint
CREATE INDEX "events_tenant_idx" ON "events" USING btree ("tenant_id","created_at");--> statement-breakpoint
CREATE INDEX "chain_transactions_status_idx" ON "chain_transactions" USING btree ("status","created_at");--> statement-breakpoint
CREATE INDEX "devices_tenant_idx" ON "devices" USING btree ("tenant_id","id");--> statement-breakpoint
CREATE INDEX "jobs_due_idx" ON "jobs" USING btree ("run_at") WHERE done_at is null;--> statement-breakpoint
CREATE INDEX "order_events_order_idx" ON "order_events" USING btree ("order_id","id");--> statement-breakpoint
CREATE INDEX "orders_tenant_idx" ON "orders" USING btree ("tenant_id","created_at");--> statement-breakpoint
CREATE INDEX "orders_pending_expiry_idx" ON "orders" USING btree ("expires_at") WHERE status = 'pending';--> statement-breakpoint
CREATE INDEX "orders_unconfirmed_idx" ON "orders" USING btree ("block_number") WHERE status = 'success' and confirmed_at is null;--> statement-breakpoint
CREATE INDEX "tickets_tenant_idx" ON "tickets" USING btree ("tenant_id","created_at");--> statement-breakpoint
CREATE INDEX "webhook_deliveries_due_idx" ON "webhook_deliveries" USING btree ("next_attempt_at") WHERE status = 'pending';--> statement-breakpoint
CREATE INDEX "webhook_deliveries_subscription_idx" ON "webhook_deliveries" USING btree ("subscription_id","created_at");--> statement-breakpoint
CREATE INDEX "webhook_subscriptions_tenant_idx" ON "webhook_subscriptions" USING btree ("tenant_id","created_at");--> statement-breakpoint
CREATE INDEX "energy_batches_unrooted_idx" ON "energy_batches" USING btree ("received_at") WHERE attestation_status = 'pending' and merkle_root is null;--> statement-breakpoint
CREATE INDEX "energy_batches_project_rooted_idx" ON "energy_batches" USING btree ("project_id","received_at") WHERE merkle_root is not null;--> statement-breakpoint
CREATE INDEX "energy_batches_provisional_idx" ON "energy_batches" USING btree ("received_at") WHERE anomaly_status = 'provisional';--> statement-breakpoint
CREATE INDEX "energy_idempotency_keys_created_idx" ON "energy_idempotency_keys" USING btree ("created_at");