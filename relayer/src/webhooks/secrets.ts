// Webhook signing secrets at rest. Unlike API keys (only a hash is kept), the relayer needs the secret
// itself to sign every delivery, so it is stored encrypted: AES-256-GCM with a key derived by HKDF-SHA256
// from WEBHOOK_SECRET_KEY, a random 96-bit IV per secret, and the subscription id as additional data (a
// ciphertext copied onto another subscription does not decrypt). Stored as
//   v1.<iv>.<ciphertext>.<tag>   (base64url parts)
// The plaintext is returned once when a subscription is created (or its secret rotated) and is never logged.
// A rotation keeps the secret it replaced, sealed the same way, for WEBHOOK_SECRET_GRACE_SECONDS: until then
// deliveries are signed with both (signingSecrets).
import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from "node:crypto";

const VERSION = "v1";
const INFO = "payg relayer: webhook signing secrets v1";
const SALT = "payg-webhook-secrets";

export type SecretBox = {
  seal(plaintext: string, subscriptionId: string): string;
  open(sealed: string, subscriptionId: string): string;
};

/** `purpose`: the HKDF info, so that another use of the same key material (the Idempotency-Key records'
 * stored answers, http/idempotency.ts) has a key of its own. */
export function createSecretBox(keyMaterial: string, purpose = INFO): SecretBox {
  const key = Buffer.from(hkdfSync("sha256", Buffer.from(keyMaterial, "utf8"), SALT, purpose, 32));
  return {
    seal(plaintext, subscriptionId) {
      const iv = randomBytes(12);
      const cipher = createCipheriv("aes-256-gcm", key, iv);
      cipher.setAAD(Buffer.from(subscriptionId, "utf8"));
      const ciphertext = Buffer.concat([cipher.update(plaintext, "utf8"), cipher.final()]);
      return [VERSION, iv, ciphertext, cipher.getAuthTag()].map((p) => (typeof p === "string" ? p : p.toString("base64url"))).join(".");
    },
    open(sealed, subscriptionId) {
      const [version, iv, ciphertext, tag] = sealed.split(".");
      if (version !== VERSION || !iv || !ciphertext || !tag) throw new Error("unknown secret format");
      const decipher = createDecipheriv("aes-256-gcm", key, Buffer.from(iv, "base64url"));
      decipher.setAAD(Buffer.from(subscriptionId, "utf8"));
      decipher.setAuthTag(Buffer.from(tag, "base64url"));
      try {
        return Buffer.concat([decipher.update(Buffer.from(ciphertext, "base64url")), decipher.final()]).toString("utf8");
      } catch {
        throw new Error("the webhook secret cannot be decrypted (was WEBHOOK_SECRET_KEY changed?)");
      }
    },
  };
}

/** The secrets of a subscription as stored (the columns of webhook_subscriptions). */
export type StoredSecrets = {
  id: string;
  secretCiphertext: string;
  previousSecretCiphertext: string | null;
  previousSecretExpiresAt: Date | null;
};

/** Whether the secret a rotation replaced still signs deliveries at `now`. */
export function previousSecretLive(row: Pick<StoredSecrets, "previousSecretCiphertext" | "previousSecretExpiresAt">, now: Date): boolean {
  return row.previousSecretCiphertext !== null && row.previousSecretExpiresAt !== null && row.previousSecretExpiresAt > now;
}

/** What a delivery attempted at `now` is signed with (sdk/src/webhooks.ts signDelivery): the current secret,
 * and the one a rotation replaced while its grace period lasts. */
export function signingSecrets(box: SecretBox, row: StoredSecrets, now = new Date()): { secret: string; previousSecret?: string } {
  const secret = box.open(row.secretCiphertext, row.id);
  if (!previousSecretLive(row, now)) return { secret };
  return { secret, previousSecret: box.open(row.previousSecretCiphertext!, row.id) };
}
