ALTER TABLE "devices" ADD COLUMN "asset_owner" text;--> statement-breakpoint
ALTER TABLE "devices" ADD COLUMN "operator" text;--> statement-breakpoint
ALTER TABLE "devices" ADD COLUMN "split_address" text;--> statement-breakpoint
ALTER TABLE "devices" ADD COLUMN "split_status" text;--> statement-breakpoint
ALTER TABLE "devices" ADD CONSTRAINT "devices_split_address_key" UNIQUE("split_address");--> statement-breakpoint
ALTER TABLE "devices" ADD CONSTRAINT "devices_split_status_check" CHECK ("split_status" in ('pending', 'created', 'failed'));