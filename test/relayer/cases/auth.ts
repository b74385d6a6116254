// POST /v1/auth/login, GET /v1/auth/me, POST /v1/auth/logout, the portal's sign-out, per-account login
// throttling, password rehashing, and the portal's API key routes.
import assert from "node:assert/strict";
import { randomBytes, scryptSync } from "node:crypto";
import { readFileSync } from "node:fs";
import http from "node:http";
import { before, describe, it } from "node:test";
import { PGlite } from "@electric-sql/pglite";
import { SignJWT } from "jose";
import { SCRYPT_PARAMS } from "../../../relayer/src/auth/passwords.ts";
import { PGLITE_OPTIONS } from "../../../relayer/src/db/client.ts";
import { newId } from "../../../relayer/src/ids.ts";
import { testDatabaseUrl, withPostgres } from "../../support/databases.ts";
import type { Stack } from "../../support/stack.ts";
import type { UncheckedJson } from "../../support/unchecked-json.ts";
import { expectError } from "./expect.ts";

/** The defaults of LOGIN_ACCOUNT_MAX_FAILURES and LOGIN_ACCOUNT_WINDOW_SECONDS (the test stack keeps them). */
const ACCOUNT_MAX_FAILURES = 10;
const ACCOUNT_WINDOW_SECONDS = 900;

