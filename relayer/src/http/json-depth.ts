// A limit on how deeply a JSON body nests. No field of either interface nests more than a few levels, but
// JSON.parse takes about a second of CPU for a 1 MiB body of nested brackets (`[[[[...]]]]`), during which
// the process answers nobody. This middleware refuses such bodies before anything parses them, with one
// linear scan that costs a few milliseconds for the largest body the routes accept.
import type { Context, MiddlewareHandler } from "hono";

/** The deepest nesting of arrays and objects a JSON body may have. */
export const MAX_JSON_DEPTH = 32;

export const JSON_TOO_DEEP_MESSAGE = `the JSON body nests arrays or objects more than ${MAX_JSON_DEPTH} levels deep`;

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_ARRAY = 0x5b;
const CLOSE_ARRAY = 0x5d;
const OPEN_OBJECT = 0x7b;
const CLOSE_OBJECT = 0x7d;

/** Whether JSON text nests arrays and objects deeper than `max` (brackets inside strings do not count).
 * One left-to-right pass; text that is not JSON gets an answer too, which the parser then refuses anyway. */
export function jsonNestsDeeperThan(text: string, max: number): boolean {
  let depth = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === QUOTE) {
      // Skip the string: to the next quote preceded by an even run of backslashes (each run is counted
      // once, from the quote that ends it, so the whole pass stays linear).
      for (;;) {
        const end = text.indexOf('"', i + 1);
        if (end < 0) return false;
        let run = 0;
        while (text.charCodeAt(end - 1 - run) === BACKSLASH) run++;
        i = end;
        if (run % 2 === 0) break;
      }
    } else if (c === OPEN_ARRAY || c === OPEN_OBJECT) {
      if (++depth > max) return true;
    } else if (c === CLOSE_ARRAY || c === CLOSE_OBJECT) {
      depth--;
    }
  }
  return false;
}

/** Refuses JSON bodies nested deeper than MAX_JSON_DEPTH with `refuse` (each interface answers in its own
 * envelope). Bodies of other types, and requests without one, pass. */
export function refuseDeepJson(refuse: (c: Context) => Response): MiddlewareHandler {
  const check: MiddlewareHandler = async (c, next) => {
    const type = (c.req.header("content-type") ?? "").split(";")[0].trim().toLowerCase();
    if (/^application\/([\w.-]+\+)?json$/.test(type)) {
      let text: string | undefined;
      try {
        text = await c.req.text();
      } catch {
        // the body could not be read: the validator answers that
      }
      if (text !== undefined && jsonNestsDeeperThan(text, MAX_JSON_DEPTH)) return refuse(c);
    }
    await next();
  };
  // A request without a body goes straight on, without an asynchronous step of this middleware's own.
  return (c, next) => {
    const method = c.req.method;
    return method === "GET" || method === "HEAD" || method === "OPTIONS" ? next() : check(c, next);
  };
}
