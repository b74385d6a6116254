// A callback URL refused for a reason that WEBHOOK_ALLOWED_PRIVATE_HOSTS would lift (plain http, a private
// address or a local host name) says so: the refusal names the setting and the host:port that is not in it,
// so that an integrator whose allowlisted host is on another port sees why (relayer/src/webhooks/url-safety.ts).
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { Resolver } from "../../relayer/src/webhooks/bounded-resolver.ts";
import { UnsafeUrlError, checkCallbackUrl, parseCallbackUrl } from "../../relayer/src/webhooks/url-safety.ts";

const allowlisted3000 = { allowedPrivateHosts: ["localhost:3000", "127.0.0.1:3000"] };

function refusal(run: () => unknown): string {
  try {
    run();
  } catch (error) {
    assert.ok(error instanceof UnsafeUrlError, String(error));
    return error.message;
  }
  assert.fail("the URL was accepted");
}

describe("callback URL refusals name WEBHOOK_ALLOWED_PRIVATE_HOSTS", () => {
  it("plain http to an allowlisted host on another port: must be https, and host:port is not in the allowlist", () => {
    assert.equal(parseCallbackUrl("http://localhost:3000/hook", allowlisted3000).port, "3000");
    const message = refusal(() => parseCallbackUrl("http://localhost:4000/hook", allowlisted3000));
    assert.match(message, /^the URL must be https/);
    assert.match(message, /WEBHOOK_ALLOWED_PRIVATE_HOSTS/);
    assert.match(message, /localhost:4000 is not in WEBHOOK_ALLOWED_PRIVATE_HOSTS/);
  });

  it("plain http without a port: the default port 80 is named", () => {
    assert.match(
      refusal(() => parseCallbackUrl("http://10.0.0.5/x", { allowedPrivateHosts: ["10.0.0.5:443"] })),
      /10\.0\.0\.5:80 is not in/,
    );
  });

  it("a private address or a local name over https on another port names the setting too", () => {
    assert.match(
      refusal(() => parseCallbackUrl("https://127.0.0.1:9001/x", allowlisted3000)),
      /127\.0\.0\.1:9001 is not in WEBHOOK_ALLOWED_PRIVATE_HOSTS/,
    );
    assert.match(
      refusal(() => parseCallbackUrl("https://[::1]/x", allowlisted3000)),
      /\[::1\]:443 is not in WEBHOOK_ALLOWED_PRIVATE_HOSTS/,
    );
    assert.match(
      refusal(() => parseCallbackUrl("https://printer.local/x", allowlisted3000)),
      /printer\.local:443 is not in WEBHOOK_ALLOWED_PRIVATE_HOSTS/,
    );
  });

  it("a name that resolves to a private address names the setting", async () => {
    const dns: Resolver = async () => [{ address: "10.1.2.3", family: 4 }];
    await assert.rejects(
      checkCallbackUrl("https://hooks.example.com:8443/x", { allowedPrivateHosts: [] }, dns),
      /10\.1\.2\.3, which is not a public address; hooks\.example\.com:8443 is not in WEBHOOK_ALLOWED_PRIVATE_HOSTS/,
    );
  });

  it("another scheme names the setting that allows plain http", () => {
    assert.match(
      refusal(() => parseCallbackUrl("ftp://example.com/x", allowlisted3000)),
      /must be https \(or http to a host of WEBHOOK_ALLOWED_PRIVATE_HOSTS\)/,
    );
  });
});
