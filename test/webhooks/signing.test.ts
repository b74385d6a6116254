// Webhook signatures (sdk/src/webhooks.ts), the encryption of signing secrets at rest, and the retry schedule,
// without the rest of the system.
import assert from "node:assert/strict";
import { createHmac } from "node:crypto";
import path from "node:path";
import { describe, it } from "node:test";
import { freePort, startService, waitUntil } from "../../lib/processes.ts";
import { createSecretBox } from "../../relayer/src/webhooks/secrets.ts";
import { MAX_ATTEMPTS, MAX_BACKOFF_MS, retryDelayMs } from "../../relayer/src/webhooks/schedule.ts";
import {
  SECRET_PREFIX,
  WebhookConfigError,
  WebhookVerificationError,
  createWebhookVerifier,
  generateSecret,
  signDelivery,
  verifyServiceSignature,
  verifyStandardSignature,
  verifyWebhook,
} from "../../sdk/src/webhooks.ts";

const body = JSON.stringify({ type: "payment.succeeded", data: { orderId: "ord_1", amountUsd: 0.5 }, id: "msg_01ABC" });

describe("webhook signatures", () => {
  const secret = generateSecret();

  it("makes whsec_ secrets of 32 random bytes", () => {
    assert.ok(secret.startsWith(SECRET_PREFIX));
    assert.equal(Buffer.from(secret.slice(SECRET_PREFIX.length), "base64").length, 32);
    assert.notEqual(generateSecret(), secret);
  });

  it("signs x-service-signature as HMAC-SHA256 of the raw body keyed with the whole secret string", () => {
    const headers = signDelivery({ secret, id: "msg_01ABC", type: "payment.succeeded", body });
    const expected = createHmac("sha256", secret).update(body).digest("hex");
    assert.equal(headers["x-service-signature"], `sha256=${expected}`);
    assert.equal(headers["x-service-event"], "payment.succeeded");
    assert.equal(headers["content-type"], "application/json");
  });

  it("signs webhook-signature as in Standard Webhooks: HMAC of id.timestamp.body keyed with the decoded secret", () => {
    const headers = signDelivery({ secret, id: "msg_01ABC", type: "payment.succeeded", body, timestamp: 1_700_000_000 });
    const key = Buffer.from(secret.slice(SECRET_PREFIX.length), "base64");
    const expected = createHmac("sha256", key).update(`msg_01ABC.1700000000.${body}`).digest("base64");
    assert.equal(headers["webhook-signature"], `v1,${expected}`);
    assert.equal(headers["webhook-id"], "msg_01ABC");
    assert.equal(headers["webhook-timestamp"], "1700000000");
  });

  it("verifies a delivery and returns its envelope", () => {
    const headers = signDelivery({ secret, id: "msg_01ABC", type: "payment.succeeded", body });
    const envelope = verifyWebhook({ secret, body, headers });
    assert.equal(envelope.type, "payment.succeeded");
    assert.equal(envelope.id, "msg_01ABC");
    assert.deepEqual(verifyWebhook({ secret, body: Buffer.from(body), headers: new Headers(headers), scheme: "service" }), envelope);
  });

  it("rejects a changed body, another secret, a stale timestamp, a missing header and a foreign id", () => {
    const now = Math.floor(Date.now() / 1000);
    const headers = signDelivery({ secret, id: "msg_01ABC", type: "payment.succeeded", body, timestamp: now });
    const reason = (fn: () => unknown) => {
      try {
        fn();
      } catch (error) {
        assert.ok(error instanceof WebhookVerificationError);
        return error.reason;
      }
      return "accepted";
    };
    assert.equal(
      reason(() => verifyWebhook({ secret, body: body.replace("0.5", "5"), headers })),
      "bad_signature",
    );
    assert.equal(
      reason(() => verifyWebhook({ secret: generateSecret(), body, headers })),
      "bad_signature",
    );
    assert.equal(
      reason(() => verifyWebhook({ secret, body, headers, now: now + 301 })),
      "stale_timestamp",
    );
    assert.equal(
      reason(() => verifyWebhook({ secret, body, headers, now: now - 301 })),
      "stale_timestamp",
    );
    assert.equal(
      reason(() => verifyWebhook({ secret, body, headers, now: now + 299 })),
      "accepted",
    );
    assert.equal(
      reason(() => verifyWebhook({ secret, body, headers: { ...headers, "webhook-signature": undefined } })),
      "missing_header",
    );
    const replayed = signDelivery({ secret, id: "msg_OTHER", type: "payment.succeeded", body, timestamp: now });
    assert.equal(
      reason(() => verifyWebhook({ secret, body, headers: replayed })),
      "bad_body",
    );
    assert.equal(
      reason(() => verifyWebhook({ secret, body: body.replace("0.5", "5"), headers, scheme: "service" })),
      "bad_signature",
    );
  });

  it("accepts any of several space-separated webhook signatures (secret rotation) and only v1 ones", () => {
    const headers = signDelivery({ secret, id: "msg_1", type: "t", body, timestamp: 1 });
    const other = signDelivery({ secret: generateSecret(), id: "msg_1", type: "t", body, timestamp: 1 });
    const both = `${other["webhook-signature"]} ${headers["webhook-signature"]}`;
    assert.ok(verifyStandardSignature(secret, body, { id: "msg_1", timestamp: "1", signature: both }));
    assert.ok(!verifyStandardSignature(secret, body, { id: "msg_1", timestamp: "1", signature: other["webhook-signature"] }));
    assert.ok(
      !verifyStandardSignature(secret, body, {
        id: "msg_1",
        timestamp: "1",
        signature: headers["webhook-signature"].replace("v1,", "v2,"),
      }),
    );
    assert.ok(!verifyServiceSignature(secret, body, undefined));
  });
});

