// Authentication of /v1 routes: API keys for server-to-server calls, the portal's JWT for portal routes.
// Both read `Authorization: Bearer <credential>`; portal pages may carry the JWT in the session cookie.
import { and, eq, isNull, lt, or } from "drizzle-orm";
import type { MiddlewareHandler } from "hono";
import { getCookie } from "hono/cookie";
import type { Db } from "../db/client.ts";
import { apiKeys } from "../db/schema.ts";
import { errors } from "../errors.ts";
import type { AppEnv, Identity } from "../http/env.ts";
import { hashApiKey, isWellFormedApiKey } from "./api-keys.ts";
import type { JwtSigner } from "./jwt.ts";
import { liveSessionUser } from "./sessions.ts";

export const SESSION_COOKIE = "payg_session";
const LAST_USED_RESOLUTION_MS = 60_000;

function bearer(header: string | undefined): string | undefined {
  const match = header ? /^Bearer\s+(\S+)\s*$/i.exec(header) : null;
  return match?.[1];
}

/** Requires a live API key; with `roles`, one of those roles (else 403). */
export function requireApiKey(db: Db, roles?: Array<"developer" | "agent">): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    const key = bearer(c.req.header("authorization"));
    if (!key || !isWellFormedApiKey(key)) throw errors.unauthorized("a valid API key is required");
    const [row] = await db
      .select({ id: apiKeys.id, tenantId: apiKeys.tenantId, role: apiKeys.role, lastUsedAt: apiKeys.lastUsedAt })
      .from(apiKeys)
      .where(and(eq(apiKeys.keyHash, hashApiKey(key)), isNull(apiKeys.revokedAt)))
      .limit(1);
    if (!row) throw errors.unauthorized("a valid API key is required");
    if (roles && !roles.includes(row.role)) {
      throw errors.forbidden(`this route needs an API key with the ${roles.join(" or ")} role`);
    }
    const now = new Date();
    if (!row.lastUsedAt || now.getTime() - row.lastUsedAt.getTime() > LAST_USED_RESOLUTION_MS) {
      await db
        .update(apiKeys)
        .set({ lastUsedAt: now })
        .where(
          and(
            eq(apiKeys.id, row.id),
            or(isNull(apiKeys.lastUsedAt), lt(apiKeys.lastUsedAt, new Date(now.getTime() - LAST_USED_RESOLUTION_MS))),
          ),
        );
    }
    c.set("identity", { kind: "api_key", tenantId: row.tenantId, keyId: row.id, role: row.role });
    await next();
  };
}

/** Requires a valid portal JWT (Authorization header, or the session cookie of the portal's pages). */
export function requireUser(db: Db, jwt: JwtSigner, opts: { cookie?: boolean } = {}): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    const token = bearer(c.req.header("authorization")) ?? (opts.cookie ? getCookie(c, SESSION_COOKIE) : undefined);
    const claims = token ? await jwt.verify(token) : undefined;
    if (!claims) throw errors.unauthorized("a valid session token is required");
    // The session must be live in the database (not signed out, not expired): checked on every request.
    const user = await liveSessionUser(db, claims);
    if (!user) throw errors.unauthorized("a valid session token is required");
    c.set("identity", {
      kind: "user",
      tenantId: user.tenantId,
      userId: user.id,
      email: user.email,
      name: user.name,
      sessionId: claims.sessionId,
    });
    await next();
  };
}

/** Who the `Authorization` header names when it is a live credential (an API key not revoked, a portal JWT
 * of a live session), else undefined. Refuses nothing and records nothing: for code that must know the caller
 * before the route's own authentication runs (http/idempotency.ts scopes Idempotency-Keys with it). */
export async function identifyCredential(db: Db, jwt: JwtSigner, header: string | undefined): Promise<Identity | undefined> {
  const token = bearer(header);
  if (!token) return undefined;
  if (token.startsWith("payg_")) {
    if (!isWellFormedApiKey(token)) return undefined;
    const [row] = await db
      .select({ id: apiKeys.id, tenantId: apiKeys.tenantId, role: apiKeys.role })
      .from(apiKeys)
      .where(and(eq(apiKeys.keyHash, hashApiKey(token)), isNull(apiKeys.revokedAt)))
      .limit(1);
    return row ? { kind: "api_key", tenantId: row.tenantId, keyId: row.id, role: row.role } : undefined;
  }
  const claims = await jwt.verify(token);
  const user = claims ? await liveSessionUser(db, claims) : undefined;
  if (!claims || !user) return undefined;
  return { kind: "user", tenantId: user.tenantId, userId: user.id, email: user.email, name: user.name, sessionId: claims.sessionId };
}

/** Requires a portal JWT or an API key with one of `roles` (403 for a key of another role). */
export function requireUserOrApiKey(db: Db, jwt: JwtSigner, roles: Array<"developer" | "agent">): MiddlewareHandler<AppEnv> {
  const keyAuth = requireApiKey(db, roles);
  const userAuth = requireUser(db, jwt);
  return (c, next) => {
    const token = bearer(c.req.header("authorization"));
    return token?.startsWith("payg_") ? keyAuth(c, next) : userAuth(c, next);
  };
}

/** Accepts either credential: an API key (a `payg_` bearer) or a portal JWT. */
export function requireAnyCredential(db: Db, jwt: JwtSigner): MiddlewareHandler<AppEnv> {
  const keyAuth = requireApiKey(db);
  const userAuth = requireUser(db, jwt);
  return (c, next) => {
    const token = bearer(c.req.header("authorization"));
    return token?.startsWith("payg_") ? keyAuth(c, next) : userAuth(c, next);
  };
}
