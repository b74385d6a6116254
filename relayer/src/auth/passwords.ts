// Password hashing with scrypt: N=2^17, r=8, p=1 (OWASP's minimum for scrypt) by default, 16-byte salt,
// 32-byte hash, stored as scrypt$N$r$p$salt$hash (base64url). Hashes made with weaker parameters (the
// relayer's earlier N=2^15) still verify; check() then also returns a hash with the hasher's parameters,
// which the caller stores in place of the old one. Verification compares in constant time. The relayer's
// PASSWORD_SCRYPT_N sets N (down to MIN_SCRYPT_N, for test suites).
//
// One hash at N=2^17 takes 128 * N * r = 128 MiB of memory and about 0.45 s of one core (an AMD EPYC core;
// 0.1 s at N=2^15). At most MAX_CONCURRENT run at once in a process, so that a burst of sign-ins neither
// takes gigabytes nor every thread of libuv's pool (which DNS lookups and file access share); the others
// wait their turn, in a queue of at most `maxWaiting` (the relayer's PASSWORD_HASH_QUEUE): beyond it a hash
// is refused at once (PasswordHashBusyError, with how long the queue should take to drain). A caller passes
// its request's AbortSignal: a hash still waiting when the signal fires leaves the queue unhashed
// (PasswordHashAbandonedError), so a client that hung up costs no scrypt and delays no one behind it (a hash
// already running finishes: libuv cannot stop it).
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
/** Hashes one process computes at once. */
export const MAX_CONCURRENT = 2;

/** A hash refused because MAX_CONCURRENT run and `maxWaiting` wait already. */
export class PasswordHashBusyError extends Error {
  /** Seconds the queue should take to drain (an estimate from recent hashes, at least 1). */
  readonly retryAfterSeconds: number;
  constructor(retryAfterSeconds: number) {
    super("too many password hashes are waiting");
    this.name = "PasswordHashBusyError";
    this.retryAfterSeconds = retryAfterSeconds;
  }
}

/** A hash not made because its caller's signal fired while it waited (the client hung up). */
export class PasswordHashAbandonedError extends Error {
  constructor() {
    super("the password hash was abandoned before its turn");
    this.name = "PasswordHashAbandonedError";
  }
}

/** What the process's scrypt queue is doing (GET /metrics: payg_password_hashes_*). */
export type PasswordHashStats = {
  /** Hashes computing now (at most MAX_CONCURRENT). */
  running: number;
  /** Hashes waiting for their turn. */
  queued: number;
  /** Hashes computed since the process started. */
  computed: number;
  /** Hashes refused since the process started because the queue was full. */
  refused: number;
  /** Hashes dropped since the process started because their caller left before their turn. */
  abandoned: number;
};

export type HashOptions = {
  /** The caller's request: a hash still waiting when it fires is dropped (PasswordHashAbandonedError). */
  signal?: AbortSignal;
  /** Most hashes that may wait for a turn (default DEFAULT_MAX_WAITING); beyond it PasswordHashBusyError. */
  maxWaiting?: number;
};

/** The queue's bound when the caller gives none (the relayer passes PASSWORD_HASH_QUEUE). */
export const DEFAULT_MAX_WAITING = 16;

/** scrypt, one of at most MAX_CONCURRENT at a time, with a memory limit that fits its parameters: what
 * OpenSSL allocates, 128 * r * (N + 2 + p) bytes, plus headroom (Node's default, 32 MiB, is too small for
 * N=2^17). Waits in a queue of at most `maxWaiting`, left when `signal` fires. */
