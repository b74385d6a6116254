// Portal session tokens: HS256 JWTs (jose) with issuer, audience, subject (user id), tenant and expiry.
import { SignJWT, jwtVerify } from "jose";

const ISSUER = "payg-relayer";
const AUDIENCE = "portal";

export type SessionClaims = { userId: string; tenantId: string };

export function createJwtSigner(secret: string, ttlSeconds: number) {
  const key = new TextEncoder().encode(secret);
  return {
    ttlSeconds,
    async sign(claims: SessionClaims): Promise<{ token: string; expiresAt: Date }> {
      const now = Math.floor(Date.now() / 1000);
      const token = await new SignJWT({ tid: claims.tenantId })
        .setProtectedHeader({ alg: "HS256", typ: "JWT" })
        .setIssuer(ISSUER)
        .setAudience(AUDIENCE)
        .setSubject(claims.userId)
        .setIssuedAt(now)
        .setExpirationTime(now + ttlSeconds)
        .sign(key);
      return { token, expiresAt: new Date((now + ttlSeconds) * 1000) };
    },
    /** The claims of a valid token, or undefined for anything else (expired, tampered, wrong audience). */
    async verify(token: string): Promise<SessionClaims | undefined> {
      try {
        const { payload } = await jwtVerify(token, key, { issuer: ISSUER, audience: AUDIENCE, algorithms: ["HS256"] });
        if (typeof payload.sub !== "string" || typeof payload.tid !== "string") return undefined;
        return { userId: payload.sub, tenantId: payload.tid };
      } catch {
        return undefined;
      }
    },
  };
}

export type JwtSigner = ReturnType<typeof createJwtSigner>;
