CREATE TABLE "cash_confirmations" (
	"order_id" text PRIMARY KEY NOT NULL,
	"tenant_id" text NOT NULL,
	"key_id" text NOT NULL,
	"amount_usd_micros" bigint NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "tenants" ADD COLUMN "power_on_at_zero_confirmations" boolean;--> statement-breakpoint
ALTER TABLE "devices" ADD COLUMN "payout_changed_at" timestamp with time zone;--> statement-breakpoint
ALTER TABLE "cash_confirmations" ADD CONSTRAINT "cash_confirmations_order_id_fkey" FOREIGN KEY ("order_id") REFERENCES "public"."orders"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "cash_confirmations" ADD CONSTRAINT "cash_confirmations_tenant_id_fkey" FOREIGN KEY ("tenant_id") REFERENCES "public"."tenants"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "cash_confirmations_tenant_idx" ON "cash_confirmations" USING btree ("tenant_id","created_at");--> statement-breakpoint
CREATE INDEX "cash_confirmations_key_idx" ON "cash_confirmations" USING btree ("key_id","created_at");