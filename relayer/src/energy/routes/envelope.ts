// The sandbox's error envelope: one shape for every error response under /energy/v1,
//   {"error": {"svc_code", "message"}, "environment": "sandbox"}
// with the status the interface's Errors table gives each code. The domain throws ServiceError with a
// sandbox code (../errors.ts); this answers it, and what the framework or a dependency throws, in the envelope.
// No stack trace or internal detail ever reaches a client.
import type { Context } from "hono";
import { HTTPException } from "hono/http-exception";
import type { ContentfulStatusCode } from "hono/utils/http-status";
import { z } from "@hono/zod-openapi";
import { UNAVAILABLE_RETRY_AFTER_SECONDS, isUnavailable } from "../../http/errors.ts";
import { ServiceError, withoutStackFor } from "../../errors.ts";
import { SVC_CODES, type SvcCode, isSvcCode } from "../errors.ts";

export const ENVIRONMENT = "sandbox";

export type SandboxErrorBody = { error: { svc_code: SvcCode; message: string }; environment: typeof ENVIRONMENT };

/** The status each code answers with (the interface's Errors table, and this sandbox's additions). */
const STATUS_OF: Record<SvcCode, ContentfulStatusCode> = {
  invalid_request: 400,
  unauthorized: 401,
  signature_invalid: 401,
  not_found: 404,
  device_not_found: 404,
  baseline_incomplete: 409,
  counter_regression: 422,
  idempotency_key_reused: 422,
  payload_too_large: 413,
  rate_limited: 429,
  internal_error: 500,
  service_unavailable: 503,
};

export function sandboxStatusOf(code: SvcCode): ContentfulStatusCode {
  return STATUS_OF[code];
}

export function sandboxErrorBody(code: SvcCode, message: string): SandboxErrorBody {
  return { error: { svc_code: code, message }, environment: ENVIRONMENT };
}

/** The challenge of a 401 to a request without a valid bearer token (RFC 6750 section 3). */
const BEARER_CHALLENGE = { "www-authenticate": 'Bearer realm="energy-sandbox"' };

/** An answer the routes give with headers of their own (a 401 with another challenge, or none): HTTP, so
 * thrown by route code only (the token route and its client authentication); the domain throws ServiceError. */
export class SandboxHttpError extends Error {
  readonly status: ContentfulStatusCode;
  readonly code: SvcCode;
  readonly headers?: Record<string, string>;

  constructor(status: ContentfulStatusCode, code: SvcCode, message: string, headers?: Record<string, string>) {
    const limit = withoutStackFor(status < 500);
    super(message);
    Error.stackTraceLimit = limit;
    this.status = status;
    this.code = code;
    this.headers = headers;
  }
}

/** The headers of a domain error's answer: a 401 unauthorized challenges for a bearer token; a known wait is
 * a retry-after. */
function headersOf(error: ServiceError): Record<string, string> | undefined {
  if (error.code === "unauthorized") return BEARER_CHALLENGE;
  if (error.retryAfterSeconds !== undefined) return { "retry-after": String(error.retryAfterSeconds) };
  return undefined;
}

/** Turns anything thrown under /energy/v1 into the envelope. */
export function toSandboxResponse(c: Context, error: unknown): Response {
  if (error instanceof ServiceError && isSvcCode(error.code)) {
    return c.json(sandboxErrorBody(error.code, error.message), sandboxStatusOf(error.code), headersOf(error));
  }
  if (error instanceof SandboxHttpError) {
    return c.json(sandboxErrorBody(error.code, error.message), error.status, error.headers);
  }
  if (error instanceof HTTPException) {
    if (error.status === 413) return payloadTooLarge(c);
    if (error.status === 400 || error.status === 415) {
      const form = c.req.path.endsWith("/auth/token");
      const message = form
        ? "the body must be application/x-www-form-urlencoded"
        : error.status === 415
          ? "the body must be JSON, sent with content-type: application/json"
          : "the body is not valid JSON";
      return c.json(sandboxErrorBody("invalid_request", message), 400);
    }
    if (error.status === 401) return c.json(sandboxErrorBody("unauthorized", "a valid bearer token is required"), 401, BEARER_CHALLENGE);
  }
  if (isUnavailable(error)) {
    c.get("logger")?.warn("a dependency is unavailable", { error: (error as Error).message });
    return c.json(sandboxErrorBody("service_unavailable", "the sandbox is temporarily unavailable; retry shortly"), 503, {
      "retry-after": String(UNAVAILABLE_RETRY_AFTER_SECONDS),
    });
  }
  c.get("logger")?.error("unhandled error", { error });
  return c.json(sandboxErrorBody("internal_error", "an internal error occurred; retry later"), 500);
}

export function payloadTooLarge(c: Context, limit?: number): Response {
  const message = limit ? `the body exceeds the limit of ${limit} bytes for this route` : "the body exceeds the size limit";
  // The rest of the body is not read: close the connection so the client does not reuse it.
  return c.json(sandboxErrorBody("payload_too_large", message), 413, { connection: "close" });
}

/** The envelope's schema with the codes a response can carry, for the OpenAPI document. */
function envelopeWith(codes: readonly SvcCode[]) {
  return z.object({
    error: z.object({
      svc_code: z.enum(codes as [SvcCode, ...SvcCode[]]),
      message: z.string().openapi({ description: "What went wrong, for people (not for parsing)" }),
    }),
    environment: z.literal(ENVIRONMENT),
  });
}

/** The envelope with every code: the SandboxError component. */
export const SandboxErrorEnvelope = envelopeWith(SVC_CODES).openapi("SandboxError");

/** The envelope as one response documents it: the SandboxError component with `svc_code` narrowed to the
 * codes that response carries (allOf), so a generated client has one error type and a union to switch on. */
export function envelopeSchema(codes: readonly SvcCode[]) {
  return SandboxErrorEnvelope.extend({ error: envelopeWith(codes).shape.error });
}

/** One documented error response: status, the svc_codes it carries, and when. */
export function errorResponse(codes: readonly SvcCode[], description: string) {
  return { description, content: { "application/json": { schema: envelopeSchema(codes) } } };
}

/** The error responses every bearer route shares. */
export const bearerErrors = {
  401: errorResponse(["unauthorized"], "Missing, malformed, expired or unknown bearer token."),
  500: errorResponse(["internal_error"], "An unexpected failure; retry later."),
};
