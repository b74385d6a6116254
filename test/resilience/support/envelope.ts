// Which interface answers a path, and whether an error answer is that interface's own envelope:
//   payments (/v1, and the relayer's own 404):  {"error": {"code", "message", "details"?}, "requestId"}
//   energy sandbox (/energy/v1):                 {"error": {"svc_code", "message"}, "environment": "sandbox"}
// Pages (/portal, /pay, the docs pages) answer HTML and are only held to "no 5xx".
import type { RawResponse } from "./http.ts";
import type { ApiDocs } from "./openapi.ts";

export type Answerer = "payments" | "energy" | "page";

export function answererOf(docs: ApiDocs, normalisedPath: string): Answerer {
  const energyBase = new URL(docs.energy.servers[0].url).pathname.replace(/\/$/, "");
  if (normalisedPath === energyBase || normalisedPath.startsWith(`${energyBase}/`)) return "energy";
  if (/^\/(portal|pay)(\/|$)/.test(normalisedPath) || /^\/(v1|energy)\/docs(\/|$)/.test(normalisedPath)) return "page";
  if (normalisedPath === "/") return "page";
  return "payments";
}

/** A stack frame, a source path or a module path in a body. */
const STACK_TRACE = /\n\s+at \S|\bat [\w$.<>]+ \((?:file:|\/)[^)]*:\d+:\d+\)|node_modules\/|\/relayer\/src\/|\.ts:\d+:\d+/;

export function hasStackTrace(text: string): boolean {
  return STACK_TRACE.test(text);
}

/** What is wrong with an error answer of `answerer` (undefined: it is the right envelope). `sentRequestId`:
 * the x-request-id the request carried, if any. */
export function envelopeProblem(docs: ApiDocs, answerer: Answerer, res: RawResponse, sentRequestId?: string): string | undefined {
  if (hasStackTrace(res.text)) return "a stack trace or source path in the body";
  if (answerer === "page") return undefined;
  if (!/^application\/json/.test(String(res.headers["content-type"] ?? ""))) return `content-type ${res.headers["content-type"]}`;
  const body = res.json;
  if (!body || typeof body !== "object" || Array.isArray(body)) return "the body is not a JSON object";
  if (answerer === "energy") {
    const codes: string[] = docs.energy.components.schemas.SandboxError.properties.error.properties.svc_code.enum;
    if (Object.keys(body).sort().join() !== "environment,error") return `top-level fields ${Object.keys(body)}`;
    if (body.environment !== "sandbox") return `environment ${body.environment}`;
    if (!body.error || Object.keys(body.error).sort().join() !== "message,svc_code") return `error fields ${Object.keys(body.error ?? {})}`;
    if (!codes.includes(body.error.svc_code)) return `svc_code ${body.error.svc_code} is not documented`;
    if (typeof body.error.message !== "string" || body.error.message.length === 0) return "no message";
    return undefined;
  }
  if (Object.keys(body).sort().join() !== "error,requestId") return `top-level fields ${Object.keys(body)}`;
  const error = body.error;
  if (!error || typeof error.code !== "string" || typeof error.message !== "string") return "error.code or error.message missing";
  if (Object.keys(error).some((k) => !["code", "message", "details"].includes(k))) return `error fields ${Object.keys(error)}`;
  if (error.details !== undefined && !Array.isArray(error.details)) return "error.details is not an array";
  const sane = sentRequestId !== undefined && /^[A-Za-z0-9_.:-]{1,100}$/.test(sentRequestId);
  if (sane ? body.requestId !== sentRequestId : !/^req_[0-9A-Z]{26}$/.test(body.requestId)) return `requestId ${body.requestId}`;
  if (res.headers["x-request-id"] !== body.requestId) return `x-request-id ${res.headers["x-request-id"]} differs from requestId`;
  return undefined;
}
