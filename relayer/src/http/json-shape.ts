// Limits on the shape of a JSON body: how deeply it nests and how many members one object has. No field of
// either interface nests more than a few levels or has more than a few dozen members, but JSON.parse takes
// about a second of CPU for a 1 MiB body of nested brackets (`[[[[...]]]]`), and a 1 MiB object of distinct
// unknown keys cost the relayer 260-370 ms of CPU (parsing it into a dictionary, then the validation's
// "unrecognized keys" issue listing every key, echoed in a response as large as the request), during which
// the process answers nobody. This middleware refuses such bodies before anything parses them, with one
// linear scan that costs a few milliseconds for the largest body the routes accept.
import type { Context, MiddlewareHandler } from "hono";

/** The deepest nesting of arrays and objects a JSON body may have. */
export const MAX_JSON_DEPTH = 32;
/** The most members one object of a JSON body may have (no request object of either interface has more than
 * a few dozen). */
export const MAX_JSON_MEMBERS = 256;

export const JSON_TOO_DEEP_MESSAGE = `the JSON body nests arrays or objects more than ${MAX_JSON_DEPTH} levels deep`;
export const JSON_TOO_WIDE_MESSAGE = `an object of the JSON body has more than ${MAX_JSON_MEMBERS} members`;

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COLON = 0x3a;
const OPEN_ARRAY = 0x5b;
const CLOSE_ARRAY = 0x5d;
const OPEN_OBJECT = 0x7b;
const CLOSE_OBJECT = 0x7d;

/** What is wrong with the shape of JSON text: "depth" if it nests arrays and objects deeper than
 * `limits.depth`, "members" if one of its objects has more than `limits.members` members (brackets and colons
 * inside strings do not count), else undefined. One left-to-right pass; text that is not JSON gets an answer
 * too, which the parser then refuses anyway. */
export function jsonShapeProblem(
  text: string,
  limits: { depth: number; members: number } = { depth: MAX_JSON_DEPTH, members: MAX_JSON_MEMBERS },
): "depth" | "members" | undefined {
  let depth = 0;
  // The members counted so far in each open container, by depth (an array's stays below 0: colons appear
  // outside strings only between an object's keys and values).
  const members: number[] = [0];
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === QUOTE) {
      // Skip the string: to the next quote preceded by an even run of backslashes (each run is counted
      // once, from the quote that ends it, so the whole pass stays linear).
      for (;;) {
        const end = text.indexOf('"', i + 1);
        if (end < 0) return undefined;
        let run = 0;
        while (text.charCodeAt(end - 1 - run) === BACKSLASH) run++;
        i = end;
        if (run % 2 === 0) break;
      }
    } else if (c === COLON) {
      if (depth > 0 && members[depth] >= 0 && ++members[depth] > limits.members) return "members";
    } else if (c === OPEN_ARRAY || c === OPEN_OBJECT) {
      if (++depth > limits.depth) return "depth";
      members[depth] = c === OPEN_OBJECT ? 0 : -1;
    } else if (c === CLOSE_ARRAY || c === CLOSE_OBJECT) {
      if (depth > 0) depth--;
    }
  }
  return undefined;
}

/** Refuses JSON bodies nested deeper than MAX_JSON_DEPTH or with an object of more than MAX_JSON_MEMBERS
 * members with `refuse` and the message that says which (each interface answers in its own envelope). Bodies
 * of other types, and requests without one, pass. */
export function refuseMisshapenJson(refuse: (c: Context, message: string) => Response): MiddlewareHandler {
  const check: MiddlewareHandler = async (c, next) => {
    const type = (c.req.header("content-type") ?? "").split(";")[0].trim().toLowerCase();
    if (/^application\/([\w.-]+\+)?json$/.test(type)) {
      let text: string | undefined;
      try {
        text = await c.req.text();
      } catch {
        // the body could not be read: the validator answers that
      }
      const problem = text === undefined ? undefined : jsonShapeProblem(text);
      if (problem) return refuse(c, problem === "depth" ? JSON_TOO_DEEP_MESSAGE : JSON_TOO_WIDE_MESSAGE);
    }
    await next();
  };
  // A request without a body goes straight on, without an asynchronous step of this middleware's own.
  return (c, next) => {
    const method = c.req.method;
    return method === "GET" || method === "HEAD" || method === "OPTIONS" ? next() : check(c, next);
  };
}
