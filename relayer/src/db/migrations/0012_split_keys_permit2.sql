ALTER TABLE "devices" DROP CONSTRAINT "devices_split_status_check";--> statement-breakpoint
ALTER TABLE "orders" DROP CONSTRAINT "orders_rail_check";--> statement-breakpoint
ALTER TABLE "devices" ADD COLUMN "asset_key" text;--> statement-breakpoint
ALTER TABLE "devices" ADD COLUMN "pending_asset_owner" text;--> statement-breakpoint
ALTER TABLE "devices" ADD COLUMN "pending_operator" text;--> statement-breakpoint
ALTER TABLE "orders" ADD COLUMN "asset_key" text;--> statement-breakpoint
CREATE INDEX "devices_split_watch_idx" ON "devices" USING btree ("id") WHERE pending_asset_owner is not null or split_status = 'mismatch';--> statement-breakpoint
ALTER TABLE "devices" ADD CONSTRAINT "devices_asset_key_key" UNIQUE("asset_key");--> statement-breakpoint
ALTER TABLE "devices" ADD CONSTRAINT "devices_split_status_check" CHECK ("split_status" in ('pending', 'created', 'failed', 'mismatch'));--> statement-breakpoint
ALTER TABLE "orders" ADD CONSTRAINT "orders_rail_check" CHECK ("rail" in ('permit', 'approval', 'cash', 'authorization', 'permit2'));--> statement-breakpoint
-- Splits made before asset keys were at addresses derived from the device id alone, by a factory whose creator
-- role the hot wallet held; the new factory derives them from the asset key. Those devices ask for their split
-- again (the provisioner's due list).
UPDATE "devices" SET "split_status" = NULL, "split_address" = NULL WHERE "asset_key" IS NULL AND "split_status" IS NOT NULL;
