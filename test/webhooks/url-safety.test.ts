// Callback URL rules (relayer/src/webhooks/url-safety.ts): form, addresses (with a fake resolver), the
// IANA special-purpose ranges, the allowlist (hosts and host:port), the relayer's own endpoints, and the
// check at connection time (DNS rebinding), against real servers on loopback.
import assert from "node:assert/strict";
import { once } from "node:events";
import http from "node:http";
import type { AddressInfo } from "node:net";
import os from "node:os";
import { after, before, describe, it } from "node:test";
import { loadConfig } from "../../relayer/src/config.ts";
import { postWebhook } from "../../relayer/src/webhooks/send.ts";
import type { Resolver } from "../../relayer/src/webhooks/bounded-resolver.ts";
import {
  UnsafeUrlError,
  checkCallbackUrl,
  databaseEndpoints,
  isPublicAddress,
  parseCallbackUrl,
  serviceEndpoints,
  webhookUrlPolicy,
} from "../../relayer/src/webhooks/url-safety.ts";
import { parseHostEntry } from "../../relayer/src/webhooks/host-entry.ts";
import { MINIMAL_RELAYER_ENV } from "../support/relayer-env.ts";

const none = { allowedPrivateHosts: [] as string[] };
const local = { allowedPrivateHosts: ["127.0.0.1", "localhost", "[::1]"] };
const fakeDns =
  (table: Record<string, string[]>): Resolver =>
  async (host) => {
    const addresses = table[host];
    if (!addresses) throw Object.assign(new Error(`queryA ENOTFOUND ${host}`), { code: "ENOTFOUND" });
    return addresses.map((address) => ({ address, family: address.includes(":") ? 6 : 4 }));
  };

describe("callback URL rules", () => {
  it("tells public addresses from private, loopback, link-local, reserved and embedded ones", () => {
    for (const address of ["8.8.8.8", "1.1.1.1", "203.0.114.1", "2606:4700::1111", "2a00:1450:4001:80b::200e"]) {
      assert.ok(isPublicAddress(address), address);
    }
    for (const address of [
      "127.0.0.1",
      "127.5.6.7",
      "10.1.2.3",
      "172.16.0.1",
      "172.31.255.255",
      "192.168.1.1",
      "169.254.169.254",
      "100.64.0.1",
      "0.0.0.0",
      "224.0.0.1",
      "255.255.255.255",
      "192.0.2.10",
      "::1",
      "::",
      "fe80::1",
      "fd00::1",
      "fc00::5",
      "ff02::1",
      "::ffff:127.0.0.1",
      "::ffff:7f00:1",
      "::ffff:10.0.0.1",
      "64:ff9b::a00:1",
      "2002:a00:1::1",
      "not an address",
    ]) {
      assert.ok(!isPublicAddress(address), address);
    }
  });

  it("refuses bad forms: not https, credentials, fragments, private literals, local names", () => {
    const refused = [
      "ftp://example.com/x",
      "http://example.com/hook",
      "https://user:pass@example.com/hook",
      "https://example.com/hook#frag",
      "https://127.0.0.1/hook",
      "https://[::1]/hook",
      "https://10.0.0.8/hook",
      "https://169.254.169.254/latest/meta-data",
      "https://0x7f.0.0.1/hook",
      "https://2130706433/hook",
      "https://[::ffff:127.0.0.1]/hook",
      "https://localhost/hook",
      "https://intranet/hook",
      "https://printer.local/hook",
      "https://db.internal/hook",
      `https://example.com/${"a".repeat(2050)}`,
      "not a url",
    ];
    for (const url of refused) assert.throws(() => parseCallbackUrl(url, none), UnsafeUrlError, url);
    assert.equal(parseCallbackUrl("https://example.com:8443/hooks?x=1", none).host, "example.com:8443");
    assert.equal(parseCallbackUrl("https://8.8.8.8/hook", none).hostname, "8.8.8.8");
  });

  it("allows allowlisted private hosts, over http too", () => {
    assert.equal(parseCallbackUrl("http://127.0.0.1:9999/hook", local).port, "9999");
    assert.equal(parseCallbackUrl("http://localhost/hook", local).hostname, "localhost");
    assert.equal(parseCallbackUrl("http://[::1]:8080/hook", local).hostname, "[::1]");
    assert.throws(() => parseCallbackUrl("http://10.0.0.1/hook", local), UnsafeUrlError);
  });

  it("resolves names and refuses any that has a private address among its addresses", async () => {
    const dns = fakeDns({
      "hooks.example.com": ["93.184.215.14", "2606:2800:21f:cb07:6820:80da:af6b:8b2c"],
      "rebind.example.com": ["93.184.215.14", "127.0.0.1"],
      "metadata.example.com": ["169.254.169.254"],
    });
    assert.equal((await checkCallbackUrl("https://hooks.example.com/x", none, dns)).hostname, "hooks.example.com");
    await assert.rejects(checkCallbackUrl("https://rebind.example.com/x", none, dns), /127\.0\.0\.1, which is not a public address/);
    await assert.rejects(checkCallbackUrl("https://metadata.example.com/x", none, dns), /not a public address/);
    await assert.rejects(checkCallbackUrl("https://nowhere.example.com/x", none, dns), /does not resolve \(ENOTFOUND\)/);
  });
});

