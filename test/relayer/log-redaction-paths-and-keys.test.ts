// The log redactor's rules for request paths, bare hex keys and more secret field names
// (relayer/src/log-redaction.ts): secrets pasted into a URL path, keys and signatures written without 0x,
// and fields such as privateKeyHex or passphrase never reach a log line, while what operators need (route
// words, the service's ids, device ids, transaction hashes and addresses with 0x) stays readable. The
// access log is exercised through the real request middleware; every rule also runs in linear time over
// hostile text.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { Hono } from "hono";
import type { AppEnv } from "../../relayer/src/http/env.ts";
import { requestContext } from "../../relayer/src/http/middleware.ts";
import { REDACTED } from "../../relayer/src/log-redaction.ts";
import { createLogger } from "../../relayer/src/logger.ts";

function capture() {
  const lines: string[] = [];
  return { lines, logger: createLogger("debug", { service: "test" }, (line) => lines.push(line)) };
}

/** The path the access log wrote for a request to `path`, through the relayer's request middleware. */
async function accessLogPath(path: string): Promise<string> {
  const { lines, logger } = capture();
  const app = new Hono<AppEnv>();
  app.use(
    "*",
    requestContext(logger, () => undefined),
  );
  app.get("*", (c) => c.text("ok"));
  await app.request(path);
  const line = lines.map((l) => JSON.parse(l)).find((l) => l.msg === "request");
  assert.ok(line, `an access log line for ${path}`);
  return line.path;
}

// Fixed values of the shapes the service issues or handles.
const clientSecret = "Qm9zc2VzLWNsaWVudC1zZWNyZXQtZm9yLXRlc3RzLTEy"; // 32 bytes, base64url (energy sandbox)
const password = "xK9mPq2RvL7wTz"; // base64url of 12 random bytes is the sample user's password shape
const symbolPassword = "correct horse & battery!";
const webhookSecret = "whsec_Mf+KQ9r8GKYqXY3Gs0F2tlz/C2h5mE2nbPyvgbKc1ouvI=";
const apiKey = `payg_${"A1b2C3d4E5".repeat(3)}abcdefgh`;
const jwt = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJ1c3JfMDEifQ.3q2-7Zk9qB3mZbC8n5rGZrVwq8GQ0yVbFz3t2Yx1aBc";
// A well-known development key (the local node's first account): 32 bytes, written without 0x.
const bareKey = "ac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80";
const bareSignature = "1b".repeat(65);
const orderId = "ord_01JD2Y6Y8X3K5V4Q9T7R2M1N0P";
const txHash = `0x${"cd".repeat(32)}`;
const address = "0x70997970C51812dc3A010C7d01b50e20d79C79C8";

describe("log redaction of request paths", () => {
  it("redacts secrets in a request path of the access log, percent-encoded or not", async () => {
    const cases: Array<[string, string]> = [
      ["a sandbox client secret", clientSecret],
      ["a password", password],
      ["a password with spaces and symbols", encodeURIComponent(symbolPassword)],
      ["a percent-encoded webhook secret", encodeURIComponent(webhookSecret)],
      ["a webhook secret", webhookSecret.replaceAll("/", "%2F")],
      ["an API key", apiKey],
      ["a JWT", jwt],
      ["a bare 32-byte key", bareKey],
      ["a bare 65-byte signature", bareSignature],
      ["a key behind a percent-encoded prefix", `%77hsec_${encodeURIComponent(webhookSecret.slice(6))}`],
    ];
    for (const [what, segment] of cases) {
      const logged = await accessLogPath(`/v1/orders/${segment}`);
      assert.equal(logged, `/v1/orders/${REDACTED}`, what);
    }
    const logged = await accessLogPath(`/v1/orders/${clientSecret}/events`);
    assert.equal(logged, `/v1/orders/${REDACTED}/events`, "the other segments stay");
  });

  it("keeps the route words, ids, device ids, transaction hashes and addresses operators need", async () => {
    const harmless = [
      `/v1/orders/${orderId}`,
      `/v1/orders/${orderId}/events`,
      "/v1/devices/kiosk-nbo-001/status",
      "/v1/devices/KE-NBO-0001",
      `/v1/participants/${address}/earnings`,
      `/energy/v1/evidence/${txHash}`,
      "/energy/v1/telemetry:batch",
      "/energy/v1/projects/prj_kibera_solar",
      "/portal/assets/portal.css",
      "/v1/webhooks/subscriptions/whs_01JD2Y6Y8X3K5V4Q9T7R2M1N0P/rotate-secret",
      "/",
    ];
    for (const path of harmless) assert.equal(await accessLogPath(path), path);
  });

  it("applies to any field named path, and never to a field that is not a path", () => {
    const { lines, logger } = capture();
    logger.warn("portal form rejected", { path: `/portal/webhooks/${clientSecret}`, requestPath: `/v1/orders/${password}` });
    logger.info("validation", { path: "eventTypes.0", detail: "kept" });
    const [first, second] = lines.map((l) => JSON.parse(l));
    assert.equal(first.path, `/portal/webhooks/${REDACTED}`);
    assert.equal(first.requestPath, `/v1/orders/${REDACTED}`);
    assert.equal(second.path, "eventTypes.0");
  });
});

