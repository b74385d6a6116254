// POST /energy/v1/auth/token takes HTTP Basic client authentication (client_secret_basic, RFC 6749 section
// 2.3.1: client id and secret each form-urlencoded, then base64 in `Authorization: Basic`), which most OAuth
// client libraries send by default, besides the interface's own form fields, which keep working as before.
// One method per request: Basic credentials with a client_secret in the body are 400 invalid_request in the
// sandbox's envelope. A wrong secret by Basic is the same 401 unauthorized as in the body, with the Basic
// challenge (RFC 6749 section 5.2). End to end against a relayer on loopback. The token route allows a burst
// of 20 requests per client address: this file makes fewer.
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { type Stack, startStack } from "../support/stack.ts";
import { BASE, assertError, call, request } from "./helpers.ts";

const FORM = { "content-type": "application/x-www-form-urlencoded" };

/** Every octet of `value` percent-encoded: a valid, if unusual, application/x-www-form-urlencoded form. */
function percentEncodeAll(value: string): string {
  return [...Buffer.from(value, "utf8")].map((byte) => `%${byte.toString(16).toUpperCase().padStart(2, "0")}`).join("");
}

function basic(id: string, secret: string, encode: (s: string) => string = encodeURIComponent): string {
  return `Basic ${Buffer.from(`${encode(id)}:${encode(secret)}`, "utf8").toString("base64")}`;
}

function token(stack: Stack, fields: Record<string, string>, authorization?: string) {
  return request(stack, "POST", `${BASE}/auth/token`, {
    body: new URLSearchParams(fields).toString(),
    headers: authorization === undefined ? FORM : { ...FORM, authorization },
  });
}

describe("POST /energy/v1/auth/token with HTTP Basic client authentication", { concurrency: false }, () => {
  let stack: Stack;
  let clientId: string;
  let clientSecret: string;

  before(
    async () => {
      stack = await startStack({ label: "energy-basic-auth", database: "pglite", indexer: false });
      ({ clientId, clientSecret } = stack.sample.energyClient);
    },
    { timeout: 240_000 },
  );
  after(() => stack?.stop());

  it("issues a working bearer token for Basic credentials and a body with grant_type alone", async () => {
    const response = await token(stack, { grant_type: "client_credentials" }, basic(clientId, clientSecret));
    assert.equal(response.status, 200, response.text);
    assert.equal(response.body.token_type, "Bearer");
    assert.equal(response.headers.get("cache-control"), "no-store");
    const project = await call(stack, response.body.access_token, "GET", "/projects/prj_kibera_solar");
    assert.equal(project.status, 200, project.text);
  });

  it("form-decodes the id and secret (every octet percent-encoded), takes the scheme in any case, and a body client_id of the same client", async () => {
    const encoded = await token(stack, { grant_type: "client_credentials" }, basic(clientId, clientSecret, percentEncodeAll));
    assert.equal(encoded.status, 200, encoded.text);
    const lower = await token(
      stack,
      { grant_type: "client_credentials", client_id: clientId },
      basic(clientId, clientSecret).replace("Basic", "basic"),
    );
    assert.equal(lower.status, 200, lower.text);
  });

  it("refuses two authentication methods at once with 400 invalid_request, even when both are right", async () => {
    const both = await token(
      stack,
      { grant_type: "client_credentials", client_id: clientId, client_secret: clientSecret },
      basic(clientId, clientSecret),
    );
    assertError(both, 400, "invalid_request", "Basic and body credentials");
    assert.match(both.body.error.message, /one client authentication method/);
    const otherClient = await token(
      stack,
      { grant_type: "client_credentials", client_id: "another-client" },
      basic(clientId, clientSecret),
    );
    assertError(otherClient, 400, "invalid_request", "a body client_id of another client");
  });

  it("answers a wrong secret by Basic as a wrong secret in the body: 401 unauthorized, with the Basic challenge", async () => {
    const byBasic = await token(stack, { grant_type: "client_credentials" }, basic(clientId, `${clientSecret}x`));
    assertError(byBasic, 401, "unauthorized", "wrong secret by Basic");
    assert.match(byBasic.headers.get("www-authenticate") ?? "", /^Basic realm="energy-sandbox"/);
    const unknown = await token(stack, { grant_type: "client_credentials" }, basic("no-such-client", clientSecret));
    assertError(unknown, 401, "unauthorized", "unknown client by Basic");
    assert.match(unknown.headers.get("www-authenticate") ?? "", /^Basic /);
    const inBody = await token(stack, { grant_type: "client_credentials", client_id: clientId, client_secret: `${clientSecret}x` });
    assertError(inBody, 401, "unauthorized", "wrong secret in the body");
    assert.equal(inBody.body.error.message, byBasic.body.error.message);
    assert.equal(inBody.headers.get("www-authenticate"), null);
  });

  it("answers malformed Basic credentials with 401 unauthorized and the Basic challenge", async () => {
    for (const [name, authorization] of [
      ["no colon", `Basic ${Buffer.from(clientId).toString("base64")}`],
      ["not base64", "Basic !!!"],
      ["no credentials", "Basic"],
      ["bad percent-encoding", `Basic ${Buffer.from(`${clientId}:%zz`).toString("base64")}`],
      ["a NUL character", `Basic ${Buffer.from(`${clientId}%00:${clientSecret}`).toString("base64")}`],
    ]) {
      const response = await token(stack, { grant_type: "client_credentials" }, authorization);
      assertError(response, 401, "unauthorized", name);
      assert.match(response.headers.get("www-authenticate") ?? "", /^Basic /, name);
    }
  });

  it("keeps the interface's body credentials: they work, another Authorization scheme is ignored, and without Basic both fields are required", async () => {
    const body = await token(
      stack,
      { grant_type: "client_credentials", client_id: clientId, client_secret: clientSecret },
      "Bearer something-else",
    );
    assert.equal(body.status, 200, body.text);
    const noSecret = await token(stack, { grant_type: "client_credentials", client_id: clientId });
    assertError(noSecret, 400, "invalid_request", "no client_secret, no Basic");
    assert.match(noSecret.body.error.message, /client_secret/);
    const nothing = await token(stack, { grant_type: "client_credentials" });
    assertError(nothing, 400, "invalid_request", "no credentials at all");
  });
});