describe("IANA special-purpose addresses", () => {
  it("refuses every non-global IPv4 range, however the address is spelled in a URL", () => {
    for (const address of [
      "0.0.0.0",
      "0.1.2.3", // "this network" 0.0.0.0/8
      "100.64.0.1",
      "100.127.255.255", // carrier-grade NAT 100.64.0.0/10
      "192.0.0.1",
      "192.0.0.170", // IETF protocol assignments 192.0.0.0/24 (NAT64 discovery)
      "192.88.99.1", // 6to4 relay anycast
      "198.18.0.1",
      "198.19.255.255", // benchmarking 198.18.0.0/15
      "198.51.100.7",
      "203.0.113.9", // documentation
      "240.0.0.1",
      "255.255.255.255", // reserved, broadcast
      "239.255.255.250", // multicast
    ]) {
      assert.ok(!isPublicAddress(address), address);
    }
    for (const url of [
      "https://2130706433/",
      "https://0x7f.1/",
      "https://127.1/",
      "https://0177.0.0.1/",
      "https://0x7f000001/",
      "https://017700000001/",
      "https://%31%32%37.0.0.1/",
      "https://0/",
      "https://100.64.0.1/",
      "https://192.0.0.8/",
      "https://198.18.0.1/",
      "https://240.0.0.1/",
      "https://255.255.255.255/",
      "https://0.0.0.0/",
      "https://169.254.169.254./",
    ]) {
      assert.throws(() => parseCallbackUrl(url, none), /is not a public address/, url);
    }
  });

  it("refuses the IPv6 translation prefixes: local-use 64:ff9b:1::/48 and SIIT ::ffff:0:0:0/96, whatever they embed", () => {
    for (const address of [
      "64:ff9b:1::a00:1",
      "64:ff9b:1::808:808",
      "64:ff9b:1:ffff::1",
      "::ffff:0:7f00:1",
      "::ffff:0:808:808",
      "::ffff:0:0:0",
    ]) {
      assert.ok(!isPublicAddress(address), address);
    }
    for (const url of ["https://[64:ff9b:1::808:808]/", "https://[::ffff:0:8.8.8.8]/", "https://[::ffff:0:127.0.0.1]/"]) {
      assert.throws(() => parseCallbackUrl(url, none), /is not a public address/, url);
    }
  });

  it("refuses IPv6 outside global unicast and the special ranges inside it; translated forms follow their IPv4 address", () => {
    for (const address of [
      "::8.8.8.8",
      "::808:808",
      "::127.0.0.1", // IPv4-compatible (deprecated)
      "64:ff9b::7f00:1",
      "64:ff9b::a9fe:a9fe",
      "64:ff9b::a00:1", // NAT64 of loopback, metadata, private
      "2002:7f00:1::1",
      "2002:c0a8:101::1",
      "2002:a9fe:a9fe::", // 6to4 of loopback, private, metadata
      "2001:0:4136:e378:8000:63bf:3fff:fdd2", // Teredo 2001::/32
      "2001:2::1", // benchmarking
      "2001:10::1",
      "2001:20::1", // ORCHID, ORCHIDv2
      "2001:db8::1",
      "3fff::1",
      "3fff:fff:ffff::1", // documentation
      "100::1", // discard
      "5f00::1", // segment routing
      "fc00::1",
      "fd12:3456::1", // unique local
      "fe80::1",
      "febf::1", // link-local
      "fec0::1", // site-local
      "ff02::1",
      "ff0e::1", // multicast
      "4000::1",
      "1::1", // not allocated
      "fe80::1%eth0",
      "2606:4700::1111%eth0", // a zone is never a public host
    ]) {
      assert.ok(!isPublicAddress(address), address);
    }
    for (const address of [
      "2001:4860:4860::8888",
      "2001:200::1",
      "2a00:1450:4001:80b::200e",
      "::ffff:8.8.8.8",
      "64:ff9b::808:808",
      "2002:808:808::1",
    ]) {
      assert.ok(isPublicAddress(address), address);
    }
    for (const url of [
      "https://[::127.0.0.1]/",
      "https://[2001::1]/",
      "https://[3fff::1]/",
      "https://[fec0::1]/",
      "https://[64:ff9b::10.0.0.1]/",
      "https://[2002:7f00:1::]/",
    ]) {
      assert.throws(() => parseCallbackUrl(url, none), /is not a public address/, url);
    }
  });

  it("refuses local names written with a trailing dot or under .localhost", () => {
    for (const url of [
      "https://localhost./hook",
      "https://intranet./hook",
      "https://api.localhost/hook",
      "https://nas.home.arpa/hook",
      "https://host.localdomain./hook",
    ]) {
      assert.throws(() => parseCallbackUrl(url, none), /is not a public host name/, url);
    }
  });
});

