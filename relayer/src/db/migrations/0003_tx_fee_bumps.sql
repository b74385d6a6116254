ALTER TABLE "chain_transactions" ADD COLUMN "replaced_hashes" jsonb DEFAULT '[]'::jsonb NOT NULL;--> statement-breakpoint
ALTER TABLE "chain_transactions" ADD COLUMN "sent_block" bigint;