// Identifiers: a type prefix and a ULID (48-bit millisecond time + 80 random bits, Crockford base32), so ids
// sort by creation time and say what they name (ord_, qt_, dev_ ...).
import { randomBytes } from "node:crypto";

const alphabet = "0123456789ABCDEFGHJKMNPQRSTVWXYZ";

/** Random bytes are drawn from the OS in blocks (one call per 409 ids instead of one per id). */
const RANDOM_BLOCK = 4090;
let randomBlock = Buffer.alloc(0);
let randomOffset = 0;

function randomPart(): string {
  if (randomOffset + 10 > randomBlock.length) {
    randomBlock = randomBytes(RANDOM_BLOCK);
    randomOffset = 0;
  }
  const b = randomBlock;
  const o = randomOffset;
  randomOffset += 10;
  // 80 bits, most significant first, as two 40-bit halves (exact in a double): 8 characters each.
  let hi = b[o] * 2 ** 32 + b[o + 1] * 2 ** 24 + b[o + 2] * 2 ** 16 + b[o + 3] * 2 ** 8 + b[o + 4];
  let lo = b[o + 5] * 2 ** 32 + b[o + 6] * 2 ** 24 + b[o + 7] * 2 ** 16 + b[o + 8] * 2 ** 8 + b[o + 9];
  let high = "";
  let low = "";
  for (let i = 0; i < 8; i++) {
    high = alphabet[hi % 32] + high;
    low = alphabet[lo % 32] + low;
    hi = Math.floor(hi / 32);
    lo = Math.floor(lo / 32);
  }
  return high + low;
}

export function ulid(now = Date.now()): string {
  let time = "";
  let t = now;
  for (let i = 0; i < 10; i++) {
    time = alphabet[t % 32] + time;
    t = Math.floor(t / 32);
  }
  return time + randomPart();
}

export function newId(prefix: string): string {
  return `${prefix}_${ulid()}`;
}

/** The shape of every order id. */
export const ORDER_ID_PATTERN = /^ord_[0-9A-Z]{26}$/;
