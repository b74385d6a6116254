// Text no field of either interface accepts: U+0000 (NUL), and half of a UTF-16 surrogate pair (which JSON
// can escape as \ud800 but which is no character at all). PostgreSQL cannot store either (text refuses NUL,
// jsonb refuses both), so such a value reaching a query failed there with a 500. This middleware refuses the
// request first, wherever the value is: percent-encoded in the path or the query (%00), or in a JSON or
// form body. Well-formed requests pay one string scan (bodies are read once, and cached for the validator).
import type { Context, MiddlewareHandler, Next } from "hono";

export type UnstorableAt = "path" | "query" | "body";

const BACKSLASH = 0x5c;
const LETTER_U = 0x75;

/** The value of the four hex digits at `at`, or -1 if there are not four hex digits there. */
function hex4(text: string, at: number): number {
  if (at + 4 > text.length) return -1;
  let value = 0;
  for (let i = at; i < at + 4; i++) {
    const c = text.charCodeAt(i);
    const digit = c >= 0x30 && c <= 0x39 ? c - 0x30 : c >= 0x41 && c <= 0x46 ? c - 0x37 : c >= 0x61 && c <= 0x66 ? c - 0x57 : -1;
    if (digit < 0) return -1;
    value = value * 16 + digit;
  }
  return value;
}

/** Whether JSON text escapes U+0000 or an unpaired surrogate (an escape preceded by an even number of
 * backslashes is text, not an escape). One left-to-right pass: each run of backslashes is counted once,
 * so the time is linear in the text whatever it holds (a regular expression matching the run, tried at
 * every position of a long run, was quadratic: one request could hold the event loop for minutes). */
export function jsonEscapesUnstorable(text: string): boolean {
  if (!text.includes("\\u")) return false;
  for (let start = text.indexOf("\\"); start >= 0;) {
    let end = start + 1;
    while (end < text.length && text.charCodeAt(end) === BACKSLASH) end++;
    // text[start, end) is a whole run of backslashes; an escape if an odd run is followed by u and 4 hex digits.
    const code = text.charCodeAt(end) === LETTER_U ? hex4(text, end + 1) : -1;
    let next = end;
    if (code >= 0) {
      next = end + 5;
      if ((end - start) % 2 === 1) {
        if (code === 0) return true;
        if (code >= 0xdc00 && code <= 0xdfff) return true;
        if (code >= 0xd800 && code <= 0xdbff) {
          const low = text.charCodeAt(next) === BACKSLASH && text.charCodeAt(next + 1) === LETTER_U ? hex4(text, next + 2) : -1;
          if (low < 0xdc00 || low > 0xdfff) return true;
          next += 6;
        }
      }
    }
    start = text.indexOf("\\", next);
  }
  return false;
}

/** Where the request carries text no interface accepts, if anywhere: answered at once when there is no body
 * to read (no asynchronous step for most requests), a promise when the body has to be read. */
export function findUnstorableText(c: Context): UnstorableAt | undefined | Promise<UnstorableAt | undefined> {
  const url = c.req.url;
  if (url.includes("%00")) {
    const query = url.indexOf("?");
    return query >= 0 && url.indexOf("%00") > query ? "query" : "path";
  }
  const method = c.req.method;
  if (method === "GET" || method === "HEAD" || method === "OPTIONS") return undefined;
  const type = (c.req.header("content-type") ?? "").split(";")[0].trim().toLowerCase();
  const json = /^application\/([\w.-]+\+)?json$/.test(type);
  const form = type === "application/x-www-form-urlencoded";
  if (!json && !form) return undefined;
  return findInBody(c, json);
}

async function findInBody(c: Context, json: boolean): Promise<UnstorableAt | undefined> {
  let text: string;
  try {
    text = await c.req.text();
  } catch {
    return undefined; // the body could not be read: the validator answers that
  }
  if (text.includes("\u0000")) return "body";
  if (json ? jsonEscapesUnstorable(text) : text.includes("%00")) return "body";
  return undefined;
}

/** Refuses requests carrying such text with `refuse` (each interface answers in its own envelope). */
export function refuseUnstorableText(refuse: (c: Context, where: UnstorableAt) => Response | undefined): MiddlewareHandler {
  const answer = (c: Context, next: Next, where: UnstorableAt | undefined): Promise<Response | void> => {
    const refused = where ? refuse(c, where) : undefined;
    return refused ? Promise.resolve(refused) : next();
  };
  return (c, next) => {
    const where = findUnstorableText(c);
    return where instanceof Promise ? where.then((found) => answer(c, next, found)) : answer(c, next, where);
  };
}

export const UNSTORABLE_TEXT_MESSAGE = "text must not contain the NUL character (U+0000) or an unpaired surrogate (\\ud800-\\udfff)";
