// Limits are keyed by who the client is, not by the socket (relayer/src/http/client-address.ts,
// middleware.ts clientIdentity): the address a trusted proxy forwards (TRUST_PROXY, X-Forwarded-For or
// Forwarded), never one an untrusted peer claims; IPv6 counted per /64; a credential's tenant or user before
// any address. The pure functions first, then a relayer behind "a proxy" on 127.0.0.1: the sign-in rate
// limit and the event-stream cap follow the forwarded client, per /64 for IPv6, and a peer that is not a
// trusted proxy is counted by its own address whatever it forwards.
import assert from "node:assert/strict";
import http from "node:http";
import { after, before, describe, it } from "node:test";
import { Hono } from "hono";
import { loadConfig } from "../../relayer/src/config.ts";
import {
  type ClientNetwork,
  addressGroup,
  forwardedHops,
  isLoopback,
  parseTrustedProxies,
  resolveClientAddress,
} from "../../relayer/src/http/client-address.ts";
import type { AppEnv, Identity } from "../../relayer/src/http/env.ts";
import { toErrorResponse } from "../../relayer/src/http/errors.ts";
import { rateLimit } from "../../relayer/src/http/middleware.ts";
import { type DatabaseKind, oneDatabaseKind } from "../support/databases.ts";
import { createOrder } from "../support/pay.ts";
import { type Stack, startStack } from "../support/stack.ts";

const viaXff = (trust: string): ClientNetwork => ({ trusted: parseTrustedProxies(trust), header: "x-forwarded-for" });
const viaForwarded = (trust: string): ClientNetwork => ({ trusted: parseTrustedProxies(trust), header: "forwarded" });