export function authCases(stack: () => Stack) {
  describe("authentication", () => {
    it("exchanges the sample login for a JWT and returns the identity behind it", async () => {
      const s = stack();
      const login = await s.api("POST", "/v1/auth/login", { body: { email: s.sample.email, password: s.sample.password } });
      assert.equal(login.status, 200);
      assert.equal(login.body.tokenType, "Bearer");
      assert.equal(login.body.expiresIn, 900);
      assert.match(login.body.accessToken, /^[\w-]+\.[\w-]+\.[\w-]+$/);
      const me = await s.api("GET", "/v1/auth/me", { token: login.body.accessToken });
      assert.equal(me.status, 200);
      assert.deepEqual(me.body.user.email, s.sample.email);
      assert.equal(me.body.type, "user");
      assert.equal(me.body.tenant.id, s.sample.tenantId);
    });

    it("answers a wrong password or an unknown email with 401 and the same message", async () => {
      const s = stack();
      const wrong = await s.api("POST", "/v1/auth/login", { body: { email: s.sample.email, password: "not-it" } });
      const unknown = await s.api("POST", "/v1/auth/login", { body: { email: "nobody@example.com", password: "x" } });
      expectError(wrong, 401, "unauthorized");
      expectError(unknown, 401, "unauthorized");
      assert.equal(wrong.body.error.message, unknown.body.error.message);
    });

    it("answers an invalid login body with 422 and names the fields, and a non-JSON body with 400", async () => {
      const s = stack();
      const invalid = await s.api("POST", "/v1/auth/login", { body: { email: "not-an-email" } });
      expectError(invalid, 422, "invalid_parameters");
      const paths = invalid.body.error.details.map((d: { path: string }) => d.path).sort();
      assert.deepEqual(paths, ["email", "password"]);
      const notJson = await s.api("POST", "/v1/auth/login", { body: "{email:", headers: { "content-type": "application/json" } });
      expectError(notJson, 400, "invalid_body");
      const wrongType = await s.api("POST", "/v1/auth/login", { body: "email=a", headers: { "content-type": "text/plain" } });
      expectError(wrongType, 400, "invalid_body");
    });

    it("rejects /v1/auth/me without a credential, with a forged, expired or tampered JWT", async () => {
      const s = stack();
      expectError(await s.api("GET", "/v1/auth/me"), 401, "unauthorized");
      expectError(await s.api("GET", "/v1/auth/me", { token: "garbage" }), 401, "unauthorized");
      // The claims of a live session, so that expiry or the key is the only thing wrong.
      const login = await loginFrom(s, s.sample.email, s.sample.password);
      assert.equal(login.status, 200, login.text);
      const claims = jwtClaims(login.json.accessToken);
      const key = new TextEncoder().encode(s.relayerOptions.jwtSecret);
      const now = Math.floor(Date.now() / 1000);
      const expired = await new SignJWT({ tid: claims.tid })
        .setProtectedHeader({ alg: "HS256" })
        .setIssuer("payg-relayer")
        .setAudience("portal")
        .setSubject(claims.sub)
        .setJti(claims.jti)
        .setIssuedAt(now - 3600)
        .setExpirationTime(now - 60)
        .sign(key);
      expectError(await s.api("GET", "/v1/auth/me", { token: expired }), 401, "unauthorized");
      const forged = await new SignJWT({ tid: claims.tid })
        .setProtectedHeader({ alg: "HS256" })
        .setIssuer("payg-relayer")
        .setAudience("portal")
        .setSubject(claims.sub)
        .setJti(claims.jti)
        .setIssuedAt(now)
        .setExpirationTime(now + 600)
        .sign(new TextEncoder().encode("another-secret-of-at-least-32-characters"));
      expectError(await s.api("GET", "/v1/auth/me", { token: forged }), 401, "unauthorized");
      const [header, , signature] = login.json.accessToken.split(".");
      const tampered = [header, Buffer.from(JSON.stringify({ ...claims, tid: "tn_other" })).toString("base64url"), signature].join(".");
      expectError(await s.api("GET", "/v1/auth/me", { token: tampered }), 401, "unauthorized");
      assert.equal((await s.api("GET", "/v1/auth/me", { token: login.json.accessToken })).status, 200);
    });

    it("accepts an API key on /v1/auth/me and says which key it is", async () => {
      const s = stack();
      const me = await s.api("GET", "/v1/auth/me", { token: s.sample.developerKey });
      assert.equal(me.status, 200);
      assert.equal(me.body.type, "api_key");
      assert.equal(me.body.apiKey.role, "developer");
      assert.equal(me.body.tenant.id, s.sample.tenantId);
    });
  });

  describe("sessions, sign-out and login throttling", () => {
    // Users of their own (inserted into the relayer's database): the throttle test locks its account (its
    // hash made with twice the N the suite's relayer uses: a stronger hash, kept as it is at sign-in; twice,
    // not the default 2^17, because the throttle test checks its password some 15 times, about 7 CPU s at
    // 2^17), and the rehash test needs a hash made with a smaller N than the relayer's.
    const throttled = { email: "throttled@sunbeam.example", password: randomBytes(12).toString("base64url") };
    const legacy = { email: "legacy-hash@sunbeam.example", password: randomBytes(12).toString("base64url") };
    const unknownEmail = "nobody-here@sunbeam.example";

    before(
      async () => {
        const s = stack();
        const hashes = [hashWithN(throttled.password, relayerScryptN(s) * 2), hashWithN(legacy.password, relayerScryptN(s) / 2)];
        await withRelayerDb(s, async (query) => {
          for (const [i, user] of [throttled, legacy].entries()) {
            await query("insert into users (id, tenant_id, email, password_hash, name) values ($1, $2, $3, $4, $5)", [
              newId("usr"),
              s.sample.tenantId,
              user.email,
              hashes[i],
              "Test user",
            ]);
          }
        });
      },
      { timeout: 120_000 },
    );

    it("signs a session out with POST /v1/auth/logout (204): its JWT is refused at once on every route, other sessions live on", async () => {
      const s = stack();
      const one = await loginFrom(s, s.sample.email, s.sample.password);
      const two = await loginFrom(s, s.sample.email, s.sample.password);
      assert.equal(one.status, 200, one.text);
      assert.equal(two.status, 200, two.text);
      const jwt: string = one.json.accessToken;
      const claims = jwtClaims(jwt);
      assert.equal(typeof claims.jti, "string");
      assert.ok(claims.jti.length >= 16, "a session id");
      assert.notEqual(claims.jti, jwtClaims(two.json.accessToken).jti, "one session id a sign-in");
      assert.equal(claims.exp - claims.iat, 900);
      assert.equal((await s.api("GET", "/v1/api-keys", { token: jwt })).status, 200);

      expectError(await s.api("POST", "/v1/auth/logout"), 401, "unauthorized");
      expectError(await s.api("POST", "/v1/auth/logout", { token: s.sample.developerKey }), 401, "unauthorized");
      expectError(await s.api("POST", "/v1/auth/logout?x=1", { token: jwt }), 422, "invalid_parameters");
      expectError(await s.api("POST", "/v1/auth/logout?=&&=&", { token: jwt }), 422, "invalid_parameters");
      assert.equal((await s.api("GET", "/v1/auth/me", { token: jwt })).status, 200, "refused sign-outs changed nothing");

      const out = await s.api("POST", "/v1/auth/logout", { token: jwt });
      assert.equal(out.status, 204, out.text);
      assert.equal(out.text, "");
      expectError(await s.api("GET", "/v1/auth/me", { token: jwt }), 401, "unauthorized");
      expectError(await s.api("GET", "/v1/api-keys", { token: jwt }), 401, "unauthorized");
      expectError(await s.api("GET", "/v1/revenue/overview", { token: jwt }), 401, "unauthorized");
      expectError(await s.api("POST", "/v1/auth/logout", { token: jwt }), 401, "unauthorized");
      assert.equal(
        (await s.api("GET", "/v1/auth/me", { token: two.json.accessToken })).status,
        200,
        "another session of the user lives on",
      );

      const doc = await s.api("GET", "/v1/openapi.json");
      const operation = doc.body.paths["/auth/logout"]?.post;
      assert.ok(operation?.responses?.["204"], "POST /v1/auth/logout is documented with its 204");
      assert.deepEqual(operation.security, [{ bearerJwt: [] }]);
    });

    it("ends a session on every relayer process sharing the database (PostgreSQL)", async (t) => {
      const s = stack();
      if (s.database !== "postgres") {
        t.skip("several relayer processes need PostgreSQL");
        return;
      }
      const extra = await s.startExtraRelayer();
      try {
        const login = await loginFrom(s, s.sample.email, s.sample.password);
        assert.equal(login.status, 200, login.text);
        const onExtra = (method: string, route: string) =>
          fetch(`${extra.url}${route}`, { method, headers: { authorization: `Bearer ${login.json.accessToken}` } });
        assert.equal((await onExtra("GET", "/v1/auth/me")).status, 200);
        assert.equal((await onExtra("POST", "/v1/auth/logout")).status, 204);
        expectError(await s.api("GET", "/v1/auth/me", { token: login.json.accessToken }), 401, "unauthorized");
        assert.equal((await onExtra("GET", "/v1/api-keys")).status, 401);
      } finally {
        await extra.service.stop();
      }
    });

    it("signs out through the portal's form: the session cookie no longer opens a portal page nor the API", async () => {
      const s = stack();
      const from = freshAddress();
      const form = await send(s, { method: "GET", path: "/portal/login", from });
      const loginCsrf = csrfOf(form.text);
      const signedIn = await send(s, {
        method: "POST",
        path: "/portal/login",
        from,
        headers: { "content-type": "application/x-www-form-urlencoded", cookie: cookieOf(form, "payg_csrf") },
        body: new URLSearchParams({ _csrf: loginCsrf, email: s.sample.email, password: s.sample.password }).toString(),
      });
      assert.equal(signedIn.status, 303, signedIn.text);
      assert.equal(signedIn.headers.location, "/portal/keys");
      const session = cookieOf(signedIn, "payg_session");
      const token = session.slice("payg_session=".length);
      const keys = await send(s, { method: "GET", path: "/portal/keys", from, headers: { cookie: session } });
      assert.equal(keys.status, 200, keys.text.slice(0, 300));

      const out = await send(s, {
        method: "POST",
        path: "/portal/logout",
        from,
        headers: { "content-type": "application/x-www-form-urlencoded", cookie: session },
        body: new URLSearchParams({ _csrf: csrfOf(keys.text) }).toString(),
      });
      assert.equal(out.status, 303, out.text);
      assert.equal(out.headers.location, "/portal/login?notice=signed_out");
      assert.match(String(out.headers["set-cookie"]), /payg_session=;/, "the cookie is deleted");

      // The cookie, kept and replayed (a copy of it stolen before the sign-out, say):
      const replayed = await send(s, { method: "GET", path: "/portal/keys", from, headers: { cookie: session } });
      assert.equal(replayed.status, 303);
      assert.equal(replayed.headers.location, "/portal/login?notice=expired");
      expectError(await s.api("GET", "/v1/api-keys", { headers: { cookie: session } }), 401, "unauthorized");
      expectError(await s.api("GET", "/v1/auth/me", { token }), 401, "unauthorized");
    });

    it("refuses a JWT signed with the right key but without exp, without a session id, or naming no live session", async () => {
      const s = stack();
      const login = await loginFrom(s, s.sample.email, s.sample.password);
      assert.equal(login.status, 200, login.text);
      const claims = jwtClaims(login.json.accessToken);
      const key = new TextEncoder().encode(s.relayerOptions.jwtSecret);
      const sign = (opts: { exp?: boolean; jti?: string | null }) => {
        let builder = new SignJWT({ tid: claims.tid })
          .setProtectedHeader({ alg: "HS256", typ: "JWT" })
          .setIssuer("payg-relayer")
          .setAudience("portal")
          .setSubject(claims.sub)
          .setIssuedAt(claims.iat);
        if (opts.jti !== null) builder = builder.setJti(opts.jti ?? claims.jti);
        if (opts.exp !== false) builder = builder.setExpirationTime(claims.exp);
        return builder.sign(key);
      };
      assert.equal((await s.api("GET", "/v1/auth/me", { token: await sign({}) })).status, 200, "the same claims, signed again, pass");
      for (const [what, token] of [
        ["without exp", await sign({ exp: false })],
        ["without jti", await sign({ jti: null })],
        ["with an unknown session id", await sign({ jti: newId("ses") })],
      ] as const) {
        expectError(await s.api("GET", "/v1/auth/me", { token }), 401, "unauthorized");
        const keys = await s.api("GET", "/v1/api-keys", { token });
        assert.equal(keys.status, 401, `GET /v1/api-keys with a JWT ${what}: ${keys.text}`);
      }
    });

    it(`throttles sign-in per account whatever the client's address: after ${ACCOUNT_MAX_FAILURES} failures 429 with retry-after, the right password too, an unknown email alike`, async () => {
      const s = stack();
      // Every attempt from an address of its own: the per-address limit never answers here.
      for (let i = 0; i < ACCOUNT_MAX_FAILURES; i++) {
        const known = await loginFrom(s, i % 2 ? throttled.email.toUpperCase() : throttled.email, `wrong-${i}`);
        const unknown = await loginFrom(s, unknownEmail, `wrong-${i}`);
        expectError(asApi(known), 401, "unauthorized");
        expectError(asApi(unknown), 401, "unauthorized");
        assert.equal(known.json.error.message, unknown.json.error.message);
      }
      const limited = [];
      for (const [email, password] of [
        [throttled.email, throttled.password],
        [unknownEmail, "anything"],
        [throttled.email, "wrong-again"],
        [unknownEmail.toUpperCase(), "anything"],
      ]) {
        const response = await loginFrom(s, email, password);
        expectError(asApi(response), 429, "rate_limited");
        const retryAfter = Number(response.headers["retry-after"]);
        assert.ok(
          Number.isInteger(retryAfter) && retryAfter >= 1 && retryAfter <= ACCOUNT_WINDOW_SECONDS,
          `retry-after ${response.headers["retry-after"]}`,
        );
        limited.push(response);
      }
      assert.equal(limited[0].json.error.message, limited[1].json.error.message, "a known and an unknown account answer alike");
      assert.equal((await loginFrom(s, s.sample.email, s.sample.password)).status, 200, "other accounts are not affected");

      const doc = await s.api("GET", "/v1/openapi.json");
      const description: string = doc.body.paths["/auth/login"].post.description ?? "";
      assert.match(description, new RegExp(`${ACCOUNT_MAX_FAILURES} failed sign-ins`), "the account limit is documented");
    });

    it("lifts the account's lock once its window is over, and purges stale throttle rows and expired sessions at sign-in", async () => {
      const s = stack();
      const aged = await loginFrom(s, s.sample.email, s.sample.password);
      assert.equal(aged.status, 200, aged.text);
      const agedSession = jwtClaims(aged.json.accessToken).jti;
      expectError(asApi(await loginFrom(s, throttled.email, throttled.password)), 429, "rate_limited");
      // As if the window had passed, and that session's lifetime too.
      await withRelayerDb(s, async (query) => {
        await query(`update login_throttle set window_started_at = now() - interval '${ACCOUNT_WINDOW_SECONDS + 1} seconds'`);
        await query("update sessions set expires_at = now() - interval '1 second' where id = $1", [agedSession]);
      });
      expectError(await s.api("GET", "/v1/auth/me", { token: aged.json.accessToken }), 401, "unauthorized");
      const lifted = await loginFrom(s, throttled.email, throttled.password);
      assert.equal(lifted.status, 200, lifted.text);
      expectError(asApi(await loginFrom(s, throttled.email, "wrong")), 401, "unauthorized");
      const { stale, sessions } = await withRelayerDb(s, async (query) => ({
        stale: await query(`select 1 from login_throttle where window_started_at < now() - interval '${ACCOUNT_WINDOW_SECONDS} seconds'`),
        sessions: await query("select 1 from sessions where id = $1", [agedSession]),
      }));
      assert.deepEqual(stale, [], "throttle rows of past windows are purged");
      assert.deepEqual(sessions, [], "expired sessions are purged");
    });

    it("rehashes a hash of a smaller N with the relayer's N at the next sign-in, which keeps working; keeps a larger N", async () => {
      const s = stack();
      const n = relayerScryptN(s);
      const first = await loginFrom(s, legacy.email, legacy.password);
      assert.equal(first.status, 200, first.text);
      const hashOf = async (email: string) =>
        (
          await withRelayerDb(s, (query) => query<{ password_hash: string }>("select password_hash from users where email = $1", [email]))
        )[0].password_hash;
      assert.match(await hashOf(legacy.email), new RegExp(`^scrypt\\$${n}\\$8\\$1\\$[\\w-]{22}\\$[\\w-]{43}$`));
      assert.equal((await s.api("GET", "/v1/auth/me", { token: first.json.accessToken })).status, 200);
      assert.equal((await loginFrom(s, legacy.email, legacy.password)).status, 200);
      expectError(asApi(await loginFrom(s, legacy.email, "not-the-password")), 401, "unauthorized");
      // The throttled user signed in with a hash of twice the relayer's N (the throttle test above): not made
      // weaker.
      assert.ok(n < SCRYPT_PARAMS.N, `the suite's relayer uses a smaller N than the default (${n})`);
      assert.match(await hashOf(throttled.email), new RegExp(`^scrypt\\$${n * 2}\\$8\\$1\\$`));
      // Set below the default, the relayer said so when it started.
      const warning = readFileSync(s.relayerOptions.logFile!, "utf8")
        .split("\n")
        .filter((line) => line.includes("PASSWORD_SCRYPT_N is below"))
        .map((line) => JSON.parse(line) as { level: string; passwordScryptN: number });
      assert.ok(warning.length > 0, "a start-up warning");
      assert.deepEqual([warning[0].level, warning[0].passwordScryptN], ["warn", n]);
    });
  });

  describe("API keys (portal JWT)", () => {
    it("creates a key shown once, lists it without the secret, and a revoked key fails on the next request", async () => {
      const s = stack();
      const jwt = await login(s);
      const created = await s.api("POST", "/v1/api-keys", { token: jwt, body: { name: "ci" } });
      assert.equal(created.status, 201);
      assert.match(created.body.key, /^payg_[0-9A-Za-z]{38}$/);
      assert.equal(created.body.role, "developer");
      assert.equal(created.body.last4, created.body.key.slice(-4));

      const list = await s.api("GET", "/v1/api-keys", { token: jwt });
      assert.equal(list.status, 200);
      const listed = list.body.data.find((k: { id: string }) => k.id === created.body.id);
      assert.ok(listed);
      assert.equal(listed.key, undefined, "the key is never listed");
      assert.ok(!list.text.includes(created.body.key), "the plaintext key appears nowhere in the list");

      assert.equal((await s.api("GET", "/v1/devices", { token: created.body.key })).status, 200);
      const used = await s.api("GET", "/v1/api-keys", { token: jwt });
      assert.ok(used.body.data.find((k: { id: string }) => k.id === created.body.id).lastUsedAt, "last use recorded");

      const revoked = await s.api("DELETE", `/v1/api-keys/${created.body.id}`, { token: jwt });
      assert.equal(revoked.status, 200);
      assert.ok(revoked.body.revokedAt);
      expectError(await s.api("GET", "/v1/devices", { token: created.body.key }), 401, "unauthorized");
    });

    it("rejects key routes without a JWT (an API key is not a portal session) and unknown ids", async () => {
      const s = stack();
      expectError(await s.api("GET", "/v1/api-keys"), 401, "unauthorized");
      expectError(await s.api("GET", "/v1/api-keys", { token: s.sample.developerKey }), 401, "unauthorized");
      const jwt = await login(s);
      expectError(await s.api("DELETE", "/v1/api-keys/key_00000000000000000000000000", { token: jwt }), 404, "not_found");
      expectError(await s.api("DELETE", "/v1/api-keys/../../etc", { token: jwt }), 404, "not_found");
      expectError(await s.api("POST", "/v1/api-keys", { token: jwt, body: { name: "" } }), 422, "invalid_parameters");
      expectError(await s.api("POST", "/v1/api-keys", { token: jwt, body: { name: "x", role: "admin" } }), 422, "invalid_parameters");
    });

    it("rejects a well-formed key with a wrong checksum or that was never issued", async () => {
      const s = stack();
      const key = s.sample.developerKey;
      const flipped = key.slice(0, -1) + (key.endsWith("A") ? "B" : "A");
      expectError(await s.api("GET", "/v1/devices", { token: flipped }), 401, "unauthorized");
      expectError(await s.api("GET", "/v1/devices", { token: "payg_" + "0".repeat(38) }), 401, "unauthorized");
    });
  });
}

