// Request-scoped middleware: request id, access log and request timing; rate limiting.
import type { MiddlewareHandler } from "hono";
import { getConnInfo } from "@hono/node-server/conninfo";
import { newId } from "../ids.ts";
import type { Logger } from "../logger.ts";
import { errors } from "../errors.ts";
import type { AppEnv, Identity } from "./env.ts";
import { type ClientNetwork, DIRECT_CLIENTS, addressGroup, resolveClientAddress } from "./client-address.ts";

const requestIdPattern = /^[A-Za-z0-9_.:-]{1,100}$/;

/** What the request context calls once a request is answered, with its duration in seconds
 * (metrics/route.ts httpRequestTimer observes it in the request histogram). */
export type RequestTimer = (c: Parameters<MiddlewareHandler>[0], seconds: number) => void;

/** The first layer of every request: assigns the request id (a sane incoming x-request-id is kept), echoes
 * it, logs one line a request and times it (`timer`: metrics/route.ts), even when what follows throws.
 * `network`: the trusted proxies clientAddress() reads forwarded addresses from (none by default). */
export function requestContext(logger: Logger, timer: RequestTimer, network?: ClientNetwork): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    const started = performance.now();
    if (network) c.set("clientNetwork", network);
    const incoming = c.req.header("x-request-id");
    const requestId = incoming && requestIdPattern.test(incoming) ? incoming : newId("req");
    c.set("requestId", requestId);
    c.set("logger", new LazyChild(logger, { requestId }));
    try {
      await next();
    } finally {
      timer(c, (performance.now() - started) / 1000);
    }
    setResponseHeader(c, "x-request-id", requestId);
    const identity = c.get("identity");
    // The same line as the request's own logger would write, without making one for a request whose
    // handler logged nothing (most of them).
    logger.info("request", {
      requestId,
      method: c.req.method,
      path: c.req.path,
      status: c.res.status,
      durationMs: Math.round((performance.now() - started) * 10) / 10,
      tenantId: identity?.tenantId,
    });
  };
}

/** `logger.child(fields)`, made when first used. A class, so that a request makes one object here, not one
 * closure per method. */
class LazyChild implements Logger {
  readonly #parent: Logger;
  readonly #fields: Record<string, unknown>;
  #child: Logger | undefined;

  constructor(parent: Logger, fields: Record<string, unknown>) {
    this.#parent = parent;
    this.#fields = fields;
  }

  get #logger(): Logger {
    return (this.#child ??= this.#parent.child(this.#fields));
  }

  debug(msg: string, fields?: Record<string, unknown>) {
    this.#logger.debug(msg, fields);
  }

  info(msg: string, fields?: Record<string, unknown>) {
    this.#logger.info(msg, fields);
  }

  warn(msg: string, fields?: Record<string, unknown>) {
    this.#logger.warn(msg, fields);
  }

  error(msg: string, fields?: Record<string, unknown>) {
    this.#logger.error(msg, fields);
  }

  child(fields: Record<string, unknown>): Logger {
    return this.#logger.child(fields);
  }
}

/** Sets a header on the response a handler produced. The same as c.header() after next(), without its
 * cost: Hono's c.header() on a finished response asks whether the body was used, which makes
 * @hono/node-server turn its lightweight response into a full Fetch API Response (a ReadableStream body
 * and a copy of the headers) on every request. Headers that cannot be changed (a Response from fetch())
 * go the c.header() way. */
export function setResponseHeader(c: Parameters<MiddlewareHandler>[0], name: string, value: string) {
  try {
    c.res.headers.set(name, value);
  } catch {
    c.header(name, value);
  }
}

/** The client's address: the socket's peer, or, when that peer is a trusted proxy (TRUST_PROXY), the address
 * the proxies forwarded (client-address.ts). "unknown" when there is no socket (a request made in process). */
export function clientAddress(c: Parameters<MiddlewareHandler>[0]): string {
  let peer: string | undefined;
  try {
    peer = getConnInfo(c).remote.address;
  } catch {
    peer = undefined;
  }
  if (peer === undefined) return "unknown";
  const network = (c.get("clientNetwork") as ClientNetwork | undefined) ?? DIRECT_CLIENTS;
  return resolveClientAddress(network, peer, network.trusted ? c.req.header(network.header) : undefined);
}

/** Who a limit counts a request against: the credential when the request has one (an API key counts for its
 * tenant, which may make more keys; a portal user for the user, who may open more sessions; a sandbox client
 * for its client id), otherwise the client's address, an IPv6 address with the rest of its /64. */
export function clientIdentity(c: Parameters<MiddlewareHandler>[0]): string {
  const identity = c.get("identity") as Identity | undefined;
  if (identity?.kind === "api_key") return `tenant:${identity.tenantId}`;
  if (identity?.kind === "user") return `user:${identity.userId}`;
  const sandboxClient: unknown = c.get("energyClientId");
  if (typeof sandboxClient === "string") return `sandbox-client:${sandboxClient}`;
  return `address:${addressGroup(clientAddress(c))}`;
}

/** A token bucket per client (`key`, by default clientIdentity: the credential, else the address or IPv6
 * /64): `capacity` requests at once, refilled at `perSecond`. Answers 429 with retry-after when empty. In
 * memory, per process. */
export function rateLimit(opts: {
  capacity: number;
  perSecond: number;
  key?: (c: Parameters<MiddlewareHandler>[0]) => string;
  onLimited?: (c: Parameters<MiddlewareHandler>[0], retryAfterSeconds: number) => Response | Promise<Response>;
}): MiddlewareHandler<AppEnv> {
  const buckets = new Map<string, { tokens: number; at: number }>();
  const keyOf = opts.key ?? clientIdentity;
  return async (c, next) => {
    const key = keyOf(c);
    const now = Date.now();
    const bucket = buckets.get(key) ?? { tokens: opts.capacity, at: now };
    bucket.tokens = Math.min(opts.capacity, bucket.tokens + ((now - bucket.at) / 1000) * opts.perSecond);
    bucket.at = now;
    if (bucket.tokens < 1) {
      buckets.set(key, bucket);
      const retryAfter = Math.max(1, Math.ceil((1 - bucket.tokens) / opts.perSecond));
      if (opts.onLimited) return opts.onLimited(c, retryAfter);
      throw errors.rateLimited(retryAfter);
    }
    bucket.tokens -= 1;
    buckets.set(key, bucket);
    if (buckets.size > 50_000) {
      for (const [k, b] of buckets) if (now - b.at > 60_000) buckets.delete(k);
    }
    await next();
  };
}