const queue = (() => {
  let running = 0;
  let computed = 0;
  let refused = 0;
  let abandoned = 0;
  /** Seconds one hash took lately (a moving average; a guess until the first one). */
  let seconds = 0.5;
  /** Waiting callers, in order; each is given the slot by calling it (false: it left meanwhile, next). */
  const waiting: Array<() => boolean> = [];
  const release = () => {
    // Hand the slot to the next caller still there (running stays the same), or free it.
    for (let next = waiting.shift(); next; next = waiting.shift()) if (next()) return;
    running--;
  };
  const turn = (opts: HashOptions) =>
    new Promise<void>((resolve, reject) => {
      const signal = opts.signal;
      if (signal?.aborted) {
        abandoned++;
        return reject(new PasswordHashAbandonedError());
      }
      if (running < MAX_CONCURRENT) {
        running++;
        return resolve();
      }
      if (waiting.length >= (opts.maxWaiting ?? DEFAULT_MAX_WAITING)) {
        refused++;
        return reject(new PasswordHashBusyError(Math.max(1, Math.ceil(((waiting.length + running) / MAX_CONCURRENT) * seconds))));
      }
      const onAbort = () => {
        const at = waiting.indexOf(take);
        if (at >= 0) waiting.splice(at, 1);
        abandoned++;
        reject(new PasswordHashAbandonedError());
      };
      const take = () => {
        signal?.removeEventListener("abort", onAbort);
        if (signal?.aborted) {
          abandoned++;
          reject(new PasswordHashAbandonedError());
          return false;
        }
        resolve();
        return true;
      };
      signal?.addEventListener("abort", onAbort, { once: true });
      waiting.push(take);
    });
  const scrypt = async (password: string, salt: Buffer, keyLength: number, params: ScryptParams, opts: HashOptions): Promise<Buffer> => {
    await turn(opts);
    const started = performance.now();
    try {
      const maxmem = 128 * params.r * (params.N + 2 + params.p) + 1024 * 1024;
      const result = await scryptAsync(password, salt, keyLength, { ...params, maxmem });
      computed++;
      seconds = seconds * 0.8 + ((performance.now() - started) / 1000) * 0.2;
      return result;
    } finally {
      release();
    }
  };
  return { scrypt, stats: (): PasswordHashStats => ({ running, queued: waiting.length, computed, refused, abandoned }) };
})();
const scrypt = queue.scrypt;

/** The process's scrypt queue, for GET /metrics. */
export const passwordHashStats = queue.stats;

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

/** Per call: the caller's request signal (see HashOptions). */
export type CallOptions = { signal?: AbortSignal };

export type PasswordHasher = {
  /** The parameters of the hashes it makes. */
  params: Readonly<ScryptParams>;
  hash(password: string, opts?: CallOptions): Promise<string>;
  /** Whether `stored` is not a hash it could have made, or was made with weaker parameters than its own (a
   * smaller N, or another r or p): a stronger hash is kept as it is. */
  needsRehash(stored: string): boolean;
  /** Whether `password` matches `stored`; for a hash that needs a rehash, also `rehashed`: the password
   * hashed with its parameters, to store in place of the old one when the password matched. That hash is
   * computed alongside the check (not after it), so an old hash takes about as long to check as a current one
   * (or the decoy), matching password or not. Throws PasswordHashBusyError when the queue is full and
   * PasswordHashAbandonedError when `signal` fired before the hash's turn. */
  check(password: string, stored: string, opts?: CallOptions): Promise<{ ok: boolean; rehashed?: string }>;
  verify(password: string, stored: string, opts?: CallOptions): Promise<boolean>;
  /** A stored hash with its parameters that no password matches (random salt and hash): checked against
   * when the email is unknown, so that answer takes the time a known one does. */
  decoyHash: string;
};

/** Hashes and checks passwords with scrypt at `params` (default SCRYPT_PARAMS); at most `maxWaiting` (default
 * DEFAULT_MAX_WAITING) hashes of the process wait for a turn when this hasher adds one. */
export function passwordHasher(params: Readonly<ScryptParams> = SCRYPT_PARAMS, opts: { maxWaiting?: number } = {}): PasswordHasher {
  const weaker = (other: ScryptParams) => other.N < params.N || other.r !== params.r || other.p !== params.p;
  const queueing = (call: CallOptions = {}): HashOptions => ({ signal: call.signal, maxWaiting: opts.maxWaiting });
  const hash = async (password: string, call?: CallOptions) => {
    const salt = randomBytes(SALT_LENGTH);
    return format(params, salt, await scrypt(password, salt, KEY_LENGTH, params, queueing(call)));
  };
  const check = async (password: string, stored: string, call?: CallOptions): Promise<{ ok: boolean; rehashed?: string }> => {
    const parsed = parse(stored);
    if (!parsed) return { ok: false };
    const matches = scrypt(password, parsed.salt, parsed.hash.length, parsed.params, queueing(call)).then(
      (actual) => actual.length === parsed.hash.length && timingSafeEqual(actual, parsed.hash),
    );
    if (!weaker(parsed.params)) return { ok: await matches };
    const [ok, rehashed] = await Promise.all([matches, hash(password, call)]);
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
    verify: async (password, stored, call) => (await check(password, stored, call)).ok,
    decoyHash: format(params, randomBytes(SALT_LENGTH), randomBytes(KEY_LENGTH)),
  };
}
