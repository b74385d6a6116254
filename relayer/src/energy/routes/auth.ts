// POST /auth/token: the OAuth 2.0 client credentials grant (RFC 6749 section 4.4), form-urlencoded; the
// client authenticates with its credentials in the body or by HTTP Basic (../auth/client-authentication.ts).
import { createRoute } from "@hono/zod-openapi";
import type { Context, MiddlewareHandler } from "hono";
import { rateLimit } from "../../http/middleware.ts";
import type { Services } from "../../services.ts";
import { BASIC_CHALLENGE, clientCredentialsOf } from "../auth/client-authentication.ts";
import { verifyClientCredentials } from "../auth/client-credentials.ts";
import type { SandboxTokens } from "../auth/tokens.ts";
import { sandboxErrors } from "../errors.ts";
import { SandboxHttpError, errorResponse, sandboxErrorBody } from "./envelope.ts";
import { type EnergyEnv, createSandboxApi } from "../sandbox-api.ts";
import { TOKEN_RATE_BURST, TOKEN_RATE_PER_MINUTE, TokenRequest, TokenResponse } from "../schemas.ts";

const FORM = "application/x-www-form-urlencoded";

/** Only form-urlencoded bodies (a JSON or multipart body is 400 invalid_request). */
const formOnly: MiddlewareHandler<EnergyEnv> = async (c, next) => {
  const type = c.req.header("content-type")?.split(";")[0].trim().toLowerCase();
  if (type !== FORM) throw sandboxErrors.invalidRequest(`the token request must be sent as ${FORM}`);
  await next();
};

export function sandboxAuthRoutes(services: Services, tokens: SandboxTokens) {
  const api = createSandboxApi();
  const {
    database: { db },
  } = services;
  // Every request counts, whatever its answer (as on the payment API's login).
  const limit = rateLimit({
    capacity: TOKEN_RATE_BURST,
    perSecond: TOKEN_RATE_PER_MINUTE / 60,
    onLimited: (c, retryAfter) =>
      c.json(sandboxErrorBody("rate_limited", `too many token requests from this client; retry in ${retryAfter} s`), 429, {
        "retry-after": String(retryAfter),
      }),
  });
  const tokenRateLimit: MiddlewareHandler<EnergyEnv> = (c, next) => limit(c as Context, next);

  api.openapi(
    createRoute({
      method: "post",
      path: "/auth/token",
      operationId: "createAccessToken",
      security: [],
      tags: ["Authentication"],
      summary: "Exchange client credentials for a bearer token (client_credentials grant)",
      description:
        "Form fields grant_type=client_credentials, client_id and client_secret. The token is valid for expires_in " +
        "seconds; request a new one when it expires (there is no refresh token). Responses carry Cache-Control: no-store.\n\n" +
        "HTTP Basic client authentication (client_secret_basic, RFC 6749 section 2.3.1) is taken too: " +
        "`Authorization: Basic base64(client_id:client_secret)`, each of the two form-urlencoded first, and a body with " +
        "grant_type alone (a client_id in it must be the same client). One method per request: Basic credentials " +
        "with a client_secret in the body are 400 invalid_request. A failed Basic authentication is 401 with " +
        '`WWW-Authenticate: Basic realm="energy-sandbox"`. Another Authorization scheme is ignored.',
      middleware: [tokenRateLimit, formOnly] as const,
      request: { body: { content: { [FORM]: { schema: TokenRequest } }, required: true } },
      responses: {
        200: { description: "A bearer token", content: { "application/json": { schema: TokenResponse } } },
        400: errorResponse(
          ["invalid_request"],
          "The form failed validation: another grant_type, a missing field, or a body that is not form-urlencoded (JSON included); " +
            "or two client authentication methods at once (HTTP Basic and a client_secret in the body).",
        ),
        401: {
          ...errorResponse(
            ["unauthorized"],
            "Unknown client_id, wrong client_secret, or a revoked client; or malformed HTTP Basic credentials.",
          ),
          headers: {
            "WWW-Authenticate": {
              description: 'When the client authenticated with HTTP Basic: `Basic realm="energy-sandbox", charset="UTF-8"`.',
              schema: { type: "string" as const },
            },
          },
        },
        413: errorResponse(["payload_too_large"], "The body exceeds 64 KiB."),
        429: {
          ...errorResponse(
            ["rate_limited"],
            `More than ${TOKEN_RATE_BURST} token requests from one client address at once, or ${TOKEN_RATE_PER_MINUTE} a minute after that.`,
          ),
          headers: { "Retry-After": { description: "Seconds to wait before the next request.", schema: { type: "integer" as const } } },
        },
        500: errorResponse(["internal_error"], "An unexpected failure; retry later."),
      },
    }),
    async (c) => {
      const client = clientCredentialsOf(c.req.header("authorization"), c.req.valid("form"));
      if (!(await verifyClientCredentials(db, client.clientId, client.clientSecret))) {
        const challenge = client.method === "client_secret_basic" ? BASIC_CHALLENGE : undefined;
        throw new SandboxHttpError(401, "unauthorized", "unknown client_id or wrong client_secret", challenge);
      }
      const accessToken = await tokens.issue(client.clientId);
      c.header("cache-control", "no-store");
      c.header("pragma", "no-cache");
      return c.json({ access_token: accessToken, token_type: "Bearer" as const, expires_in: tokens.lifetimeSeconds }, 200);
    },
  );

  return api;
}
