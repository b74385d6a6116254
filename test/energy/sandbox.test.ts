// The energy cash-flow sandbox through HTTP against a running relayer: public routes, the token flow and
// bearer authentication, the sample resources, webhook registration, the error envelope everywhere
// (unknown routes, bodies that are not JSON, bodies over the limit), and the OpenAPI document.
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { SignJWT } from "jose";
import { oneDatabaseKind, withPostgres } from "../support/databases.ts";
import { type Stack, startStack } from "../support/stack.ts";
import { BASE, accessToken, assertError, call, meter, postBatch, request, tokenRequest } from "./helpers.ts";
import type { UncheckedJson } from "../support/unchecked-json.ts";

const SPEC_ROUTES = [
  "GET /health",
  "GET /version",
  "GET /capabilities",
  "POST /auth/token",
  "GET /projects/{project_id}",
  "GET /devices/{device_id}",
  "POST /telemetry:batch",
  "GET /distributions/{distribution_id}",
  "GET /evidence/{evidence_ref}",
  "POST /webhooks",
];
const BEARER_ROUTES: Array<[string, string, unknown?]> = [
  ["GET", "/projects/prj_kibera_solar"],
  ["GET", "/devices/mtr-kibera-001"],
  ["POST", "/telemetry:batch", { device_id: "mtr-kibera-001", readings: [] }],
  ["GET", "/distributions/dst_kibera_2026_02"],
  ["GET", "/evidence/ev_kibera_2026_02"],
  ["POST", "/webhooks", { url: "https://example.com/hook", events: ["assurance.restored"] }],
];
const WEBHOOK_EVENTS = ["distribution.executed", "assurance.provisionally_downgraded", "assurance.restored", "telemetry.anomaly_detected"];

