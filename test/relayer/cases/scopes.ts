// What each credential may do: every operation of /v1/openapi.json (read at run time, so that a route added
// later cannot escape this test) called with every kind of credential, against the access table below. An
// operation missing from the table, or one in the table the document no longer has, fails the test.
//
// The rule, as the OpenAPI document states it: a public operation ignores any credential sent to it; an
// operation that needs a credential answers 401 `unauthorized` when the request carries none of the kinds it
// takes (no credential, an unknown, revoked or malformed one, a portal JWT where an API key is needed, an API
// key where a portal session is needed), and 403 `forbidden` when it is an API key of the tenant whose role
// the operation does not take.
import assert from "node:assert/strict";
import http from "node:http";
import { before, describe, it } from "node:test";
import { createOrder, pay, waitForOrder } from "../../support/pay.ts";
import type { Stack } from "../../support/stack.ts";
import type { UncheckedJson } from "../../support/unchecked-json.ts";

export type RawResponse = { status: number; headers: http.IncomingHttpHeaders; text: string; json: UncheckedJson };

/** A request from a chosen loopback source address (each address is a client of its own for the
 * per-address limits; fetch cannot choose it). The whole response is read, event streams included. */
export function send(
  s: Stack,
  req: { method: string; path: string; headers?: Record<string, string>; body?: string; from: string; timeoutMs?: number },
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
    const timeoutMs = req.timeoutMs ?? 60_000;
    request.setTimeout(timeoutMs, () => request.destroy(new Error(`${req.method} ${req.path}: no complete answer within ${timeoutMs} ms`)));
    request.end(req.body);
  });
}

/** Who may call an operation. */
type Access =
  | "public" // no credential; one sent anyway is ignored
  | "portal" // a portal JWT (Authorization: Bearer)
  | "anyCredential" // a portal JWT or an API key of either role
  | "portalOrDeveloperKey" // a portal JWT or an API key with the developer role
  | "anyKey" // an API key of either role
  | "developerKey" // an API key with the developer role
  | "agentKey"; // an API key with the agent role

type Rule = {
  access: Access;
  /** The status of an allowed call as this test makes it (its parameters are below). */
  ok: number;
  /** The status when another tenant's credential is allowed: its answer for this tenant's resource. */
  otherTenant?: number;
  /** The request body (JSON), for operations that take one: `{}` when not given. */
  body?: unknown;
};

const PUBLIC = "public" as const;