describe("the allowlist: hosts and host:port", () => {
  it("parses entries: a host, host:port, [v6]:port, a bare IPv6 address; refuses anything else", () => {
    assert.deepEqual(parseHostEntry("127.0.0.1:9000"), { hostname: "127.0.0.1", port: 9000 });
    assert.deepEqual(parseHostEntry("LocalHost"), { hostname: "localhost", port: undefined });
    assert.deepEqual(parseHostEntry("[::1]:9000"), { hostname: "[::1]", port: 9000 });
    assert.deepEqual(parseHostEntry("::1"), { hostname: "[::1]", port: undefined });
    assert.deepEqual(parseHostEntry("[0:0::1]"), { hostname: "[::1]", port: undefined });
    assert.deepEqual(parseHostEntry("127.1"), { hostname: "127.0.0.1", port: undefined });
    for (const bad of [
      "127.0.0.1:0",
      "127.0.0.1:65536",
      "127.0.0.1:http",
      "host:1:2x",
      "[::1",
      "[::1]9000",
      "user@host",
      "a/b",
      "http://x",
      "host:",
      "exa mple",
    ]) {
      assert.throws(() => parseHostEntry(bad), Error, bad);
    }
  });

  it("an entry with a port allows that port only; without a port, every port", () => {
    const one = { allowedPrivateHosts: ["127.0.0.1:9000", "localhost:9000", "[::1]:9000", "receiver.test"] };
    for (const url of [
      "http://127.0.0.1:9000/x",
      "http://localhost:9000/x",
      "http://[::1]:9000/x",
      "http://receiver.test:1234/x",
      "http://receiver.test/x",
    ]) {
      assert.equal(parseCallbackUrl(url, one).href, url);
    }
    for (const url of [
      "http://127.0.0.1:9001/x",
      "http://127.0.0.1/x",
      "http://localhost:8545/x",
      "http://[::1]:80/x",
      "https://127.0.0.1:9001/x",
    ]) {
      assert.throws(() => parseCallbackUrl(url, one), UnsafeUrlError, url);
    }
    const https = { allowedPrivateHosts: ["10.0.0.5:443"] };
    assert.equal(parseCallbackUrl("https://10.0.0.5/x", https).hostname, "10.0.0.5");
    assert.throws(() => parseCallbackUrl("http://10.0.0.5/x", https), /must be https/);
  });

  it("WEBHOOK_ALLOWED_PRIVATE_HOSTS is validated at start-up", () => {
    const env = MINIMAL_RELAYER_ENV;
    assert.deepEqual(
      loadConfig({ ...env, WEBHOOK_ALLOWED_PRIVATE_HOSTS: " 127.0.0.1:8790 , LOCALHOST:8790,[::1]" }).WEBHOOK_ALLOWED_PRIVATE_HOSTS,
      ["127.0.0.1:8790", "localhost:8790", "[::1]"],
    );
    assert.throws(
      () => loadConfig({ ...env, WEBHOOK_ALLOWED_PRIVATE_HOSTS: "127.0.0.1:99999" }),
      /WEBHOOK_ALLOWED_PRIVATE_HOSTS: "127\.0\.0\.1:99999": the port/,
    );
  });
});

