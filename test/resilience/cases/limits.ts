// Limits, from the documents where they say them: the body size limit of every route with a body (both
// interfaces, with a content-length and chunked), the page size of every paginated list, the rate limits of
// the login and token routes (per client address, with retry-after, and lifted after it), and the number of
// event streams one client may hold open.
import assert from "node:assert/strict";
import http from "node:http";
import { describe, it } from "node:test";
import { MAX_BODY_BYTES } from "../../../relayer/src/app.ts";
import type { Stack } from "../../support/stack.ts";
import { envelopeProblem } from "../support/envelope.ts";
import type { Fixtures } from "../support/fixtures.ts";
import type { RawResponse } from "../support/http.ts";
import { type Operation, mainSchema } from "../support/openapi.ts";
import { liveContext } from "./bad-input.ts";

/** Source addresses of their own for these cases (the bad-input cases use 127.0.0.2-254). */
const CLIENT = "127.0.1.1";
const OTHER_CLIENT = "127.0.1.2";

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function expectEnvelope(fx: Fixtures, api: "payments" | "energy", res: RawResponse, status: number, code: string, what: string) {
  assert.equal(res.status, status, `${what}: ${res.status} ${res.text.slice(0, 300)}`);
  assert.equal(envelopeProblem(fx.docs, api, res), undefined, `${what}: ${res.text.slice(0, 300)}`);
  assert.equal(api === "energy" ? res.json.error.svc_code : res.json.error.code, code, what);
}

/** A body of exactly `bytes` bytes, of the operation's content type. */
function bodyOfSize(op: Operation, bytes: number): string {
  if (op.body?.contentType === "application/x-www-form-urlencoded") return `pad=${"x".repeat(bytes - 4)}`;
  return `{"pad":"${"x".repeat(bytes - 10)}"}`;
}

/** Opens an event stream from `localAddress`; a 200 stays open until `close()`. */
function openStream(
  baseUrl: string,
  path: string,
  localAddress: string,
): Promise<{ status: number; res: http.IncomingMessage; text: Promise<string>; close(): void }> {
  const url = new URL(baseUrl);
  return new Promise((resolve, reject) => {
    const req = http.get({ host: url.hostname, port: Number(url.port), path, localAddress, agent: false }, (res) => {
      const text = new Promise<string>((done) => {
        if (res.statusCode === 200) return done("");
        let body = "";
        res.on("data", (chunk: Buffer) => (body += chunk.toString("utf8")));
        res.on("end", () => done(body));
      });
      resolve({ status: res.statusCode ?? 0, res, text, close: () => req.destroy() });
    });
    req.on("error", (error) => reject(error));
    req.setTimeout(10_000, () => req.destroy(new Error(`no answer from ${path}`)));
  });
}

