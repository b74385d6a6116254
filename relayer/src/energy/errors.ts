// What goes wrong in the sandbox, in its own words and without HTTP: the codes of the interface's Errors table
// (`svc_code`), and the sandbox's domain errors, thrown as the relayer's ServiceError (../errors.ts) with one of
// those codes as its code and the kind of failure it is. The sandbox's routes answer them in the sandbox's
// envelope with the status the interface gives each code (routes/envelope.ts).
import { ServiceError } from "../errors.ts";

/** Every `svc_code` of the sandbox's error envelope: those of the interface's Errors table, and those this
 * sandbox adds where the interface leaves them open (payload_too_large, idempotency_key_reused, rate_limited,
 * internal_error, service_unavailable; the routes alone answer payload_too_large, internal_error and
 * service_unavailable). */
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

const SVC_CODE_SET: ReadonlySet<string> = new Set(SVC_CODES);

/** Whether `code` is one of the sandbox's codes (a ServiceError of shared code may carry another). */
export function isSvcCode(code: string): code is SvcCode {
  return SVC_CODE_SET.has(code);
}

/** The sandbox's domain errors: the codes the domain and the routes refuse a request with. */
export const sandboxErrors = {
  invalidRequest: (message: string) => new ServiceError("invalid", "invalid_request", message),
  unauthorized: (message = "a valid bearer token is required (POST /auth/token)") =>
    new ServiceError("unauthorized", "unauthorized", message),
  signatureInvalid: (message: string) => new ServiceError("unauthorized", "signature_invalid", message),
  notFound: (message: string) => new ServiceError("not_found", "not_found", message),
  deviceNotFound: (deviceId: string) => new ServiceError("not_found", "device_not_found", `device ${deviceId} is unknown or deregistered`),
  baselineIncomplete: (message: string) => new ServiceError("conflict", "baseline_incomplete", message),
  counterRegression: (message: string) => new ServiceError("invalid", "counter_regression", message),
  idempotencyKeyReused: () =>
    new ServiceError(
      "conflict",
      "idempotency_key_reused",
      "this Idempotency-Key was used with a different request body; use a new key for a new batch",
    ),
};
