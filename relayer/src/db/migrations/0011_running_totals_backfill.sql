-- Running totals of the rows already there (device and region usage, delivery counters), as the relayer keeps
-- them from now on (payments/usage-totals.ts, webhooks/delivery-counters.ts); their tables came in 0010.
INSERT INTO "device_usage" ("device_id", "region", "power_sessions", "energy_wh", "last_powered_on_at")
SELECT d."id", d."region", count(o."powered_on_at"), coalesce(sum(o."energy_wh"), 0), max(o."powered_on_at")
FROM "devices" d JOIN "orders" o ON o."device_id" = d."id"
WHERE o."powered_on_at" IS NOT NULL OR o."energy_wh" IS NOT NULL
GROUP BY d."id", d."region";
--> statement-breakpoint
INSERT INTO "region_usage" ("region", "devices", "power_sessions", "energy_wh", "volume_usd_micros")
SELECT d."region", count(DISTINCT d."id"), count(o."powered_on_at"), coalesce(sum(o."energy_wh"), 0),
  coalesce(sum(o."amount_usd_micros") FILTER (WHERE o."status" = 'success'), 0)
FROM "devices" d LEFT JOIN "orders" o ON o."device_id" = d."id"
GROUP BY d."region";
--> statement-breakpoint
INSERT INTO "webhook_delivery_counts" ("subscription_id", "pending", "succeeded", "failed", "last_activity_at")
SELECT "subscription_id", count(*) FILTER (WHERE "status" = 'pending'), count(*) FILTER (WHERE "status" = 'succeeded'),
  count(*) FILTER (WHERE "status" = 'failed'), max("updated_at")
FROM "webhook_deliveries"
GROUP BY "subscription_id";