export async function login(s: Stack): Promise<string> {
  const response = await s.api("POST", "/v1/auth/login", { body: { email: s.sample.email, password: s.sample.password } });
  assert.equal(response.status, 200, response.text);
  return response.body.accessToken;
}

type RawResponse = { status: number; headers: http.IncomingHttpHeaders; text: string; json: UncheckedJson };

let addresses = 0;
/** A loopback source address not used before (127.0.64.1, 127.0.64.2 ...): a new client for the
 * per-address limits (the whole of 127.0.0.0/8 reaches the relayer on 127.0.0.1). */
function freshAddress(): string {
  const n = addresses++;
  return `127.0.${64 + Math.floor(n / 250)}.${1 + (n % 250)}`;
}

/** A request from a chosen source address (fetch cannot choose it). */
function send(
  s: Stack,
  req: { method: string; path: string; headers?: Record<string, string>; body?: string; from?: string },
): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const headers: Record<string, string> = { ...req.headers };
    if (req.body !== undefined) headers["content-length"] = String(Buffer.byteLength(req.body));
    const request = http.request(
      new URL(req.path, s.relayerUrl),
      { method: req.method, headers, localAddress: req.from, agent: false },
      (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (chunk: Buffer) => chunks.push(chunk));
        res.on("error", reject);
        res.on("end", () => {
          const text = Buffer.concat(chunks).toString("utf8");
          let json: UncheckedJson;
          try {
            json = JSON.parse(text);
          } catch {
            json = undefined;
          }
          resolve({ status: res.statusCode ?? 0, headers: res.headers, text, json });
        });
      },
    );
    request.on("error", reject);
    request.setTimeout(60_000, () => request.destroy(new Error(`${req.method} ${req.path}: no answer within 60 s`)));
    request.end(req.body);
  });
}

