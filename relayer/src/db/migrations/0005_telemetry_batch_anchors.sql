CREATE TABLE "energy_anchors" (
	"anchor_id" text PRIMARY KEY NOT NULL,
	"batches_root" text NOT NULL,
	"batches" integer NOT NULL,
	"status" text DEFAULT 'pending' NOT NULL,
	"tx_hash" text,
	"block_number" bigint,
	"error" text,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"final_at" timestamp with time zone,
	CONSTRAINT "energy_anchors_batches_root_uq" UNIQUE("batches_root"),
	CONSTRAINT "energy_anchors_status_check" CHECK ("status" in ('pending', 'anchored', 'failed'))
);
--> statement-breakpoint
ALTER TABLE "energy_batches" ADD COLUMN "anchor_id" text;--> statement-breakpoint
ALTER TABLE "energy_batches" ADD COLUMN "batch_proof" jsonb;--> statement-breakpoint
ALTER TABLE "energy_batches" ADD CONSTRAINT "energy_batches_anchor_id_fkey" FOREIGN KEY ("anchor_id") REFERENCES "public"."energy_anchors"("anchor_id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "energy_batches_unanchored_idx" ON "energy_batches" USING btree ("received_at") WHERE attestation_status = 'pending' and merkle_root is not null and anchor_id is null;--> statement-breakpoint
CREATE INDEX "energy_batches_anchor_idx" ON "energy_batches" USING btree ("anchor_id") WHERE anchor_id is not null;