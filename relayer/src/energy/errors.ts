// The sandbox's errors: one envelope for every error response under /energy/v1,
//   {"error": {"svc_code", "message"}, "environment": "sandbox"}
// with the statuses and codes of the interface's Errors table, plus those this sandbox adds where the
// interface leaves them open (413 payload_too_large, 422 idempotency_key_reused, 429 rate_limited,
// 500 internal_error, 503 service_unavailable while its database cannot be reached).
// No stack trace or internal detail ever reaches a client.
import type { Context } from "hono";
import { HTTPException } from "hono/http-exception";
import type { ContentfulStatusCode } from "hono/utils/http-status";
import { z } from "@hono/zod-openapi";
import { UNAVAILABLE_RETRY_AFTER_SECONDS, isUnavailable } from "../http/errors.ts";
import { withoutStackFor } from "../errors.ts";

export const ENVIRONMENT = "sandbox";

export const SVC_CODES = [
  "invalid_request",
  "unauthorized",
  "signature_invalid",
  "not_found",
  "device_not_found",
  "baseline_incomplete",
  "counter_regression",
  "idempotency_key_reused",
  "payload_too_large",
  "rate_limited",
  "internal_error",
  "service_unavailable",
] as const;
export type SvcCode = (typeof SVC_CODES)[number];

export type SandboxErrorBody = { error: { svc_code: SvcCode; message: string }; environment: typeof ENVIRONMENT };

export class SandboxError extends Error {
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

export function sandboxErrorBody(code: SvcCode, message: string): SandboxErrorBody {
  return { error: { svc_code: code, message }, environment: ENVIRONMENT };
}

const bearerChallenge = { "www-authenticate": 'Bearer realm="energy-sandbox"' };

export const sandboxErrors = {
  invalidRequest: (message: string) => new SandboxError(400, "invalid_request", message),
  unauthorized: (message = "a valid bearer token is required (POST /auth/token)") =>
    new SandboxError(401, "unauthorized", message, bearerChallenge),
  signatureInvalid: (message: string) => new SandboxError(401, "signature_invalid", message),
  notFound: (message: string) => new SandboxError(404, "not_found", message),
  deviceNotFound: (deviceId: string) => new SandboxError(404, "device_not_found", `device ${deviceId} is unknown or deregistered`),
  baselineIncomplete: (message: string) => new SandboxError(409, "baseline_incomplete", message),
  counterRegression: (message: string) => new SandboxError(422, "counter_regression", message),
  idempotencyKeyReused: () =>
    new SandboxError(
      422,
      "idempotency_key_reused",
      "this Idempotency-Key was used with a different request body; use a new key for a new batch",
    ),
};

/** Turns anything thrown under /energy/v1 into the envelope. */
export function toSandboxResponse(c: Context, error: unknown): Response {
  if (error instanceof SandboxError) {
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
    if (error.status === 401) return c.json(sandboxErrorBody("unauthorized", "a valid bearer token is required"), 401, bearerChallenge);
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
export function envelopeSchema(codes: readonly SvcCode[]) {
  return z.object({
    error: z.object({
      svc_code: z.enum(codes as [SvcCode, ...SvcCode[]]),
      message: z.string().openapi({ description: "What went wrong, for people (not for parsing)" }),
    }),
    environment: z.literal(ENVIRONMENT),
  });
}

export const SandboxErrorEnvelope = envelopeSchema(SVC_CODES).openapi("SandboxError");

/** One documented error response: status, the svc_codes it carries, and when. */
export function errorResponse(codes: readonly SvcCode[], description: string) {
  return { description, content: { "application/json": { schema: envelopeSchema(codes) } } };
}

/** The error responses every bearer route shares. */
export const bearerErrors = {
  401: errorResponse(["unauthorized"], "Missing, malformed, expired or unknown bearer token."),
  500: errorResponse(["internal_error"], "An unexpected failure; retry later."),
};
