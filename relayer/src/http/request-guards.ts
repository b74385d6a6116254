// The checks every request of an interface passes before its routes, as one middleware: the body's size
// (bodyLimit), text PostgreSQL cannot store in the path, the query or the body (text-guard.ts), and how deeply
// a JSON body nests and how wide its objects are (json-shape.ts). Each interface answers a refusal in its own envelope.
//
// One middleware rather than three: a request without a body (GET, HEAD) makes one synchronous scan of its
// URL and goes on to the routes, without a middleware layer (a closure and a promise) per check. GET routes
// are the busiest (order polling, statistics), so the layers were a measurable share of their cost.
import type { Context, Env, MiddlewareHandler, Next } from "hono";
import { refuseMisshapenJson } from "./json-shape.ts";
import { type UnstorableAt, refuseUnstorableText } from "./text-guard.ts";

export type RequestGuards<E extends Env> = {
  /** The body size limit (hono/body-limit's bodyLimit, or a choice between several). */
  limitBody: MiddlewareHandler<E>;
  /** The answer to text no field accepts; undefined lets the request through (e.g. in an unread query). */
  refuseText: (c: Context, where: UnstorableAt) => Response | undefined;
  /** The answer to a JSON body nested too deeply or with too wide an object (`message` says which). */
  refuseJson: (c: Context, message: string) => Response;
};

export function requestGuards<E extends Env>(guards: RequestGuards<E>): MiddlewareHandler<E> {
  const text = refuseUnstorableText(guards.refuseText);
  const deep = refuseMisshapenJson(guards.refuseJson);
  // A check's refusal becomes the response, by the rule Hono's compose applies to a middleware's return
  // value: only while nothing has answered yet. A check that lets the request on returns what `next`
  // resolved to (the context, once the routes or the not-found handler answered), which is no response.
  const then =
    (c: Context, check: MiddlewareHandler, next: Next): Next =>
    async () => {
      const answer = await check(c, next);
      if (answer && !c.finalized) c.res = answer;
    };
  return (c, next) => {
    const method = c.req.method;
    // No body to limit or scan: @hono/node-server attaches none to GET and HEAD requests.
    if (method === "GET" || method === "HEAD") return text(c, next);
    return guards.limitBody(c, then(c, text, then(c, deep, next)));
  };
}
