// Schemas of the authentication routes (/v1/auth/*).
import { z } from "@hono/zod-openapi";
import { IDENTITY_EXAMPLE, LOGIN_REQUEST_EXAMPLE, LOGIN_RESPONSE_EXAMPLE } from "./examples.ts";

export const LoginRequest = z
  .object({
    email: z.email().max(254).openapi({ example: "dev@example.com" }),
    password: z.string().min(1).max(256),
  })
  .strict()
  .openapi("LoginRequest", { example: LOGIN_REQUEST_EXAMPLE });

export const LoginResponse = z
  .object({
    accessToken: z.string().openapi({ description: "A JWT for the portal routes: send it as Authorization: Bearer <accessToken>" }),
    tokenType: z.literal("Bearer"),
    expiresIn: z.number().int().openapi({ description: "Lifetime in seconds (JWT_TTL_SECONDS, 900 by default)" }),
    expiresAt: z.string(),
  })
  .openapi("LoginResponse", { example: LOGIN_RESPONSE_EXAMPLE });

/** What GET /v1/auth/me answers (the request's identity itself is http/env.ts's Identity). */
export const IdentityView = z
  .object({
    type: z.enum(["user", "api_key"]),
    tenant: z.object({ id: z.string(), name: z.string() }),
    user: z.object({ id: z.string(), email: z.string(), name: z.string() }).optional(),
    apiKey: z.object({ id: z.string(), role: z.enum(["developer", "agent"]) }).optional(),
  })
  .openapi("Identity", { example: IDENTITY_EXAMPLE });
