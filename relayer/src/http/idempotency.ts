// Idempotency-Key on the /v1 POST routes, with Stripe's semantics: a POST that carries the header runs once
// per key; a retry with the same key and the same request (method, path, body: JSON compared with its keys
// sorted) within 24 hours gets the first response back (status, body, Content-Type and Location) with
// `Idempotent-Replayed: true`, without running again. The same key with another request is 422
// `idempotency_key_reused`; a request while the first one with its key still runs is 409
// `idempotency_key_in_use` (Retry-After: 1). Keys belong to the caller (`scopeOf`: the API key, the portal
// user, or on a public route without a credential the client's address), so two callers never share one.
//
// Only a request that succeeded (2xx) keeps its answer: every refusal (4xx) of the service changes nothing (its
// routes write in one transaction, or not at all), and a 5xx may not have run, so the key is let go and a retry
// with it runs again, as Stripe lets go a request that failed validation. A kept answer that showed a secret
// once (a new API key, a signing secret, a session) is shown again to the same credential by its replay, the
// point of the header for a client that lost the first answer.
// The records are in the database (idempotency/store.ts), so this holds across relayer processes; the
// retention worker deletes them after 24 hours.
import { z } from "@hono/zod-openapi";
import type { Context, MiddlewareHandler } from "hono";
import { identifyCredential } from "../auth/middleware.ts";
import type { JwtSigner } from "../auth/jwt.ts";
import type { Db } from "../db/client.ts";
import { errors } from "../errors.ts";
import {
  IDEMPOTENCY_RETENTION_SECONDS,
  canonicalJson,
  claimIdempotencyKey,
  fingerprint,
  releaseIdempotencyKey,
  storeIdempotentResponse,
} from "../idempotency/store.ts";
import { createSecretBox } from "../webhooks/secrets.ts";
import type { Api } from "./api.ts";
import { addressGroup } from "./client-address.ts";
import type { AppEnv } from "./env.ts";
import { type ErrorCode, errorBody, errorResponseWith } from "./errors.ts";
import { clientAddress } from "./middleware.ts";

export const IDEMPOTENCY_HEADER = "Idempotency-Key";
export const IDEMPOTENCY_KEY_MAX_LENGTH = 255;
/** 1 to 255 visible ASCII characters (a UUID, or any token of the client's). */
export const IDEMPOTENCY_KEY_PATTERN = /^[\x21-\x7e]{1,255}$/;

/** The response headers a replay repeats (the request id is the replay's own). */
const REPLAYED_HEADERS = ["content-type", "location"];

export const IDEMPOTENCY_DESCRIPTION =
  `Makes the request safe to retry: the first request with a key runs; a retry with the same key and the same ` +
  `request (method, path and body; JSON compared with its keys in any order) within ${IDEMPOTENCY_RETENTION_SECONDS / 3600} h ` +
  "gets the first response again (status, body, Content-Type, Location) with the header `Idempotent-Replayed: true`, " +
  "and does not run again. The same key with another request is 422 `idempotency_key_reused`; a request while the " +
  "first one with its key still runs is 409 `idempotency_key_in_use` with Retry-After (seconds). A key belongs to " +
  "the credential that sent it (an API key, a portal user; on a public operation without one, the client's " +
  `address). 1 to ${IDEMPOTENCY_KEY_MAX_LENGTH} visible ASCII characters (a UUID v4 is a good choice); anything else ` +
  "is 400 `invalid_idempotency_key`. Only a success (2xx) is kept: after a 4xx (which changed nothing) or a 5xx, a retry " +
  "with the key runs again.";

/** The request's hash: method, path with query, and the body (canonical JSON when it parses). */
async function requestHash(c: Context<AppEnv>): Promise<string> {
  const text = await c.req.text();
  let body = text;
  try {
    if (text !== "") body = canonicalJson(JSON.parse(text));
  } catch {
    body = text;
  }
  const url = new URL(c.req.url);
  return fingerprint(c.req.method, url.pathname + url.search, body);
}

