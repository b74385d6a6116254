// The payment API's errors: one envelope for every error response of /v1,
//   {"error": {"code", "message", "details"?}, "requestId"}
// with the statuses of the interface (401, 404, 409, 422, 504, plus 400 for bodies that are not JSON,
// 413 for bodies over the limit, 429 when rate-limited). What the service throws (errors.ts, ServiceError) is
// answered with the status of its kind. No stack trace ever reaches a client.
import type { Context } from "hono";
import { HTTPException } from "hono/http-exception";
import type { ContentfulStatusCode } from "hono/utils/http-status";
import { z } from "@hono/zod-openapi";
import { type ErrorDetail, type FailureKind, ServiceError } from "../errors.ts";

/** The status each kind of failure (errors.ts) answers with. */
const STATUS_OF: Record<FailureKind, ContentfulStatusCode> = {
  unauthorized: 401,
  forbidden: 403,
  not_found: 404,
  conflict: 409,
  invalid: 422,
  rate_limited: 429,
  upstream: 502,
  unavailable: 503,
  timeout: 504,
};

/** The status `error` answers with. */
export function statusOf(error: ServiceError): ContentfulStatusCode {
  return STATUS_OF[error.kind];
}

/** The error's body, for the OpenAPI document. */
const ErrorBody = z.object({
  code: z.string().openapi({
    description: "What went wrong, for programs: each operation's error responses list the codes they can carry (an enum)",
    example: "invalid_parameters",
  }),
  message: z.string().openapi({ description: "What went wrong, for people (not for parsing)", example: "invalid body" }),
  details: z
    .array(z.object({ path: z.string().optional(), message: z.string() }))
    .optional()
    .openapi({ example: [{ path: "tier", message: "unknown tier 2h; allowed: 30m, 1h, 3h" }] }),
});

/** The error envelope's schema, for the OpenAPI document. */
export const ErrorEnvelope = z
  .object({
    error: ErrorBody,
    requestId: z.string().openapi({ example: "req_01JD2Y6Y8X3K5V4Q9T7R2M1N0P" }),
  })
  .openapi("Error");

export function errorBody(c: Context, code: string, message: string, details?: ErrorDetail[]) {
  return { error: { code, message, ...(details ? { details } : {}) }, requestId: c.get("requestId") ?? "" };
}

/** Formats zod issues as error details. */
export function zodDetails(error: z.ZodError): ErrorDetail[] {
  return error.issues.map((issue) => ({
    path: issue.path.map(String).join(".") || undefined,
    message: issue.message,
  }));
}

const CONNECTION_ERROR_CODES = new Set(["ECONNREFUSED", "ECONNRESET", "EPIPE", "ETIMEDOUT", "EHOSTUNREACH", "ENETUNREACH"]);
/** PostgreSQL: connection exceptions (class 08), the server shutting down or not accepting connections yet,
 * too many connections. */
const UNAVAILABLE_SQLSTATES = /^(08...|57P0[123]|53300)$/;

/** Whether `error` (or its cause) says a dependency - above all the database - cannot be reached right now
 * (the connection refused, dropped or timed out, the server going down), rather than that something
 * failed. Such a request may succeed when retried: 503, not 500. */
export function isUnavailable(error: unknown): boolean {
  let e: unknown = error;
  for (let depth = 0; e && typeof e === "object" && depth < 5; depth++) {
    const { code, message } = e as { code?: unknown; message?: unknown };
    if (typeof code === "string" && (CONNECTION_ERROR_CODES.has(code) || UNAVAILABLE_SQLSTATES.test(code))) return true;
    if (
      typeof message === "string" &&
      /^Connection terminated|connection error and is not queryable|timeout exceeded when trying to connect/.test(message)
    ) {
      return true;
    }
    e = (e as { cause?: unknown }).cause;
  }
  return false;
}

/** Seconds a client is asked to wait when a dependency is unavailable. */
export const UNAVAILABLE_RETRY_AFTER_SECONDS = 2;

/** Turns anything thrown by a /v1 handler into the envelope. */
export function toErrorResponse(c: Context, error: unknown): Response {
  if (error instanceof ServiceError) {
    const headers = error.retryAfterSeconds === undefined ? undefined : { "retry-after": String(error.retryAfterSeconds) };
    return c.json(errorBody(c, error.code, error.message, error.details), statusOf(error), headers);
  }
  if (error instanceof HTTPException) {
    const status = error.status;
    if (status === 400 || status === 415) {
      const message = status === 415 ? "the body must be JSON, sent with content-type: application/json" : "the body is not valid JSON";
      return c.json(errorBody(c, "invalid_body", message), 400);
    }
    if (status === 413) return c.json(errorBody(c, "body_too_large", "the body exceeds the size limit"), 413);
    if (status === 401) return c.json(errorBody(c, "unauthorized", "a valid credential is required"), 401);
    return c.json(errorBody(c, "http_error", error.message), status as ContentfulStatusCode);
  }
  if (isUnavailable(error)) {
    c.get("logger")?.warn("a dependency is unavailable", { error: (error as Error).message });
    return c.json(errorBody(c, "unavailable", "the service is temporarily unavailable; retry shortly"), 503, {
      "retry-after": String(UNAVAILABLE_RETRY_AFTER_SECONDS),
    });
  }
  c.get("logger")?.error("unhandled error", { error });
  return c.json(errorBody(c, "internal_error", "an internal error occurred; retry later"), 500);
}

