// Callback URL rules (relayer/src/webhooks/url-safety.ts): form, addresses (with a fake resolver), the
// allowlist, and the check at connection time (DNS rebinding), against a real server on loopback.
import assert from "node:assert/strict";
import { once } from "node:events";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { after, before, describe, it } from "node:test";
import { postWebhook } from "../../relayer/src/webhooks/send.ts";
import {
  type Resolver,
  UnsafeUrlError,
  checkCallbackUrl,
  isPublicAddress,
  parseCallbackUrl,
} from "../../relayer/src/webhooks/url-safety.ts";

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
    const result = await postWebhook(`https://hooks.example.com:${port}/x`, "{}", {}, { timeoutMs: 2_000, policy: none, resolver: rebound });
    assert.equal(result.statusCode, null);
    assert.match(result.error ?? "", /refused: .*127\.0\.0\.1, which is not a public address/);
    assert.equal(hits, 0);
  });

  it("connects to the checked address of an allowlisted name, and to allowlisted literals", async () => {
    const dns = fakeDns({ "receiver.test": ["127.0.0.1"] });
    const byName = await postWebhook(`http://receiver.test:${port}/x`, "{}", {}, {
      timeoutMs: 2_000,
      policy: { allowedPrivateHosts: ["receiver.test"] },
      resolver: dns,
    });
    assert.equal(byName.statusCode, 204);
    const byLiteral = await postWebhook(`http://127.0.0.1:${port}/x`, "{}", {}, { timeoutMs: 2_000, policy: local });
    assert.equal(byLiteral.statusCode, 204);
    const refused = await postWebhook(`http://127.0.0.1:${port}/x`, "{}", {}, { timeoutMs: 2_000, policy: none });
    assert.match(refused.error ?? "", /^refused: /);
    assert.equal(hits, 2);
  });
});
