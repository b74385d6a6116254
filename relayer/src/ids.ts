// Identifiers: a type prefix and a ULID (48-bit millisecond time + 80 random bits, Crockford base32), so ids
// sort by creation time and say what they name (ord_, qt_, dev_ ...).
import { randomBytes } from "node:crypto";

const alphabet = "0123456789ABCDEFGHJKMNPQRSTVWXYZ";

export function ulid(now = Date.now()): string {
  let time = "";
  let t = now;
  for (let i = 0; i < 10; i++) {
    time = alphabet[t % 32] + time;
    t = Math.floor(t / 32);
  }
  const random = randomBytes(10);
  let bits = 0n;
  for (const byte of random) bits = (bits << 8n) | BigInt(byte);
  let rand = "";
  for (let i = 0; i < 16; i++) {
    rand = alphabet[Number(bits & 31n)] + rand;
    bits >>= 5n;
  }
  return time + rand;
}

export function newId(prefix: string): string {
  return `${prefix}_${ulid()}`;
}
