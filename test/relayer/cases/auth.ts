// POST /v1/auth/login, GET /v1/auth/me, and the portal's API key routes.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { SignJWT } from "jose";
import type { Stack } from "../../support/stack.ts";
import { expectError } from "./expect.ts";

export function authCases(stack: () => Stack) {
  describe("authentication", () => {
    it("exchanges the sample login for a JWT and returns the identity behind it", async () => {
      const s = stack();
      const login = await s.api("POST", "/v1/auth/login", { body: { email: s.sample.email, password: s.sample.password } });
      assert.equal(login.status, 200);
      assert.equal(login.body.tokenType, "Bearer");
      assert.equal(login.body.expiresIn, 900);
      assert.match(login.body.token, /^[\w-]+\.[\w-]+\.[\w-]+$/);
      const me = await s.api("GET", "/v1/auth/me", { token: login.body.token });
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
      const key = new TextEncoder().encode(s.relayerOptions.jwtSecret);
      const now = Math.floor(Date.now() / 1000);
      const expired = await new SignJWT({ tid: s.sample.tenantId })
        .setProtectedHeader({ alg: "HS256" })
        .setIssuer("payg-relayer")
        .setAudience("portal")
        .setSubject("usr_x")
        .setIssuedAt(now - 3600)
        .setExpirationTime(now - 60)
        .sign(key);
      expectError(await s.api("GET", "/v1/auth/me", { token: expired }), 401, "unauthorized");
      const forged = await new SignJWT({ tid: s.sample.tenantId })
        .setProtectedHeader({ alg: "HS256" })
        .setIssuer("payg-relayer")
        .setAudience("portal")
        .setSubject("usr_x")
        .setExpirationTime(now + 600)
        .sign(new TextEncoder().encode("another-secret-of-at-least-32-characters"));
      expectError(await s.api("GET", "/v1/auth/me", { token: forged }), 401, "unauthorized");
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
  return response.body.token;
}
