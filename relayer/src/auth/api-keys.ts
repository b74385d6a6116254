// API keys: `payg_` + 32 random base62 characters + a 6-character base62 CRC-32 of those 32, so secret
// scanners can recognise a key (regex `payg_[0-9A-Za-z]{38}`) and tell a real one from a typo offline.
// Only the SHA-256 of a key is stored.
import { createHash, randomBytes } from "node:crypto";

export const API_KEY_PREFIX = "payg_";
const base62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
const RANDOM_LENGTH = 32;
const CHECKSUM_LENGTH = 6;
export const API_KEY_PATTERN = /^payg_[0-9A-Za-z]{38}$/;

export function generateApiKey(): string {
  let random = "";
  while (random.length < RANDOM_LENGTH) {
    for (const byte of randomBytes(48)) {
      if (byte < 248 && random.length < RANDOM_LENGTH) random += base62[byte % 62];
    }
  }
  return `${API_KEY_PREFIX}${random}${checksum(random)}`;
}

/** Whether `key` has the format and a matching checksum (says nothing of whether it exists). */
export function isWellFormedApiKey(key: string): boolean {
  if (!API_KEY_PATTERN.test(key)) return false;
  const body = key.slice(API_KEY_PREFIX.length);
  return checksum(body.slice(0, RANDOM_LENGTH)) === body.slice(RANDOM_LENGTH);
}

export function hashApiKey(key: string): string {
  return createHash("sha256").update(key).digest("hex");
}

function checksum(text: string): string {
  let value = crc32(Buffer.from(text, "utf8"));
  let out = "";
  for (let i = 0; i < CHECKSUM_LENGTH; i++) {
    out = base62[value % 62] + out;
    value = Math.floor(value / 62);
  }
  return out;
}

const crcTable = Array.from({ length: 256 }, (_, n) => {
  let c = n;
  for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
  return c >>> 0;
});

function crc32(bytes: Uint8Array): number {
  let crc = 0xffffffff;
  for (const byte of bytes) crc = crcTable[(crc ^ byte) & 0xff] ^ (crc >>> 8);
  return (crc ^ 0xffffffff) >>> 0;
}
