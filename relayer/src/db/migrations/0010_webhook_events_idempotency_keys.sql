CREATE TABLE "idempotency_keys" (
	"scope" text NOT NULL,
	"idempotency_key" text NOT NULL,
	"request_hash" text NOT NULL,
	"response_status" integer,
	"response_headers" json,
	"response_body" text,
	"locked_until" timestamp with time zone,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "idempotency_keys_pkey" PRIMARY KEY("scope","idempotency_key")
);
--> statement-breakpoint
CREATE TABLE "device_usage" (
	"device_id" text PRIMARY KEY NOT NULL,
	"region" text NOT NULL,
	"power_sessions" integer DEFAULT 0 NOT NULL,
	"energy_wh" bigint DEFAULT 0 NOT NULL,
	"last_powered_on_at" timestamp with time zone
);
--> statement-breakpoint
CREATE TABLE "region_usage" (
	"region" text PRIMARY KEY NOT NULL,
	"devices" integer DEFAULT 0 NOT NULL,
	"power_sessions" bigint DEFAULT 0 NOT NULL,
	"energy_wh" bigint DEFAULT 0 NOT NULL,
	"volume_usd_micros" bigint DEFAULT 0 NOT NULL
);
--> statement-breakpoint
CREATE TABLE "webhook_delivery_counts" (
	"subscription_id" text PRIMARY KEY NOT NULL,
	"pending" integer DEFAULT 0 NOT NULL,
	"succeeded" integer DEFAULT 0 NOT NULL,
	"failed" integer DEFAULT 0 NOT NULL,
	"last_activity_at" timestamp with time zone
);
--> statement-breakpoint
ALTER TABLE "events" RENAME TO "webhook_events";--> statement-breakpoint
ALTER TABLE "webhook_events" RENAME CONSTRAINT "events_pkey" TO "webhook_events_pkey";--> statement-breakpoint
ALTER TABLE "webhook_events" DROP CONSTRAINT "events_tenant_id_fkey";
--> statement-breakpoint
ALTER TABLE "webhook_deliveries" DROP CONSTRAINT "webhook_deliveries_event_id_fkey";
--> statement-breakpoint
DROP INDEX "events_undispatched_idx";--> statement-breakpoint
DROP INDEX "events_tenant_idx";--> statement-breakpoint
ALTER TABLE "webhook_subscriptions" ADD COLUMN "archived_at" timestamp with time zone;--> statement-breakpoint
ALTER TABLE "device_usage" ADD CONSTRAINT "device_usage_device_id_fkey" FOREIGN KEY ("device_id") REFERENCES "public"."devices"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "webhook_delivery_counts" ADD CONSTRAINT "webhook_delivery_counts_subscription_id_fkey" FOREIGN KEY ("subscription_id") REFERENCES "public"."webhook_subscriptions"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "idempotency_keys_created_idx" ON "idempotency_keys" USING btree ("created_at");--> statement-breakpoint
CREATE INDEX "device_usage_last_powered_on_idx" ON "device_usage" USING btree ("last_powered_on_at","region");--> statement-breakpoint
ALTER TABLE "webhook_events" ADD CONSTRAINT "webhook_events_tenant_id_fkey" FOREIGN KEY ("tenant_id") REFERENCES "public"."tenants"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "webhook_deliveries" ADD CONSTRAINT "webhook_deliveries_event_id_fkey" FOREIGN KEY ("event_id") REFERENCES "public"."webhook_events"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "webhook_events_undispatched_idx" ON "webhook_events" USING btree ("created_at") WHERE dispatched_at is null;--> statement-breakpoint
CREATE INDEX "webhook_events_tenant_idx" ON "webhook_events" USING btree ("tenant_id","id");--> statement-breakpoint
CREATE INDEX "webhook_events_tenant_type_idx" ON "webhook_events" USING btree ("tenant_id","type","id");--> statement-breakpoint
CREATE INDEX "webhook_events_tenant_family_idx" ON "webhook_events" USING btree ("tenant_id",split_part("type", '.', 1),"id");