/** Every operation of the payment API: who may call it, and what this test's call answers. */
const TABLE = new Map<string, Rule>([
  ["GET /health", { access: PUBLIC, ok: 200 }],
  ["GET /health/ready", { access: PUBLIC, ok: 200 }],
  ["POST /auth/login", { access: PUBLIC, ok: 422 }],
  ["POST /auth/logout", { access: "portal", ok: 204 }],
  ["GET /auth/me", { access: "anyCredential", ok: 200 }],
  ["POST /api-keys", { access: "portal", ok: 422 }],
  ["GET /api-keys", { access: "portal", ok: 200 }],
  ["DELETE /api-keys/{id}", { access: "portal", ok: 200 }],
  ["GET /devices", { access: "anyKey", ok: 200 }],
  ["GET /devices/{id}", { access: "anyKey", ok: 200, otherTenant: 404 }],
  ["GET /devices/{id}/status", { access: PUBLIC, ok: 200 }],
  ["POST /devices/{id}/tickets", { access: PUBLIC, ok: 422 }],
  ["POST /quote", { access: PUBLIC, ok: 422 }],
  ["POST /orders", { access: PUBLIC, ok: 422 }],
  ["GET /orders/{id}", { access: PUBLIC, ok: 200 }],
  ["GET /orders/{id}/events", { access: PUBLIC, ok: 200 }],
  ["GET /orders/{id}/receipt", { access: PUBLIC, ok: 200 }],
  ["POST /orders/{id}/permit", { access: PUBLIC, ok: 422 }],
  ["POST /orders/{id}/authorization", { access: PUBLIC, ok: 422 }],
  ["POST /orders/{id}/permit2", { access: PUBLIC, ok: 422 }],
  // The order is paid already: an agent of its tenant passes and is told so; another tenant's is 404.
  ["POST /orders/{id}/cash", { access: "agentKey", ok: 409, otherTenant: 404 }],
  // The same paid order: a developer key of its tenant passes and is told it is paid; another tenant's is 404.
  ["POST /orders/{id}/cancel", { access: "developerKey", ok: 409, otherTenant: 404 }],
  ["GET /revenue/splits", { access: "developerKey", ok: 200 }],
  ["GET /participants/{id}/earnings", { access: "developerKey", ok: 200, otherTenant: 404 }],
  ["GET /revenue/overview", { access: "portal", ok: 200 }],
  ["GET /assets", { access: "portal", ok: 200 }],
  ["PUT /assets/{id}/payout", { access: "portal", ok: 422 }],
  ["GET /public/stats", { access: PUBLIC, ok: 200 }],
  ["GET /impact", { access: PUBLIC, ok: 200 }],
  ["GET /webhooks/event-types", { access: PUBLIC, ok: 200 }],
  ["POST /webhooks/subscriptions", { access: "portalOrDeveloperKey", ok: 422 }],
  ["GET /webhooks/subscriptions", { access: "portalOrDeveloperKey", ok: 200 }],
  // Subscription and delivery ids that do not exist: nothing is changed, whoever asks.
  ["GET /webhooks/subscriptions/{id}", { access: "portalOrDeveloperKey", ok: 404 }],
  ["PATCH /webhooks/subscriptions/{id}", { access: "portalOrDeveloperKey", ok: 404, body: { description: "scopes" } }],
  ["DELETE /webhooks/subscriptions/{id}", { access: "portalOrDeveloperKey", ok: 404 }],
  ["POST /webhooks/subscriptions/{id}/test", { access: "portalOrDeveloperKey", ok: 404 }],
  ["POST /webhooks/subscriptions/{id}/rotate-secret", { access: "portalOrDeveloperKey", ok: 404 }],
  ["GET /webhooks/subscriptions/{id}/deliveries", { access: "portalOrDeveloperKey", ok: 404 }],
  ["GET /webhooks/deliveries/{id}", { access: "portalOrDeveloperKey", ok: 404 }],
  ["POST /webhooks/deliveries/{id}/redeliver", { access: "portalOrDeveloperKey", ok: 404 }],
  ["GET /events", { access: "portalOrDeveloperKey", ok: 200 }],
  ["GET /events/{id}", { access: "portalOrDeveloperKey", ok: 404 }],
]);

/** The kinds of credential each operation is called with. */
const KINDS = [
  "none",
  "developer key",
  "agent key",
  "portal JWT",
  "portal cookie",
  "revoked key",
  "malformed bearer",
  "other tenant's developer key",
  "other tenant's agent key",
] as const;
type Kind = (typeof KINDS)[number];

const OTHER_TENANT_KINDS = new Set<Kind>(["other tenant's developer key", "other tenant's agent key"]);

/** What `kind` gets from an operation that takes `access`: allowed, 401 or 403. */
function verdict(access: Access, kind: Kind): "allowed" | 401 | 403 {
  if (access === PUBLIC) return "allowed";
  const developer = kind === "developer key" || kind === "other tenant's developer key";
  const agent = kind === "agent key" || kind === "other tenant's agent key";
  const jwt = kind === "portal JWT";
  switch (access) {
    case "portal":
      return jwt ? "allowed" : 401;
    case "anyCredential":
      return jwt || developer || agent ? "allowed" : 401;
    case "portalOrDeveloperKey":
      return jwt || developer ? "allowed" : agent ? 403 : 401;
    case "anyKey":
      return developer || agent ? "allowed" : 401;
    case "developerKey":
      return developer ? "allowed" : agent ? 403 : 401;
    case "agentKey":
      return agent ? "allowed" : developer ? 403 : 401;
  }
}

/** The security requirement the document must show for `access` (roles as the requirement's list). */
function documentedSecurity(access: Access): Array<Record<string, string[]>> {
  switch (access) {
    case "public":
      return [];
    case "portal":
      return [{ bearerJwt: [] }];
    case "anyCredential":
      return [{ bearerJwt: [] }, { apiKey: ["developer", "agent"] }];
    case "portalOrDeveloperKey":
      return [{ bearerJwt: [] }, { apiKey: ["developer"] }];
    case "anyKey":
      return [{ apiKey: ["developer", "agent"] }];
    case "developerKey":
      return [{ apiKey: ["developer"] }];
    case "agentKey":
      return [{ apiKey: ["agent"] }];
  }
}

