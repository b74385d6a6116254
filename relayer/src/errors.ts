// What goes wrong, in the service's own words and without HTTP: a kind (what sort of failure), a code the
// interface names (`quote_expired`, `cash_limit_exceeded`...), a message for the client, details, and how long
// to wait before trying again where that is known. The domain (payments, webhooks, devices) and the routes
// throw these; each interface answers them in its own envelope with the status of their kind
// (http/errors.ts for /v1 and the pages).

export type ErrorDetail = { path?: string; message: string };

/** The sorts of failure a request can meet. */
export type FailureKind =
  "unauthorized" | "forbidden" | "not_found" | "conflict" | "invalid" | "rate_limited" | "upstream" | "unavailable" | "timeout";

/** Kinds that answer a client's request as it was made (the client's side): an answer, not a fault of the
 * service, never logged with a stack, so none is captured (in a profile of a flood of requests for orders that
 * do not exist, 4.5% of the relayer's CPU went to collecting stack traces). */
const CLIENT_KINDS: ReadonlySet<FailureKind> = new Set(["unauthorized", "forbidden", "not_found", "conflict", "invalid", "rate_limited"]);

/** For the constructor of an error that answers a request: lowers `Error.stackTraceLimit` for a client's
 * error and returns the value to put back right after `super()`. */
export function withoutStackFor(clientError: boolean): number {
  const limit = Error.stackTraceLimit;
  if (clientError) Error.stackTraceLimit = 0;
  return limit;
}

export class ServiceError extends Error {
  readonly kind: FailureKind;
  readonly code: string;
  readonly details?: ErrorDetail[];
  /** Seconds the client is asked to wait before trying again (a `retry-after`), where known. */
  readonly retryAfterSeconds?: number;

  constructor(kind: FailureKind, code: string, message: string, opts: { details?: ErrorDetail[]; retryAfterSeconds?: number } = {}) {
    const limit = withoutStackFor(CLIENT_KINDS.has(kind));
    super(message);
    Error.stackTraceLimit = limit;
    this.kind = kind;
    this.code = code;
    this.details = opts.details;
    this.retryAfterSeconds = opts.retryAfterSeconds;
  }
}

export const errors = {
  unauthorized: (message = "a valid credential is required") => new ServiceError("unauthorized", "unauthorized", message),
  forbidden: (message: string) => new ServiceError("forbidden", "forbidden", message),
  notFound: (what: string) => new ServiceError("not_found", "not_found", `${what} not found`),
  conflict: (code: string, message: string, opts: { retryAfterSeconds?: number } = {}) => new ServiceError("conflict", code, message, opts),
  invalid: (message: string, details?: ErrorDetail[]) => new ServiceError("invalid", "invalid_parameters", message, { details }),
  /** A valid request the service refuses for a rule of its own, named by `code` (e.g. a limit). */
  refused: (code: string, message: string, details?: ErrorDetail[]) => new ServiceError("invalid", code, message, { details }),
  deviceTimeout: (deviceId: string) =>
    new ServiceError("timeout", "device_timeout", `the device cloud did not answer in time for device ${deviceId}`),
  rateLimited: (retryAfterSeconds: number, message = "too many requests; retry later", code = "rate_limited") =>
    new ServiceError("rate_limited", code, message, { retryAfterSeconds }),
  badGateway: (message: string) => new ServiceError("upstream", "upstream_error", message),
  unavailable: (message: string, retryAfterSeconds?: number) =>
    new ServiceError("unavailable", "unavailable", message, { retryAfterSeconds }),
};