describe("the relayer's own endpoints", () => {
  const config = {
    HOST: "127.0.0.1",
    PORT: 8787,
    publicBaseUrl: "https://pay.example.com",
    RPC_URL: "http://127.0.0.1:8545",
    INDEXER_URL: "http://localhost:42069",
    DEVICE_CLOUD_URL: "http://127.0.0.1:8789",
    DATABASE_URL: "postgresql://postgres:pw@db.internal:6432/test",
    WEBHOOK_ALLOWED_PRIVATE_HOSTS: ["127.0.0.1", "localhost", "[::1]", "0.0.0.0", "127.0.0.2", "alias.example.com", "10.0.0.5"],
  };
  const policy = webhookUrlPolicy(config);
  const dns = fakeDns({
    "db.internal": ["10.0.0.5"],
    "alias.example.com": ["10.0.0.5"],
    "pay.example.com": ["93.184.215.14"],
    "hooks.example.com": ["93.184.215.14"],
    "self.example.com": ["127.0.0.1"],
  });

  it("lists HOST:PORT, PUBLIC_BASE_URL, RPC_URL, INDEXER_URL, DEVICE_CLOUD_URL and the database", () => {
    assert.deepEqual(serviceEndpoints(config), [
      { hostname: "127.0.0.1", port: 8787 },
      { hostname: "pay.example.com", port: 443 },
      { hostname: "127.0.0.1", port: 8545 },
      { hostname: "localhost", port: 42069 },
      { hostname: "127.0.0.1", port: 8789 },
      { hostname: "db.internal", port: 6432 },
    ]);
    assert.deepEqual(databaseEndpoints("postgres://u:p%40ss@[::1]:5433,db2/app?sslmode=require"), [
      { hostname: "[::1]", port: 5433 },
      { hostname: "db2", port: 5432 },
    ]);
    assert.deepEqual(databaseEndpoints("postgresql:///app?host=pg.internal&port=5544"), [{ hostname: "pg.internal", port: 5544 }]);
    assert.deepEqual(databaseEndpoints("postgresql:///app?host=/var/run/postgresql"), []);
    assert.deepEqual(databaseEndpoints("postgresql://user@/app"), [{ hostname: "localhost", port: 5432 }]);
  });

  it("refuses them although loopback is allowlisted: by name, by literal, by any loopback or unspecified address", async () => {
    for (const url of [
      "http://127.0.0.1:8787/v1/webhooks",
      "http://localhost:8787/",
      "http://[::1]:8545/",
      "http://127.0.0.2:8545/", // another loopback address
      "http://0.0.0.0:8789/", // the unspecified address connects to this machine
      "https://[::ffff:127.0.0.1]:8789/",
      "http://127.0.0.1:42069/sql",
      "https://pay.example.com/hooks",
      "https://PAY.example.com:443/hooks",
    ]) {
      assert.throws(() => parseCallbackUrl(url, policy), /is an endpoint of the payment service itself/, url);
      await assert.rejects(checkCallbackUrl(url, policy, dns), /is an endpoint of the payment service itself/, url);
    }
    // Another port of the same hosts is not an endpoint of the service.
    assert.equal((await checkCallbackUrl("http://127.0.0.1:9999/hook", policy, dns)).port, "9999");
    assert.equal((await checkCallbackUrl("https://pay.example.com:8443/hook", policy, dns)).port, "8443");
  });

  it("refuses a name that resolves to an own endpoint's address (the database behind db.internal), allowlisted or not", async () => {
    await assert.rejects(
      checkCallbackUrl("http://alias.example.com:6432/x", policy, dns),
      /alias\.example\.com resolves to 10\.0\.0\.5, and 10\.0\.0\.5:6432 is an endpoint/,
    );
    await assert.rejects(checkCallbackUrl("http://10.0.0.5:6432/x", policy, dns), /10\.0\.0\.5:6432 is an endpoint/);
    await assert.rejects(
      checkCallbackUrl("https://self.example.com:8787/x", { ...policy, allowedPrivateHosts: ["self.example.com"] }, dns),
      /is an endpoint/,
    );
    assert.equal((await checkCallbackUrl("http://alias.example.com:6433/x", policy, dns)).port, "6433");
  });

  it("does not refuse other sites that share a public endpoint's address (a CDN): only its name", async () => {
    const cdn = webhookUrlPolicy({ ...config, RPC_URL: "https://rpc.example.net", WEBHOOK_ALLOWED_PRIVATE_HOSTS: [] });
    const shared = fakeDns({ "rpc.example.net": ["93.184.215.14"], "hooks.example.com": ["93.184.215.14"] });
    assert.equal((await checkCallbackUrl("https://hooks.example.com/x", cdn, shared)).hostname, "hooks.example.com");
    await assert.rejects(checkCallbackUrl("https://rpc.example.net/x", cdn, shared), /is an endpoint/);
  });

  it("counts this machine's interface addresses as the relayer's host when it listens on 0.0.0.0", async (t) => {
    const address = Object.values(os.networkInterfaces())
      .flat()
      .find((i) => i && !i.internal && i.family === "IPv4")?.address;
    if (!address) return t.skip("no non-loopback IPv4 interface");
    const wide = webhookUrlPolicy({ ...config, HOST: "0.0.0.0", WEBHOOK_ALLOWED_PRIVATE_HOSTS: [address] });
    await assert.rejects(checkCallbackUrl(`http://${address}:8787/x`, wide, dns), /is an endpoint of the payment service itself/);
    assert.equal((await checkCallbackUrl(`http://${address}:8788/x`, wide, dns)).port, "8788");
  });
});