describe("the client's address (pure functions)", () => {
  it("counts an IPv6 client with the rest of its /64, an IPv4 client (mapped or not) on its own", () => {
    assert.equal(addressGroup("2001:db8:1:2:aaaa:bbbb:cccc:dddd"), "2001:db8:1:2::/64");
    assert.equal(addressGroup("2001:db8:1:2::1"), addressGroup("2001:DB8:1:2:ffff::9"));
    assert.notEqual(addressGroup("2001:db8:1:2::1"), addressGroup("2001:db8:1:3::1"));
    assert.equal(addressGroup("2001:db8::1"), "2001:db8:0:0::/64");
    assert.equal(addressGroup("1:2:3:4:5:6:1.2.3.4"), "1:2:3:4::/64");
    assert.equal(addressGroup("fe80::1%eth0"), "fe80:0:0:0::/64");
    assert.equal(addressGroup("::ffff:192.0.2.7"), "192.0.2.7");
    assert.equal(addressGroup("192.0.2.7"), "192.0.2.7");
    assert.ok(isLoopback("127.0.0.9") && isLoopback("::1") && isLoopback("::ffff:127.0.0.1"));
    assert.ok(!isLoopback("128.0.0.1") && !isLoopback("::2"));
  });

  it("parses TRUST_PROXY: addresses, CIDR blocks, loopback and private; refuses anything else", () => {
    const list = parseTrustedProxies("10.1.2.3, 192.168.0.0/16, fd00::/8, loopback");
    assert.ok(list);
    assert.ok(list.check("10.1.2.3", "ipv4") && !list.check("10.1.2.4", "ipv4"));
    assert.ok(list.check("192.168.77.1", "ipv4") && list.check("fd12::1", "ipv6") && list.check("127.3.3.3", "ipv4"));
    assert.ok(parseTrustedProxies("private")?.check("172.20.0.1", "ipv4"));
    assert.equal(parseTrustedProxies(" , "), undefined);
    for (const bad of ["proxy.example", "10.0.0.0/33", "fd00::/129", "10.0.0.0/x", "1.2.3"]) {
      assert.throws(() => parseTrustedProxies(bad), /prefix length|not an address/, bad);
    }
    assert.throws(() => loadConfig({ ...minimalEnv, TRUST_PROXY: "somewhere" }), /TRUST_PROXY/);
    const config = loadConfig({ ...minimalEnv, TRUST_PROXY: "10.0.0.0/8", TRUST_PROXY_HEADER: "forwarded" });
    assert.ok(config.TRUST_PROXY?.check("10.9.9.9", "ipv4"));
    assert.equal(config.TRUST_PROXY_HEADER, "forwarded");
    assert.equal(loadConfig(minimalEnv).TRUST_PROXY, undefined);
  });

  it("believes forwarding headers only from trusted proxies, read from the right", () => {
    const network = viaXff("loopback, 10.0.0.0/8");
    // Not a trusted peer: whatever it claims, it is the client.
    assert.equal(resolveClientAddress(network, "198.51.100.1", "203.0.113.5"), "198.51.100.1");
    assert.equal(resolveClientAddress(viaXff(""), "127.0.0.1", "203.0.113.5"), "127.0.0.1");
    // One proxy: the address it appended.
    assert.equal(resolveClientAddress(network, "127.0.0.1", "203.0.113.5"), "203.0.113.5");
    // A client's own X-Forwarded-For comes first; the proxies' appended hops are read from the right.
    assert.equal(resolveClientAddress(network, "127.0.0.1", "1.1.1.1, 203.0.113.5, 10.0.0.7"), "203.0.113.5");
    assert.equal(resolveClientAddress(network, "::ffff:127.0.0.1", "203.0.113.5:4711"), "203.0.113.5");
    assert.equal(resolveClientAddress(network, "127.0.0.1", "[2001:db8::7]:4711"), "2001:db8::7");
    // A hop that is not an address ends the walk at the last one reached.
    assert.equal(resolveClientAddress(network, "127.0.0.1", "203.0.113.5, unknown"), "127.0.0.1");
    assert.equal(resolveClientAddress(network, "127.0.0.1", "garbage, 10.0.0.7"), "10.0.0.7");
    // Every hop a trusted proxy: the left-most.
    assert.equal(resolveClientAddress(network, "127.0.0.1", "10.0.0.1, 10.0.0.2"), "10.0.0.1");
    // No header from a trusted peer: the peer.
    assert.equal(resolveClientAddress(network, "10.0.0.3", undefined), "10.0.0.3");
    // A hostile header costs a bounded walk.
    const long = Array.from({ length: 10_000 }, () => "10.0.0.1").join(",");
    assert.equal(resolveClientAddress(network, "127.0.0.1", long), "10.0.0.1");
  });

  it("reads RFC 7239 Forwarded when that is the configured header (and then ignores X-Forwarded-For)", () => {
    assert.deepEqual(forwardedHops("forwarded", 'for=192.0.2.60;proto=http;by=203.0.113.43, For="[2001:db8:cafe::17]:4711", proto=https'), [
      "192.0.2.60",
      "2001:db8:cafe::17",
      undefined,
    ]);
    const network = viaForwarded("loopback");
    assert.equal(resolveClientAddress(network, "127.0.0.1", 'for="[2001:db8:cafe::17]:4711"'), "2001:db8:cafe::17");
    assert.equal(resolveClientAddress(network, "127.0.0.1", "for=_hidden"), "127.0.0.1");
  });

  it("keys the rate limiter by the credential's tenant or user before the address", async () => {
    const app = new Hono<AppEnv>();
    app.use("*", async (c, next) => {
      const who = c.req.header("x-test-identity") ?? "";
      const [kind, id] = who.split(":");
      if (kind === "key")
        c.set("identity", { kind: "api_key", tenantId: id, keyId: `key_${Math.random()}`, role: "developer" } as Identity);
      if (kind === "user") {
        c.set("identity", {
          kind: "user",
          tenantId: "ten_1",
          userId: id,
          email: "a@b.c",
          name: "A",
          sessionId: `ses_${Math.random()}`,
        } as Identity);
      }
      await next();
    });
    app.get("/limited", rateLimit({ capacity: 2, perSecond: 0.001 }), (c) => c.text("ok"));
    app.onError((error, c) => toErrorResponse(c, error));
    const statuses = async (who: string, n: number) => {
      const out: number[] = [];
      for (let i = 0; i < n; i++) out.push((await app.request("/limited", { headers: { "x-test-identity": who } })).status);
      return out;
    };
    // Every key of a tenant shares the tenant's bucket; another tenant, or a user, has its own.
    assert.deepEqual(await statuses("key:ten_a", 3), [200, 200, 429]);
    assert.deepEqual(await statuses("key:ten_b", 2), [200, 200]);
    assert.deepEqual(await statuses("user:usr_1", 3), [200, 200, 429]);
    assert.deepEqual(await statuses("user:usr_2", 1), [200]);
    // No credential: the address (here, no socket at all).
    assert.deepEqual(await statuses("", 3), [200, 200, 429]);
  });
});

/** The variables loadConfig requires, nothing more. */
const minimalEnv = {
  QUOTE_SIGNER_PRIVATE_KEY: `0x${"11".repeat(32)}`,
  RELAYER_PRIVATE_KEY: `0x${"22".repeat(32)}`,
  JWT_SECRET: "j".repeat(32),
  WEBHOOK_SECRET_KEY: "w".repeat(32),
};

/** A request to the relayer from `localAddress` (a loopback address of the test's choosing). */
function request(
  url: string,
  opts: { method?: string; path: string; localAddress?: string; headers?: Record<string, string>; body?: unknown },
): Promise<{ status: number; headers: http.IncomingHttpHeaders; response: http.IncomingMessage }> {
  const { hostname, port } = new URL(url);
  const body = opts.body === undefined ? undefined : JSON.stringify(opts.body);
  return new Promise((resolve, reject) => {
    const req = http.request(
      {
        host: hostname,
        port,
        method: opts.method ?? "GET",
        path: opts.path,
        localAddress: opts.localAddress ?? "127.0.0.1",
        agent: false,
        headers: { ...(body ? { "content-type": "application/json" } : {}), ...opts.headers },
      },
      (response) => resolve({ status: response.statusCode ?? 0, headers: response.headers, response }),
    );
    req.on("error", reject);
    req.end(body);
  });
}

