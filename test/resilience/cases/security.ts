// Security, over every documented route that needs credentials: a revoked API key and an expired JWT (and
// sandbox token) fail on the next request, on every process; one tenant reaches none of another's devices,
// splits, earnings, keys, webhooks or deliveries, by id or in a list; callback URLs on private addresses are
// refused; hostile text is kept as text and escaped in the portal. The scan for secrets in logs and
// responses is secretsCases, run last (after the fault cases have written their logs).
import assert from "node:assert/strict";
import { readFileSync, readdirSync } from "node:fs";
import path from "node:path";
import { describe, it } from "node:test";
import { SignJWT } from "jose";
import type { Stack } from "../../support/stack.ts";
import { envelopeProblem } from "../support/envelope.ts";
import type { Fixtures } from "../support/fixtures.ts";
import { type Operation, sampleValue } from "../support/openapi.ts";
import { liveContext } from "./bad-input.ts";

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** `op`'s path with `values` (by parameter name) in its path parameters. */
function pathOf(op: Operation, value: (name: string) => string): string {
  return `${op.base}${op.path}`.replace(/\{([^}]+)\}/g, (_, name: string) => encodeURIComponent(value(name)));
}

/** Signs a token as the relayer does, with a lifetime of `seconds`. */
async function shortLivedToken(secret: string, claims: { audience: string; subject: string; tid?: string; jti?: string }, seconds: number) {
  const now = Math.floor(Date.now() / 1000);
  const token = new SignJWT(claims.tid ? { tid: claims.tid } : {})
    .setProtectedHeader({ alg: "HS256", typ: "JWT" })
    .setIssuer("payg-relayer")
    .setAudience(claims.audience)
    .setSubject(claims.subject)
    .setIssuedAt(now)
    .setExpirationTime(now + seconds);
  if (claims.jti) token.setJti(claims.jti);
  return token.sign(new TextEncoder().encode(secret));
}

/** The session id (jti) of a portal JWT. */
function sessionOf(jwt: string): string {
  return JSON.parse(Buffer.from(jwt.split(".")[1], "base64url").toString("utf8")).jti;
}

