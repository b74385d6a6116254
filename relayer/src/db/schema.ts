// Drizzle table definitions of the relayer's database. The SQL that creates them is in db/migrations/;
// a test checks that both agree.
export * from "./schema/accounts.ts";
export * from "./schema/events.ts";
export * from "./schema/payments.ts";
export * from "./schema/webhooks.ts";
export * from "./schema/energy.ts";
