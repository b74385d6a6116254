// Rotating a webhook signing secret, end to end: POST /v1/webhooks/subscriptions/{id}/rotate-secret shows
// a new secret once, and for the grace period (WEBHOOK_SECRET_GRACE_SECONDS, made short here) a real
// receiver gets deliveries that verify with the old secret and with the new one (two space-separated
// webhook-signature values; x-service-signature, one value by the spec, still with the old secret), then,
// once the grace period is over, with the new secret only. A rotation during a grace period retires the
// oldest secret at once. Neither secret is ever logged. On one database (oneDatabaseKind).
import assert from "node:assert/strict";
import { readFile } from "node:fs/promises";
import { after, before, describe, it } from "node:test";
import { verifyWebhook } from "../../sdk/src/webhooks.ts";
import { oneDatabaseKind } from "../support/databases.ts";
import { type Stack, startStack } from "../support/stack.ts";
import type { UncheckedJson } from "../support/unchecked-json.ts";
import { type Delivery, type WebhookReceiver, startWebhookReceiver } from "../support/webhook-receiver.ts";
import { login, sendTest, sleep, subscribe } from "./support.ts";

/** Long enough for a test delivery to be made well inside it on a loaded machine. */
const GRACE_SECONDS = 30;
const PATH = "/rotating";

