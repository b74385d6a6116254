// Webhook signatures of the payment service: how a delivery is signed, and how a receiver verifies it.
// Depends on node:crypto only, so a receiver can copy this file as it is.
//
// Every delivery is a POST with content-type application/json whose body is the envelope
// {"type", "data", "id"}, signed twice with the subscription's signing secret (whsec_...):
//
//   x-service-event      the event type, e.g. payment.succeeded
//   x-service-signature  sha256=<hex>: HMAC-SHA256 of the raw body bytes, keyed with the whole secret
//                        string (whsec_ prefix included) as UTF-8. Signs no time: a captured delivery
//                        verifies forever, so also check webhook-timestamp or deduplicate by id.
//   webhook-id           the delivery id (msg_...), the same as the envelope's id and the same on every
//                        attempt: deduplicate on it
//   webhook-timestamp    Unix seconds when this attempt was signed
//   webhook-signature    v1,<base64>: HMAC-SHA256 of "<webhook-id>.<webhook-timestamp>.<body>", keyed
//                        with the secret's bytes (base64-decoded after the whsec_ prefix), as in the
//                        Standard Webhooks specification (https://www.standardwebhooks.com). Several
//                        space-separated signatures may be sent; one valid one is enough. After a secret
//                        rotation, for its grace period, there is one with the new secret and one with
//                        the old (and x-service-signature keeps the old secret until the grace ends).
//
// A receiver should verify webhook-signature (it binds the id and the time, so a replay older than the
// tolerance is rejected), use the raw body bytes exactly as received (never a re-serialised JSON), and
// answer 2xx quickly. `verifyWebhook` (or `createWebhookVerifier`, which checks its settings once, at
// start-up) below does all of it.
//
// A secret is whsec_ followed by the base64 of at least 32 bytes (the service issues exactly 32). Anything
// else (empty, `whsec_` alone, a truncated copy, stray whitespace) is a misconfiguration: every function
// here that takes a secret throws WebhookConfigError for it, rather than signing or verifying with a weak
// or empty key (an HMAC keyed with an empty secret is one anybody can compute).
import { createHmac, randomBytes, timingSafeEqual } from "node:crypto";

export const SECRET_PREFIX = "whsec_";
/** The fewest key bytes a signing secret may have (what the service issues). */
export const MIN_SECRET_BYTES = 32;
/** How far webhook-timestamp may be from the receiver's clock (either way) by default. */
export const DEFAULT_TOLERANCE_SECONDS = 5 * 60;

export type WebhookEnvelope<T = Record<string, unknown>> = { type: string; data: T; id: string };
export type HeaderSource = Headers | Record<string, string | string[] | undefined>;
/** The raw request body: a string, or its bytes (Buffer, Uint8Array, ArrayBuffer). */
type Body = string | Uint8Array | ArrayBuffer;

/** A setting of the verifier (or signer) is wrong: the secret, the tolerance. Not a bad delivery. */
export class WebhookConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "WebhookConfigError";
  }
}

/** A new signing secret: whsec_ + base64 of 32 random bytes. */
export function generateSecret(): string {
  return `${SECRET_PREFIX}${randomBytes(MIN_SECRET_BYTES).toString("base64")}`;
}

/** Checks a signing secret; returns its key bytes (base64-decoded after whsec_). Throws WebhookConfigError. */
export function checkSecret(secret: unknown): Buffer {
  if (typeof secret !== "string" || secret === "") throw new WebhookConfigError("the webhook signing secret is missing (whsec_...)");
  if (!secret.startsWith(SECRET_PREFIX)) {
    throw new WebhookConfigError(`the webhook signing secret must start with ${SECRET_PREFIX} (copy it whole from the subscription)`);
  }
  const encoded = secret.slice(SECRET_PREFIX.length);
  if (encoded === "") throw new WebhookConfigError(`the webhook signing secret is ${SECRET_PREFIX} with no key after it`);
  if (!/^[A-Za-z0-9+/]+={0,2}$/.test(encoded)) {
    throw new WebhookConfigError(
      `the webhook signing secret has characters that are not base64 after ${SECRET_PREFIX} (whitespace or a line break?)`,
    );
  }
  const key = Buffer.from(encoded, "base64");
  const unpadded = (text: string) => text.slice(0, text.length - (text.endsWith("==") ? 2 : text.endsWith("=") ? 1 : 0));
  if (unpadded(key.toString("base64")) !== unpadded(encoded)) {
    throw new WebhookConfigError("the webhook signing secret is not valid base64 (truncated?)");
  }
  if (key.length < MIN_SECRET_BYTES) {
    throw new WebhookConfigError(
      `the webhook signing secret has ${key.length} key bytes; at least ${MIN_SECRET_BYTES} are needed (truncated?)`,
    );
  }
  return key;
}

