// GET /metrics (Prometheus text format) and the timer of every HTTP request.
//
// Who may scrape:
// - METRICS_TOKEN set: whoever sends `Authorization: Bearer <METRICS_TOKEN>` (compared in constant time),
//   from any address; anything else is 401.
// - METRICS_TOKEN not set: only a request from the loopback interface (127.0.0.0/8, ::1) that carries no
//   forwarding header (Forwarded, X-Forwarded-For, X-Real-IP: a reverse proxy on the same host would make
//   every client look local); anything else is 404, as if the route did not exist.
import { createHash, timingSafeEqual } from "node:crypto";
import type { Context } from "hono";
import { METHOD_NAME_ALL } from "hono/router";
import { matchedRoutes } from "hono/route";
import type { AppEnv } from "../http/env.ts";
import { errorBody } from "../http/errors.ts";
import { FORWARDING_HEADERS, isLoopback } from "../http/client-address.ts";
import { type RequestTimer, clientAddress } from "../http/middleware.ts";
import type { Observer } from "./batched-histogram.ts";
import type { Metrics } from "./registry.ts";

/** The methods that get a label of their own; any other is counted as "other". */
const METHODS = new Set(["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"]);

/** The route template of the request: the registered path of the route that answered it (e.g.
 * /v1/orders/:id), never the raw URL. When a middleware answered first (401, 413, 429...), the path of the
 * route it guarded; "unmatched" when no route has the path (404). */
export function routeTemplate(c: Context): string {
  const routes = matchedRoutes(c);
  for (let i = Math.max(0, c.req.routeIndex); i < routes.length; i++) {
    if (routes[i].method !== METHOD_NAME_ALL) return routes[i].path;
  }
  return "unmatched";
}

/** What the request context (http/middleware.ts) calls once a request is answered (its RequestTimer): observes
 * it in payg_http_request_duration_seconds. The series of each label set is made once and kept, found again
 * through maps keyed by the label values themselves (no key text built per request); the label sets are bounded:
 * registered route templates, a few methods, the statuses the service answers. A function the request
 * context calls rather than a middleware of its own: each middleware layer is an async function and a
 * promise more on every request. */
export function httpRequestTimer(metrics: Metrics): RequestTimer {
  const byRoute = new Map<string, Map<number, Map<string, Observer>>>();
  const seriesOf = (method: string, route: string, status: number): Observer => {
    let byStatus = byRoute.get(route);
    if (!byStatus) byRoute.set(route, (byStatus = new Map()));
    let byMethod = byStatus.get(status);
    if (!byMethod) byStatus.set(status, (byMethod = new Map()));
    let series = byMethod.get(method);
    if (!series) {
      series = metrics.httpRequests.series({ method, route, status: String(status) });
      byMethod.set(method, series);
    }
    return series;
  };
  return (c, seconds) => {
    const method = METHODS.has(c.req.method) ? c.req.method : "other";
    seriesOf(method, routeTemplate(c), c.res.status).observe(seconds);
  };
}

function digest(value: string): Buffer {
  return createHash("sha256").update(value).digest();
}

/** Whether the request may read the metrics (see the top of this file). */
export function mayScrape(c: Context, token: string | undefined): boolean {
  if (token !== undefined) {
    const header = c.req.header("authorization") ?? "";
    const presented = header.startsWith("Bearer ") ? header.slice("Bearer ".length) : "";
    // Digests of equal length: the comparison takes the same time whatever was sent.
    return timingSafeEqual(digest(presented), digest(token));
  }
  return isLoopback(clientAddress(c)) && FORWARDING_HEADERS.every((name) => c.req.header(name) === undefined);
}

/** The handler of GET /metrics. */
export function metricsHandler(metrics: Metrics, token: string | undefined) {
  return async (c: Context<AppEnv>) => {
    if (!mayScrape(c, token)) {
      if (token === undefined) return c.json(errorBody(c, "not_found", `no route ${c.req.method} ${c.req.path}`), 404);
      return c.json(errorBody(c, "unauthorized", "a valid metrics token is required (Authorization: Bearer)"), 401, {
        "www-authenticate": 'Bearer realm="metrics"',
      });
    }
    const body = await metrics.registry.metrics();
    return c.body(body, 200, { "content-type": metrics.registry.contentType, "cache-control": "no-store" });
  };
}
