// Portal session tokens: HS256 JWTs (jose) with issuer, audience, subject (user id), tenant, session id (jti),
// issue time and expiry. A token without exp, iat or jti is refused whatever its signature: every token
// this service signs names its session (auth/sessions.ts), which sign-out ends on the server.
import { SignJWT, jwtVerify } from "jose";

const ISSUER = "payg-relayer";
const AUDIENCE = "portal";
const REQUIRED_CLAIMS = ["exp", "iat", "jti", "sub"];

export type SessionClaims = { userId: string; tenantId: string; sessionId: string };

export function createJwtSigner(secret: string, ttlSeconds: number) {
  const key = new TextEncoder().encode(secret);
  return {
    ttlSeconds,
    /** A token for the session `sessionId`, valid `ttlSeconds` from `issuedAt` (whole seconds). */
    async sign(claims: SessionClaims, issuedAt = new Date()): Promise<{ token: string; issuedAt: Date; expiresAt: Date }> {
      const iat = Math.floor(issuedAt.getTime() / 1000);
      const exp = iat + ttlSeconds;
      const token = await new SignJWT({ tid: claims.tenantId })
        .setProtectedHeader({ alg: "HS256", typ: "JWT" })
        .setIssuer(ISSUER)
        .setAudience(AUDIENCE)
        .setSubject(claims.userId)
        .setJti(claims.sessionId)
        .setIssuedAt(iat)
        .setExpirationTime(exp)
        .sign(key);
      return { token, issuedAt: new Date(iat * 1000), expiresAt: new Date(exp * 1000) };
    },
    /** The claims of a valid token, or undefined for anything else (expired, tampered, wrong audience, no
     * exp, iat or jti). Whether its session is still live is the database's to say. */
    async verify(token: string): Promise<SessionClaims | undefined> {
      try {
        const { payload } = await jwtVerify(token, key, {
          issuer: ISSUER,
          audience: AUDIENCE,
          algorithms: ["HS256"],
          requiredClaims: REQUIRED_CLAIMS,
        });
        if (typeof payload.sub !== "string" || typeof payload.tid !== "string" || typeof payload.jti !== "string") return undefined;
        return { userId: payload.sub, tenantId: payload.tid, sessionId: payload.jti };
      } catch {
        return undefined;
      }
    },
  };
}

export type JwtSigner = ReturnType<typeof createJwtSigner>;