/** What the description of an operation taking `access` must say. */
const DESCRIBED: Record<Access, RegExp> = {
  public: /Access: public/,
  portal: /Access: a portal JWT/,
  anyCredential: /Access: a portal JWT or an API key\*\* \(developer or agent role\)/,
  portalOrDeveloperKey: /Access: a portal JWT or an API key with the developer role/,
  anyKey: /Access: an API key, developer or agent role/,
  developerKey: /Access: an API key with the developer role/,
  agentKey: /Access: an API key with the agent role/,
};

const METHODS = ["get", "post", "put", "patch", "delete"] as const;

/** What this test reads of an operation of the OpenAPI document. */
type DocumentedOperation = {
  security?: Array<Record<string, string[]>>;
  description?: string;
  responses: Record<string, unknown>;
  requestBody?: unknown;
};

/** What this test reads of the OpenAPI document: its operations and its security schemes. */
type ApiDocument = {
  paths: Record<string, Partial<Record<(typeof METHODS)[number], DocumentedOperation>>>;
  components: { securitySchemes: Record<string, { description: string }> };
};

export function scopeCases(stack: () => Stack, other: () => { key: string; agentKey: string }) {
  describe("what each credential may do", () => {
    /** One source address per credential kind, so that the per-address limits of one kind's calls (ticket
     * reports, sign-ins) never decide another's answers. */
    const from = (kind: Kind | "setup") => `127.0.97.${kind === "setup" ? 200 : KINDS.indexOf(kind) + 1}`;
    let doc: ApiDocument;
    let paidOrderId: string;
    let jwt: string;
    let revoked: { id: string; key: string };

    async function login(s: Stack): Promise<string> {
      const res = await send(s, {
        method: "POST",
        path: "/v1/auth/login",
        from: from("setup"),
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ email: s.sample.email, password: s.sample.password }),
      });
      assert.equal(res.status, 200, res.text);
      return res.json.accessToken;
    }

    before(
      async () => {
        const s = stack();
        const docRes = await s.api<ApiDocument>("GET", "/v1/openapi.json");
        assert.equal(docRes.status, 200);
        doc = docRes.body;
        const order = await createOrder(s, "kiosk-nbo-002", "30m");
        const paid = await pay(s, order, "relayed-permit");
        assert.equal(paid.status, 202, JSON.stringify(paid.body));
        await waitForOrder(s, order.id, (o) => o.status === "success" && o.device.poweredOnAt !== null, 30_000);
        paidOrderId = order.id;
        jwt = await login(s);
        const created = await s.api("POST", "/v1/api-keys", { token: jwt, body: { name: "revoked for the scope test" } });
        assert.equal(created.status, 201, created.text);
        revoked = { id: created.body.id, key: created.body.key };
        assert.equal((await s.api("DELETE", `/v1/api-keys/${revoked.id}`, { token: jwt })).status, 200);
      },
      { timeout: 120_000 },
    );

    /** Every operation of the document, as "METHOD /path" (relative to the server URL, /v1). */
    function operations(): Array<{ key: string; path: string; method: string; op: DocumentedOperation }> {
      const out = [];
      for (const [path, item] of Object.entries(doc.paths)) {
        for (const method of METHODS) {
          const op = item[method];
          if (op) out.push({ key: `${method.toUpperCase()} ${path}`, path, method: method.toUpperCase(), op });
        }
      }
      return out;
    }

    /** A value for each path parameter: this tenant's resources (the paid order, a device, a participant,
     * the revoked key) or ids that exist nowhere (webhook subscriptions and deliveries). */
    function pathOf(s: Stack, path: string): string {
      return `/v1${path}`.replace(/\{([^}]+)\}/g, (_, name: string) => {
        assert.equal(name, "id", `no value for the path parameter {${name}} of ${path}: add one to this test`);
        if (path.startsWith("/orders/")) return paidOrderId;
        if (path.startsWith("/devices/") || path.startsWith("/assets/")) return s.sample.devices[0].id;
        if (path.startsWith("/participants/")) return s.sample.participants[0].id;
        if (path.startsWith("/api-keys/")) return revoked.id;
        if (path.startsWith("/webhooks/subscriptions/")) return "whs_00000000000000000000000000";
        if (path.startsWith("/webhooks/deliveries/")) return "msg_00000000000000000000000000";
        if (path.startsWith("/events/")) return "evt_00000000000000000000000000";
        assert.fail(`no value for {id} of ${path}: add one to this test`);
      });
    }

    /** The headers that carry `kind` (for the logout of a live session: a session of its own). */
    async function headersOf(s: Stack, kind: Kind, key: string): Promise<Record<string, string>> {
      const bearer = (token: string) => ({ authorization: `Bearer ${token}` });
      switch (kind) {
        case "none":
          return {};
        case "developer key":
          return bearer(s.sample.developerKey);
        case "agent key":
          return bearer(s.sample.agentKey);
        case "portal JWT":
          // Signing out ends the session: that call gets a session of its own.
          return bearer(key === "POST /auth/logout" ? await login(s) : jwt);
        case "portal cookie":
          return { cookie: `payg_session=${jwt}` };
        case "revoked key":
          return bearer(revoked.key);
        case "malformed bearer":
          return bearer("payg_not-a-key");
        case "other tenant's developer key":
          return bearer(other().key);
        case "other tenant's agent key":
          return bearer(other().agentKey);
      }
    }

    it("has an access rule in this test for every operation of the document, and the document has every one", () => {
      const documented = operations().map((o) => o.key);
      const missing = documented.filter((key) => !TABLE.has(key));
      assert.deepEqual(missing, [], "operations of /v1/openapi.json without an access rule here");
      const gone = [...TABLE.keys()].filter((key) => !documented.includes(key));
      assert.deepEqual(gone, [], "access rules for operations the document no longer has");
    });

    it("documents each operation's credential and role: its security requirement, its description, its 401 and 403", () => {
      for (const { key, op } of operations()) {
        const rule = TABLE.get(key);
        if (!rule) continue;
        assert.deepEqual(op.security ?? [], documentedSecurity(rule.access), `${key}: security`);
        assert.match(op.description ?? "", DESCRIBED[rule.access], `${key}: the description states who may call it`);
        const statuses = new Set(KINDS.map((kind) => verdict(rule.access, kind)));
        for (const status of [401, 403] as const) {
          if (statuses.has(status)) assert.ok(op.responses[String(status)], `${key}: ${status} is documented`);
        }
        // (401 has other causes, a wrong password at sign-in; 403 means a role only.)
        if (!statuses.has(403)) assert.equal(op.responses["403"], undefined, `${key}: 403 documented, but no credential gets it`);
      }
      const schemes = doc.components.securitySchemes;
      assert.match(schemes.apiKey.description, /401/);
      assert.match(schemes.apiKey.description, /403/);
    });

    for (const kind of KINDS) {
      it(
        `answers every operation as the access table says: ${kind === "none" ? "no credential" : kind}`,
        { timeout: 300_000 },
        async () => {
          const s = stack();
          const problems: string[] = [];
          for (const { key, path, method, op } of operations()) {
            const rule = TABLE.get(key);
            if (!rule) continue;
            const headers = await headersOf(s, kind, key);
            let body: string | undefined;
            if (op.requestBody) {
              headers["content-type"] = "application/json";
              body = JSON.stringify(rule.body ?? {});
            }
            const res = await send(s, { method, path: pathOf(s, path), headers, body, from: from(kind) });
            const v = verdict(rule.access, kind);
            const expected = v !== "allowed" ? v : OTHER_TENANT_KINDS.has(kind) ? (rule.otherTenant ?? rule.ok) : rule.ok;
            if (res.status !== expected) {
              problems.push(`${key}: ${res.status}, expected ${expected}: ${res.text.slice(0, 160)}`);
              continue;
            }
            if (expected === 401 || expected === 403) {
              const code = expected === 401 ? "unauthorized" : "forbidden";
              if (res.json?.error?.code !== code || !/^req_[0-9A-Z]{26}$/.test(res.json?.requestId ?? "")) {
                problems.push(`${key}: ${expected} without the envelope's ${code}: ${res.text.slice(0, 160)}`);
              }
            }
            if (rule.access === PUBLIC && /key_[0-9A-Z]{26}/.test(res.text)) problems.push(`${key}: a public answer shows an API key id`);
          }
          for (const path of ["/v1/openapi.json", "/v1/docs"]) {
            const res = await send(s, { method: "GET", path, headers: await headersOf(s, kind, path), from: from(kind) });
            if (res.status !== 200) problems.push(`GET ${path}: ${res.status}`);
          }
          assert.deepEqual(problems, []);
        },
      );
    }
  });
}