function bytes(body: Body): Buffer {
  if (typeof body === "string") return Buffer.from(body, "utf8");
  if (body instanceof Uint8Array) return Buffer.from(body.buffer, body.byteOffset, body.byteLength);
  if (body instanceof ArrayBuffer) return Buffer.from(body);
  throw new TypeError("the body must be the raw request body (a string, Buffer, Uint8Array or ArrayBuffer), not parsed JSON");
}

/** x-service-signature: sha256=<hex HMAC-SHA256 of the body keyed with the whole secret string>. */
export function serviceSignature(secret: string, body: Body): string {
  checkSecret(secret);
  return `sha256=${createHmac("sha256", secret).update(bytes(body)).digest("hex")}`;
}

/** webhook-signature: v1,<base64 HMAC-SHA256 of "id.timestamp.body" keyed with the secret's bytes>. */
export function standardSignature(secret: string, id: string, timestamp: number, body: Body): string {
  const mac = createHmac("sha256", checkSecret(secret)).update(`${id}.${timestamp}.`).update(bytes(body)).digest("base64");
  return `v1,${mac}`;
}

/** Every header of a delivery of `body` (the envelope serialised once: send exactly these bytes).
 * `previousSecret`, during a secret rotation's grace period: webhook-signature then carries two
 * signatures, "v1,<with secret> v1,<with previousSecret>", and x-service-signature (one value only) is
 * made with previousSecret, the one receivers had before the rotation. */
export function signDelivery(opts: { secret: string; previousSecret?: string; id: string; type: string; body: Body; timestamp?: number }) {
  const timestamp = opts.timestamp ?? Math.floor(Date.now() / 1000);
  const signatures = [standardSignature(opts.secret, opts.id, timestamp, opts.body)];
  if (opts.previousSecret !== undefined) signatures.push(standardSignature(opts.previousSecret, opts.id, timestamp, opts.body));
  return {
    "content-type": "application/json",
    "x-service-event": opts.type,
    "x-service-signature": serviceSignature(opts.previousSecret ?? opts.secret, opts.body),
    "webhook-id": opts.id,
    "webhook-timestamp": String(timestamp),
    "webhook-signature": signatures.join(" "),
  };
}

/** Compares two strings in constant time (for equal lengths; a length difference returns at once). */
export function safeEqual(a: string, b: string): boolean {
  const x = Buffer.from(a, "utf8");
  const y = Buffer.from(b, "utf8");
  return x.length === y.length && timingSafeEqual(x, y);
}

/** Checks x-service-signature in constant time. Proves the body came from the service, not when. Throws
 * WebhookConfigError for an unusable secret. */
export function verifyServiceSignature(secret: string, body: Body, header: string | undefined | null): boolean {
  const expected = serviceSignature(secret, body);
  if (!header) return false;
  return safeEqual(header.trim().toLowerCase(), expected);
}

/** Checks webhook-signature (any of its space-separated v1 signatures) in constant time; does not check
 * the timestamp's age (verifyWebhook does). Throws WebhookConfigError for an unusable secret. */
export function verifyStandardSignature(
  secret: string,
  body: Body,
  headers: { id: string; timestamp: string; signature: string },
): boolean {
  checkSecret(secret);
  if (!/^\d{1,12}$/.test(headers.timestamp)) return false;
  const expected = standardSignature(secret, headers.id, Number(headers.timestamp), body);
  let ok = false;
  for (const candidate of headers.signature.split(" ")) {
    if (candidate.startsWith("v1,") && safeEqual(candidate, expected)) ok = true;
  }
  return ok;
}

export class WebhookVerificationError extends Error {
  readonly reason: "missing_header" | "bad_signature" | "stale_timestamp" | "bad_body";
  constructor(reason: WebhookVerificationError["reason"], message: string) {
    super(message);
    this.name = "WebhookVerificationError";
    this.reason = reason;
  }
}

function header(headers: HeaderSource, name: string): string | undefined {
  if (typeof (headers as Headers).get === "function") return (headers as Headers).get(name) ?? undefined;
  const record = headers as Record<string, string | string[] | undefined>;
  const value = record[name] ?? Object.entries(record).find(([key]) => key.toLowerCase() === name)?.[1];
  return Array.isArray(value) ? value[0] : value;
}

export type VerifierSettings = {
  /** The subscription's signing secret, whsec_... */
  secret: string;
  /** "standard" (default): webhook-signature and webhook-timestamp; "service": x-service-signature. */
  scheme?: "standard" | "service";
  /** How far webhook-timestamp may be from now, either way (default 300 s). */
  toleranceSeconds?: number;
};

