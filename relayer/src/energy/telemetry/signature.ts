// Device signatures of telemetry batches. The interface leaves production signing rules open; this sandbox
// verifies one scheme, for devices with a registered public key only: the header
//   Device-Signature: <base64 or base64url Ed25519 signature of the exact request body bytes>
// checked against the device's registered Ed25519 key. Without the header, or for a device without a
// registered key (every sample device but one), the result is `absent`: nothing was verified.
import { createPublicKey, verify } from "node:crypto";

export type SignatureResult = "valid" | "invalid" | "absent";

const spkiPrefix = Buffer.from("302a300506032b6570032100", "hex");

/** Verifies `signature` (the header's value) of `body` with the raw 32-byte Ed25519 key `publicKeyHex`. */
export function verifyDeviceSignature(body: string, signature: string | undefined, publicKeyHex: string | null): SignatureResult {
  if (signature === undefined || publicKeyHex === null) return "absent";
  const value = signature.trim();
  if (!/^[A-Za-z0-9+/_-]+={0,2}$/.test(value)) return "invalid";
  const bytes = Buffer.from(value.replace(/-/g, "+").replace(/_/g, "/"), "base64");
  if (bytes.length !== 64) return "invalid";
  try {
    const key = createPublicKey({
      key: Buffer.concat([spkiPrefix, Buffer.from(publicKeyHex, "hex")]),
      format: "der",
      type: "spki",
    });
    return verify(null, Buffer.from(body, "utf8"), key, bytes) ? "valid" : "invalid";
  } catch {
    return "invalid";
  }
}
