// Idempotency-Key records (table idempotency_keys), without HTTP: http/idempotency.ts makes the /v1 POST
// routes idempotent with them. The design of the sandbox's telemetry keys (energy/telemetry/idempotency.ts:
// a row per caller and key, unique in the database, the request's hash beside the response, 24 hours), for
// requests whose work is not one transaction of the store's: the first request inserts its key "in
// progress" (committed at once, so every relayer process sees it), runs, then writes its response. A
// concurrent request with the key finds it in progress; one whose process died while holding it can take
// it over once `locked_until` has passed.
import { createHash } from "node:crypto";
import { and, eq, isNull, lte, sql } from "drizzle-orm";
import type { Db } from "../db/client.ts";
import { idempotencyKeys } from "../db/schema.ts";

/** How long a key is kept (and a replay answered) after its first request. */
export const IDEMPOTENCY_RETENTION_SECONDS = 24 * 3600;
/** How long the first request holds its key: a request still running after this may be run again by a
 * retry (the relayer's requests take seconds at most). */
export const IDEMPOTENCY_LOCK_SECONDS = 60;

/** JSON with object keys sorted, so that the same body hashes the same whatever its key order. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(",")}]`;
  if (value !== null && typeof value === "object") {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(",")}}`;
  }
  return JSON.stringify(value);
}

/** SHA-256 (hex) of the parts, each length-prefixed (no two lists of parts hash alike). */
export function fingerprint(...parts: string[]): string {
  const hash = createHash("sha256");
  for (const part of parts) hash.update(`${Buffer.byteLength(part)}:${part}`);
  return hash.digest("hex");
}

export type StoredResponse = { status: number; headers: Record<string, string>; body: string };

/** What a request with a key may do: run (it holds the key until `lockedUntil`, which also names its hold),
 * answer the stored response, or neither (the key runs elsewhere, or was used with another request). */
export type KeyClaim =
  | { kind: "claimed"; lockedUntil: Date }
  | { kind: "replay"; response: StoredResponse }
  | { kind: "in_progress"; retryAfterSeconds: number }
  | { kind: "reused" };

const keyOf = (scope: string, key: string) => and(eq(idempotencyKeys.scope, scope), eq(idempotencyKeys.idempotencyKey, key));

/** Claims `key` of `scope` for a request whose hash is `requestHash`. */
export async function claimIdempotencyKey(db: Db, scope: string, key: string, requestHash: string, now = new Date()): Promise<KeyClaim> {
  const lockedUntil = new Date(now.getTime() + IDEMPOTENCY_LOCK_SECONDS * 1000);
  // A few rounds at most: each lost race (a row deleted or taken over between two statements) is another
  // request's progress.
  for (let round = 0; round < 5; round++) {
    const [inserted] = await db
      .insert(idempotencyKeys)
      .values({ scope, idempotencyKey: key, requestHash, lockedUntil, createdAt: now })
      .onConflictDoNothing()
      .returning({ scope: idempotencyKeys.scope });
    if (inserted) return { kind: "claimed", lockedUntil };
    const [row] = await db.select().from(idempotencyKeys).where(keyOf(scope, key));
    if (!row) continue; // released meanwhile (its request failed): claim it again
    if (row.createdAt.getTime() <= now.getTime() - IDEMPOTENCY_RETENTION_SECONDS * 1000) {
      // Past its retention and not cleaned up yet: as if it did not exist.
      await db.delete(idempotencyKeys).where(and(keyOf(scope, key), eq(idempotencyKeys.createdAt, row.createdAt)));
      continue;
    }
    if (row.requestHash !== requestHash) return { kind: "reused" };
    if (row.responseStatus !== null) {
      return { kind: "replay", response: { status: row.responseStatus, headers: row.responseHeaders ?? {}, body: row.responseBody ?? "" } };
    }
    if (row.lockedUntil && row.lockedUntil.getTime() > now.getTime()) {
      return { kind: "in_progress", retryAfterSeconds: 1 };
    }
    // Its request's process stopped without an answer: take the key over (one taker wins: the first moves
    // locked_until past `now`).
    const [taken] = await db
      .update(idempotencyKeys)
      .set({ lockedUntil })
      .where(and(keyOf(scope, key), isNull(idempotencyKeys.responseStatus), lte(idempotencyKeys.lockedUntil, now)))
      .returning({ scope: idempotencyKeys.scope });
    if (taken) return { kind: "claimed", lockedUntil };
  }
  return { kind: "in_progress", retryAfterSeconds: 1 };
}

/** Stores the response of the request holding the key (`lockedUntil` from its claim). False when the hold
 * was lost (the request ran longer than IDEMPOTENCY_LOCK_SECONDS and another took the key over). */
export async function storeIdempotentResponse(db: Db, scope: string, key: string, lockedUntil: Date, response: StoredResponse) {
  const stored = await db
    .update(idempotencyKeys)
    .set({ responseStatus: response.status, responseHeaders: response.headers, responseBody: response.body, lockedUntil: null })
    .where(and(keyOf(scope, key), isNull(idempotencyKeys.responseStatus), eq(idempotencyKeys.lockedUntil, lockedUntil)))
    .returning({ scope: idempotencyKeys.scope });
  return stored.length > 0;
}

/** Lets go of the key without a response (the request did not run, or failed in a way a retry may repair):
 * the next request with it runs. */
export async function releaseIdempotencyKey(db: Db, scope: string, key: string, lockedUntil: Date) {
  await db
    .delete(idempotencyKeys)
    .where(and(keyOf(scope, key), isNull(idempotencyKeys.responseStatus), eq(idempotencyKeys.lockedUntil, lockedUntil)));
}

/** Keys deleted per statement by expireIdempotencyKeys. */
const EXPIRY_BATCH = 1_000;

/** Deletes up to EXPIRY_BATCH keys past their retention (oldest first, through the created_at index);
 * returns how many. */
export async function expireIdempotencyKeys(db: Db, now = Date.now()): Promise<number> {
  const cutoff = new Date(now - IDEMPOTENCY_RETENTION_SECONDS * 1000).toISOString();
  const result = await db.execute(sql`
    delete from ${idempotencyKeys} where (scope, idempotency_key) in (
      select scope, idempotency_key from ${idempotencyKeys}
      where created_at < ${cutoff}::timestamptz order by created_at limit ${EXPIRY_BATCH})
    returning scope`);
  return (result as unknown as { rows: unknown[] }).rows.length;
}