/** Checks the settings; returns them complete. Throws WebhookConfigError. */
function checkSettings(settings: VerifierSettings): Required<VerifierSettings> {
  checkSecret(settings.secret);
  const scheme = settings.scheme ?? "standard";
  if (scheme !== "standard" && scheme !== "service")
    throw new WebhookConfigError(`unknown signature scheme "${String(scheme)}" (standard or service)`);
  const toleranceSeconds = settings.toleranceSeconds ?? DEFAULT_TOLERANCE_SECONDS;
  if (typeof toleranceSeconds !== "number" || !Number.isFinite(toleranceSeconds) || toleranceSeconds < 0) {
    throw new WebhookConfigError(
      `toleranceSeconds must be a finite number of seconds, 0 or more (got ${String(settings.toleranceSeconds)})`,
    );
  }
  return { secret: settings.secret, scheme, toleranceSeconds };
}

/**
 * A verifier for one endpoint, its settings checked once, here (throws WebhookConfigError for an empty,
 * short or malformed secret or a bad tolerance: call it at start-up). The returned function verifies a
 * delivery like verifyWebhook.
 */
export function createWebhookVerifier<T = Record<string, unknown>>(
  settings: VerifierSettings,
): (body: Body, headers: HeaderSource, now?: number) => WebhookEnvelope<T> {
  const checked = checkSettings(settings);
  return (body, headers, now) => verify<T>(checked, body, headers, now);
}

/**
 * Verifies a delivery and returns its envelope; throws WebhookVerificationError otherwise, and
 * WebhookConfigError (a misconfiguration, not a bad delivery) for an unusable secret or tolerance.
 *
 * Checks webhook-signature and that webhook-timestamp is within `toleranceSeconds` of now, either way
 * (replays of old deliveries fail), and that webhook-id matches the envelope's id. With `scheme:
 * "service"` it checks x-service-signature instead (no protection against replays: deduplicate by the
 * envelope's id). `body` must be the raw request body, as received.
 */
export function verifyWebhook<T = Record<string, unknown>>(
  opts: VerifierSettings & {
    body: Body;
    headers: HeaderSource;
    /** The receiver's clock, Unix seconds (tests). */
    now?: number;
  },
): WebhookEnvelope<T> {
  return verify<T>(checkSettings(opts), opts.body, opts.headers, opts.now);
}

function verify<T>(settings: Required<VerifierSettings>, body: Body, headers: HeaderSource, clock: number | undefined): WebhookEnvelope<T> {
  const { secret, scheme, toleranceSeconds } = settings;
  if (clock !== undefined && !Number.isFinite(clock)) throw new WebhookConfigError("now must be a finite number of Unix seconds");
  const raw = bytes(body);
  if (scheme === "service") {
    const signature = header(headers, "x-service-signature");
    if (!signature) throw new WebhookVerificationError("missing_header", "no x-service-signature header");
    if (!verifyServiceSignature(secret, raw, signature)) {
      throw new WebhookVerificationError("bad_signature", "x-service-signature does not match the body");
    }
  } else {
    const id = header(headers, "webhook-id");
    const timestamp = header(headers, "webhook-timestamp");
    const signature = header(headers, "webhook-signature");
    if (!id || !timestamp || !signature) {
      throw new WebhookVerificationError("missing_header", "webhook-id, webhook-timestamp and webhook-signature are required");
    }
    if (!verifyStandardSignature(secret, raw, { id, timestamp, signature })) {
      throw new WebhookVerificationError("bad_signature", "webhook-signature does not match");
    }
    // Both ways: a timestamp from the future is refused as much as an old one.
    const now = clock ?? Math.floor(Date.now() / 1000);
    if (!(Math.abs(now - Number(timestamp)) <= toleranceSeconds)) {
      throw new WebhookVerificationError("stale_timestamp", `webhook-timestamp is more than ${toleranceSeconds} s from now`);
    }
  }
  let envelope: WebhookEnvelope<T>;
  try {
    envelope = JSON.parse(raw.toString("utf8")) as WebhookEnvelope<T>;
  } catch {
    throw new WebhookVerificationError("bad_body", "the body is not JSON");
  }
  if (
    typeof envelope?.type !== "string" ||
    typeof envelope.id !== "string" ||
    typeof envelope.data !== "object" ||
    envelope.data === null ||
    Array.isArray(envelope.data)
  ) {
    throw new WebhookVerificationError("bad_body", "the body is not a delivery envelope");
  }
  if (scheme === "standard" && envelope.id !== header(headers, "webhook-id")) {
    throw new WebhookVerificationError("bad_body", "the envelope's id differs from webhook-id");
  }
  return envelope;
}
