// OAuth client credentials of the sandbox. Secrets are random (32 bytes), so a SHA-256 is enough to store
// them (as with API keys); comparison is constant-time, and an unknown client costs the same as a wrong
// secret.
import { createHash, randomBytes, timingSafeEqual } from "node:crypto";
import { and, eq, isNull } from "drizzle-orm";
import type { Db } from "../../db/client.ts";
import { energyClients } from "../../db/schema.ts";

export function hashClientSecret(secret: string): string {
  return createHash("sha256").update(secret, "utf8").digest("hex");
}

/** A new client secret: 32 random bytes, base64url. */
export function generateClientSecret(): string {
  return randomBytes(32).toString("base64url");
}

const decoyHash = hashClientSecret(generateClientSecret());

/** Whether `clientId` is a live client whose secret is `clientSecret`. */
export async function verifyClientCredentials(db: Db, clientId: string, clientSecret: string): Promise<boolean> {
  const [row] = await db
    .select({ secretHash: energyClients.secretHash })
    .from(energyClients)
    .where(and(eq(energyClients.clientId, clientId), isNull(energyClients.revokedAt)))
    .limit(1);
  const expected = Buffer.from(row?.secretHash ?? decoyHash, "hex");
  const actual = Buffer.from(hashClientSecret(clientSecret), "hex");
  return timingSafeEqual(expected, actual) && row !== undefined;
}

/** Whether the client still exists and is not revoked. */
export async function isLiveClient(db: Db, clientId: string): Promise<boolean> {
  const [row] = await db
    .select({ clientId: energyClients.clientId })
    .from(energyClients)
    .where(and(eq(energyClients.clientId, clientId), isNull(energyClients.revokedAt)))
    .limit(1);
  return row !== undefined;
}
