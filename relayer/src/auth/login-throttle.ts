// Per-account throttling of POST /v1/auth/login, in the database so that it holds across client addresses
// and relayer processes. Each account (a lower-cased email, whether or not a user has it; the row's key is
// an HMAC of it, so the table names no one) may have `maxFailures` failed sign-ins in a fixed window of
// `windowSeconds` that starts at its first failure. Beyond that every attempt for that email, with the
// right password too, is refused until the window is over.
//
// An attempt is counted before its password is checked (one atomic upsert), so parallel guesses cannot
// slip past the limit; a successful sign-in takes its count back (the limit counts failures, and another
// party's failures are not cleared by it: the owner waits out the window), and so does one whose password was
// never checked (refused by a full queue of password checks, or abandoned by its client). Rows of past windows are
// deleted by the same statement, a bounded batch at a time, so the table holds roughly one row per email
// tried within the last window.
import { createHmac, hkdfSync } from "node:crypto";
import { sql } from "drizzle-orm";
import type { Db } from "../db/client.ts";

const PURGE_BATCH = 100;
/** Failures are counted up to here (an integer column; the limit is far below). */
const FAILURES_CAP = 1_000_000;

export type LoginAttempt = { key: string; allowed: true } | { key: string; allowed: false; retryAfterSeconds: number };

export function createLoginThrottle(db: Db, opts: { secret: string; maxFailures: number; windowSeconds: number }) {
  const hmacKey = Buffer.from(hkdfSync("sha256", Buffer.from(opts.secret, "utf8"), "payg-login-throttle", "login throttle keys v1", 32));
  const keyOf = (email: string) => createHmac("sha256", hmacKey).update(email.toLowerCase(), "utf8").digest("base64url");
  const windowSeconds = Math.floor(opts.windowSeconds);
  const windowStart = sql`now() - ${windowSeconds}::integer * interval '1 second'`;

  return {
    maxFailures: opts.maxFailures,
    windowSeconds,
    /** Counts an attempt for `email` before its password is checked; refused when the account is over its
     * limit. */
    async begin(email: string): Promise<LoginAttempt> {
      const key = keyOf(email);
      const result = await db.execute(sql`
        with stale as (
          delete from login_throttle where key in (
            select key from login_throttle where window_started_at <= ${windowStart} and key <> ${key} limit ${PURGE_BATCH}
          )
        )
        insert into login_throttle as t (key, window_started_at, failures) values (${key}, now(), 1)
        on conflict (key) do update set
          window_started_at = case when t.window_started_at <= ${windowStart} then now() else t.window_started_at end,
          failures = case when t.window_started_at <= ${windowStart} then 1 else least(t.failures + 1, ${FAILURES_CAP}::integer) end
        returning failures,
          ceil(extract(epoch from (window_started_at + ${windowSeconds}::integer * interval '1 second' - now())))::integer as retry_after`);
      const [row] = (result as unknown as { rows: Array<{ failures: number; retry_after: number }> }).rows;
      if (Number(row.failures) <= opts.maxFailures) return { key, allowed: true };
      return { key, allowed: false, retryAfterSeconds: Math.max(1, Number(row.retry_after)) };
    },
    /** The attempt signed in: it was not a failure. */
    async succeeded(attempt: LoginAttempt): Promise<void> {
      await db.execute(sql`update login_throttle set failures = failures - 1 where key = ${attempt.key} and failures > 0`);
    },
    /** The attempt's password was never checked (the service was busy, or the client left): not a failure
     * either, so its count is taken back. No guess was tested, so nothing slips past the limit. */
    async withdraw(attempt: LoginAttempt): Promise<void> {
      await db.execute(sql`update login_throttle set failures = failures - 1 where key = ${attempt.key} and failures > 0`);
    },
  };
}

export type LoginThrottle = ReturnType<typeof createLoginThrottle>;
