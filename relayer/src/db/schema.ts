// Drizzle table definitions of the relayer's database: the one source of its schema. The SQL migrations in
// db/migrations/ are generated from it by drizzle-kit (`npm run db:generate`); a test checks that both agree.
export * from "./schema/accounts.ts";
export * from "./schema/webhook-events.ts";
export * from "./schema/idempotency.ts";
export * from "./schema/payments.ts";
export * from "./schema/webhooks.ts";
export * from "./schema/energy.ts";
export * from "./schema/usage.ts";
export * from "./schema/delivery-counts.ts";
export * from "./schema/revenue-days.ts";
