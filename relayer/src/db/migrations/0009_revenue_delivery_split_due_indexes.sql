DROP INDEX "webhook_deliveries_subscription_idx";--> statement-breakpoint
CREATE INDEX "devices_split_due_idx" ON "devices" USING btree ("id") WHERE asset_owner is not null and operator is not null and (split_status is null or split_status = 'failed');--> statement-breakpoint
CREATE INDEX "orders_tenant_paid_idx" ON "orders" USING btree ("tenant_id","paid_at" DESC NULLS FIRST,"id" DESC NULLS FIRST) WHERE status = 'success';--> statement-breakpoint
CREATE INDEX "orders_tenant_device_paid_idx" ON "orders" USING btree ("tenant_id","device_id","paid_at" DESC NULLS FIRST,"id" DESC NULLS FIRST) WHERE status = 'success';--> statement-breakpoint
CREATE INDEX "webhook_deliveries_subscription_status_idx" ON "webhook_deliveries" USING btree ("subscription_id","status","id");--> statement-breakpoint
CREATE INDEX "webhook_deliveries_subscription_idx" ON "webhook_deliveries" USING btree ("subscription_id","id");