// The interface's shape (routes, authentication, envelope, limits, document) does not depend on the database,
// so this file runs on one: the production database (PostgreSQL) when selected, which also lets it break the
// database under a route; what depends on the database (ingest, attestation) runs on both in telemetry.test.ts
// and anchoring.test.ts.
for (const database of [oneDatabaseKind()]) {
  describe(`energy sandbox interface (${database})`, { timeout: 300_000 }, () => {
    let stack: Stack;
    let token: string;

    before(async () => {
      stack = await startStack({ label: `energy-api-${database}`, database, indexer: false });
      token = await accessToken(stack);
    });
    after(() => stack?.stop());

    describe("public routes", () => {
      it("GET /health is 200 without a token", async () => {
        const response = await request(stack, "GET", `${BASE}/health`);
        assert.equal(response.status, 200);
        assert.deepEqual(response.body, { status: "ok", environment: "sandbox" });
      });

      it("GET /version reports specification version 0.2.0", async () => {
        const response = await request(stack, "GET", `${BASE}/version`);
        assert.equal(response.status, 200);
        assert.deepEqual(response.body, { specification_version: "0.2.0", api_version: "v1", environment: "sandbox" });
      });

      it("GET /capabilities reports what is implemented, simulated and omitted, with the deployment's anchor", async () => {
        const response = await request(stack, "GET", `${BASE}/capabilities`);
        assert.equal(response.status, 200);
        const report = response.body;
        assert.equal(report.environment, "sandbox");
        assert.equal(report.specification_version, "0.2.0");
        const names = (list: Array<{ name: string }>) => list.map((i) => i.name);
        for (const name of [
          "oauth_client_credentials",
          "telemetry_ingest",
          "idempotency",
          "attestation",
          "device_signatures",
          "anomaly_scoring",
        ]) {
          assert.ok(names(report.implements).includes(name), name);
        }
        for (const name of ["projects", "distributions", "evidence"]) assert.ok(names(report.simulates).includes(name), name);
        for (const name of ["webhook_delivery", "wider_interface"]) assert.ok(names(report.omits).includes(name), name);
        assert.ok(names(report.implements).includes("rate_limiting"), "rate_limiting (POST /auth/token)");
        assert.deepEqual(report.limits, {
          min_readings_per_batch: 1,
          max_readings_per_batch: 5000,
          max_telemetry_body_bytes: 2 * 1024 * 1024,
          max_body_bytes: 64 * 1024,
          device_ts_drift_seconds: 300,
          token_lifetime_seconds: 3600,
          idempotency_key_max_length: 255,
          idempotency_key_retention_seconds: 86_400,
          rate_limits: { auth_token: { burst: 20, per_minute: 20 }, telemetry_batch: { burst: 200, per_second: 100 } },
        });
        assert.equal(report.anchoring.contract, stack.chain.record.contracts.TelemetryAnchor?.address);
        assert.equal(report.anchoring.chain_id, stack.chain.record.chainId);
        assert.deepEqual(report.anchoring.batch_leaf_encoding, ["bytes32", "bytes32", "uint64", "bytes32", "uint32"]);
        assert.equal(report.anchoring.batch_leaf_values.length, 5);
        assert.equal(report.anchoring.max_batches_per_anchor, 1000);
        assert.match(report.anchoring.how_to_verify, /verifyReading/);
        assert.ok(report.sample_data.projects.length >= 2);
        assert.ok(report.sample_data.evidence.some((e: { live: boolean }) => e.live));
      });

      it("public routes need no token but accept one", async () => {
        for (const path of ["/health", "/version", "/capabilities"]) {
          assert.equal((await request(stack, "GET", `${BASE}${path}`, { token: "not-a-token" })).status, 200, path);
        }
      });
    });

    describe("POST /auth/token", () => {
      it("issues a Bearer token valid 3600 s for the client's credentials", async () => {
        const { clientId, clientSecret } = stack.sample.energyClient;
        const response = await tokenRequest(stack, { grant_type: "client_credentials", client_id: clientId, client_secret: clientSecret });
        assert.equal(response.status, 200, response.text);
        assert.deepEqual(Object.keys(response.body).sort(), ["access_token", "expires_in", "token_type"]);
        assert.equal(response.body.token_type, "Bearer");
        assert.equal(response.body.expires_in, 3600);
        assert.equal(response.headers.get("cache-control"), "no-store");
        const project = await call(stack, response.body.access_token, "GET", "/projects/prj_kibera_solar");
        assert.equal(project.status, 200);
      });

      it("ignores extra form fields such as scope", async () => {
        const { clientId, clientSecret } = stack.sample.energyClient;
        const response = await tokenRequest(stack, {
          grant_type: "client_credentials",
          client_id: clientId,
          client_secret: clientSecret,
          scope: "telemetry",
        });
        assert.equal(response.status, 200);
      });

      it("is 400 invalid_request when the form fails validation", async () => {
        const { clientId, clientSecret } = stack.sample.energyClient;
        const cases: Array<[string, Record<string, string>]> = [
          ["another grant type", { grant_type: "password", client_id: clientId, client_secret: clientSecret }],
          ["no grant type", { client_id: clientId, client_secret: clientSecret }],
          ["no client_id", { grant_type: "client_credentials", client_secret: clientSecret }],
          ["no client_secret", { grant_type: "client_credentials", client_id: clientId }],
          ["empty client_secret", { grant_type: "client_credentials", client_id: clientId, client_secret: "" }],
        ];
        for (const [name, fields] of cases) assertError(await tokenRequest(stack, fields), 400, "invalid_request", name);
        const json = JSON.stringify({ grant_type: "client_credentials", client_id: clientId, client_secret: clientSecret });
        assertError(
          await request(stack, "POST", `${BASE}/auth/token`, { body: json, headers: { "content-type": "application/json" } }),
          400,
          "invalid_request",
          "a JSON body",
        );
        assertError(await request(stack, "POST", `${BASE}/auth/token`, { body: json }), 400, "invalid_request", "no content type");
        const multipart = new FormData();
        multipart.set("grant_type", "client_credentials");
        multipart.set("client_id", clientId);
        multipart.set("client_secret", clientSecret);
        const response = await fetch(`${stack.relayerUrl}${BASE}/auth/token`, { method: "POST", body: multipart });
        assertError(
          { status: response.status, headers: response.headers, text: "", body: await response.json() },
          400,
          "invalid_request",
          "multipart",
        );
      });

      it("is 401 for unknown credentials", async () => {
        const { clientId, clientSecret } = stack.sample.energyClient;
        assertError(
          await tokenRequest(stack, { grant_type: "client_credentials", client_id: "no-such-client", client_secret: clientSecret }),
          401,
          "unauthorized",
          "unknown client",
        );
        assertError(
          await tokenRequest(stack, { grant_type: "client_credentials", client_id: clientId, client_secret: `${clientSecret}x` }),
          401,
          "unauthorized",
          "wrong secret",
        );
      });
    });

    describe("bearer authentication", () => {
      const sign = (claims: { aud?: string; exp?: number; sub?: string; secret?: string }) => {
        const now = Math.floor(Date.now() / 1000);
        return new SignJWT({})
          .setProtectedHeader({ alg: "HS256", typ: "JWT" })
          .setIssuer("payg-relayer")
          .setAudience(claims.aud ?? "energy-sandbox")
          .setSubject(claims.sub ?? stack.sample.energyClient.clientId)
          .setIssuedAt(now - 7200)
          .setExpirationTime(claims.exp ?? now + 600)
          .sign(new TextEncoder().encode(claims.secret ?? stack.relayerOptions.jwtSecret));
      };

      it("every bearer route is 401 unauthorized without a token, with a malformed header, or with a bad token", async () => {
        const expired = await sign({ exp: Math.floor(Date.now() / 1000) - 60 });
        const portalAudience = await sign({ aud: "portal" });
        const otherKey = await sign({ secret: "another-secret-of-at-least-32-characters!!" });
        const unknownClient = await sign({ sub: "no-such-client" });
        const tampered = `${token.slice(0, -2)}${token.slice(-2) === "AA" ? "BB" : "AA"}`;
        const authorizations: Array<[string, string | undefined]> = [
          ["missing", undefined],
          ["not bearer", `Basic ${Buffer.from("a:b").toString("base64")}`],
          ["empty bearer", "Bearer "],
          ["two tokens", `Bearer ${token} ${token}`],
          ["garbage", "Bearer not-a-jwt"],
          ["expired", `Bearer ${expired}`],
          ["another audience (a portal token)", `Bearer ${portalAudience}`],
          ["signed with another key", `Bearer ${otherKey}`],
          ["an unknown client", `Bearer ${unknownClient}`],
          ["tampered", `Bearer ${tampered}`],
        ];
        for (const [method, path, body] of BEARER_ROUTES) {
          for (const [name, authorization] of authorizations) {
            const headers: Record<string, string> = body === undefined ? {} : { "content-type": "application/json" };
            if (authorization !== undefined) headers.authorization = authorization;
            const response = await request(stack, method, `${BASE}${path}`, {
              body: body === undefined ? undefined : JSON.stringify(body),
              headers,
            });
            assertError(response, 401, "unauthorized", `${method} ${path} (${name})`);
            assert.match(response.headers.get("www-authenticate") ?? "", /^Bearer/);
          }
        }
      });

      it("a valid token signed just now is accepted (the 401s above are the token's, not the route's)", async () => {
        const fresh = await sign({});
        assert.equal((await call(stack, fresh, "GET", "/projects/prj_kibera_solar")).status, 200);
      });
    });

    describe("resources", () => {
      it("GET /projects/{project_id}: every field of the Project table, for each sample project", async () => {
        const capabilities = (await request(stack, "GET", `${BASE}/capabilities`)).body;
        assert.ok(capabilities.sample_data.projects.length >= 2);
        for (const id of capabilities.sample_data.projects) {
          const response = await call(stack, token, "GET", `/projects/${id}`);
          assert.equal(response.status, 200);
          const p = response.body;
          assert.deepEqual(Object.keys(p).sort(), [
            "asset_readiness",
            "assurance_state",
            "chain_refs",
            "data_assurance",
            "installed_capacity_w",
            "lifetime_generation_wh",
            "name",
            "performance_ratio",
            "project_id",
            "status",
          ]);
          assert.equal(p.project_id, id);
          for (const key of ["name", "data_assurance", "asset_readiness", "assurance_state", "status"])
            assert.equal(typeof p[key], "string");
          assert.ok(Number.isInteger(p.installed_capacity_w) && Number.isInteger(p.lifetime_generation_wh));
          assert.equal(typeof p.performance_ratio, "number");
          assert.equal(p.chain_refs.chain, "local");
          assert.equal(typeof p.chain_refs.unit_token.token_id, "string");
        }
        assertError(await call(stack, token, "GET", "/projects/prj_nope"), 404, "not_found");
      });

      it("GET /devices/{device_id}: the record, baseline state, and 404 device_not_found for unknown or deregistered", async () => {
        const response = await call(stack, token, "GET", "/devices/mtr-kibera-004");
        assert.equal(response.status, 200);
        assert.deepEqual(response.body, {
          device_id: "mtr-kibera-004",
          project_id: "prj_kibera_solar",
          meter_epoch: 2,
          last_sequence_number: 980,
          last_energy_wh_cumulative: 2_402_000,
          baseline_complete: true,
        });
        const baseline = await call(stack, token, "GET", "/devices/mtr-yaba-002");
        assert.equal(baseline.body.baseline_complete, false);
        assertError(await call(stack, token, "GET", "/devices/mtr-kibera-003"), 404, "device_not_found", "deregistered");
        assertError(await call(stack, token, "GET", "/devices/mtr-nope"), 404, "device_not_found", "unknown");
      });

      it("GET /distributions/{distribution_id}: waterfall legs sum to gross_minor; the evidence_ref resolves to four clusters", async () => {
        const capabilities = (await request(stack, "GET", `${BASE}/capabilities`)).body;
        assert.ok(capabilities.sample_data.distributions.length >= 2);
        for (const id of capabilities.sample_data.distributions) {
          const response = await call(stack, token, "GET", `/distributions/${id}`);
          assert.equal(response.status, 200);
          const d = response.body;
          assert.deepEqual(Object.keys(d).sort(), [
            "currency",
            "distribution_id",
            "epoch",
            "evidence_ref",
            "gross_minor",
            "per_unit_minor",
            "project_id",
            "status",
            "waterfall",
          ]);
          assert.equal(d.status, "executed");
          assert.deepEqual(
            d.waterfall.map((l: { leg: string }) => l.leg),
            ["opex_reserve", "operator", "protocol_fee", "unit_holders"],
          );
          assert.equal(
            d.waterfall.reduce((sum: number, l: { amount_minor: number }) => sum + l.amount_minor, 0),
            d.gross_minor,
          );
          assert.ok(Number.isInteger(d.per_unit_minor) && d.per_unit_minor > 0);
          assert.equal((await call(stack, token, "GET", `/projects/${d.project_id}`)).status, 200);

          const evidence = await call(stack, token, "GET", `/evidence/${d.evidence_ref}`);
          assert.equal(evidence.status, 200);
          const e = evidence.body;
          assert.equal(e.evidence_ref, d.evidence_ref);
          assert.equal(e.distribution_id, id);
          assert.equal(e.project_id, d.project_id);
          assert.deepEqual(Object.keys(e.clusters).sort(), [
            "distribution_evidence",
            "energy_evidence",
            "legal_evidence",
            "settlement_evidence",
          ]);
          const { energy_evidence, legal_evidence, settlement_evidence, distribution_evidence } = e.clusters;
          assert.ok(Number.isInteger(energy_evidence.readings));
          assert.match(energy_evidence.merkle_root, /^0x[0-9a-f]{64}$/);
          assert.deepEqual(Object.keys(energy_evidence).sort(), ["anchor", "batch_sequence", "device_id", "merkle_root", "readings"]);
          assert.deepEqual(Object.keys(energy_evidence.anchor).sort(), ["batch_proof", "batches_root", "chain", "status", "tx"]);
          assert.match(energy_evidence.anchor.batches_root, /^0x[0-9a-f]{64}$/);
          assert.ok(Array.isArray(energy_evidence.anchor.batch_proof));
          assert.equal(energy_evidence.anchor.status, "anchored");
          assert.ok(Array.isArray(legal_evidence.documents) && legal_evidence.documents.every((x: unknown) => typeof x === "string"));
          assert.equal(legal_evidence.status, "verified");
          assert.equal(typeof settlement_evidence.bank_confirmation, "string");
          assert.equal(settlement_evidence.status, "confirmed");
          assert.equal(typeof distribution_evidence.audit_trail, "string");
          assert.equal(distribution_evidence.status, "complete");
        }
        assertError(await call(stack, token, "GET", "/distributions/dst_nope"), 404, "not_found");
        assertError(await call(stack, token, "GET", "/evidence/ev_nope"), 404, "not_found");
      });
    });

    describe("POST /webhooks", () => {
      it("registers every event kind and echoes the registration with 201; never delivers", async () => {
        const response = await call(stack, token, "POST", "/webhooks", {
          url: "https://example.com/hooks/energy?x=1",
          events: WEBHOOK_EVENTS,
        });
        assert.equal(response.status, 201, response.text);
        assert.match(response.body.webhook_id, /^whk_[0-9A-Z]{26}$/);
        assert.equal(response.body.url, "https://example.com/hooks/energy?x=1");
        assert.deepEqual(response.body.events, WEBHOOK_EVENTS);
        assert.equal(response.body.delivery, "never");
        assert.ok(Math.abs(Date.parse(response.body.created_at) - Date.now()) < 60_000);
        const again = await call(stack, token, "POST", "/webhooks", { url: "http://127.0.0.1:9/hook", events: ["assurance.restored"] });
        assert.equal(again.status, 201);
        assert.notEqual(again.body.webhook_id, response.body.webhook_id);
      });

      it("is 400 invalid_request for an invalid registration", async () => {
        const cases: Array<[string, unknown]> = [
          ["no url", { events: ["assurance.restored"] }],
          ["no events", { url: "https://example.com/h" }],
          ["url not a URI", { url: "not a url", events: ["assurance.restored"] }],
          ["url not http(s)", { url: "ftp://example.com/h", events: ["assurance.restored"] }],
          ["url a number", { url: 42, events: ["assurance.restored"] }],
          ["empty events", { url: "https://example.com/h", events: [] }],
          ["unknown event", { url: "https://example.com/h", events: ["payment.succeeded"] }],
          ["event not a string", { url: "https://example.com/h", events: [1] }],
          ["events not an array", { url: "https://example.com/h", events: "assurance.restored" }],
          ["duplicate events", { url: "https://example.com/h", events: ["assurance.restored", "assurance.restored"] }],
          ["unknown field", { url: "https://example.com/h", events: ["assurance.restored"], secret: "x" }],
          ["an array", [{ url: "https://example.com/h", events: ["assurance.restored"] }]],
        ];
        for (const [name, body] of cases) assertError(await call(stack, token, "POST", "/webhooks", body), 400, "invalid_request", name);
      });
    });

    describe("the error envelope", () => {
      it("answers every other path or method under the base with 404 not_found", async () => {
        const cases: Array<[string, string]> = [
          ["GET", BASE],
          ["GET", `${BASE}/`],
          ["GET", `${BASE}/nope`],
          ["GET", `${BASE}/projects`],
          ["GET", `${BASE}/devices`],
          ["GET", `${BASE}/telemetry`],
          ["GET", `${BASE}/telemetry:batch`],
          ["POST", `${BASE}/telemetry`],
          ["POST", `${BASE}/telemetry%3Abatch`],
          ["DELETE", `${BASE}/health`],
          ["POST", `${BASE}/health`],
          ["PUT", `${BASE}/webhooks`],
          ["GET", `${BASE}/webhooks`],
          ["GET", `${BASE}/auth/token`],
          ["GET", `${BASE}/openapi.json`],
          ["GET", `${BASE}/docs`],
          ["GET", `${BASE}/health/`],
          ["GET", `${BASE}/projects/prj_kibera_solar/devices`],
          ["POST", `${BASE}/distributions/dst_kibera_2026_02`],
          ["GET", `${BASE}/quote`],
          ["GET", `${BASE}/orders/ord_1`],
        ];
        for (const [method, path] of cases) {
          assertError(await request(stack, method, path, { token }), 404, "not_found", `${method} ${path}`);
          assertError(await request(stack, method, path), 404, "not_found", `${method} ${path} without a token`);
        }
      });

      it("answers bodies that are not JSON with 400 invalid_request", async () => {
        for (const path of ["/telemetry:batch", "/webhooks"]) {
          for (const [name, body, contentType] of [
            ["malformed", '{"device_id": ', "application/json"],
            ["empty", "", "application/json"],
            ["text", "device_id=x", "text/plain"],
            ["form", "device_id=x", "application/x-www-form-urlencoded"],
          ] as const) {
            const response = await request(stack, "POST", `${BASE}${path}`, { token, body, headers: { "content-type": contentType } });
            assertError(response, 400, "invalid_request", `${path} ${name}`);
          }
          assertError(await request(stack, "POST", `${BASE}${path}`, { token }), 400, "invalid_request", `${path} without a body`);
        }
      });

      it("answers JSON nested deeper than 32 levels with 400 invalid_request before parsing it", async () => {
        const deep = `${"[".repeat(512 * 1024)}${"]".repeat(512 * 1024)}`;
        const response = await postBatch(stack, token, deep);
        assertError(response, 400, "invalid_request", "deep batch");
        assert.match(response.body.error.message, /more than 32 levels deep/);
      });

      it("answers bodies over the limit with 413 payload_too_large (2 MiB for telemetry, 64 KiB elsewhere)", async () => {
        const big = JSON.stringify({ device_id: "mtr-kibera-001", readings: [], pad: "x".repeat(2 * 1024 * 1024) });
        assertError(await postBatch(stack, token, big), 413, "payload_too_large", "telemetry");
        const webhook = JSON.stringify({ url: `https://example.com/${"x".repeat(70 * 1024)}`, events: ["assurance.restored"] });
        assertError(await call(stack, token, "POST", "/webhooks", webhook), 413, "payload_too_large", "webhooks");
        const form = `grant_type=client_credentials&client_id=x&client_secret=${"x".repeat(70 * 1024)}`;
        assertError(
          await request(stack, "POST", `${BASE}/auth/token`, {
            body: form,
            headers: { "content-type": "application/x-www-form-urlencoded" },
          }),
          413,
          "payload_too_large",
          "token",
        );
        // A batch just under the telemetry limit is read (and here rejected for its content, not its size).
        const underLimit = JSON.stringify({ device_id: "mtr-kibera-001", readings: [], pad: "x".repeat(1024 * 1024) });
        assertError(await postBatch(stack, token, underLimit), 400, "invalid_request", "under the limit");
      });

      if (database === "postgres") {
        it("answers an unexpected failure with 500 internal_error and no internal detail", async () => {
          const db = stack.relayerOptions.database as { url: string; schema: string };
          const table = `"${db.schema}".energy_devices`;
          await withPostgres(db.url, (client) => client.query(`alter table ${table} rename to energy_devices_away`));
          try {
            const response = await call(stack, token, "GET", "/devices/mtr-kibera-001");
            assertError(response, 500, "internal_error");
            assert.doesNotMatch(response.text, /energy_devices|relation|stack/i);
          } finally {
            await withPostgres(db.url, (client) => client.query(`alter table "${db.schema}".energy_devices_away rename to energy_devices`));
          }
          assert.equal((await call(stack, token, "GET", "/devices/mtr-kibera-001")).status, 200);
        });
      }
    });

    describe("OpenAPI document", () => {
      it("is served outside the base at /energy/openapi.json, with exactly the ten routes, and a docs page at /energy/docs", async () => {
        const response = await request(stack, "GET", "/energy/openapi.json");
        assert.equal(response.status, 200);
        const doc = response.body;
        assert.equal(doc.openapi, "3.1.0");
        assert.equal(doc.info.version, "0.2.0");
        assert.equal(doc.servers[0].url, `${stack.relayerUrl}${BASE}`);
        const routes = Object.entries(doc.paths as Record<string, Record<string, unknown>>).flatMap(([path, item]) =>
          Object.keys(item).map((method) => `${method.toUpperCase()} ${path}`),
        );
        assert.deepEqual(routes.sort(), [...SPEC_ROUTES].sort());
        assert.equal(doc.components.securitySchemes.sandboxToken.flows.clientCredentials.tokenUrl, `${stack.relayerUrl}${BASE}/auth/token`);
        const telemetry = doc.paths["/telemetry:batch"].post;
        assert.deepEqual(Object.keys(telemetry.responses).sort(), ["200", "400", "401", "404", "409", "413", "422", "429", "500"]);
        assert.deepEqual(telemetry.parameters.map((p: { name: string; in: string }) => `${p.in}:${p.name}`).sort(), [
          "header:Device-Signature",
          "header:Idempotency-Key",
        ]);
        assert.deepEqual(Object.keys(doc.components.schemas.ReadingIssue.properties).sort(), [
          "code",
          "index",
          "message",
          "outcome",
          "reading_id",
        ]);
        assert.deepEqual(Object.keys(doc.components.schemas.SandboxError.properties).sort(), ["environment", "error"]);
        for (const [route, item] of Object.entries(
          doc.paths as Record<string, Record<string, { responses: Record<string, UncheckedJson> }>>,
        )) {
          for (const operation of Object.values(item)) {
            for (const [status, r] of Object.entries(operation.responses)) {
              if (Number(status) < 400) continue;
              // The SandboxError component, its svc_code narrowed to this response's codes (allOf).
              const schema = r.content["application/json"].schema;
              assert.equal(schema.allOf?.[0]?.$ref, "#/components/schemas/SandboxError", `${route} ${status}`);
              assert.ok(schema.allOf[1].properties.error.properties.svc_code.enum.length > 0, `${route} ${status}: its codes`);
            }
          }
        }
        const page = await request(stack, "GET", "/energy/docs");
        assert.equal(page.status, 200);
        assert.match(page.text, /\/energy\/openapi\.json/);
      });
    });

    describe("sample devices", () => {
      it("the token of one client works for every bearer route (a batch for a sample device is accepted)", async () => {
        const m = meter("mtr-kibera-004", { sequence: 980, cumulative: 2_402_000, epoch: 2 });
        const response = await postBatch(stack, token, m.batch(2));
        assert.equal(response.status, 200, response.text);
      });
    });

    // Last: it restarts the relayer with a small ingest limit (the limiter is per process, in memory).
    describe("telemetry rate limit", () => {
      it("limits batches per OAuth client: 429 rate_limited with retry-after, nothing stored, other routes unaffected", async () => {
        await stack.restartRelayer({ env: { ENERGY_INGEST_BURST: "3", ENERGY_INGEST_PER_SECOND: "0.05" } });
        const limits = (await request(stack, "GET", `${BASE}/capabilities`)).body.limits.rate_limits;
        assert.deepEqual(limits.telemetry_batch, { burst: 3, per_second: 0.05 });

        // Invalid bodies count too: the limit is checked before the body is read.
        for (let i = 0; i < 3; i++) {
          assertError(await postBatch(stack, token, { device_id: "mtr-kibera-004", readings: [] }), 400, "invalid_request", `batch ${i}`);
        }
        const m = meter("mtr-kibera-004", { sequence: 2_000, cumulative: 2_500_000, epoch: 2 });
        const limited = await postBatch(stack, token, m.batch(1), { "Idempotency-Key": "rate-limited-batch" });
        assertError(limited, 429, "rate_limited", "the fourth batch");
        const retryAfter = Number(limited.headers.get("retry-after"));
        assert.ok(Number.isInteger(retryAfter) && retryAfter >= 1 && retryAfter <= 20, `retry-after ${retryAfter}`);

        const device = await call(stack, token, "GET", "/devices/mtr-kibera-004");
        assert.equal(device.status, 200, "reads are not rate-limited");
        assert.ok(device.body.last_sequence_number < 2_000, "the limited batch stored nothing");
        // A fresh token of the same client shares its bucket: the limit is per client, not per token.
        assertError(await postBatch(stack, await accessToken(stack), m.batch(1)), 429, "rate_limited", "a new token");
      });
    });
  });
}