describe("delivery-time address check", () => {
  let server: http.Server;
  let port = 0;
  let hits = 0;
  before(async () => {
    server = http.createServer((req, res) => {
      hits++;
      req.resume();
      res.writeHead(204).end();
    });
    server.listen(0, "127.0.0.1");
    await once(server, "listening");
    port = (server.address() as AddressInfo).port;
  });
  after(() => new Promise<void>((resolve) => server.close(() => resolve())));

  it("does not connect when the name resolves to a private address at delivery (DNS rebinding)", async () => {
    // The name looked public when it was saved; now it points at the relayer's own network.
    const rebound = fakeDns({ "hooks.example.com": ["127.0.0.1"] });
    const result = await postWebhook(
      `https://hooks.example.com:${port}/x`,
      "{}",
      {},
      { timeoutMs: 2_000, policy: none, resolver: rebound },
    );
    assert.equal(result.statusCode, null);
    assert.match(result.error ?? "", /refused: .*127\.0\.0\.1, which is not a public address/);
    assert.equal(hits, 0);
  });

  it("connects to the checked address of an allowlisted name, and to allowlisted literals", async () => {
    const dns = fakeDns({ "receiver.test": ["127.0.0.1"] });
    const byName = await postWebhook(
      `http://receiver.test:${port}/x`,
      "{}",
      {},
      {
        timeoutMs: 2_000,
        policy: { allowedPrivateHosts: ["receiver.test"] },
        resolver: dns,
      },
    );
    assert.equal(byName.statusCode, 204);
    const byLiteral = await postWebhook(`http://127.0.0.1:${port}/x`, "{}", {}, { timeoutMs: 2_000, policy: local });
    assert.equal(byLiteral.statusCode, 204);
    const refused = await postWebhook(`http://127.0.0.1:${port}/x`, "{}", {}, { timeoutMs: 2_000, policy: none });
    assert.match(refused.error ?? "", /^refused: /);
    assert.equal(hits, 2);
  });

  it("delivers to an allowlisted host:port, and refuses another port of the same host without connecting", async () => {
    let otherHits = 0;
    const other = http.createServer((req, res) => {
      otherHits++;
      req.resume();
      res.writeHead(204).end();
    });
    other.listen(0, "127.0.0.1");
    await once(other, "listening");
    try {
      const otherPort = (other.address() as AddressInfo).port;
      const onePort = { allowedPrivateHosts: [`127.0.0.1:${port}`, `localhost:${port}`] };
      const before = hits;
      assert.equal((await postWebhook(`http://127.0.0.1:${port}/x`, "{}", {}, { timeoutMs: 2_000, policy: onePort })).statusCode, 204);
      assert.equal(hits, before + 1);
      for (const url of [`http://127.0.0.1:${otherPort}/x`, `http://localhost:${otherPort}/x`, `https://127.0.0.1:${otherPort}/x`]) {
        const refused = await postWebhook(url, "{}", {}, { timeoutMs: 2_000, policy: onePort });
        assert.equal(refused.statusCode, null, url);
        assert.match(refused.error ?? "", /^refused: /, url);
      }
      assert.equal(otherHits, 0);
    } finally {
      await new Promise<void>((resolve) => other.close(() => resolve()));
    }
  });

  it("refuses at every attempt a name or a literal that reaches one of the relayer's own endpoints, allowlisted or not", async () => {
    const before = hits;
    // The receiver's port plays the relayer's own port; "stack.test" plays a name of its host.
    const dns = fakeDns({ "receiver.test": ["93.184.215.14", "127.0.0.1"], "stack.test": ["127.0.0.1"] });
    const own = { allowedPrivateHosts: ["receiver.test", "127.0.0.1", "localhost"], ownEndpoints: [{ hostname: "stack.test", port }] };
    const byName = await postWebhook(`http://receiver.test:${port}/x`, "{}", {}, { timeoutMs: 2_000, policy: own, resolver: dns });
    assert.match(
      byName.error ?? "",
      /^refused: receiver\.test resolves to 127\.0\.0\.1, and 127\.0\.0\.1:\d+ is an endpoint of the payment service itself/,
    );
    const byLiteral = await postWebhook(`http://127.0.0.1:${port}/x`, "{}", {}, { timeoutMs: 2_000, policy: own, resolver: dns });
    assert.match(byLiteral.error ?? "", /^refused: 127\.0\.0\.1:\d+ is an endpoint of the payment service itself/);
    const byLocalhost = await postWebhook(
      `http://localhost:${port}/x`,
      "{}",
      {},
      {
        timeoutMs: 2_000,
        policy: { ...own, ownEndpoints: [{ hostname: "127.0.0.1", port }] },
      },
    );
    assert.match(byLocalhost.error ?? "", /^refused: localhost:\d+ is an endpoint of the payment service itself/);
    assert.equal(hits, before);
  });
});
