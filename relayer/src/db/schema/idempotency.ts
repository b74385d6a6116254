// Idempotency-Key records of the /v1 POST routes (http/idempotency.ts, idempotency/store.ts): one row per
// caller and key. The first request inserts it (in progress: no response yet, held until `locked_until`), and
// writes its response when done; a retry with the same key and body gets that response back. Kept 24 hours.
import { index, integer, json, pgTable, primaryKey, text, timestamp } from "drizzle-orm/pg-core";

export const idempotencyKeys = pgTable(
  "idempotency_keys",
  {
    /** Whose key it is: the API key, the portal user, or (public routes) the client's address. */
    scope: text("scope").notNull(),
    idempotencyKey: text("idempotency_key").notNull(),
    /** SHA-256 (hex) of the method, the path and the canonical JSON of the body. */
    requestHash: text("request_hash").notNull(),
    /** The first request's answer; null while it runs. */
    responseStatus: integer("response_status"),
    responseHeaders: json("response_headers").$type<Record<string, string>>(),
    responseBody: text("response_body"),
    /** While the first request runs: until when it holds the key (a process that died with it lets go then). */
    lockedUntil: timestamp("locked_until", { withTimezone: true }),
    createdAt: timestamp("created_at", { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [
    primaryKey({ name: "idempotency_keys_pkey", columns: [t.scope, t.idempotencyKey] }),
    index("idempotency_keys_created_idx").on(t.createdAt),
  ],
);
