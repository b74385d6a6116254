// Request-scoped middleware: request id, access log and request timing; rate limiting.
import type { MiddlewareHandler } from "hono";
import { getConnInfo } from "@hono/node-server/conninfo";
import { newId } from "../ids.ts";
import type { Logger } from "../logger.ts";
import type { RequestTimer } from "../metrics/route.ts";
import { errors } from "./errors.ts";
import type { AppEnv } from "./env.ts";

const requestIdPattern = /^[A-Za-z0-9_.:-]{1,100}$/;

/** The first layer of every request: assigns the request id (a sane incoming x-request-id is kept), echoes
 * it, logs one line a request and times it (`timer`: metrics/route.ts), even when what follows throws. */
export function requestContext(logger: Logger, timer: RequestTimer): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    const started = performance.now();
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

/** The client's address as seen on the socket. */
export function clientAddress(c: Parameters<MiddlewareHandler>[0]): string {
  try {
    return getConnInfo(c).remote.address ?? "unknown";
  } catch {
    return "unknown";
  }
}

/** A token bucket per client address: `capacity` requests at once, refilled at `perSecond`. Answers 429
 * with retry-after when empty. In memory, per process. */
export function rateLimit(opts: {
  capacity: number;
  perSecond: number;
  key?: (c: Parameters<MiddlewareHandler>[0]) => string;
  onLimited?: (c: Parameters<MiddlewareHandler>[0], retryAfterSeconds: number) => Response | Promise<Response>;
}): MiddlewareHandler<AppEnv> {
  const buckets = new Map<string, { tokens: number; at: number }>();
  const keyOf = opts.key ?? clientAddress;
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