export function securityCases(stack: () => Stack, fixtures: () => Fixtures, opts: { database: string }) {
  describe("security", () => {
    /** GET operations that take `scheme` (path parameters filled with tenant A's resources). */
    const readsWith = (fx: Fixtures, scheme: string) =>
      fx.docs.operations.filter((op) => op.method === "GET" && op.security.includes(scheme));

    it(`rejects a revoked API key on the next request to every route that takes a key${opts.database === "postgres" ? ", on every relayer process" : ""}`, async () => {
      const s = stack();
      const fx = fixtures();
      const ctx = liveContext(fx);
      const created = await fx.call("POST", "/v1/api-keys", { token: fx.a.jwt, body: { name: "revoked on the next request" } });
      assert.equal(created.status, 201, created.text);
      fx.secret("the API key to revoke", created.json.key);
      const key = created.json.key as string;
      const routes = readsWith(fx, "apiKey");
      assert.ok(routes.length >= 4, routes.map((op) => op.id).join(", "));
      const second = s.database === "postgres" ? await s.startExtraRelayer() : undefined;
      try {
        const bases = [s.relayerUrl, ...(second ? [second.url] : [])];
        const get = (base: string, op: Operation) =>
          fetch(
            `${base}${pathOf(op, (name) =>
              ctx.live(
                op,
                op.params.find((p) => p.name === name)!,
              )!,
            )}`,
            {
              headers: { authorization: `Bearer ${key}` },
            },
          );
        for (const base of bases) {
          for (const op of routes) assert.equal((await get(base, op)).status, 200, `${op.id} with the key, before`);
        }
        const revoked = await fx.call("DELETE", `/v1/api-keys/${created.json.id}`, { token: fx.a.jwt });
        assert.equal(revoked.status, 200, revoked.text);
        for (const base of bases) {
          for (const op of routes) {
            const res = await get(base, op);
            const text = await res.text();
            assert.equal(
              res.status,
              401,
              `${op.id} on ${base === s.relayerUrl ? "the first" : "another"} process, after revocation: ${text}`,
            );
            assert.equal(JSON.parse(text).error.code, "unauthorized");
          }
        }
      } finally {
        await second?.service.stop();
      }
    });

    it("rejects a portal JWT and a sandbox token on the first request after they expire (routes, portal pages, and the sandbox's token cache)", async () => {
      const s = stack();
      const fx = fixtures();
      const ctx = liveContext(fx);
      const lifetime = 5;
      // A portal JWT of A's live session (a portal JWT names its session), expiring long before the session.
      const jwt = await shortLivedToken(
        s.relayerOptions.jwtSecret,
        { audience: "portal", subject: fx.a.userId, tid: fx.a.tenantId, jti: sessionOf(fx.a.jwt) },
        lifetime,
      );
      const sandbox = await shortLivedToken(
        s.relayerOptions.jwtSecret,
        { audience: "energy-sandbox", subject: s.sample.energyClient.clientId },
        lifetime,
      );
      const issuedAt = Date.now();
      const jwtRoutes = readsWith(fx, "bearerJwt");
      const sandboxRoutes = readsWith(fx, "sandboxToken");
      assert.ok(jwtRoutes.length >= 4 && sandboxRoutes.length >= 4);
      const call = (op: Operation, token: string) =>
        fx.client.send({
          method: "GET",
          path: pathOf(op, (name) =>
            ctx.live(
              op,
              op.params.find((p) => p.name === name)!,
            )!,
          ),
          headers: { authorization: `Bearer ${token}` },
        });
      const portal = () => fx.client.send({ method: "GET", path: "/portal/keys", headers: { cookie: `payg_session=${jwt}` } });
      for (const op of jwtRoutes) assert.equal((await call(op, jwt)).status, 200, `${op.id} before expiry`);
      for (const op of sandboxRoutes) assert.equal((await call(op, sandbox)).status, 200, `${op.id} before expiry`);
      assert.equal((await portal()).status, 200, "a portal page before expiry");
      // (exp is in whole seconds: the tokens live at least lifetime - 1 s.)
      assert.ok(Date.now() - issuedAt < (lifetime - 1) * 1000, "the calls before expiry were made in time");

      await sleep(issuedAt + lifetime * 1000 + 1_100 - Date.now());
      for (const op of jwtRoutes) {
        const res = await call(op, jwt);
        assert.equal(res.status, 401, `${op.id} after expiry: ${res.text}`);
        assert.equal(envelopeProblem(fx.docs, "payments", res), undefined);
      }
      for (const op of sandboxRoutes) {
        const res = await call(op, sandbox);
        assert.equal(res.status, 401, `${op.id} after expiry: ${res.text}`);
        assert.equal(res.json.error.svc_code, "unauthorized");
      }
      const page = await portal();
      assert.equal(page.status, 303, "the portal signs an expired session out");
      assert.equal(page.headers.location, "/portal/login?notice=expired");
    });

    it("keeps each tenant to its own: another tenant's devices, splits, earnings, keys, webhooks and deliveries are 404 by id and absent from lists", async () => {
      const s = stack();
      const fx = fixtures();
      const { a, b } = fx;
      const ctxA = liveContext(fx);
      // Tenant A's resources, and everything that identifies them.
      const secured = fx.docs.operations.filter((op) => op.api === "payments" && op.security.length > 0);
      const credentialOfB = (op: Operation) =>
        op.security.includes("apiKey") ? `Bearer ${op.id.endsWith("/cash") ? b.agentKey : b.developerKey}` : `Bearer ${b.jwt}`;
      const aMarkers = [
        a.tenantId,
        a.deviceId,
        a.participant.id,
        a.participant.address.toLowerCase(),
        a.subscriptionId,
        a.deliveryId,
        a.keyId,
        a.orderId!,
        a.email,
      ];
      const before = await fx.call("GET", `/v1/webhooks/subscriptions/${a.subscriptionId}`, { token: a.jwt });
      assert.equal(before.status, 200);

      let byId = 0;
      let lists = 0;
      for (const op of secured) {
        const pathParams = op.params.filter((p) => p.in === "path");
        const headers: Record<string, string> = { authorization: credentialOfB(op) };
        let body: string | undefined;
        if (op.body) {
          headers["content-type"] = op.body.contentType;
          body = JSON.stringify(sampleValue(op.body.schema));
        }
        if (pathParams.length > 0) {
          // B names A's resource.
          const values = [
            pathOf(op, (name) =>
              ctxA.live(
                op,
                pathParams.find((p) => p.name === name)!,
              )!,
            ),
          ];
          if (op.path === "/participants/{id}/earnings") values.push(pathOf(op, () => a.participant.address));
          for (const target of values) {
            const res = await fx.client.send({ method: op.method, path: target, headers, body });
            assert.equal(res.status, 404, `${op.method} ${target} as tenant B: ${res.status} ${res.text.slice(0, 200)}`);
            assert.equal(envelopeProblem(fx.docs, "payments", res), undefined, res.text);
            byId++;
          }
        } else if (op.method === "GET") {
          const res = await fx.client.send({ method: "GET", path: `${op.base}${op.path}`, headers });
          assert.equal(res.status, 200, `${op.id} as tenant B: ${res.text.slice(0, 200)}`);
          for (const marker of aMarkers)
            assert.ok(!res.text.toLowerCase().includes(marker.toLowerCase()), `${op.id} as tenant B shows ${marker}`);
          lists++;
        }
      }
      assert.ok(byId >= 12 && lists >= 4, `${byId} requests by id, ${lists} lists`);

      // Nothing of A's changed: its key works, its subscription is as it was, its order is pending.
      assert.equal((await fx.call("GET", "/v1/devices", { token: a.developerKey })).status, 200);
      const afterSub = await fx.call("GET", `/v1/webhooks/subscriptions/${a.subscriptionId}`, { token: a.jwt });
      assert.deepEqual({ ...afterSub.json, deliveries: undefined }, { ...before.json, deliveries: undefined });
      const keys = await fx.call("GET", "/v1/api-keys", { token: a.jwt });
      assert.equal(keys.json.data.find((k: { id: string }) => k.id === a.keyId).revokedAt, null);
      assert.equal((await fx.call("GET", `/v1/orders/${a.orderId}`)).json.status, "pending");
      // And the other way round, for one of each kind.
      assert.equal((await fx.call("GET", `/v1/devices/${b.deviceId}`, { token: a.developerKey })).status, 404);
      assert.equal((await fx.call("GET", `/v1/participants/${b.participant.id}/earnings`, { token: a.developerKey })).status, 404);
      assert.equal((await fx.call("GET", `/v1/webhooks/deliveries/${b.deliveryId}`, { token: a.jwt })).status, 404);
      assert.equal((await fx.call("DELETE", `/v1/api-keys/${b.keyId}`, { token: a.jwt })).status, 404);
      void s;
    });

    it("refuses webhook callback URLs on private, loopback, link-local and internal addresses (create and update), creating nothing", async () => {
      const fx = fixtures();
      const { a } = fx;
      const refused = [
        "https://10.0.0.1/hook",
        "https://172.16.5.4/hook",
        "https://192.168.1.1/hook",
        "https://169.254.169.254/latest/meta-data/",
        "https://100.64.0.1/hook",
        "https://0.0.0.0/hook",
        "https://127.0.0.2/hook",
        "https://127.255.255.254:8443/hook",
        "https://224.0.0.1/hook",
        "https://255.255.255.255/hook",
        "https://[fd00::1]/hook",
        "https://[fe80::1]/hook",
        "https://[::ffff:10.0.0.1]/hook",
        "https://[::ffff:a9fe:a9fe]/hook",
        "https://[64:ff9b::a00:1]/hook",
        "https://[::]/hook",
        "https://metadata.google.internal/computeMetadata/v1/",
        "https://printer.local/hook",
        "https://intranet/hook",
        "https://vm/hook",
        "http://example.com/hook",
        "https://user:password@example.com/hook",
        "ftp://example.com/hook",
        "file:///etc/passwd",
        "gopher://127.0.0.2:25/",
      ];
      const list = async () => (await fx.call("GET", "/v1/webhooks/subscriptions", { token: a.jwt })).json.data;
      const before = await list();
      for (const url of refused) {
        const created = await fx.call("POST", "/v1/webhooks/subscriptions", {
          token: a.jwt,
          body: { url, eventTypes: ["payment.succeeded"] },
        });
        assert.equal(created.status, 422, `create ${url}: ${created.text}`);
        assert.equal(created.json.error.details?.[0]?.path, "url", created.text);
        const updated = await fx.call("PATCH", `/v1/webhooks/subscriptions/${a.subscriptionId}`, { token: a.jwt, body: { url } });
        assert.equal(updated.status, 422, `update to ${url}: ${updated.text}`);
      }
      assert.deepEqual(await list(), before, "no subscription was created or changed");
    });

    it("keeps hostile text as text: stored verbatim, and escaped in the portal's pages", async () => {
      const fx = fixtures();
      const name = `<script>alert("x")</script>' OR '1'='1 --`;
      const created = await fx.call("POST", "/v1/api-keys", { token: fx.a.jwt, body: { name } });
      assert.equal(created.status, 201, created.text);
      fx.secret("the hostile-name API key", created.json.key);
      const listed = await fx.call("GET", "/v1/api-keys", { token: fx.a.jwt });
      assert.equal(listed.json.data.find((k: { id: string }) => k.id === created.json.id).name, name);
      const page = await fx.client.send({ method: "GET", path: "/portal/keys", headers: { cookie: `payg_session=${fx.a.jwt}` } });
      assert.equal(page.status, 200);
      assert.ok(!page.text.includes("<script>alert("), "the name is not markup on the page");
      assert.ok(page.text.includes("&lt;script&gt;alert("), "the name is shown, escaped");
      assert.equal((await fx.call("DELETE", `/v1/api-keys/${created.json.id}`, { token: fx.a.jwt })).status, 200);
    });
  });
}

