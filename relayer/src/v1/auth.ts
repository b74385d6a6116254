// POST /v1/auth/login, POST /v1/auth/logout and GET /v1/auth/me.
import { createRoute } from "@hono/zod-openapi";
import { and, eq } from "drizzle-orm";
import type { MiddlewareHandler } from "hono";
import { createLoginThrottle } from "../auth/login-throttle.ts";
import { requireAnyCredential, requireUser } from "../auth/middleware.ts";
import { MAX_CONCURRENT, PasswordHashAbandonedError, PasswordHashBusyError, passwordHasher } from "../auth/passwords.ts";
import { endSession, startSession } from "../auth/sessions.ts";
import { tenants, users } from "../db/schema.ts";
import { createApi } from "../http/api.ts";
import type { AppEnv } from "../http/env.ts";
import { errorResponses } from "../http/errors.ts";
import { errors } from "../errors.ts";
import { rateLimit } from "../http/middleware.ts";
import type { Services } from "../services.ts";
import { IdentityView, LoginRequest, LoginResponse } from "./auth.schemas.ts";

/** Sign-in attempts per client address (each relayer process): a burst of 10, then one every 6 s. */
const PER_ADDRESS_BURST = 10;
const PER_ADDRESS_PER_SECOND = 10 / 60;

/** Refuses any query string (422): a route that takes no parameters. */
const noQueryString: MiddlewareHandler<AppEnv> = async (c, next) => {
  const url = c.req.url;
  const q = url.indexOf("?");
  if (q >= 0 && q < url.length - 1) {
    throw errors.invalid("invalid query", [{ path: "query", message: "this route takes no query parameters" }]);
  }
  await next();
};

