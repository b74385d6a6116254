// Authentication of the sandbox's bearer routes: `Authorization: Bearer <access_token>` from POST
// /auth/token. A missing, malformed, expired or unknown token (or one of a revoked client) is 401
// unauthorized in the sandbox's envelope.
import type { MiddlewareHandler } from "hono";
import type { Db } from "../../db/client.ts";
import { sandboxErrors } from "../errors.ts";
import type { EnergyEnv } from "../sandbox-api.ts";
import { isLiveClient } from "./client-credentials.ts";
import type { SandboxTokens } from "./tokens.ts";

function bearer(header: string | undefined): string | undefined {
  const match = header ? /^Bearer\s+([A-Za-z0-9._~+/-]+=*)\s*$/i.exec(header) : null;
  return match?.[1];
}

/** How long a verified token's client is trusted without asking the database again. */
const CLIENT_CHECK_MS = 30_000;
const CACHE_LIMIT = 10_000;

export function requireToken(db: Db, tokens: SandboxTokens): MiddlewareHandler<EnergyEnv> {
  // Verified tokens (a telemetry client sends many requests with one token): no signature check and no
  // client lookup per request. An entry lasts until the token expires; its client is checked again every
  // CLIENT_CHECK_MS.
  const verified = new Map<string, { clientId: string; expiresAtMs: number; checkedAtMs: number }>();

  async function clientOf(token: string): Promise<string | undefined> {
    const now = Date.now();
    const cached = verified.get(token);
    if (cached && now < cached.expiresAtMs && now - cached.checkedAtMs < CLIENT_CHECK_MS) return cached.clientId;
    verified.delete(token);
    const claims = cached && now < cached.expiresAtMs ? cached : await tokens.verify(token);
    if (!claims || now >= claims.expiresAtMs || !(await isLiveClient(db, claims.clientId))) return undefined;
    if (verified.size >= CACHE_LIMIT) {
      for (const [key, entry] of verified) if (now >= entry.expiresAtMs || verified.size >= CACHE_LIMIT) verified.delete(key);
    }
    verified.set(token, { clientId: claims.clientId, expiresAtMs: claims.expiresAtMs, checkedAtMs: now });
    return claims.clientId;
  }

  return async (c, next) => {
    const header = c.req.header("authorization");
    if (!header) throw sandboxErrors.unauthorized("the Authorization header is missing: send Bearer <access_token>");
    const token = bearer(header);
    if (!token) throw sandboxErrors.unauthorized("the Authorization header must be Bearer <access_token>");
    const clientId = await clientOf(token);
    if (!clientId) {
      throw sandboxErrors.unauthorized("the bearer token is invalid or expired; request a new one from POST /auth/token");
    }
    c.set("energyClientId", clientId);
    await next();
  };
}