describe("signing secrets and verifier settings", () => {
  const key = (n: number) => `${SECRET_PREFIX}${Buffer.alloc(n, 7).toString("base64")}`;
  const unusable: Array<[string, unknown]> = [
    ["empty", ""],
    ["missing", undefined],
    ["whsec_ alone", SECRET_PREFIX],
    ["16 key bytes", key(16)],
    ["31 key bytes", key(31)],
    ["no whsec_ prefix", Buffer.alloc(32, 7).toString("base64")],
    ["a trailing line break", `${generateSecret()}\n`],
    ["not base64", `${SECRET_PREFIX}${"!".repeat(44)}`],
    ["truncated mid-character", generateSecret().slice(0, -2)],
  ];

  it("refuses an empty, short or mangled secret with WebhookConfigError, never a signature result", () => {
    const good = generateSecret();
    const headers = signDelivery({ secret: good, id: "msg_01ABC", type: "payment.succeeded", body });
    const standard = { id: "msg_01ABC", timestamp: headers["webhook-timestamp"], signature: headers["webhook-signature"] };
    for (const [what, secret] of unusable) {
      const bad = secret as string;
      assert.throws(() => createWebhookVerifier({ secret: bad }), WebhookConfigError, what);
      assert.throws(() => verifyWebhook({ secret: bad, body, headers }), WebhookConfigError, what);
      assert.throws(() => verifyWebhook({ secret: bad, body, headers, scheme: "service" }), WebhookConfigError, what);
      assert.throws(() => verifyStandardSignature(bad, body, standard), WebhookConfigError, what);
      assert.throws(() => verifyServiceSignature(bad, body, headers["x-service-signature"]), WebhookConfigError, what);
      assert.throws(() => signDelivery({ secret: bad, id: "msg_01ABC", type: "t", body }), WebhookConfigError, what);
    }
    assert.throws(() => createWebhookVerifier({ secret: SECRET_PREFIX }), /whsec_ with no key after it/);
    assert.throws(() => createWebhookVerifier({ secret: key(16) }), /16 key bytes; at least 32/);
    assert.throws(() => createWebhookVerifier({ secret: `${good} ` }), /not base64 .*whitespace/);
    assert.equal(
      createWebhookVerifier({ secret: key(32) })(body, signDelivery({ secret: key(32), id: "msg_01ABC", type: "t", body })).id,
      "msg_01ABC",
    );
  });

  it("does not accept a delivery forged with an empty key for the secret whsec_", () => {
    // What an HMAC keyed with nothing gives: anybody can compute it.
    const timestamp = Math.floor(Date.now() / 1000);
    const forged = {
      "webhook-id": "msg_01ABC",
      "webhook-timestamp": String(timestamp),
      "webhook-signature": `v1,${createHmac("sha256", Buffer.alloc(0)).update(`msg_01ABC.${timestamp}.${body}`).digest("base64")}`,
      "x-service-signature": `sha256=${createHmac("sha256", "").update(body).digest("hex")}`,
    };
    assert.throws(() => verifyWebhook({ secret: SECRET_PREFIX, body, headers: forged }), WebhookConfigError);
    assert.throws(() => verifyWebhook({ secret: "", body, headers: forged, scheme: "service" }), WebhookConfigError);
  });

  it("refuses a tolerance that would switch the timestamp check off", () => {
    const secret = generateSecret();
    for (const toleranceSeconds of [Number.NaN, -1, Number.POSITIVE_INFINITY, "300" as unknown as number]) {
      assert.throws(() => createWebhookVerifier({ secret, toleranceSeconds }), WebhookConfigError, String(toleranceSeconds));
      assert.throws(() => verifyWebhook({ secret, body, headers: {}, toleranceSeconds }), WebhookConfigError, String(toleranceSeconds));
    }
    assert.throws(() => createWebhookVerifier({ secret, scheme: "Standard" as "standard" }), /unknown signature scheme/);
    const headers = signDelivery({ secret, id: "msg_01ABC", type: "t", body, timestamp: 1_000 });
    assert.throws(() => verifyWebhook({ secret, body, headers, now: Number.NaN }), WebhookConfigError);
    assert.equal(verifyWebhook({ secret, body, headers, now: 1_000, toleranceSeconds: 0 }).id, "msg_01ABC");
  });
});