export function authRoutes(services: Services) {
  const api = createApi();
  const {
    database: { db },
    jwt,
    config,
  } = services;
  const passwords = passwordHasher(config.passwordScrypt, { maxWaiting: config.PASSWORD_HASH_QUEUE });
  const throttle = createLoginThrottle(db, {
    secret: config.JWT_SECRET,
    maxFailures: config.LOGIN_ACCOUNT_MAX_FAILURES,
    windowSeconds: config.LOGIN_ACCOUNT_WINDOW_SECONDS,
  });
  const windowText = throttle.windowSeconds % 60 === 0 ? `${throttle.windowSeconds / 60} minutes` : `${throttle.windowSeconds} seconds`;

  api.openapi(
    createRoute({
      method: "post",
      path: "/auth/login",
      operationId: "login",
      tags: ["Authentication"],
      summary: "Exchange email and password for a short-lived JWT (portal use)",
      description:
        `Signs a portal user in. The JWT is valid for \`expiresIn\` seconds (JWT_TTL_SECONDS) or until it is ` +
        "signed out with POST /auth/logout, whichever comes first. A wrong password and an unknown email get " +
        "the same 401.\n\n" +
        "Two limits answer 429 `rate_limited` with a Retry-After header (seconds):\n\n" +
        `- **Per client address**: ${PER_ADDRESS_BURST} attempts at once, then one every ` +
        `${Math.round(1 / PER_ADDRESS_PER_SECOND)} s (in each relayer process).\n` +
        `- **Per account**: after ${throttle.maxFailures} failed sign-ins for one email within ${windowText} ` +
        "(LOGIN_ACCOUNT_MAX_FAILURES, LOGIN_ACCOUNT_WINDOW_SECONDS), counted in the database across client " +
        "addresses and relayer processes, every attempt for that email is refused, with the right password " +
        `too, until ${windowText} after the first failure of the window; Retry-After says when. An email that ` +
        "has no account is counted and answered exactly like one that has. Only failures count: a successful " +
        "sign-in does not add to the count, nor clear failures others made; the account's owner signs in " +
        "again once the window is over.\n\n" +
        `Passwords are checked with scrypt, ${MAX_CONCURRENT} at a time per relayer process; at most ` +
        `${config.PASSWORD_HASH_QUEUE} sign-ins wait for their turn (PASSWORD_HASH_QUEUE). Beyond that a sign-in ` +
        "answers 503 `unavailable` at once, with a Retry-After header (seconds: about how long the waiting ones " +
        "take), and does not count as a failure for the account. A sign-in whose client hangs up while it waits " +
        "is dropped from the queue without checking its password.",
      middleware: [rateLimit({ capacity: PER_ADDRESS_BURST, perSecond: PER_ADDRESS_PER_SECOND })] as const,
      request: { body: { content: { "application/json": { schema: LoginRequest } }, required: true } },
      responses: {
        200: { description: "Signed in", content: { "application/json": { schema: LoginResponse } } },
        ...errorResponses(400, 401, 422, 429, 503),
      },
    }),
    async (c) => {
      const { email: given, password } = c.req.valid("json");
      const signal = c.req.raw.signal;
      const email = given.toLowerCase();
      // Counted before the password is checked, known email or not: the same work and answer either way.
      const attempt = await throttle.begin(email);
      if (!attempt.allowed) {
        c.get("logger").warn("sign-in refused: too many failures for the account", { retryAfterSeconds: attempt.retryAfterSeconds });
        throw errors.rateLimited(attempt.retryAfterSeconds);
      }
      const [user] = await db.select().from(users).where(eq(users.email, email));
      let checked: { ok: boolean; rehashed?: string };
      try {
        checked = await passwords.check(password, user?.passwordHash ?? passwords.decoyHash, { signal });
      } catch (error) {
        if (!(error instanceof PasswordHashBusyError || error instanceof PasswordHashAbandonedError)) throw error;
        // The password was not checked: the attempt is not a failure of the account.
        await throttle.withdraw(attempt);
        if (error instanceof PasswordHashAbandonedError) {
          c.get("logger").info("sign-in abandoned by the client before its password was checked");
          throw errors.unavailable("the client left before the password was checked");
        }
        c.get("logger").warn("sign-in refused: too many password checks waiting", { retryAfterSeconds: error.retryAfterSeconds });
        throw errors.unavailable("too many sign-ins are being checked; retry later", error.retryAfterSeconds);
      }
      const { ok, rehashed } = checked;
      if (!user || !ok) throw errors.unauthorized("wrong email or password");
      await throttle.succeeded(attempt);
      if (rehashed) {
        // Made with weaker scrypt parameters: replaced, unless the password changed meanwhile.
        await db
          .update(users)
          .set({ passwordHash: rehashed })
          .where(and(eq(users.id, user.id), eq(users.passwordHash, user.passwordHash)));
        c.get("logger").info("password rehashed with the current scrypt parameters", { userId: user.id });
      }
      const { token, expiresAt } = await startSession(db, jwt, { userId: user.id, tenantId: user.tenantId });
      c.get("logger").info("signed in", { userId: user.id });
      return c.json(
        { accessToken: token, tokenType: "Bearer" as const, expiresIn: jwt.ttlSeconds, expiresAt: expiresAt.toISOString() },
        200,
      );
    },
  );

  api.openapi(
    createRoute({
      method: "post",
      path: "/auth/logout",
      operationId: "logout",
      tags: ["Authentication"],
      summary: "Sign out: end the session of the bearer JWT",
      description:
        "Ends the session the portal JWT belongs to, on the server: from the next request on, that JWT (as a " +
        "bearer token or in the portal's session cookie) answers 401 on every route and every relayer process. " +
        "The user's other sessions go on. Takes no body and no query parameters. An API key is not a session " +
        "(401); a JWT already signed out or expired is 401 too.",
      security: [{ bearerJwt: [] }],
      middleware: [noQueryString, requireUser(db, jwt)] as const,
      responses: {
        204: { description: "Signed out" },
        ...errorResponses(401, 422),
      },
    }),
    async (c) => {
      const identity = c.get("identity");
      if (identity.kind !== "user") throw errors.unauthorized("a valid session token is required");
      await endSession(db, identity.sessionId);
      c.get("logger").info("signed out", { userId: identity.userId });
      return c.body(null, 204);
    },
  );

  api.openapi(
    createRoute({
      method: "get",
      path: "/auth/me",
      operationId: "getCurrentIdentity",
      tags: ["Authentication"],
      summary: "The identity behind the bearer credential (a portal JWT or an API key)",
      security: [{ bearerJwt: [] }, { apiKey: ["developer", "agent"] }],
      middleware: [requireAnyCredential(db, jwt)] as const,
      responses: {
        200: { description: "Current identity", content: { "application/json": { schema: IdentityView } } },
        ...errorResponses(401),
      },
    }),
    async (c) => {
      const identity = c.get("identity");
      const [tenant] = await db.select().from(tenants).where(eq(tenants.id, identity.tenantId));
      const base = { tenant: { id: tenant.id, name: tenant.name } };
      if (identity.kind === "user") {
        return c.json({ type: "user" as const, ...base, user: { id: identity.userId, email: identity.email, name: identity.name } }, 200);
      }
      return c.json({ type: "api_key" as const, ...base, apiKey: { id: identity.keyId, role: identity.role } }, 200);
    },
  );

  return api;
}
