// The sandbox's access tokens: HS256 JWTs (jose) signed with the relayer's JWT_SECRET, with an audience of
// their own, so a portal session token is never accepted here and a sandbox token never in the portal.
import { SignJWT, jwtVerify } from "jose";
import { TOKEN_LIFETIME_SECONDS } from "../schemas.ts";

export const TOKEN_ISSUER = "payg-relayer";
export const TOKEN_AUDIENCE = "energy-sandbox";

export function createSandboxTokens(secret: string, lifetimeSeconds = TOKEN_LIFETIME_SECONDS) {
  const key = new TextEncoder().encode(secret);
  return {
    lifetimeSeconds,
    /** A token for `clientId`, valid for `lifetimeSeconds`. */
    async issue(clientId: string): Promise<string> {
      const now = Math.floor(Date.now() / 1000);
      return new SignJWT({})
        .setProtectedHeader({ alg: "HS256", typ: "JWT" })
        .setIssuer(TOKEN_ISSUER)
        .setAudience(TOKEN_AUDIENCE)
        .setSubject(clientId)
        .setIssuedAt(now)
        .setExpirationTime(now + lifetimeSeconds)
        .sign(key);
    },
    /** The client id and expiry of a valid token; undefined for anything else (expired, tampered, another
     * audience). */
    async verify(token: string): Promise<{ clientId: string; expiresAtMs: number } | undefined> {
      try {
        const { payload } = await jwtVerify(token, key, {
          issuer: TOKEN_ISSUER,
          audience: TOKEN_AUDIENCE,
          algorithms: ["HS256"],
          requiredClaims: ["exp", "sub"],
        });
        if (typeof payload.sub !== "string" || typeof payload.exp !== "number") return undefined;
        return { clientId: payload.sub, expiresAtMs: payload.exp * 1000 };
      } catch {
        return undefined;
      }
    },
  };
}

export type SandboxTokens = ReturnType<typeof createSandboxTokens>;
