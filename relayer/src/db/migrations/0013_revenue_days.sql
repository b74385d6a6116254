CREATE TABLE "device_revenue_days" (
	"tenant_id" text NOT NULL,
	"day" date NOT NULL,
	"device_id" text NOT NULL,
	"orders" integer DEFAULT 0 NOT NULL,
	"amount_usd_micros" bigint DEFAULT 0 NOT NULL,
	CONSTRAINT "device_revenue_days_pkey" PRIMARY KEY("tenant_id","day","device_id")
);
--> statement-breakpoint
CREATE TABLE "tenant_revenue_days" (
	"tenant_id" text NOT NULL,
	"day" date NOT NULL,
	"orders" integer DEFAULT 0 NOT NULL,
	"amount_usd_micros" bigint DEFAULT 0 NOT NULL,
	CONSTRAINT "tenant_revenue_days_pkey" PRIMARY KEY("tenant_id","day")
);
--> statement-breakpoint
ALTER TABLE "device_revenue_days" ADD CONSTRAINT "device_revenue_days_tenant_id_fkey" FOREIGN KEY ("tenant_id") REFERENCES "public"."tenants"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "device_revenue_days" ADD CONSTRAINT "device_revenue_days_device_id_fkey" FOREIGN KEY ("device_id") REFERENCES "public"."devices"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "tenant_revenue_days" ADD CONSTRAINT "tenant_revenue_days_tenant_id_fkey" FOREIGN KEY ("tenant_id") REFERENCES "public"."tenants"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
-- Running totals of the rows already there: the revenue per tenant and UTC day, and per device and day, of the
-- paid orders, as the relayer keeps them from now on (payments/revenue-days.ts).
INSERT INTO "tenant_revenue_days" ("tenant_id", "day", "orders", "amount_usd_micros")
SELECT "tenant_id", ("paid_at" AT TIME ZONE 'UTC')::date, count(*), sum("amount_usd_micros")
FROM "orders"
WHERE "status" = 'success' AND "paid_at" IS NOT NULL
GROUP BY 1, 2
ORDER BY 1, 2;
--> statement-breakpoint
INSERT INTO "device_revenue_days" ("tenant_id", "day", "device_id", "orders", "amount_usd_micros")
SELECT "tenant_id", ("paid_at" AT TIME ZONE 'UTC')::date, "device_id", count(*), sum("amount_usd_micros")
FROM "orders"
WHERE "status" = 'success' AND "paid_at" IS NOT NULL
GROUP BY 1, 2, 3
-- In key order: a tenant's days lie together on disk, as they do when the relayer adds them day by day.
ORDER BY 1, 2, 3;
