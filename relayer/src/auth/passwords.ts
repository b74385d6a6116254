// Password hashing with scrypt: N=2^17, r=8, p=1 (OWASP's minimum for scrypt), 16-byte salt, 32-byte hash,
// stored as scrypt$N$r$p$salt$hash (base64url). Hashes made with other parameters (the relayer's earlier
// N=2^15) still verify; checkPassword then also returns a hash with the current parameters, which the
// caller stores in place of the old one. Verification compares in constant time.
//
// One hash at N=2^17 takes 128 * N * r = 128 MiB of memory and about 0.45 s of one core (an AMD EPYC core;
// 0.1 s at N=2^15). At most MAX_CONCURRENT run at once in a process, so that a burst of sign-ins neither
// takes gigabytes nor every thread of libuv's pool (which DNS lookups and file access share); the others
// wait their turn.
import { randomBytes, scrypt as scryptCb, timingSafeEqual } from "node:crypto";
import { promisify } from "node:util";

type ScryptParams = { N: number; r: number; p: number };

const scryptAsync = promisify(scryptCb) as (
  password: string,
  salt: Buffer,
  keylen: number,
  options: ScryptParams & { maxmem: number },
) => Promise<Buffer>;

/** The parameters of new hashes. */
export const SCRYPT_PARAMS: Readonly<ScryptParams> = { N: 2 ** 17, r: 8, p: 1 };
const KEY_LENGTH = 32;
const SALT_LENGTH = 16;
/** The largest stored parameters accepted (anything above is not a hash this service made). */
const MAX_N = 2 ** 20;
const MAX_R = 16;
const MAX_P = 4;
const MAX_CONCURRENT = 2;

/** scrypt, one of at most MAX_CONCURRENT at a time, with a memory limit that fits its parameters: what
 * OpenSSL allocates, 128 * r * (N + 2 + p) bytes, plus headroom (Node's default, 32 MiB, is too small for
 * N=2^17). */
const scrypt = (() => {
  let running = 0;
  const waiting: Array<() => void> = [];
  return async (password: string, salt: Buffer, keyLength: number, params: ScryptParams): Promise<Buffer> => {
    if (running >= MAX_CONCURRENT) await new Promise<void>((resolve) => waiting.push(resolve));
    else running++;
    try {
      const maxmem = 128 * params.r * (params.N + 2 + params.p) + 1024 * 1024;
      return await scryptAsync(password, salt, keyLength, { ...params, maxmem });
    } finally {
      // Hand the slot to the next in line (running stays the same), or free it.
      const next = waiting.shift();
      if (next) next();
      else running--;
    }
  };
})();

function format(params: ScryptParams, salt: Buffer, hash: Buffer): string {
  return ["scrypt", params.N, params.r, params.p, salt.toString("base64url"), hash.toString("base64url")].join("$");
}

type Parsed = { params: ScryptParams; salt: Buffer; hash: Buffer };

const BASE64URL = /^[A-Za-z0-9_-]{16,128}$/;

/** A stored hash's parts, or undefined when it is not one this service could have made. */
function parse(stored: string): Parsed | undefined {
  const parts = stored.split("$");
  if (parts.length !== 6 || parts[0] !== "scrypt") return undefined;
  const [N, r, p] = parts.slice(1, 4).map((part) => (/^[1-9][0-9]{0,7}$/.test(part) ? Number(part) : NaN));
  const powerOfTwo = Number.isInteger(N) && N >= 2 && N <= MAX_N && (N & (N - 1)) === 0;
  if (!powerOfTwo || !(r >= 1 && r <= MAX_R) || !(p >= 1 && p <= MAX_P)) return undefined;
  if (!BASE64URL.test(parts[4]) || !BASE64URL.test(parts[5])) return undefined;
  return { params: { N, r, p }, salt: Buffer.from(parts[4], "base64url"), hash: Buffer.from(parts[5], "base64url") };
}

const isCurrent = (params: ScryptParams) => params.N === SCRYPT_PARAMS.N && params.r === SCRYPT_PARAMS.r && params.p === SCRYPT_PARAMS.p;

export async function hashPassword(password: string): Promise<string> {
  const salt = randomBytes(SALT_LENGTH);
  return format(SCRYPT_PARAMS, salt, await scrypt(password, salt, KEY_LENGTH, SCRYPT_PARAMS));
}

/** Whether `stored` was made with other parameters than new hashes are. */
export function needsRehash(stored: string): boolean {
  const parsed = parse(stored);
  return !parsed || !isCurrent(parsed.params);
}

/** Whether `password` matches `stored`; for a hash made with older parameters, also `rehashed`: the
 * password hashed with the current ones, to store in its place when the password matched. That hash is
 * computed alongside the check (not after it), so an old hash takes about as long to check as a current one
 * (or the decoy), matching password or not. */
export async function checkPassword(password: string, stored: string): Promise<{ ok: boolean; rehashed?: string }> {
  const parsed = parse(stored);
  if (!parsed) return { ok: false };
  const check = scrypt(password, parsed.salt, parsed.hash.length, parsed.params).then(
    (actual) => actual.length === parsed.hash.length && timingSafeEqual(actual, parsed.hash),
  );
  if (isCurrent(parsed.params)) return { ok: await check };
  const [ok, rehashed] = await Promise.all([check, hashPassword(password)]);
  return ok ? { ok, rehashed } : { ok };
}

export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  return (await checkPassword(password, stored)).ok;
}

/** A stored hash in the current format that no password matches (random salt and hash): checked against
 * when the email is unknown, so that answer takes the time a known one does. */
export const decoyHash = format(SCRYPT_PARAMS, randomBytes(SALT_LENGTH), randomBytes(KEY_LENGTH));
