// relayer/src/logger.ts with log-redaction.ts: no secret reaches a log line, whatever a call site passes:
// secret fields by name at any depth, credentials by shape inside any text (the message, error messages and
// stacks, base fields of child loggers), while the identifiers operators need stay readable.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { createLogger } from "../../relayer/src/logger.ts";
import { REDACTED, redactText } from "../../relayer/src/log-redaction.ts";

function capture() {
  const lines: string[] = [];
  return { lines, logger: createLogger("debug", { service: "test" }, (line) => lines.push(line)) };
}

const apiKey = `payg_${"A1b2C3d4E5".repeat(3)}abcdefgh`;
const webhookSecret = "whsec_MfKQ9r8GKYqXY3Gs0F2tlzC2h5mE2nbPyvgbKc1ouvI=";
const jwt =
  "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiJ1c3JfMDEiLCJqdGkiOiJzZXNfMDEiLCJleHAiOjE4MDAwMDAwMDB9.3q2-7Zk9qB3mZbC8n5rGZrVwq8GQ0yVbFz3t2Yx1aBc";
const signature = `0x${"ab".repeat(65)}`;
const txHash = `0x${"cd".repeat(32)}`;
const address = "0x70997970C51812dc3A010C7d01b50e20d79C79C8";
const secrets = [apiKey, webhookSecret, jwt, signature, "hunter2-correct-horse", "sk-live-private"];

const leaks = (lines: string[]) => secrets.filter((secret) => lines.some((line) => line.includes(secret)));

describe("log redaction", () => {
  it("redacts secret fields by name at any depth, whatever they hold", () => {
    const { lines, logger } = capture();
    logger.info("request", {
      headers: { Authorization: `Bearer ${apiKey}`, cookie: "portal_session=hunter2-correct-horse", "x-request-id": "req_1" },
      body: { email: "a@b.example", password: "hunter2-correct-horse", nested: [{ client_secret: "sk-live-private" }] },
      privateKey: "sk-live-private",
      permit_signature: { v: 27, r: "0x01", s: "0x02" },
    });
    assert.deepEqual(leaks(lines), []);
    const line = JSON.parse(lines[0]!);
    assert.equal(line.headers.Authorization, REDACTED);
    assert.equal(line.headers.cookie, REDACTED);
    assert.equal(line.headers["x-request-id"], "req_1", "other headers stay");
    assert.equal(line.body.email, "a@b.example");
    assert.equal(line.body.password, REDACTED);
    assert.equal(line.body.nested[0].client_secret, REDACTED);
    assert.equal(line.permit_signature, REDACTED);
  });

  it("redacts credentials by shape inside any text: the message, fields, errors and a child's base", () => {
    const { lines, logger } = capture();
    logger.warn(`sign-in with ${apiKey} failed`, { detail: `token ${jwt} and secret ${webhookSecret}` });
    logger.error("relay failed", { error: new Error(`execution reverted: calldata 0x12345678${signature.slice(2)}00`) });
    logger.child({ note: `key ${apiKey}` }).info("child line", { tx: txHash, payer: address });
    assert.deepEqual(leaks(lines), []);
    const [first, second, third] = lines.map((l) => JSON.parse(l));
    assert.equal(first.msg, `sign-in with payg_${REDACTED} failed`);
    assert.match(first.detail, /^token jwt\[redacted\] and secret whsec_\[redacted\]$/);
    assert.match(second.error.message, /calldata 0x\[redacted\]$/);
    assert.doesNotMatch(second.error.stack, /abababab/);
    assert.equal(third.note, `key payg_${REDACTED}`);
    assert.equal(third.tx, txHash, "transaction hashes stay readable");
    assert.equal(third.payer, address, "addresses stay readable");
  });

  it("writes the same line on the fast path (fields appended to the base) as the general one", () => {
    const { lines, logger } = capture();
    logger.info("fast", { authorization: apiKey, path: "/v1/orders" });
    logger.info("general", { service: "override", authorization: apiKey, path: "/v1/orders" });
    const [fast, general] = lines.map((l) => JSON.parse(l));
    assert.deepEqual({ ...fast, msg: "", time: "" }, { ...general, msg: "", time: "", service: "test" });
    assert.equal(general.service, "override");
    assert.deepEqual(leaks(lines), []);
  });

  it("takes linear time on pathological text", () => {
    const texts = [
      "eyJ" + "a".repeat(500_000) + ".",
      "0x" + "f".repeat(500_000) + "g",
      "payg_" + "a".repeat(500_000),
      `${"eyJa.".repeat(100_000)}`,
    ];
    // Warmed up first (V8 runs a regular expression's first calls in its slower interpreter); the bound is loose
    // for a loaded machine: a quadratic pattern would take minutes on half a million characters.
    for (const text of texts) redactText(text.slice(0, 1_000));
    for (const text of texts) {
      const started = performance.now();
      redactText(text);
      const ms = performance.now() - started;
      assert.ok(ms < 2_000, `${text.slice(0, 12)}... (${text.length}): ${ms.toFixed(1)} ms`);
    }
  });
});