for (const database of [oneDatabaseKind()]) {
  describe(`webhook signing secret rotation (${database})`, { concurrency: false }, () => {
    let stack: Stack;
    let receiver: WebhookReceiver;
    let token: string;
    let sub: { id: string; secret: string };
    const secrets: string[] = [];

    before(
      async () => {
        receiver = await startWebhookReceiver();
        stack = await startStack({
          label: `secret-rotation-${database}`,
          database,
          indexer: false,
          relayerEnv: { WEBHOOK_SECRET_GRACE_SECONDS: String(GRACE_SECONDS), WEBHOOK_RETRY_BASE_MS: "20", WEBHOOK_TIMEOUT_MS: "1500" },
        });
        token = await login(stack);
        sub = await subscribe(stack, token, receiver, PATH, ["test.ping"]);
        secrets.push(sub.secret);
      },
      { timeout: 240_000 },
    );
    after(async () => {
      await stack?.stop();
      await receiver?.close();
    });

    /** Sends a test and returns its delivery, as the receiver got it. */
    async function ping(): Promise<Delivery> {
      const n = receiver.deliveries(PATH).length + 1;
      await sendTest(stack, token, sub.id);
      return receiver.waitFor((d) => d.path === PATH && d.n === n, 60_000, `delivery ${n} of ${PATH}`);
    }

    /** Which of `candidates` verify the delivery: by webhook-signature (Standard Webhooks, with its timestamp)
     * and by x-service-signature. */
    function verifiedBy(d: Delivery, candidates: string[]) {
      const check = (secret: string, scheme: "standard" | "service") => {
        try {
          verifyWebhook({ secret, body: d.body, headers: d.headers, scheme });
          return true;
        } catch (error) {
          assert.equal((error as Error).name, "WebhookVerificationError", (error as Error).message);
          return false;
        }
      };
      return {
        standard: candidates.map((s) => check(s, "standard")),
        service: candidates.map((s) => check(s, "service")),
        signatures: String(d.headers["webhook-signature"]).split(" ").length,
      };
    }

    async function rotate(): Promise<UncheckedJson> {
      const response = await stack.api("POST", `/v1/webhooks/subscriptions/${sub.id}/rotate-secret`, { token });
      assert.equal(response.status, 200, response.text);
      assert.match(response.body.secret, /^whsec_[A-Za-z0-9+/]{43}=$/);
      assert.ok(!secrets.includes(response.body.secret), "a new secret");
      secrets.push(response.body.secret);
      return response.body;
    }

    it("signs with the one secret before any rotation", async () => {
      const d = await ping();
      assert.deepEqual(verifiedBy(d, secrets), { standard: [true], service: [true], signatures: 1 });
    });

    it("refuses a rotation without the portal sign-in, of an unknown subscription or another tenant's", async () => {
      assert.equal((await stack.api("POST", `/v1/webhooks/subscriptions/${sub.id}/rotate-secret`)).status, 401);
      const unknown = await stack.api("POST", "/v1/webhooks/subscriptions/whs_01JD2Y6Y8X3K5V4Q9T7R2M1N0P/rotate-secret", { token });
      assert.equal(unknown.status, 404, unknown.text);
      await stack.seed({
        tenant: { id: "tn_rotation_other", name: "Other tenant" },
        user: { email: "other@rotation.example", password: "other-password-123", name: "Other" },
      });
      const other = await login(stack, "other@rotation.example", "other-password-123");
      const foreign = await stack.api("POST", `/v1/webhooks/subscriptions/${sub.id}/rotate-secret`, { token: other });
      assert.equal(foreign.status, 404, foreign.text);
      // The seed restarted the relayer on PGlite: sign in again.
      token = await login(stack);
      assert.equal(secrets.length, 1, "no rotation happened");
    });

    it("signs with both secrets during the grace period, x-service-signature with the old one", async () => {
      const [old] = secrets;
      const before = Date.now();
      const rotated = await rotate();
      const expiresAt = Date.parse(rotated.previousSecretExpiresAt);
      assert.ok(expiresAt >= before + GRACE_SECONDS * 1000 - 1000 && expiresAt <= Date.now() + GRACE_SECONDS * 1000 + 1000);
      assert.equal(rotated.secretHint, `whsec_...${rotated.secret.slice(-4)}`);
      assert.equal(rotated.previousSecretHint, `whsec_...${old.slice(-4)}`);
      // Shown once: the subscription as read later has hints only.
      const read = await stack.api("GET", `/v1/webhooks/subscriptions/${sub.id}`, { token });
      assert.equal(read.status, 200);
      assert.equal(read.body.secret, undefined);
      assert.ok(!read.text.includes(rotated.secret) && !read.text.includes(old));
      assert.equal(read.body.previousSecretExpiresAt, rotated.previousSecretExpiresAt);

      const d = await ping();
      assert.ok(Number(d.headers["webhook-timestamp"]) * 1000 < expiresAt, "signed inside the grace period");
      assert.deepEqual(verifiedBy(d, [old, rotated.secret]), { standard: [true, true], service: [true, false], signatures: 2 });
    });

    it("retires the oldest secret at once when rotated again during the grace period", async () => {
      const [first, second] = secrets;
      const rotated = await rotate();
      const read = await stack.api("GET", `/v1/webhooks/subscriptions/${sub.id}`, { token });
      assert.equal(read.body.previousSecretHint, `whsec_...${second.slice(-4)}`);
      const d = await ping();
      assert.ok(Number(d.headers["webhook-timestamp"]) * 1000 < Date.parse(rotated.previousSecretExpiresAt));
      assert.deepEqual(verifiedBy(d, [first, second, rotated.secret]), {
        standard: [false, true, true],
        service: [false, true, false],
        signatures: 2,
      });
    });

    it("signs with the new secret only once the grace period is over", { timeout: 120_000 }, async () => {
      const current = secrets[secrets.length - 1];
      const read = await stack.api("GET", `/v1/webhooks/subscriptions/${sub.id}`, { token });
      const expiresAt = Date.parse(read.body.previousSecretExpiresAt);
      while (Date.now() < expiresAt + 1_000) await sleep(250);
      const after = await stack.api("GET", `/v1/webhooks/subscriptions/${sub.id}`, { token });
      assert.equal(after.body.previousSecretHint, null);
      assert.equal(after.body.previousSecretExpiresAt, null);
      const d = await ping();
      assert.deepEqual(verifiedBy(d, secrets), { standard: [false, false, true], service: [false, false, true], signatures: 1 });
      assert.equal(current, secrets[2]);
    });

    it("never logs a secret", async () => {
      const log = await readFile(stack.relayerOptions.logFile!, "utf8");
      assert.match(log, /webhook signing secret rotated/);
      for (const secret of secrets) {
        assert.ok(!log.includes(secret), "a secret in the relayer's log");
        assert.ok(!log.includes(secret.slice(6, 30)), "part of a secret in the relayer's log");
      }
    });
  });
}