/** What each error code means: the descriptions of the error responses that carry it. */
export const ERROR_CODES = {
  invalid_body: "the body is not JSON, or not sent as application/json",
  unauthorized: "no credential this operation takes: missing, invalid, expired or revoked, or of another kind (see Access)",
  forbidden: "the credential lacks the role this operation needs",
  not_found: "no such resource (or it belongs to another tenant)",
  body_too_large: "the body exceeds the size limit",
  invalid_parameters: "a parameter or the body failed validation; `details` names each field",
  rate_limited: "too many requests; retry after the retry-after header's seconds",
  upstream_error: "an upstream service (the device cloud) answered with an error",
  unavailable: "a dependency cannot be reached right now; retry after the retry-after header's seconds",
  device_timeout: "the device cloud did not answer in time",
  quote_expired: "the quote expired: ask for a new one",
  split_not_ready: "the device's own split contract is not on-chain yet; retry after the retry-after header's seconds",
  split_recipients_mismatch:
    "the device's split pays recipients other than its payout parties: the device takes no payment until the operator resolves it",
  order_unpaid: "the order is not paid (yet): there is no receipt",
  order_already_paid: "the order is paid already",
  order_expired: "the order expired: order again",
  order_expiring: "the order's voucher expires before a relayed payment could be mined: pay from the wallet, or order again",
  order_cancelled: "a cancellation of the order is queued or done",
  payment_in_progress: "a payment of the order is already under way",
  payer_payment_in_progress: "another relayed payment by the same wallet is queued or under way: sign again once it is mined",
  authorization_used: "the wallet's EIP-3009 authorization for this order was used or cancelled",
  too_many_reverts:
    "too many relayed transactions of this wallet or tenant reverted recently; retry after the retry-after header's seconds",
  cash_limit_exceeded: "the cash payment would exceed a cash limit; `details` names it",
  payout_change_pending: "the device's payout parties changed recently: cash is refused until retry-after",
  too_many_subscriptions: "the tenant has as many active webhook subscriptions as it may",
  subscription_disabled: "the webhook subscription is disabled",
  delivery_pending: "the delivery is already queued (or changed meanwhile)",
  invalid_idempotency_key: "the Idempotency-Key header is not 1 to 255 visible ASCII characters",
  idempotency_key_in_use: "a request with this Idempotency-Key is still running; retry after the retry-after header's seconds",
  idempotency_key_reused: "this Idempotency-Key was used with another request (method, path or body) in the last 24 hours",
} as const;
export type ErrorCode = keyof typeof ERROR_CODES;

type Status = 400 | 401 | 403 | 404 | 409 | 413 | 422 | 429 | 502 | 503 | 504;
/** Statuses whose codes a route need not name: every route answers them with one code. 409 is not one:
 * a route lists its own conflicts. */
type PlainStatus = Exclude<Status, 409>;
const DEFAULT_CODES: Record<PlainStatus, readonly [ErrorCode]> = {
  400: ["invalid_body"],
  401: ["unauthorized"],
  403: ["forbidden"],
  404: ["not_found"],
  413: ["body_too_large"],
  422: ["invalid_parameters"],
  429: ["rate_limited"],
  502: ["upstream_error"],
  503: ["unavailable"],
  504: ["device_timeout"],
};

/** The envelope of one error response: the `Error` component with `error.code` narrowed to the codes that
 * response can carry (a generated client gets a union it can switch on). */
export function errorEnvelopeWith(codes: readonly ErrorCode[]) {
  return ErrorEnvelope.extend({ error: ErrorBody.extend({ code: z.enum(codes as [ErrorCode, ...ErrorCode[]]) }) });
}

/** One documented error response carrying `codes`; the description says what each means. */
export function errorResponseWith(codes: readonly ErrorCode[], extra?: { description?: string; retryAfter?: boolean }) {
  const meanings = codes.map((code) => `\`${code}\`: ${ERROR_CODES[code]}.`).join(" ");
  const retryAfter = extra?.retryAfter ?? codes.some((code) => /retry-after/.test(ERROR_CODES[code]));
  return {
    description: extra?.description ? `${extra.description} ${meanings}` : meanings,
    ...(retryAfter
      ? { headers: { "retry-after": { description: "Seconds to wait before retrying", schema: { type: "integer" as const } } } }
      : {}),
    content: { "application/json": { schema: errorEnvelopeWith(codes) } },
  };
}

/** The error responses of a route, for the OpenAPI document: a status answers its usual code (400
 * invalid_body, 401 unauthorized, 404 not_found, 422 invalid_parameters, 429 rate_limited...), or the codes
 * the route names for it, e.g. `errorResponses(404, { 409: ["order_unpaid"] }, 503)`. */
export function errorResponses(...statuses: Array<PlainStatus | Partial<Record<Status, readonly ErrorCode[]>>>) {
  const codes = new Map<Status, readonly ErrorCode[]>();
  for (const entry of statuses) {
    if (typeof entry === "number") codes.set(entry, DEFAULT_CODES[entry]);
    else for (const [status, list] of Object.entries(entry)) codes.set(Number(status) as Status, list ?? []);
  }
  return Object.fromEntries([...codes].sort(([a], [b]) => a - b).map(([status, list]) => [status, errorResponseWith(list)]));
}
