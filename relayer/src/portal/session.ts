// The portal's session and CSRF protection.
//
// Session: the JWT of POST /v1/auth/login in the cookie payg_session: HttpOnly (no script reads it),
// SameSite=Strict (no other site's page sends it), Path=/portal (the JSON API never receives it: the
// portal forwards it as a bearer token), Secure when the portal is served over TLS (the request is
// https, or PUBLIC_BASE_URL is), Max-Age the JWT's lifetime. Signing out (POST /portal/logout) ends the
// session on the server through POST /v1/auth/logout before the cookie is deleted, so a copy of the cookie
// kept elsewhere is refused too.
//
// CSRF: every form carries a token, and every POST is checked three ways:
//   1. the token: HMAC-SHA256 of the session (a hash of its JWT) under a key derived from JWT_SECRET; before
//      sign-in, of a random value in the HttpOnly cookie payg_csrf (double submit, signed, so a cookie
//      planted by a sibling domain does not help without the key);
//   2. Origin, when the browser sends it, must be the portal's own origin;
//   3. Sec-Fetch-Site, when sent, must not be cross-site or same-site.
import { createHash, createHmac, hkdfSync, randomBytes, timingSafeEqual } from "node:crypto";
import type { Context } from "hono";
import { deleteCookie, getCookie, setCookie } from "hono/cookie";
import { SESSION_COOKIE } from "../auth/middleware.ts";
import type { Config } from "../config.ts";

export const CSRF_COOKIE = "payg_csrf";
export const PORTAL_PATH = "/portal";

export function createPortalSession(config: Config) {
  const key = Buffer.from(hkdfSync("sha256", Buffer.from(config.JWT_SECRET, "utf8"), "payg-portal", "portal csrf tokens v1", 32));
  const publicOrigin = new URL(config.publicBaseUrl).origin;

  const isTls = (c: Context) => new URL(c.req.url).protocol === "https:" || config.publicBaseUrl.startsWith("https:");
  const mac = (binding: string) => createHmac("sha256", key).update(binding).digest("base64url");
  const sessionBinding = (token: string) => `session:${createHash("sha256").update(token).digest("base64url")}`;

  /** The sign-in nonce issued during this request (every form of one page gets the same). */
  const issued = new WeakMap<Context, string>();

  function cookieOptions(c: Context, maxAge: number) {
    return { path: PORTAL_PATH, httpOnly: true, secure: isTls(c), sameSite: "Strict" as const, maxAge };
  }

  return {
    token(c: Context): string | undefined {
      return getCookie(c, SESSION_COOKIE);
    },
    start(c: Context, token: string, expiresIn: number) {
      setCookie(c, SESSION_COOKIE, token, cookieOptions(c, expiresIn));
      deleteCookie(c, CSRF_COOKIE, { path: PORTAL_PATH, secure: isTls(c) });
    },
    end(c: Context) {
      deleteCookie(c, SESSION_COOKIE, { path: PORTAL_PATH, secure: isTls(c) });
    },
    /** The CSRF token of the forms of this page: bound to the session, or (signed out) to payg_csrf. */
    csrfToken(c: Context): string {
      const session = getCookie(c, SESSION_COOKIE);
      if (session) return mac(sessionBinding(session));
      let nonce = issued.get(c) ?? getCookie(c, CSRF_COOKIE);
      if (!nonce || !/^[A-Za-z0-9_-]{22}$/.test(nonce)) {
        nonce = randomBytes(16).toString("base64url");
        setCookie(c, CSRF_COOKIE, nonce, cookieOptions(c, 3_600));
        issued.set(c, nonce);
      }
      return mac(`login:${nonce}`);
    },
    /** Whether a POST passes the CSRF checks (`submitted`: the form's _csrf field). */
    checkPost(c: Context, submitted: unknown): boolean {
      const origin = c.req.header("origin");
      if (origin && origin !== new URL(c.req.url).origin && origin !== publicOrigin) return false;
      const site = c.req.header("sec-fetch-site");
      if (site && site !== "same-origin" && site !== "none") return false;
      if (typeof submitted !== "string" || submitted.length === 0) return false;
      const session = getCookie(c, SESSION_COOKIE);
      const nonce = getCookie(c, CSRF_COOKIE);
      const expected = session ? mac(sessionBinding(session)) : nonce ? mac(`login:${nonce}`) : undefined;
      if (!expected) return false;
      const a = Buffer.from(submitted);
      const b = Buffer.from(expected);
      return a.length === b.length && timingSafeEqual(a, b);
    },
  };
}

export type PortalSession = ReturnType<typeof createPortalSession>;