/** POST /v1/auth/login from a fresh address. */
function loginFrom(s: Stack, email: string, password: string): Promise<RawResponse> {
  return send(s, {
    method: "POST",
    path: "/v1/auth/login",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ email, password }),
    from: freshAddress(),
  });
}

function asApi(response: RawResponse) {
  const headers = new Headers();
  for (const [name, value] of Object.entries(response.headers)) if (typeof value === "string") headers.set(name, value);
  return { status: response.status, headers, body: response.json, text: response.text };
}

/** The claims of a portal JWT (relayer/src/auth/jwt.ts): the user, the tenant, the session, its times. */
type PortalJwtClaims = { sub: string; tid: string; jti: string; iat: number; exp: number };

function jwtClaims(token: string): PortalJwtClaims {
  return JSON.parse(Buffer.from(token.split(".")[1], "base64url").toString("utf8")) as PortalJwtClaims;
}

function csrfOf(html: string): string {
  const token = /name="_csrf" value="([^"]+)"/.exec(html)?.[1];
  assert.ok(token, "the page has a CSRF token");
  return token;
}

/** `name=value` of a cookie the response sets. */
function cookieOf(response: RawResponse, name: string): string {
  const pair = (response.headers["set-cookie"] ?? []).map((c) => c.split(";")[0]).find((c) => c.startsWith(`${name}=`));
  assert.ok(pair, `the response sets ${name}`);
  return pair;
}