/** POST /v1/auth/login with a fresh unknown email (so the per-account limit never answers); the status and
 * retry-after. */
async function loginAnswer(url: string, opts: { localAddress?: string; headers?: Record<string, string> }) {
  const body = { email: `nobody-${Math.random().toString(36).slice(2)}@example.com`, password: "not the password" };
  const { status, headers, response } = await request(url, { method: "POST", path: "/v1/auth/login", body, ...opts });
  response.resume();
  return { status, retryAfter: Number(headers["retry-after"]) };
}

const login = async (url: string, opts: { localAddress?: string; headers?: Record<string, string> }) =>
  (await loginAnswer(url, opts)).status;

/** The sign-in limit per client (relayer/src/v1/auth.ts): a burst of 10. */
const LOGIN_BURST = 10;

const database = oneDatabaseKind();
describe(`limits keyed by the client behind a trusted proxy, on ${database}`, { concurrency: false, timeout: 600_000 }, () => {
  let stack: Stack;

  before(async () => {
    stack = await startStack({
      label: `client-identity-${database}`,
      database: database as DatabaseKind,
      indexer: false,
      // 127.0.0.1 plays the reverse proxy; 127.0.0.2 and up are clients that reach the relayer directly.
      relayerEnv: { TRUST_PROXY: "127.0.0.1", ORDER_EVENT_STREAMS_PER_CLIENT: "2" },
    });
  });
  after(async () => {
    await stack?.stop();
  });

  // The limit refills one attempt every 6 s: each client's attempts go at once, so that the burst is spent
  // before it refills, however slow the machine. Of BATCH attempts, LOGIN_BURST (one more if it refilled)
  // pass; the rest are 429.
  const BATCH = LOGIN_BURST + 5;
  const batch = async (opts: (i: number) => { localAddress?: string; headers?: Record<string, string> }) => {
    const answers = await Promise.all(Array.from({ length: BATCH }, (_, i) => loginAnswer(stack.relayerUrl, opts(i))));
    const statuses = answers.map((a) => a.status);
    const limited = statuses.filter((s) => s === 429).length;
    assert.ok(
      answers.every((a) => a.status !== 429 || a.retryAfter > 0),
      "429 with retry-after",
    );
    assert.ok(limited >= BATCH - LOGIN_BURST - 2, `${limited} of ${BATCH} limited: ${statuses}`);
    assert.ok(
      statuses.every((s) => s === 429 || s === 401),
      `${statuses}`,
    );
  };

  it("the sign-in limit counts each forwarded client apart, an IPv6 client per /64", async () => {
    const through = (client: string) => ({ headers: { "x-forwarded-for": client } });
    // One client, some of its attempts with an X-Forwarded-For entry of its own choosing before the proxy's hop:
    // the proxy's hop is the client, the same one.
    await batch((i) => through(i % 3 === 0 ? "198.51.100.1, 203.0.113.7" : "203.0.113.7"));
    // Another client behind the same proxy is not limited by the first.
    assert.equal(await login(stack.relayerUrl, through("203.0.113.8")), 401);

    // Fifteen addresses of one /64: one client.
    await batch((i) => through(`2001:db8:1:2::${(i + 1).toString(16)}`));
    assert.equal(await login(stack.relayerUrl, through("2001:db8:1:3::1")), 401);
  });

  it("a peer that is not a trusted proxy is counted by its own address, whatever it forwards", async () => {
    await batch((i) => ({ localAddress: "127.0.0.2", headers: { "x-forwarded-for": `192.0.2.${i}` } }));
    // Another direct client is not limited by it.
    assert.equal(await login(stack.relayerUrl, { localAddress: "127.0.0.3" }), 401);
  });

  it("the event-stream cap counts a forwarded IPv6 client per /64", async () => {
    const order = await createOrder(stack);
    const open: http.IncomingMessage[] = [];
    const stream = async (client: string) => {
      const answer = await request(stack.relayerUrl, { path: `/v1/orders/${order.id}/events`, headers: { "x-forwarded-for": client } });
      if (answer.status === 200) open.push(answer.response);
      else answer.response.resume();
      return answer.status;
    };
    try {
      assert.equal(await stream("2001:db8:5:6::1"), 200);
      assert.equal(await stream("2001:db8:5:6::2"), 200);
      assert.equal(await stream("2001:db8:5:6::3"), 429);
      assert.equal(await stream("2001:db8:5:7::1"), 200);
    } finally {
      for (const response of open) response.destroy();
    }
  });
});
