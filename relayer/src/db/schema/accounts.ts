// Tenants (developer accounts), their portal users and their API keys; the users' portal sessions and the
// per-account throttling of sign-ins.
import { boolean, index, integer, pgTable, text, timestamp } from "drizzle-orm/pg-core";
import { checkOneOf, foreignKeyTo } from "./constraints.ts";

export const tenants = pgTable("tenants", {
  id: text("id").primaryKey(),
  name: text("name").notNull(),
  /** Power a paid device on at payment.succeeded (0 confirmations: a reorganisation can undo the payment
   * after the session started) rather than at payment.confirmed. Null: POWER_ON_AT_ZERO_CONFIRMATIONS. */
  powerOnAtZeroConfirmations: boolean("power_on_at_zero_confirmations"),
  createdAt: timestamp("created_at", { withTimezone: true }).notNull().defaultNow(),
});

export const users = pgTable(
  "users",
  {
    id: text("id").primaryKey(),
    tenantId: text("tenant_id").notNull(),
    email: text("email").notNull().unique("users_email_key"),
    /** scrypt$N$r$p$salt$hash (base64url). */
    passwordHash: text("password_hash").notNull(),
    name: text("name").notNull(),
    createdAt: timestamp("created_at", { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [foreignKeyTo("users", t.tenantId, tenants.id)],
);

export const apiKeyRoles = ["developer", "agent"] as const;

export const apiKeys = pgTable(
  "api_keys",
  {
    id: text("id").primaryKey(),
    tenantId: text("tenant_id").notNull(),
    name: text("name").notNull(),
    /** developer (reads the tenant's devices, revenue and earnings) or agent (confirms cash payments, reads devices). */
    role: text("role", { enum: apiKeyRoles }).notNull(),
    /** SHA-256 of the whole key, hex. The key itself is never stored. */
    keyHash: text("key_hash").notNull().unique("api_keys_key_hash_key"),
    /** The key's last four characters, to tell keys apart in lists. */
    last4: text("last4").notNull(),
    createdBy: text("created_by"),
    createdAt: timestamp("created_at", { withTimezone: true }).notNull().defaultNow(),
    lastUsedAt: timestamp("last_used_at", { withTimezone: true }),
    revokedAt: timestamp("revoked_at", { withTimezone: true }),
  },
  (t) => [
    foreignKeyTo("api_keys", t.tenantId, tenants.id),
    checkOneOf("api_keys", t.role, apiKeyRoles),
    index("api_keys_tenant_idx").on(t.tenantId, t.createdAt),
  ],
);

/** Portal sessions: one a sign-in, named by the JWT's jti. A JWT is accepted only while its session is
 * neither revoked (signed out) nor expired. A user's sessions go with the user. */
export const sessions = pgTable(
  "sessions",
  {
    id: text("id").primaryKey(),
    userId: text("user_id").notNull(),
    tenantId: text("tenant_id").notNull(),
    createdAt: timestamp("created_at", { withTimezone: true }).notNull().defaultNow(),
    expiresAt: timestamp("expires_at", { withTimezone: true }).notNull(),
    revokedAt: timestamp("revoked_at", { withTimezone: true }),
  },
  (t) => [
    foreignKeyTo("sessions", t.userId, users.id).onDelete("cascade"),
    foreignKeyTo("sessions", t.tenantId, tenants.id),
    index("sessions_user_idx").on(t.userId),
    index("sessions_expires_idx").on(t.expiresAt),
  ],
);

/** Failed sign-ins per account in a fixed window from the first failure. `key`: HMAC of the lower-cased
 * email (known or not). */
export const loginThrottle = pgTable(
  "login_throttle",
  {
    key: text("key").primaryKey(),
    windowStartedAt: timestamp("window_started_at", { withTimezone: true }).notNull(),
    failures: integer("failures").notNull(),
  },
  (t) => [index("login_throttle_window_idx").on(t.windowStartedAt)],
);
