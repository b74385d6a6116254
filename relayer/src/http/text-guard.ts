// Text no field of either interface accepts: U+0000 (NUL), and half of a UTF-16 surrogate pair (which JSON
// can escape as \ud800 but which is no character at all). PostgreSQL cannot store either (text refuses NUL,
// jsonb refuses both), so such a value reaching a query failed there with a 500. This middleware refuses the
// request first, wherever the value is: percent-encoded in the path or the query (%00), or in a JSON or
// form body. Well-formed requests pay one string scan (bodies are read once, and cached for the validator).
import type { Context, MiddlewareHandler } from "hono";

export type UnstorableAt = "path" | "query" | "body";

/** Whether JSON text escapes U+0000 or an unpaired surrogate (an escape preceded by an even number of
 * backslashes is text, not an escape). */
export function jsonEscapesUnstorable(text: string): boolean {
  if (!text.includes("\\u")) return false;
  const escape = /(\\+)u([0-9a-fA-F]{4})/g;
  for (let m = escape.exec(text); m; m = escape.exec(text)) {
    if (m[1].length % 2 === 0) continue;
    const code = parseInt(m[2], 16);
    if (code === 0) return true;
    if (code >= 0xdc00 && code <= 0xdfff) return true;
    if (code >= 0xd800 && code <= 0xdbff) {
      const low = /^\\u[dD][c-fC-F][0-9a-fA-F]{2}/.exec(text.slice(escape.lastIndex, escape.lastIndex + 6));
      if (!low) return true;
      escape.lastIndex += 6;
    }
  }
  return false;
}

/** Where the request carries text no interface accepts, if anywhere. */
export async function findUnstorableText(c: Context): Promise<UnstorableAt | undefined> {
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
  return async (c, next) => {
    const where = await findUnstorableText(c);
    const refused = where ? refuse(c, where) : undefined;
    if (refused) return refused;
    await next();
  };
}

export const UNSTORABLE_TEXT_MESSAGE = "text must not contain the NUL character (U+0000) or an unpaired surrogate (\\ud800-\\udfff)";
