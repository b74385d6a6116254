// Idempotency-Key of POST /telemetry:batch, per OAuth client. The first request with a key claims it in
// its own transaction (a concurrent request with the same key waits for that transaction); its status and
// exact body are stored with it, and a later request with the same key and the same body gets them back
// byte for byte. The same key with another body is 422 idempotency_key_reused. Keys are kept for 24 hours.
import { createHash } from "node:crypto";
import { and, eq, lt } from "drizzle-orm";
import type { Db, DbOrTx } from "../../db/client.ts";
import { energyIdempotencyKeys } from "../../db/schema.ts";
import { sandboxErrors } from "../errors.ts";
import { IDEMPOTENCY_RETENTION_SECONDS } from "../schemas.ts";
import { canonicalJson } from "../../idempotency/store.ts";

export const IDEMPOTENCY_KEY_PATTERN = /^[\x21-\x7e]{1,255}$/;
export const IDEMPOTENCY_KEY_MAX_LENGTH = 255;

export function requestFingerprint(body: unknown): string {
  return createHash("sha256").update(canonicalJson(body)).digest("hex");
}

export type StoredResponse = { status: number; body: string };

/** Claims `key` for this request (in the caller's transaction). Returns the stored response when the key
 * was used before with the same body; throws idempotency_key_reused when with another. */
export async function claimIdempotencyKey(
  tx: DbOrTx,
  clientId: string,
  key: string,
  requestHash: string,
): Promise<StoredResponse | undefined> {
  const [claimed] = await tx
    .insert(energyIdempotencyKeys)
    .values({ clientId, idempotencyKey: key, requestHash, status: 0, responseBody: "" })
    .onConflictDoNothing()
    .returning({ clientId: energyIdempotencyKeys.clientId });
  if (claimed) return undefined;
  const [stored] = await tx
    .select()
    .from(energyIdempotencyKeys)
    .where(and(eq(energyIdempotencyKeys.clientId, clientId), eq(energyIdempotencyKeys.idempotencyKey, key)));
  if (stored.requestHash !== requestHash) throw sandboxErrors.idempotencyKeyReused();
  return { status: stored.status, body: stored.responseBody };
}

/** Stores the response of the request that claimed `key`. */
export async function storeIdempotentResponse(tx: DbOrTx, clientId: string, key: string, response: StoredResponse) {
  await tx
    .update(energyIdempotencyKeys)
    .set({ status: response.status, responseBody: response.body })
    .where(and(eq(energyIdempotencyKeys.clientId, clientId), eq(energyIdempotencyKeys.idempotencyKey, key)));
}

/** Deletes keys past their retention; returns how many. */
export async function expireIdempotencyKeys(db: Db, now = Date.now()): Promise<number> {
  const cutoff = new Date(now - IDEMPOTENCY_RETENTION_SECONDS * 1000);
  const deleted = await db
    .delete(energyIdempotencyKeys)
    .where(lt(energyIdempotencyKeys.createdAt, cutoff))
    .returning({ key: energyIdempotencyKeys.idempotencyKey });
  return deleted.length;
}