describe("the verifier against the Standard Webhooks specification", () => {
  const secret = generateSecret();
  const reason = (fn: () => unknown) => {
    try {
      fn();
    } catch (error) {
      assert.ok(error instanceof WebhookVerificationError, String(error));
      return error.reason;
    }
    return "accepted";
  };

  it("applies the tolerance both ways: early and late timestamps alike", () => {
    const verify = createWebhookVerifier({ secret, toleranceSeconds: 60 });
    const headers = signDelivery({ secret, id: "msg_01ABC", type: "t", body, timestamp: 10_000 });
    assert.equal(
      reason(() => verify(body, headers, 10_060)),
      "accepted",
    );
    assert.equal(
      reason(() => verify(body, headers, 9_940)),
      "accepted",
    );
    assert.equal(
      reason(() => verify(body, headers, 10_061)),
      "stale_timestamp",
    );
    assert.equal(
      reason(() => verify(body, headers, 9_939)),
      "stale_timestamp",
      "a timestamp from the future",
    );
  });

  it("finds the valid signature among several, whatever comes before it", () => {
    const headers = signDelivery({ secret, id: "msg_01ABC", type: "t", body });
    const other = signDelivery({ secret: generateSecret(), id: "msg_01ABC", type: "t", body })["webhook-signature"];
    for (const list of [
      `${other} ${headers["webhook-signature"]}`,
      `v2,abc ${headers["webhook-signature"]} ${other}`,
      `${other}  ${headers["webhook-signature"]}`,
    ]) {
      assert.equal(
        reason(() => verifyWebhook({ secret, body, headers: { ...headers, "webhook-signature": list } })),
        "accepted",
        list,
      );
    }
    assert.equal(
      reason(() => verifyWebhook({ secret, body, headers: { ...headers, "webhook-signature": `${other} v1,` } })),
      "bad_signature",
    );
    assert.equal(
      reason(() => verifyWebhook({ secret, body, headers: { ...headers, "webhook-timestamp": "12e3" } })),
      "bad_signature",
    );
  });

  it("verifies the raw bytes in any form (string, Buffer, a Uint8Array view, ArrayBuffer), and refuses parsed JSON", () => {
    const headers = signDelivery({ secret, id: "msg_01ABC", type: "t", body });
    const raw = Buffer.from(body);
    const padded = new Uint8Array(raw.length + 8);
    padded.set(raw, 4);
    for (const form of [body, raw, padded.subarray(4, 4 + raw.length), raw.buffer.slice(raw.byteOffset, raw.byteOffset + raw.length)]) {
      assert.equal(
        reason(() => verifyWebhook({ secret, body: form, headers })),
        "accepted",
      );
    }
    assert.throws(() => verifyWebhook({ secret, body: JSON.parse(body), headers }), /raw request body .*not parsed JSON/);
    // One byte changed in the raw body (a re-serialisation would change spacing or key order): refused.
    assert.equal(
      reason(() => verifyWebhook({ secret, body: JSON.stringify(JSON.parse(body), null, 1), headers })),
      "bad_signature",
    );
  });

  it("refuses an envelope whose data is not an object", () => {
    const nullData = JSON.stringify({ type: "t", data: null, id: "msg_01ABC" });
    const headers = signDelivery({ secret, id: "msg_01ABC", type: "t", body: nullData });
    assert.equal(
      reason(() => verifyWebhook({ secret, body: nullData, headers })),
      "bad_body",
    );
  });
});

