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
//                        space-separated signatures may be sent; one valid one is enough.
//
// A receiver should verify webhook-signature (it binds the id and the time, so a replay older than the
// tolerance is rejected), use the raw body bytes exactly as received (never a re-serialised JSON), and
// answer 2xx quickly. `verifyWebhook` below does all of it.
import { createHmac, randomBytes, timingSafeEqual } from "node:crypto";

export const SECRET_PREFIX = "whsec_";
/** How far webhook-timestamp may be from the receiver's clock (either way) by default. */
export const DEFAULT_TOLERANCE_SECONDS = 5 * 60;

export type WebhookEnvelope<T = Record<string, unknown>> = { type: string; data: T; id: string };
export type HeaderSource = Headers | Record<string, string | string[] | undefined>;
type Body = string | Uint8Array;

/** A new signing secret: whsec_ + base64 of 32 random bytes. */
export function generateSecret(): string {
  return `${SECRET_PREFIX}${randomBytes(32).toString("base64")}`;
}

function bytes(body: Body): Buffer {
  return typeof body === "string" ? Buffer.from(body, "utf8") : Buffer.from(body.buffer, body.byteOffset, body.byteLength);
}

/** The key of the Standard Webhooks signature: the secret's bytes after the whsec_ prefix. */
function standardKey(secret: string): Buffer {
  const encoded = secret.startsWith(SECRET_PREFIX) ? secret.slice(SECRET_PREFIX.length) : secret;
  return Buffer.from(encoded, "base64");
}

/** x-service-signature: sha256=<hex HMAC-SHA256 of the body keyed with the whole secret string>. */
export function serviceSignature(secret: string, body: Body): string {
  return `sha256=${createHmac("sha256", secret).update(bytes(body)).digest("hex")}`;
}

/** webhook-signature: v1,<base64 HMAC-SHA256 of "id.timestamp.body" keyed with the secret's bytes>. */
export function standardSignature(secret: string, id: string, timestamp: number, body: Body): string {
  const mac = createHmac("sha256", standardKey(secret))
    .update(`${id}.${timestamp}.`)
    .update(bytes(body))
    .digest("base64");
  return `v1,${mac}`;
}

/** Every header of a delivery of `body` (the envelope serialised once: send exactly these bytes). */
export function signDelivery(opts: { secret: string; id: string; type: string; body: Body; timestamp?: number }) {
  const timestamp = opts.timestamp ?? Math.floor(Date.now() / 1000);
  return {
    "content-type": "application/json",
    "x-service-event": opts.type,
    "x-service-signature": serviceSignature(opts.secret, opts.body),
    "webhook-id": opts.id,
    "webhook-timestamp": String(timestamp),
    "webhook-signature": standardSignature(opts.secret, opts.id, timestamp, opts.body),
  };
}

/** Compares two strings in constant time (for equal lengths; a length difference returns at once). */
export function safeEqual(a: string, b: string): boolean {
  const x = Buffer.from(a, "utf8");
  const y = Buffer.from(b, "utf8");
  return x.length === y.length && timingSafeEqual(x, y);
}

/** Checks x-service-signature in constant time. Proves the body came from the service, not when. */
export function verifyServiceSignature(secret: string, body: Body, header: string | undefined | null): boolean {
  if (!header) return false;
  return safeEqual(header.trim().toLowerCase(), serviceSignature(secret, body));
}

/** Checks webhook-signature (any of its space-separated v1 signatures) in constant time; does not check
 * the timestamp's age (verifyWebhook does). */
export function verifyStandardSignature(
  secret: string,
  body: Body,
  headers: { id: string; timestamp: string; signature: string },
): boolean {
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

/**
 * Verifies a delivery and returns its envelope; throws WebhookVerificationError otherwise.
 *
 * Checks webhook-signature and that webhook-timestamp is within `toleranceSeconds` of now (replays of
 * old deliveries fail), and that webhook-id matches the envelope's id. With `scheme: "service"` it checks
 * x-service-signature instead (no protection against replays: deduplicate by the envelope's id).
 * `body` must be the raw request body, as received.
 */
export function verifyWebhook<T = Record<string, unknown>>(opts: {
  secret: string;
  body: Body;
  headers: HeaderSource;
  scheme?: "standard" | "service";
  toleranceSeconds?: number;
  /** The receiver's clock, Unix seconds (tests). */
  now?: number;
}): WebhookEnvelope<T> {
  const scheme = opts.scheme ?? "standard";
  if (scheme === "service") {
    const signature = header(opts.headers, "x-service-signature");
    if (!signature) throw new WebhookVerificationError("missing_header", "no x-service-signature header");
    if (!verifyServiceSignature(opts.secret, opts.body, signature)) {
      throw new WebhookVerificationError("bad_signature", "x-service-signature does not match the body");
    }
  } else {
    const id = header(opts.headers, "webhook-id");
    const timestamp = header(opts.headers, "webhook-timestamp");
    const signature = header(opts.headers, "webhook-signature");
    if (!id || !timestamp || !signature) {
      throw new WebhookVerificationError("missing_header", "webhook-id, webhook-timestamp and webhook-signature are required");
    }
    if (!verifyStandardSignature(opts.secret, opts.body, { id, timestamp, signature })) {
      throw new WebhookVerificationError("bad_signature", "webhook-signature does not match");
    }
    const now = opts.now ?? Math.floor(Date.now() / 1000);
    const tolerance = opts.toleranceSeconds ?? DEFAULT_TOLERANCE_SECONDS;
    if (Math.abs(now - Number(timestamp)) > tolerance) {
      throw new WebhookVerificationError("stale_timestamp", `webhook-timestamp is more than ${tolerance} s from now`);
    }
  }
  let envelope: WebhookEnvelope<T>;
  try {
    envelope = JSON.parse(bytes(opts.body).toString("utf8")) as WebhookEnvelope<T>;
  } catch {
    throw new WebhookVerificationError("bad_body", "the body is not JSON");
  }
  if (typeof envelope?.type !== "string" || typeof envelope.id !== "string" || typeof envelope.data !== "object") {
    throw new WebhookVerificationError("bad_body", "the body is not a delivery envelope");
  }
  if (scheme === "standard" && envelope.id !== header(opts.headers, "webhook-id")) {
    throw new WebhookVerificationError("bad_body", "the envelope's id differs from webhook-id");
  }
  return envelope;
}