export function idempotency(opts: { db: Db; secretKey: string; scopeOf(c: Context<AppEnv>): Promise<string> }): MiddlewareHandler<AppEnv> {
  const box = createSecretBox(opts.secretKey, "payg relayer: idempotency-key answers v1");
  return async (c, next) => {
    const key = c.req.header(IDEMPOTENCY_HEADER);
    if (c.req.method !== "POST" || key === undefined) return next();
    if (!IDEMPOTENCY_KEY_PATTERN.test(key)) {
      return c.json(
        errorBody(
          c,
          "invalid_idempotency_key",
          `the Idempotency-Key header must be 1 to ${IDEMPOTENCY_KEY_MAX_LENGTH} visible ASCII characters`,
          [{ path: IDEMPOTENCY_HEADER, message: "expected 1 to 255 characters from ! to ~ (no spaces)" }],
        ),
        400,
      );
    }
    const scope = await opts.scopeOf(c);
    const hash = await requestHash(c);
    const claim = await claimIdempotencyKey(opts.db, scope, key, hash);
    if (claim.kind === "reused") {
      throw errors.refused(
        "idempotency_key_reused",
        `this Idempotency-Key was used with another request (method, path or body) in the last ${IDEMPOTENCY_RETENTION_SECONDS / 3600} hours; use a new key for a new request`,
      );
    }
    if (claim.kind === "in_progress") {
      throw errors.conflict("idempotency_key_in_use", "a request with this Idempotency-Key is still running; retry after it has finished", {
        retryAfterSeconds: claim.retryAfterSeconds,
      });
    }
    if (claim.kind === "replay") {
      const { status, headers, body } = claim.response;
      // A 204 (sign-out) has no body to give back: a Response may not have one.
      const replayHeaders = { ...headers, "idempotent-replayed": "true" };
      if (status === 204 || status === 205 || status === 304) return c.body(null, status, replayHeaders);
      return c.body(box.open(body, `${scope}\n${key}`), status as 200, replayHeaders);
    }
    /** Lets the key go; the answer stays the request's own if that fails too (the hold then ends by itself). */
    const release = () =>
      releaseIdempotencyKey(opts.db, scope, key, claim.lockedUntil).catch((error: unknown) =>
        c.get("logger").warn("an idempotency key could not be let go", { idempotencyKey: key, error: (error as Error).message }),
      );
    try {
      await next();
    } catch (error) {
      await release();
      throw error;
    }
    const res = c.res;
    const body = await res.clone().text();
    if (res.status < 200 || res.status >= 300) {
      await release();
      return;
    }
    const headers: Record<string, string> = {};
    for (const name of REPLAYED_HEADERS) {
      const value = res.headers.get(name);
      if (value !== null) headers[name] = value;
    }
    // The request has run: its answer goes out even if it cannot be kept (a retry then finds the key held
    // until IDEMPOTENCY_LOCK_SECONDS have passed, and runs again after that).
    try {
      const stored = await storeIdempotentResponse(opts.db, scope, key, claim.lockedUntil, {
        status: res.status,
        headers,
        body: box.seal(body, `${scope}\n${key}`),
      });
      if (!stored) c.get("logger").warn("idempotency key taken over before its response was stored", { idempotencyKey: key });
    } catch (error) {
      c.get("logger").warn("the response of an idempotent request could not be stored", {
        idempotencyKey: key,
        error: (error as Error).message,
      });
    }
  };
}

/** Whose keys a request's are: its API key, its portal user, or (no live credential) its client's address
 * (an IPv6 address with the rest of its /64). */
export function idempotencyScope(db: Db, jwt: JwtSigner) {
  return async (c: Context<AppEnv>): Promise<string> => {
    const identity = await identifyCredential(db, jwt, c.req.header("authorization"));
    if (identity?.kind === "api_key") return `key:${identity.keyId}`;
    if (identity?.kind === "user") return `user:${identity.userId}`;
    return `address:${addressGroup(clientAddress(c))}`;
  };
}

/** The errors the header adds to every POST operation. */
const IDEMPOTENCY_ERRORS: Array<[400 | 409 | 422, ErrorCode]> = [
  [400, "invalid_idempotency_key"],
  [409, "idempotency_key_in_use"],
  [422, "idempotency_key_reused"],
];

/** A documented error response (http/errors.ts errorResponseWith) with `code` among its codes. */
function withCode(response: unknown, code: ErrorCode) {
  const schema = (response as { content?: { "application/json"?: { schema?: unknown } } } | undefined)?.content?.["application/json"]
    ?.schema;
  const codes = (schema as { shape?: { error?: { shape?: { code?: { options?: ErrorCode[] } } } } } | undefined)?.shape?.error?.shape?.code
    ?.options;
  if (response !== undefined && codes === undefined) throw new Error("an error response not made by errorResponseWith");
  return errorResponseWith([...new Set([...(codes ?? []), code])]);
}

/** Documents the header on every POST operation registered in `registry`, as one shared parameter
 * (components.parameters.IdempotencyKey). Called once, after every route is registered. */
export function documentIdempotency(registry: Api["openAPIRegistry"]) {
  const parameter = registry.registerParameter(
    "IdempotencyKey",
    z
      .string()
      .min(1)
      .max(IDEMPOTENCY_KEY_MAX_LENGTH)
      .openapi({
        param: { name: IDEMPOTENCY_HEADER, in: "header", required: false, description: IDEMPOTENCY_DESCRIPTION },
        example: "5f0c6b7e-3a8d-4f61-9c1e-2b7d9a4e8f10",
      }),
  );
  for (const definition of registry.definitions) {
    if (definition.type !== "route" || definition.route.method !== "post") continue;
    const route = definition.route;
    const headers = route.request?.headers;
    if (headers !== undefined && !(headers instanceof z.ZodObject)) throw new Error(`${route.path}: request headers not a zod object`);
    const param = { [IDEMPOTENCY_HEADER]: parameter };
    route.request = { ...route.request, headers: headers ? headers.extend(param) : z.object(param) };
    for (const [status, code] of IDEMPOTENCY_ERRORS) route.responses[status] = withCode(route.responses[status], code);
  }
}
