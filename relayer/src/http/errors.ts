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

/** The error envelope's schema, for the OpenAPI document. */
export const ErrorEnvelope = z
  .object({
    error: z.object({
      code: z.string().openapi({ example: "invalid_parameters" }),
      message: z.string(),
      details: z.array(z.object({ path: z.string().optional(), message: z.string() })).optional(),
    }),
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

/** The standard error responses of a route, for the OpenAPI document. */
export function errorResponses(...statuses: Array<400 | 401 | 403 | 404 | 409 | 413 | 422 | 429 | 502 | 503 | 504>) {
  const descriptions: Record<number, string> = {
    400: "The body is not JSON.",
    401: "No credential this operation takes: missing, invalid, expired or revoked, or of another kind (see Access).",
    403: "The credential lacks the role this route needs.",
    404: "No such resource (or it belongs to another tenant).",
    409: "Conflict with the resource's state.",
    413: "The body exceeds the size limit.",
    422: "Invalid parameters.",
    429: "Rate-limited; see the retry-after header.",
    502: "An upstream service answered with an error.",
    503: "Temporarily unavailable.",
    504: "The device cloud did not answer in time.",
  };
  return Object.fromEntries(
    statuses.map((status) => [status, { description: descriptions[status], content: { "application/json": { schema: ErrorEnvelope } } }]),
  );
}