const SECRET_PATTERNS = [
  { kind: "API key", pattern: /payg_[0-9A-Za-z]{38}/g },
  { kind: "webhook signing secret", pattern: /whsec_[A-Za-z0-9+/]{43}=/g },
  { kind: "JWT", pattern: /eyJ[\w-]{10,}\.eyJ[\w-]{10,}\.[\w-]{20,}/g },
];

/** The relayer's log files of this stack (every process). */
function relayerLogs(s: Stack): Array<{ file: string; text: string }> {
  const logFile = s.relayerOptions.logFile!;
  const dir = path.dirname(logFile);
  const prefix = path.basename(logFile).replace(/\.relayer\.log$/, ".relayer");
  return readdirSync(dir)
    .filter((name) => name.startsWith(prefix))
    .map((name) => ({ file: name, text: readFileSync(path.join(dir, name), "utf8") }));
}

/** Every secret the suite created or holds, against the relayer's logs and every response the suite got. */
export function secretsCases(stack: () => Stack, fixtures: () => Fixtures) {
  describe("secrets", () => {
    it("shows no secret in the relayer's logs, nor in any response after the one that created it (keys, signing secrets, client secret, passwords, JWTs)", async (t) => {
      const s = stack();
      const fx = fixtures();
      const journal = fx.client.journal;
      const texts = journal.map((entry) => `${JSON.stringify(entry.headers)}\n${entry.text}`);
      // Secrets found in responses: each may appear in the first response that has it (its creation: a new
      // key, a subscription's secret, a login's or the token route's token) and never again, but in a replay of
      // that same answer.
      const found = new Map<string, { kind: string; first: number }>();
      texts.forEach((text, index) => {
        for (const { kind, pattern } of SECRET_PATTERNS) {
          for (const match of text.matchAll(pattern)) if (!found.has(match[0])) found.set(match[0], { kind, first: index });
        }
      });
      const secrets = [
        ...fx.secrets.map((secret) => ({ name: secret.name, value: secret.value, from: secret.from })),
        ...[...found].map(([value, { kind, first }]) => ({ name: `a ${kind} first shown in response ${first}`, value, from: first + 1 })),
      ];
      const logs = relayerLogs(s);
      assert.ok(logs.length >= 1 && logs.every((log) => log.text.length > 0), "the relayer's logs are there");
      const leaks: string[] = [];
      for (const secret of secrets) {
        // A replay of the answer that created it (Idempotency-Key: the same request by the same credential) shows
        // it again by design; any other answer may not.
        const created = journal[secret.from - 1];
        const replay = (i: number) => journal[i].headers["idempotent-replayed"] === "true" && journal[i].text === created?.text;
        for (let i = secret.from; i < texts.length; i++) {
          if (texts[i].includes(secret.value) && !replay(i)) {
            leaks.push(`${secret.name} in the answer to ${journal[i].method} ${journal[i].path.slice(0, 100)} (${journal[i].status})`);
            break;
          }
        }
        for (const log of logs) if (log.text.includes(secret.value)) leaks.push(`${secret.name} in ${log.file}`);
      }
      for (const log of logs) {
        for (const { kind, pattern } of SECRET_PATTERNS) {
          const match = log.text.match(pattern);
          if (match) leaks.push(`something shaped like a ${kind} in ${log.file}: ${match[0].slice(0, 12)}...`);
        }
      }
      for (const delivery of fx.receiver.deliveries()) {
        const text = `${JSON.stringify(delivery.headers)}\n${delivery.body.toString("utf8")}`;
        for (const secret of secrets) if (text.includes(secret.value)) leaks.push(`${secret.name} in a webhook delivery`);
      }
      t.diagnostic(
        `secrets: ${secrets.length} (${fx.secrets.length} registered, ${found.size} found in responses) checked against ${texts.length} responses ` +
          `and ${logs.length} log files (${Math.round(logs.reduce((n, l) => n + l.text.length, 0) / 1024)} KiB)`,
      );
      assert.deepEqual([...new Set(leaks)].slice(0, 30), []);
    });
  });
}