export function limitCases(stack: () => Stack, fixtures: () => Fixtures) {
  describe("limits", () => {
    it("refuses a body over the limit on every route with a body (content-length or chunked) and reads one at the limit", async () => {
      const fx = fixtures();
      const ctx = liveContext(fx);
      const energyLimits = (await fx.call("GET", "/energy/v1/capabilities")).json.limits;
      const withBody = fx.docs.operations.filter((op) => op.body);
      assert.ok(withBody.length >= 10, `${withBody.length} operations take a body`);
      let address = 10;
      for (const op of withBody) {
        const limit =
          op.api === "payments"
            ? MAX_BODY_BYTES
            : op.path.endsWith("/telemetry:batch")
              ? energyLimits.max_telemetry_body_bytes
              : energyLimits.max_body_bytes;
        const path = `${op.base}${op.path}`.replace(/\{([^}]+)\}/g, (_, name: string) =>
          encodeURIComponent(
            ctx.live(
              op,
              op.params.find((p) => p.name === name)!,
            ) ?? "x",
          ),
        );
        const headers: Record<string, string> = { "content-type": op.body!.contentType };
        const credential = ctx.credential(op);
        if (credential) headers.authorization = credential;
        const code = op.api === "payments" ? "body_too_large" : "payload_too_large";
        for (const chunked of [false, true]) {
          const res = await fx.client.send({
            method: op.method,
            path,
            headers,
            body: bodyOfSize(op, limit + 1),
            chunked,
            localAddress: `127.0.2.${address++}`,
          });
          expectEnvelope(fx, op.api, res, 413, code, `${op.id} with ${limit + 1} bytes${chunked ? " (chunked)" : ""}`);
          assert.equal(res.headers.connection, "close", `${op.id}: the connection is closed after a 413`);
        }
        const atLimit = await fx.client.send({
          method: op.method,
          path,
          headers,
          body: bodyOfSize(op, limit),
          localAddress: `127.0.2.${address++}`,
          headAnswerMs: 0,
        });
        assert.ok(
          atLimit.status >= 400 && atLimit.status < 500 && atLimit.status !== 413,
          `${op.id} reads a body of ${limit} bytes: ${atLimit.status} ${atLimit.text.slice(0, 200)}`,
        );
      }
      // The portal's forms have a limit of their own (64 KiB).
      const form = await fx.client.send({
        method: "POST",
        path: "/portal/login",
        headers: { "content-type": "application/x-www-form-urlencoded" },
        body: `email=a&password=${"x".repeat(64 * 1024)}`,
        localAddress: CLIENT,
      });
      assert.equal(form.status, 413);
    });

    it("caps every paginated list at its documented maximum and walks it page by page to the end", async () => {
      const fx = fixtures();
      const ctx = liveContext(fx);
      const paginated = fx.docs.operations.filter(
        (op) => op.method === "GET" && op.params.some((p) => p.in === "query" && p.name === "limit"),
      );
      assert.ok(paginated.length >= 3, paginated.map((op) => op.id).join(", "));
      for (const op of paginated) {
        const limit = mainSchema(op.params.find((p) => p.name === "limit")!.schema);
        assert.equal(typeof limit.maximum, "number", `${op.id}: limit has a documented maximum`);
        const path = `${op.base}${op.path}`.replace(/\{([^}]+)\}/g, (_, name: string) =>
          encodeURIComponent(
            ctx.live(
              op,
              op.params.find((p) => p.name === name)!,
            )!,
          ),
        );
        const headers = { authorization: ctx.credential(op)! };
        const get = (query: string) => fx.client.send({ method: "GET", path: `${path}?${query}`, headers });
        const max = await get(`limit=${limit.maximum}`);
        assert.equal(max.status, 200, `${op.id}?limit=${limit.maximum}: ${max.text.slice(0, 200)}`);
        assert.ok(max.json.data.length <= limit.maximum);
        for (const bad of [limit.maximum + 1, (limit.minimum ?? 1) - 1, 1_000_000]) {
          expectEnvelope(fx, op.api, await get(`limit=${bad}`), 422, "invalid_parameters", `${op.id}?limit=${bad}`);
        }
        // Page by page with limit=1: the same items as one page of the maximum, each once, then the end.
        const seen: string[] = [];
        let cursor: string | null = null;
        for (let page = 0; page <= max.json.data.length; page++) {
          const res = await get(`limit=1${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ""}`);
          assert.equal(res.status, 200, res.text);
          assert.ok(res.json.data.length <= 1);
          seen.push(...res.json.data.map((item: Record<string, string>) => item.id ?? item.orderId));
          cursor = res.json.nextCursor;
          if (!cursor) break;
        }
        assert.equal(cursor, null, `${op.id}: the last page says so`);
        assert.deepEqual(
          seen,
          max.json.data.map((item: Record<string, string>) => item.id ?? item.orderId),
          `${op.id}: pages`,
        );
      }
    });

    it("rate-limits POST /v1/auth/login per client (429, retry-after, the envelope), the portal's sign-in with it, and lifts it after retry-after", async () => {
      const fx = fixtures();
      const login = (password: string, localAddress = CLIENT, email = fx.a.email) =>
        fx.client.send({
          method: "POST",
          path: "/v1/auth/login",
          headers: { "content-type": "application/json" },
          body: JSON.stringify({ email, password }),
          localAddress,
        });
      // Each wrong password for an email of its own, so that the per-account limit (test/relayer/cases/auth.ts)
      // never answers in place of the per-address one, nor locks A's account.
      let wrong = 0;
      /** Wrong passwords from CLIENT until one is refused with 429: that answer. */
      const drain = async (): Promise<RawResponse> => {
        for (let i = 0; i < 30; i++) {
          const res = await login("not-the-password", CLIENT, `limit-test-${wrong++}@example.com`);
          if (res.status === 429) return res;
          assert.equal(res.status, 401, res.text);
        }
        assert.fail("limited within 30 attempts");
      };
      let limited = await drain();
      expectEnvelope(fx, "payments", limited, 429, "rate_limited", "the limited login");
      const retryAfter = Number(limited.headers["retry-after"]);
      assert.ok(retryAfter >= 1 && retryAfter <= 60, `retry-after ${limited.headers["retry-after"]}`);
      /** Whether `refused` holds right after CLIENT was limited again, in one of three tries. The bucket gives
       * one attempt back every 6 s, at a moment the test does not know: it may come between the 429 and the
       * request checked (the more likely as sign-ins take longer, each hashing its password for about half a
       * second), but a sign-in that the limit does not hold never passes. */
      const whileLimited = async (refused: () => Promise<boolean>, what: string) => {
        for (let i = 0; i < 3; i++) {
          limited = await drain();
          if (await refused()) return;
        }
        assert.fail(what);
      };
      // The right password does not get through either, while another client signs in.
      await whileLimited(
        async () => (await login(fx.a.password)).status === 429,
        "the right password is refused while the client is limited",
      );
      assert.equal((await login(fx.a.password, OTHER_CLIENT)).status, 200);

      // The portal's sign-in form goes through the same limit (it calls POST /v1/auth/login for the client).
      await whileLimited(async () => {
        const page = await fx.client.send({ method: "GET", path: "/portal/login", localAddress: CLIENT });
        const csrf = /name="_csrf" value="([^"]+)"/.exec(page.text)?.[1];
        const cookie = String(page.headers["set-cookie"] ?? "").split(";")[0];
        assert.ok(csrf && cookie, "the sign-in page has a CSRF token and cookie");
        const portal = await fx.client.send({
          method: "POST",
          path: "/portal/login",
          headers: { "content-type": "application/x-www-form-urlencoded", cookie },
          body: new URLSearchParams({ _csrf: csrf, email: fx.a.email, password: fx.a.password }).toString(),
          localAddress: CLIENT,
        });
        return portal.status === 400 && /Too many attempts/.test(portal.text);
      }, "the portal refuses the sign-in while the client is limited (400, Too many attempts)");

      await sleep(Number(limited.headers["retry-after"]) * 1000 + 250);
      assert.equal((await login(fx.a.password)).status, 200, "lifted after retry-after");
    });

    it("rate-limits POST /energy/v1/auth/token per client (429 rate_limited in the sandbox envelope, retry-after), as documented", async () => {
      const fx = fixtures();
      const s = stack();
      const op = fx.docs.operations.find((o) => o.id === "POST /energy/v1/auth/token")!;
      assert.ok(op.responses.includes("429"), "the document lists 429 for the token route");
      const limits = (await fx.call("GET", "/energy/v1/capabilities")).json.limits.rate_limits;
      const { clientId, clientSecret } = s.sample.energyClient;
      const token = (secret: string, localAddress = CLIENT) =>
        fx.client.send({
          method: "POST",
          path: "/energy/v1/auth/token",
          headers: { "content-type": "application/x-www-form-urlencoded" },
          body: new URLSearchParams({ grant_type: "client_credentials", client_id: clientId, client_secret: secret }).toString(),
          localAddress,
        });
      let limited: RawResponse | undefined;
      let attempts = 0;
      while (!limited && attempts < limits.auth_token.burst + 10) {
        attempts++;
        const res = await token("not-the-secret");
        if (res.status === 429) limited = res;
        else assert.equal(res.status, 401, res.text);
      }
      assert.ok(limited, `limited within ${attempts} attempts`);
      assert.ok(attempts > limits.auth_token.burst, `a burst of ${limits.auth_token.burst} is allowed (limited at attempt ${attempts})`);
      expectEnvelope(fx, "energy", limited, 429, "rate_limited", "the limited token request");
      const retryAfter = Number(limited.headers["retry-after"]);
      assert.ok(retryAfter >= 1 && retryAfter <= 60, `retry-after ${limited.headers["retry-after"]}`);
      assert.equal((await token(clientSecret)).status, 429, "the right secret waits too");
      const other = await token(clientSecret, OTHER_CLIENT);
      assert.equal(other.status, 200, "another client is not limited");
      fx.secret("a sandbox access token (rate-limit test)", other.json.access_token);
      await sleep(retryAfter * 1000 + 250);
      const lifted = await token(clientSecret);
      assert.equal(lifted.status, 200, "lifted after retry-after");
      fx.secret("a sandbox access token (rate-limit test)", lifted.json.access_token);
    });

    it("holds at most the documented number of event streams per client: one more is 429 with retry-after, until one closes", async () => {
      const s = stack();
      const fx = fixtures();
      const op = fx.docs.operations.find((o) => o.stream)!;
      const cap = Number(
        /At most (\d+) (?:open streams|streams open at once) per client/.exec(fx.docs.payments.paths[op.path].get.description)?.[1],
      );
      assert.ok(cap > 0, "the document states the cap");
      const path = `${op.base}${op.path.replace("{id}", fx.a.orderId!)}`;
      const open: Array<{ close(): void }> = [];
      try {
        for (let i = 0; i < cap; i++) {
          const stream = await openStream(s.relayerUrl, path, CLIENT);
          open.push(stream);
          assert.equal(stream.status, 200, `stream ${i + 1} of ${cap}`);
        }
        const refused = await openStream(s.relayerUrl, path, CLIENT);
        const text = await refused.text;
        const res: RawResponse = {
          status: refused.status,
          headers: refused.res.headers,
          text,
          json: JSON.parse(text),
          ms: 0,
          stream: false,
          journalIndex: -1,
        };
        expectEnvelope(fx, "payments", res, 429, "rate_limited", `stream ${cap + 1}`);
        assert.ok(Number(res.headers["retry-after"]) >= 1);
        const elsewhere = await openStream(s.relayerUrl, path, OTHER_CLIENT);
        assert.equal(elsewhere.status, 200, "another client may open one");
        elsewhere.close();

        open.pop()!.close();
        let again = 0;
        for (let i = 0; i < 50 && again !== 200; i++) {
          await sleep(100);
          const stream = await openStream(s.relayerUrl, path, CLIENT);
          again = stream.status;
          if (again === 200) open.push(stream);
          else await stream.text;
        }
        assert.equal(again, 200, "a closed stream frees its place");
      } finally {
        for (const stream of open) stream.close();
      }
    });
  });
}