describe("log redaction of bare hex keys and signatures", () => {
  it("redacts 32-byte keys and signatures written without 0x, in any text", () => {
    const { lines, logger } = capture();
    logger.error(`could not load key ${bareKey}`, {
      detail: `signature ${bareSignature} rejected`,
      header: `sha256=${bareKey.toUpperCase()}`,
      error: new Error(`bad key: "${bareKey}"`),
    });
    const text = lines.join("\n");
    assert.ok(!text.includes(bareKey) && !text.includes(bareKey.toUpperCase()), text);
    assert.ok(!text.includes(bareSignature), text);
    const line = JSON.parse(lines[0]!);
    assert.equal(line.msg, `could not load key ${REDACTED}`);
    assert.equal(line.detail, `signature ${REDACTED} rejected`);
    assert.equal(line.header, `sha256=${REDACTED}`);
  });

  it("keeps transaction hashes and 32-byte ids with 0x, addresses, and shorter or embedded hex", () => {
    const { lines, logger } = capture();
    const shortHex = "ab".repeat(20);
    const embedded = `id${bareKey}x`;
    logger.info(`relayed ${txHash}`, { txHash, orderIdOnChain: txHash, payer: address, shortHex, embedded });
    const line = JSON.parse(lines[0]!);
    assert.equal(line.msg, `relayed ${txHash}`);
    assert.equal(line.txHash, txHash);
    assert.equal(line.orderIdOnChain, txHash);
    assert.equal(line.payer, address);
    assert.equal(line.shortHex, shortHex);
    assert.equal(line.embedded, embedded, "a hex run inside a longer word is not a key on its own");
  });
});

describe("log redaction of more secret field names", () => {
  it("redacts privateKeyHex, pwd, passphrase, credentials and names built on them", () => {
    const { lines, logger } = capture();
    logger.info("config", {
      privateKeyHex: "sk-private-1",
      pwd: "sk-private-2",
      passphrase: "sk-private-3",
      credentials: { user: "u", pass: "sk-private-4" },
      DB_PASSWORD: "sk-private-5",
      relayerPrivateKey: "sk-private-6",
      appSecret: "sk-private-7",
      mnemonicPhrase: "sk-private-8",
      "x-credential": "sk-private-9",
      signer_private_key_hex: "sk-private-10",
      orderId,
      deviceId: "kiosk-nbo-001",
      secretHint: "whsec_...k9Q=",
      keyId: "key_01JD2Y6Y8X3K5V4Q9T7R2M1N0P",
      passwordScryptN: 16384,
    });
    assert.doesNotMatch(lines[0]!, /sk-private/);
    const line = JSON.parse(lines[0]!);
    for (const name of [
      "privateKeyHex",
      "pwd",
      "passphrase",
      "credentials",
      "DB_PASSWORD",
      "relayerPrivateKey",
      "appSecret",
      "mnemonicPhrase",
      "x-credential",
      "signer_private_key_hex",
    ])
      assert.equal(line[name], REDACTED, name);
    assert.equal(line.orderId, orderId);
    assert.equal(line.deviceId, "kiosk-nbo-001");
    assert.equal(line.secretHint, "whsec_...k9Q=", "a hint is not the secret");
    assert.equal(line.keyId, "key_01JD2Y6Y8X3K5V4Q9T7R2M1N0P");
    assert.equal(line.passwordScryptN, 16384, "a setting named after passwords is not one");
  });
});

describe("log redaction on hostile input", () => {
  it("takes linear time on pathological paths and text", () => {
    const n = 400_000;
    const texts = [
      "a".repeat(n) + "g",
      "0".repeat(n) + "x",
      `x${"f".repeat(n)}`,
      "ab ".repeat(n / 3),
      "whsec_" + "%".repeat(n),
      "whsec_" + "%2B".repeat(n / 3) + " ",
      ` ${"e".repeat(n)} `,
    ];
    const paths = [
      "/" + "a".repeat(n),
      "/" + "%".repeat(n),
      "/" + "%41".repeat(n / 3),
      "/a".repeat(n / 2),
      "/" + "aB".repeat(n / 2),
      "/" + "0x".repeat(n / 2),
      "/ord_" + "0".repeat(n),
      "/" + "f".repeat(n) + "/" + "%E0%A4%A".repeat(n / 9),
    ];
    const { lines, logger } = capture();
    // Warmed up first (V8 runs a regular expression's first calls in its slower interpreter); the bound is
    // loose for a loaded machine: a quadratic rule would take minutes on this much text.
    for (const text of texts) logger.info(text.slice(0, 1_000));
    for (const path of paths) logger.info("request", { path: path.slice(0, 1_000) });
    const timed = (what: string, fn: () => void) => {
      const started = performance.now();
      fn();
      const ms = performance.now() - started;
      assert.ok(ms < 3_000, `${what.slice(0, 16)}... (${what.length}): ${ms.toFixed(1)} ms`);
    };
    for (const text of texts) timed(text, () => logger.info(text));
    for (const path of paths) timed(path, () => logger.info("request", { path }));
    // The long hex run and the long path segment were redacted, not skipped.
    assert.ok(lines.some((line) => line.includes(`"msg":" ${REDACTED} "`)));
    assert.ok(lines.every((line) => !line.includes("e".repeat(100)) && !line.includes(`"/${"a".repeat(100)}`)));
  });
});
