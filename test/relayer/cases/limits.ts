// Limits and the error envelope everywhere: unknown routes, oversized bodies, rate limits, documentation.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { Stack } from "../../support/stack.ts";
import { expectError } from "./expect.ts";

const SPEC_ROUTES = [
  ["post", "/auth/login"],
  ["get", "/auth/me"],
  ["get", "/devices"],
  ["get", "/devices/{id}"],
  ["get", "/devices/{id}/status"],
  ["post", "/quote"],
  ["post", "/orders"],
  ["get", "/orders/{id}"],
  ["get", "/orders/{id}/events"],
  ["get", "/revenue/splits"],
  ["get", "/participants/{id}/earnings"],
  ["get", "/public/stats"],
  ["get", "/impact"],
] as const;

export function limitCases(stack: () => Stack) {
  describe("documentation, limits and the envelope", () => {
    it("publishes an OpenAPI 3.1 document with every route of the interface, and an offline docs page", async () => {
      const s = stack();
      const doc = await s.api("GET", "/v1/openapi.json");
      assert.equal(doc.status, 200);
      assert.equal(doc.body.openapi, "3.1.0");
      for (const [method, route] of SPEC_ROUTES) {
        assert.ok(doc.body.paths[route]?.[method], `${method.toUpperCase()} ${route} is documented`);
      }
      assert.ok(doc.body.components.schemas.Error, "the error envelope is documented");
      const page = await fetch(`${s.relayerUrl}/v1/docs`);
      const html = await page.text();
      assert.equal(page.status, 200);
      assert.ok(!/https?:\/\/(?!127\.0\.0\.1)/.test(html.replace(/https?:\/\/127\.0\.0\.1:\d+/g, "")), "no external URL");
      const script = await fetch(`${s.relayerUrl}/v1/docs/assets/swagger-ui-bundle.js`);
      assert.equal(script.status, 200);
      assert.ok((await script.arrayBuffer()).byteLength > 100_000);
    });

    it("looks names from the request up as own entries only: inherited names are unknown, never a 500", async () => {
      const s = stack();
      for (const name of ["constructor", "__proto__", "toString", "hasOwnProperty"]) {
        for (const base of ["/v1/docs", "/energy/docs"]) {
          const asset = await fetch(`${s.relayerUrl}${base}/assets/${name}`);
          assert.equal(asset.status, 404, `${base}/assets/${name}: ${await asset.text()}`);
        }
        const login = await fetch(`${s.relayerUrl}/portal/login?notice=${name}`);
        const html = await login.text();
        assert.equal(login.status, 200, `/portal/login?notice=${name}`);
        assert.ok(!html.includes('class="notice'), `no notice for ?notice=${name}`);
      }
    });

    it("answers unknown routes and methods with the envelope's 404", async () => {
      const s = stack();
      expectError(await s.api("GET", "/v1/nope"), 404, "not_found");
      expectError(await s.api("DELETE", "/v1/quote"), 404, "not_found");
    });

    it("refuses a body over 1 MiB with 413 in the envelope", async () => {
      const s = stack();
      const big = JSON.stringify({ deviceId: "kiosk-nbo-001", chain: "local", token: "USDC", tier: "x".repeat(1_100_000) });
      expectError(await s.api("POST", "/v1/quote", { body: big }), 413, "body_too_large");
    });

    it("refuses JSON nested deeper than 32 levels with 422 before parsing it, and lets shallower bodies reach the validator", async () => {
      const s = stack();
      const nested = (levels: number) => `${"[".repeat(levels)}${"]".repeat(levels)}`;
      const deep = await s.api("POST", "/v1/quote", { body: nested(512 * 1024) });
      expectError(deep, 422, "invalid_parameters");
      assert.match(deep.body.error.message, /more than 32 levels deep/);
      const shallow = await s.api("POST", "/v1/quote", { body: nested(32) });
      expectError(shallow, 422, "invalid_parameters");
      assert.doesNotMatch(shallow.body.error.message, /levels deep/, "32 levels reach the validator");
    });

    it("rate-limits login attempts with 429 and retry-after", async () => {
      const s = stack();
      let limited;
      for (let i = 0; i < 15 && !limited; i++) {
        const response = await s.api("POST", "/v1/auth/login", { body: { email: "x@example.com", password: "y" } });
        if (response.status === 429) limited = response;
        else assert.equal(response.status, 401);
      }
      assert.ok(limited, "limited within 15 attempts");
      expectError(limited, 429, "rate_limited");
      assert.ok(Number(limited.headers.get("retry-after")) >= 1);
    });
  });
}
