// Webhook signing secrets at rest. Unlike API keys (only a hash is kept), the relayer needs the secret
// itself to sign every delivery, so it is stored encrypted: AES-256-GCM with a key derived by HKDF-SHA256
// from WEBHOOK_SECRET_KEY, a random 96-bit IV per secret, and the subscription id as additional data (a
// ciphertext copied onto another subscription does not decrypt). Stored as
//   v1.<iv>.<ciphertext>.<tag>   (base64url parts)
// The plaintext is returned once when a subscription is created and is never logged.
import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from "node:crypto";

const VERSION = "v1";
const INFO = "payg relayer: webhook signing secrets v1";
const SALT = "payg-webhook-secrets";

export type SecretBox = {
  seal(plaintext: string, subscriptionId: string): string;
  open(sealed: string, subscriptionId: string): string;
};

export function createSecretBox(keyMaterial: string): SecretBox {
  const key = Buffer.from(hkdfSync("sha256", Buffer.from(keyMaterial, "utf8"), SALT, INFO, 32));
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
