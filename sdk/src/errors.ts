// The error an SDK call throws when the service answers with an error: its HTTP status and the service's error
// envelope, so a caller can branch on `code` (e.g. 409 quote_expired, 422 cash_limit_exceeded).

/** The payment service's error envelope `{"error": {code, message, details?}, requestId}`, or the sandbox's
 * `{"error": {svc_code, message}, environment}`. */
export type ErrorBody = {
  error?: { code?: string; svc_code?: string; message?: string; details?: unknown };
  requestId?: string;
  [key: string]: unknown;
};

export class PaygApiError extends Error {
  /** The HTTP status. */
  readonly status: number;
  /** The service's error code (`error.code`, or the sandbox's `error.svc_code`); "http_<status>" when the answer
   * had no envelope. */
  readonly code: string;
  /** The request's id (`requestId`): quote it to the operator. */
  readonly requestId: string | undefined;
  /** The whole answer, parsed. */
  readonly body: unknown;

  constructor(status: number, body: unknown, context = "") {
    const envelope = (body && typeof body === "object" ? body : {}) as ErrorBody;
    const code = envelope.error?.code ?? envelope.error?.svc_code ?? `http_${status}`;
    const message = envelope.error?.message ?? (typeof body === "string" && body ? body.slice(0, 200) : `HTTP ${status}`);
    super(`${context ? `${context}: ` : ""}${status} ${code}: ${message}`);
    this.name = "PaygApiError";
    this.status = status;
    this.code = code;
    this.requestId = envelope.requestId;
    this.body = body;
  }
}

/** The `data` of an openapi-fetch result, or throws PaygApiError with its `error`. */
export function unwrap<T>(result: { data?: T; error?: unknown; response: Response }, context = ""): T {
  if (result.error !== undefined || !result.response.ok) throw new PaygApiError(result.response.status, result.error, context);
  return result.data as T;
}