/** A password hash in the relayer's format made with scrypt N=`n`, r=8, p=1: stronger or weaker than the relayer's own. */
function hashWithN(password: string, n: number): string {
  const salt = randomBytes(16);
  const hash = scryptSync(password, salt, 32, { N: n, r: 8, p: 1, maxmem: 256 * 1024 * 1024 });
  return ["scrypt", n, 8, 1, salt.toString("base64url"), hash.toString("base64url")].join("$");
}

/** The scrypt N the stack's relayer hashes passwords with (PASSWORD_SCRYPT_N, test/support/stack.ts). */
function relayerScryptN(s: Stack): number {
  return Number(s.relayerOptions.env?.PASSWORD_SCRYPT_N ?? SCRYPT_PARAMS.N);
}

type Query = <Row extends Record<string, unknown> = Record<string, unknown>>(sql: string, params?: unknown[]) => Promise<Row[]>;

/** Runs `fn` on the relayer's database: on PostgreSQL directly, on PGlite (one process at a time) with the
 * relayer stopped meanwhile. */
async function withRelayerDb<T>(s: Stack, fn: (query: Query) => Promise<T>): Promise<T> {
  const db = s.relayerOptions.database;
  if (db.kind === "postgres") {
    return withPostgres(testDatabaseUrl(), async (client) => {
      await client.query(`set search_path to "${db.schema}"`);
      return fn(
        async <Row extends Record<string, unknown>>(sql: string, params?: unknown[]) => (await client.query<Row>(sql, params)).rows,
      );
    });
  }
  let result: { value: T } | undefined;
  await s.restartRelayer({
    whileStopped: async () => {
      const pglite = await PGlite.create(db.directory, PGLITE_OPTIONS);
      try {
        result = {
          value: await fn(
            async <Row extends Record<string, unknown>>(sql: string, params?: unknown[]) => (await pglite.query<Row>(sql, params)).rows,
          ),
        };
      } finally {
        await pglite.close();
      }
    },
  });
  return result!.value;
}