describe("signing secrets at rest", () => {
  const box = createSecretBox("k".repeat(40));

  it("encrypts with AES-256-GCM, a fresh IV each time, and decrypts", () => {
    const secret = generateSecret();
    const a = box.seal(secret, "whs_1");
    const b = box.seal(secret, "whs_1");
    assert.match(a, /^v1\.[A-Za-z0-9_-]{16}\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]{22}$/);
    assert.notEqual(a, b);
    assert.ok(!a.includes(secret.slice(6, 20)));
    assert.equal(box.open(a, "whs_1"), secret);
  });

  it("refuses a ciphertext moved to another subscription, altered, or read with another key", () => {
    const sealed = box.seal(generateSecret(), "whs_1");
    assert.throws(() => box.open(sealed, "whs_2"), /cannot be decrypted/);
    const parts = sealed.split(".");
    parts[2] = `${parts[2].startsWith("A") ? "B" : "A"}${parts[2].slice(1)}`;
    assert.throws(() => box.open(parts.join("."), "whs_1"), /cannot be decrypted/);
    assert.throws(() => createSecretBox("j".repeat(40)).open(sealed, "whs_1"), /cannot be decrypted/);
  });
});

describe("retry schedule", () => {
  it("backs off exponentially (x5) from the base, with +-20% jitter, capped", () => {
    const base = 60_000;
    assert.deepEqual(
      [1, 2, 3, 4].map((n) => retryDelayMs(n, base, () => 0.5)),
      [60_000, 300_000, 1_500_000, 7_500_000],
    );
    assert.equal(
      retryDelayMs(1, base, () => 0),
      48_000,
    );
    assert.equal(
      retryDelayMs(1, base, () => 1),
      72_000,
    );
    assert.equal(
      retryDelayMs(12, base, () => 0.5),
      MAX_BACKOFF_MS,
    );
    assert.equal(MAX_ATTEMPTS, 5);
  });
});

describe("the example receiver (sdk/examples/webhook-receiver.ts)", () => {
  it("acknowledges a signed delivery with 204 and refuses a forged one with 400", async () => {
    const secret = generateSecret();
    const port = await freePort();
    const receiver = startService(
      "example-receiver",
      process.execPath,
      [path.join(import.meta.dirname, "../../sdk/examples/webhook-receiver.ts")],
      {
        env: { WEBHOOK_SECRET: secret, PORT: String(port) },
      },
    );
    try {
      await waitUntil("the example receiver", async () => receiver.recentOutput().includes("listening"), {
        service: receiver,
        timeoutMs: 10_000,
      });
      const post = (headers: Record<string, string>, payload = body) =>
        fetch(`http://127.0.0.1:${port}/`, { method: "POST", headers, body: payload });
      const headers = signDelivery({ secret, id: "msg_01ABC", type: "payment.succeeded", body });
      assert.equal((await post(headers)).status, 204);
      assert.equal((await post(headers)).status, 204, "a retry is acknowledged too");
      const forged = await post(headers, body.replace("0.5", "50"));
      assert.equal(forged.status, 400);
      assert.equal(await forged.text(), "bad_signature");
      const stale = signDelivery({
        secret,
        id: "msg_01ABC",
        type: "payment.succeeded",
        body,
        timestamp: Math.floor(Date.now() / 1000) - 600,
      });
      assert.equal(await (await post(stale)).text(), "stale_timestamp");
      assert.match(receiver.recentOutput(), /msg_01ABC|order ord_1/);
    } finally {
      await receiver.stop();
    }
  });

  it("refuses to start without a usable secret, naming WEBHOOK_SECRET", async () => {
    for (const secret of ["", "whsec_", `whsec_${Buffer.alloc(16).toString("base64")}`]) {
      const receiver = startService(
        "example-receiver",
        process.execPath,
        [path.join(import.meta.dirname, "../../sdk/examples/webhook-receiver.ts")],
        {
          env: { WEBHOOK_SECRET: secret, PORT: String(await freePort()) },
        },
      );
      const code = await receiver.exited;
      assert.equal(code, 1, `${JSON.stringify(secret)}: ${receiver.recentOutput()}`);
      assert.match(receiver.recentOutput(), /WEBHOOK_SECRET: the webhook signing secret/);
      assert.doesNotMatch(receiver.recentOutput(), /listening/);
    }
  });
});
