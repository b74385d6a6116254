// POST /v1/auth/login and GET /v1/auth/me.
import { createRoute, z } from "@hono/zod-openapi";
import { eq } from "drizzle-orm";
import { requireAnyCredential } from "../../auth/middleware.ts";
import { decoyHash, verifyPassword } from "../../auth/passwords.ts";
import { tenants, users } from "../../db/schema.ts";
import { createApi } from "../../http/api.ts";
import { errorResponses, errors } from "../../http/errors.ts";
import { rateLimit } from "../../http/middleware.ts";
import type { Services } from "../../services.ts";

const LoginRequest = z
  .object({
    email: z.email().max(254).openapi({ example: "dev@example.com" }),
    password: z.string().min(1).max(256),
  })
  .strict()
  .openapi("LoginRequest");

const LoginResponse = z
  .object({
    token: z.string().openapi({ description: "A JWT for the portal routes: send it as Authorization: Bearer <token>" }),
    tokenType: z.literal("Bearer"),
    expiresIn: z.number().int().openapi({ description: "Lifetime in seconds (JWT_TTL_SECONDS, 900 by default)" }),
    expiresAt: z.string(),
  })
  .openapi("LoginResponse");

const Identity = z
  .object({
    type: z.enum(["user", "api_key"]),
    tenant: z.object({ id: z.string(), name: z.string() }),
    user: z.object({ id: z.string(), email: z.string(), name: z.string() }).optional(),
    apiKey: z.object({ id: z.string(), role: z.enum(["developer", "agent"]) }).optional(),
  })
  .openapi("Identity");

export function authRoutes(services: Services) {
  const api = createApi();
  const { db, jwt } = services;

  api.openapi(
    createRoute({
      method: "post",
      path: "/auth/login",
      tags: ["Authentication"],
      summary: "Exchange email and password for a short-lived JWT (portal use)",
      middleware: [rateLimit({ capacity: 10, perSecond: 10 / 60 })] as const,
      request: { body: { content: { "application/json": { schema: LoginRequest } }, required: true } },
      responses: {
        200: { description: "Signed in", content: { "application/json": { schema: LoginResponse } } },
        ...errorResponses(400, 401, 422, 429),
      },
    }),
    async (c) => {
      const { email, password } = c.req.valid("json");
      const [user] = await db.select().from(users).where(eq(users.email, email.toLowerCase()));
      const ok = await verifyPassword(password, user?.passwordHash ?? decoyHash);
      if (!user || !ok) throw errors.unauthorized("wrong email or password");
      const { token, expiresAt } = await jwt.sign({ userId: user.id, tenantId: user.tenantId });
      c.get("logger").info("signed in", { userId: user.id });
      return c.json({ token, tokenType: "Bearer" as const, expiresIn: jwt.ttlSeconds, expiresAt: expiresAt.toISOString() }, 200);
    },
  );

  api.openapi(
    createRoute({
      method: "get",
      path: "/auth/me",
      tags: ["Authentication"],
      summary: "The identity behind the bearer credential (a portal JWT or an API key)",
      security: [{ bearerJwt: [] }, { apiKey: [] }],
      middleware: [requireAnyCredential(db, jwt)] as const,
      responses: {
        200: { description: "Current identity", content: { "application/json": { schema: Identity } } },
        ...errorResponses(401),
      },
    }),
    async (c) => {
      const identity = c.get("identity");
      const [tenant] = await db.select().from(tenants).where(eq(tenants.id, identity.tenantId));
      const base = { tenant: { id: tenant.id, name: tenant.name } };
      if (identity.kind === "user") {
        return c.json(
          { type: "user" as const, ...base, user: { id: identity.userId, email: identity.email, name: identity.name } },
          200,
        );
      }
      return c.json({ type: "api_key" as const, ...base, apiKey: { id: identity.keyId, role: identity.role } }, 200);
    },
  );

  return api;
}
