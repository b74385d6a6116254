// Password hashing with scrypt: N=2^17, r=8, p=1 (OWASP's minimum for scrypt) by default, 16-byte salt,
// 32-byte hash, stored as scrypt$N$r$p$salt$hash (base64url). Hashes made with weaker parameters (the
// relayer's earlier N=2^15) still verify; check() then also returns a hash with the hasher's parameters,
// which the caller stores in place of the old one. Verification compares in constant time. The relayer's
// PASSWORD_SCRYPT_N sets N (down to MIN_SCRYPT_N, for test suites).
//
// One hash at N=2^17 takes 128 * N * r = 128 MiB of memory and about 0.45 s of one core (an AMD EPYC core;
// 0.1 s at N=2^15). At most MAX_CONCURRENT run at once in a process, so that a burst of sign-ins neither
// takes gigabytes nor every thread of libuv's pool (which DNS lookups and file access share); the others
// wait their turn.
import { randomBytes, scrypt as scryptCb, timingSafeEqual } from "node:crypto";
import { promisify } from "node:util";

export type ScryptParams = { N: number; r: number; p: number };

const scryptAsync = promisify(scryptCb) as (
  password: string,
  salt: Buffer,
  keylen: number,
  options: ScryptParams & { maxmem: number },
) => Promise<Buffer>;

/** The parameters of new hashes by default (the relayer's PASSWORD_SCRYPT_N sets N). */
export const SCRYPT_PARAMS: Readonly<ScryptParams> = { N: 2 ** 17, r: 8, p: 1 };
/** The smallest N the relayer's PASSWORD_SCRYPT_N accepts: 2^14 (16 MiB, an eighth of the default's work),
 * for test suites that sign in hundreds of times; below OWASP's minimum, so the relayer warns at start-up
 * when it is set under the default. */
export const MIN_SCRYPT_N = 2 ** 14;
const KEY_LENGTH = 32;
const SALT_LENGTH = 16;
/** The largest stored parameters accepted (anything above is not a hash this service made). */
export const MAX_SCRYPT_N = 2 ** 20;
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
  const powerOfTwo = Number.isInteger(N) && N >= 2 && N <= MAX_SCRYPT_N && (N & (N - 1)) === 0;
  if (!powerOfTwo || !(r >= 1 && r <= MAX_R) || !(p >= 1 && p <= MAX_P)) return undefined;
  if (!BASE64URL.test(parts[4]) || !BASE64URL.test(parts[5])) return undefined;
  return { params: { N, r, p }, salt: Buffer.from(parts[4], "base64url"), hash: Buffer.from(parts[5], "base64url") };
}

export type PasswordHasher = {
  /** The parameters of the hashes it makes. */
  params: Readonly<ScryptParams>;
  hash(password: string): Promise<string>;
  /** Whether `stored` is not a hash it could have made, or was made with weaker parameters than its own (a
   * smaller N, or another r or p): a stronger hash is kept as it is. */
  needsRehash(stored: string): boolean;
  /** Whether `password` matches `stored`; for a hash that needs a rehash, also `rehashed`: the password
   * hashed with its parameters, to store in place of the old one when the password matched. That hash is
   * computed alongside the check (not after it), so an old hash takes about as long to check as a current one
   * (or the decoy), matching password or not. */
  check(password: string, stored: string): Promise<{ ok: boolean; rehashed?: string }>;
  verify(password: string, stored: string): Promise<boolean>;
  /** A stored hash with its parameters that no password matches (random salt and hash): checked against
   * when the email is unknown, so that answer takes the time a known one does. */
  decoyHash: string;
};

/** Hashes and checks passwords with scrypt at `params` (default SCRYPT_PARAMS). */
export function passwordHasher(params: Readonly<ScryptParams> = SCRYPT_PARAMS): PasswordHasher {
  const weaker = (other: ScryptParams) => other.N < params.N || other.r !== params.r || other.p !== params.p;
  const hash = async (password: string) => {
    const salt = randomBytes(SALT_LENGTH);
    return format(params, salt, await scrypt(password, salt, KEY_LENGTH, params));
  };
  const check = async (password: string, stored: string): Promise<{ ok: boolean; rehashed?: string }> => {
    const parsed = parse(stored);
    if (!parsed) return { ok: false };
    const matches = scrypt(password, parsed.salt, parsed.hash.length, parsed.params).then(
      (actual) => actual.length === parsed.hash.length && timingSafeEqual(actual, parsed.hash),
    );
    if (!weaker(parsed.params)) return { ok: await matches };
    const [ok, rehashed] = await Promise.all([matches, hash(password)]);
    return ok ? { ok, rehashed } : { ok };
  };
  return {
    params,
    hash,
    needsRehash(stored) {
      const parsed = parse(stored);
      return !parsed || weaker(parsed.params);
    },
    check,
    verify: async (password, stored) => (await check(password, stored)).ok,
    decoyHash: format(params, randomBytes(SALT_LENGTH), randomBytes(KEY_LENGTH)),
  };
}
