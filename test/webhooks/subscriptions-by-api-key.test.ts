// Webhook subscriptions managed with a developer API key, end to end on each selected database: create (the
// secret once), list, read, update, send a test (delivered and signed; its sentBy names the key), rotate the
// secret (for the grace period webhook-signature carries a signature with each secret, x-service-signature the
// old one), and delete: the subscription leaves the list, every route naming it answers 404, no delivery is
// made to it any more, and it no longer counts towards the cap. An agent key is refused (403), another
// tenant's developer key finds nothing (404), and the portal's JWT keeps managing the same subscriptions.
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { verifyWebhook } from "../../sdk/src/webhooks.ts";
import { selectedDatabaseKinds } from "../support/databases.ts";
import { type Stack, startStack } from "../support/stack.ts";
import { type WebhookReceiver, startWebhookReceiver } from "../support/webhook-receiver.ts";
import { login, sendTest, sleep } from "./support.ts";

for (const kind of selectedDatabaseKinds()) {
  describe(`webhook subscriptions managed by API key (${kind})`, { concurrency: false }, () => {
    let stack: Stack;
    let receiver: WebhookReceiver;
    let key: string;
    let otherKey: string;
    let sub: { id: string; secret: string };

    before(
      async () => {
        receiver = await startWebhookReceiver();
        stack = await startStack({
          label: `subscriptions-by-key-${kind}`,
          database: kind,
          indexer: false,
          relayerEnv: { WEBHOOK_SECRET_GRACE_SECONDS: "600", WEBHOOK_RETRY_BASE_MS: "20" },
          tenants: [{ tenant: { id: "tn_hooks_other", name: "Other" }, apiKeys: [{ name: "other", role: "developer" }] }],
        });
        key = stack.sample.developerKey;
        otherKey = stack.tenants[0].createdKeys.find((k: { role: string }) => k.role === "developer")!.key;
      },
      { timeout: 240_000 },
    );
    after(async () => {
      await stack?.stop();
      await receiver?.close();
    });

    const api = (method: string, path: string, opts: { body?: unknown; token?: string } = {}) =>
      stack.api(method, path, { token: key, ...opts });

    it("creates, lists, reads and updates a subscription with a developer key", async () => {
      const created = await api("POST", "/v1/webhooks/subscriptions", {
        body: { url: receiver.url("/by-key"), eventTypes: ["test.ping"], description: "made with a key" },
      });
      assert.equal(created.status, 201, created.text);
      assert.match(created.body.secret, /^whsec_/);
      sub = { id: created.body.id, secret: created.body.secret };
      receiver.setSecret("/by-key", sub.secret);
      const list = await api("GET", "/v1/webhooks/subscriptions");
      assert.equal(list.status, 200, list.text);
      const listed = list.body.data.find((s: { id: string }) => s.id === sub.id);
      assert.ok(listed);
      assert.equal(listed.secret, undefined, "never the secret again");
      const updated = await api("PATCH", `/v1/webhooks/subscriptions/${sub.id}`, {
        body: { description: "renamed", eventTypes: ["test.*"] },
      });
      assert.equal(updated.status, 200, updated.text);
      assert.equal(updated.body.description, "renamed");
      const read = await api("GET", `/v1/webhooks/subscriptions/${sub.id}`);
      assert.deepEqual(read.body.eventTypes, ["test.*"]);
      // The portal's JWT sees and manages the same subscription.
      const jwt = await login(stack);
      const viaPortal = await stack.api("GET", `/v1/webhooks/subscriptions/${sub.id}`, { token: jwt });
      assert.equal(viaPortal.status, 200, viaPortal.text);
      assert.equal(viaPortal.body.description, "renamed");
    });

    it("sends a test that arrives signed and names the key that asked for it", async () => {
      const eventId = await sendTest(stack, key, sub.id);
      const delivery = await receiver.waitFor((d) => d.path === "/by-key" && d.envelope?.type === "test.ping", 60_000);
      assert.ok(delivery.standardOk && delivery.serviceOk, delivery.verifyError);
      assert.match(String(delivery.envelope!.data.sentBy), /^key_/);
      assert.match(String(delivery.envelope!.data.message), /API key/);
      const log = await api("GET", `/v1/webhooks/subscriptions/${sub.id}/deliveries`);
      assert.equal(log.status, 200, log.text);
      assert.ok(log.body.data.some((d: { eventId: string }) => d.eventId === eventId));
    });

    it("rotates the secret: during the grace period webhook-signature carries both, x-service-signature the old one", async () => {
      const rotated = await api("POST", `/v1/webhooks/subscriptions/${sub.id}/rotate-secret`);
      assert.equal(rotated.status, 200, rotated.text);
      const fresh = rotated.body.secret as string;
      assert.notEqual(fresh, sub.secret);
      assert.ok(rotated.body.previousSecretExpiresAt);
      const n = receiver.deliveries("/by-key").length + 1;
      await sendTest(stack, key, sub.id);
      const delivery = await receiver.waitFor((d) => d.path === "/by-key" && d.n === n, 60_000);
      const signatures = String(delivery.headers["webhook-signature"]).split(" ");
      assert.equal(signatures.length, 2, String(delivery.headers["webhook-signature"]));
      const verifies = (secret: string, scheme: "standard" | "service" = "standard") => {
        try {
          verifyWebhook({ body: delivery.body, headers: delivery.headers, secret, scheme });
          return true;
        } catch {
          return false;
        }
      };
      assert.ok(verifies(fresh), "webhook-signature verifies with the new secret");
      assert.ok(verifies(sub.secret), "webhook-signature verifies with the old secret");
      // x-service-signature holds one signature (the spec's): the old secret's until the grace period ends.
      assert.ok(verifies(sub.secret, "service"), "x-service-signature verifies with the old secret");
      assert.ok(!verifies(fresh, "service"), "x-service-signature is not the new secret's yet");
      sub.secret = fresh;
    });

    it("refuses an agent key (403) and finds nothing for another tenant's developer key (404)", async () => {
      assert.equal((await api("GET", "/v1/webhooks/subscriptions", { token: stack.sample.agentKey })).status, 403);
      assert.equal(
        (
          await api("POST", "/v1/webhooks/subscriptions", {
            token: stack.sample.agentKey,
            body: { url: receiver.url("/x"), eventTypes: ["*"] },
          })
        ).status,
        403,
      );
      for (const [method, path] of [
        ["GET", `/v1/webhooks/subscriptions/${sub.id}`],
        ["DELETE", `/v1/webhooks/subscriptions/${sub.id}`],
        ["POST", `/v1/webhooks/subscriptions/${sub.id}/test`],
        ["POST", `/v1/webhooks/subscriptions/${sub.id}/rotate-secret`],
        ["GET", `/v1/webhooks/subscriptions/${sub.id}/deliveries`],
      ]) {
        assert.equal((await api(method, path, { token: otherKey })).status, 404, `${method} ${path}`);
      }
      const theirs = await api("GET", "/v1/webhooks/subscriptions", { token: otherKey });
      assert.ok(!theirs.body.data.some((s: { id: string }) => s.id === sub.id));
    });

    it("deletes: gone from the list, 404 everywhere, no more deliveries, out of the cap", async () => {
      const deleted = await api("DELETE", `/v1/webhooks/subscriptions/${sub.id}`);
      assert.equal(deleted.status, 204, deleted.text);
      const list = await api("GET", "/v1/webhooks/subscriptions");
      assert.ok(!list.body.data.some((s: { id: string }) => s.id === sub.id));
      for (const [method, path, body] of [
        ["GET", `/v1/webhooks/subscriptions/${sub.id}`],
        ["PATCH", `/v1/webhooks/subscriptions/${sub.id}`, { status: "active" }],
        ["DELETE", `/v1/webhooks/subscriptions/${sub.id}`],
        ["POST", `/v1/webhooks/subscriptions/${sub.id}/test`],
        ["POST", `/v1/webhooks/subscriptions/${sub.id}/rotate-secret`],
        ["GET", `/v1/webhooks/subscriptions/${sub.id}/deliveries`],
      ] as Array<[string, string, unknown?]>) {
        const response = await api(method, path, { body });
        assert.equal(response.status, 404, `${method} ${path}: ${response.text}`);
      }
      // A ping of another subscription of the tenant is delivered; the deleted one gets nothing more.
      const before = receiver.deliveries("/by-key").length;
      const other = await api("POST", "/v1/webhooks/subscriptions", { body: { url: receiver.url("/other"), eventTypes: ["*"] } });
      assert.equal(other.status, 201, other.text);
      receiver.setSecret("/other", other.body.secret);
      await sendTest(stack, key, other.body.id);
      await receiver.waitFor((d) => d.path === "/other", 60_000);
      await sleep(500);
      assert.equal(receiver.deliveries("/by-key").length, before);
      // Deleted subscriptions do not count towards the cap of 25 active ones: 24 more fit beside /other.
      const made = [];
      for (let i = 0; i < 24; i++) {
        const response = await api("POST", "/v1/webhooks/subscriptions", { body: { url: receiver.url(`/cap-${i}`), eventTypes: ["*"] } });
        assert.equal(response.status, 201, response.text);
        made.push(response.body.id as string);
      }
      const full = await api("POST", "/v1/webhooks/subscriptions", { body: { url: receiver.url("/cap-x"), eventTypes: ["*"] } });
      assert.equal(full.status, 409, full.text);
      for (const id of made) assert.equal((await api("DELETE", `/v1/webhooks/subscriptions/${id}`)).status, 204);
      const room = await api("POST", "/v1/webhooks/subscriptions", { body: { url: receiver.url("/cap-y"), eventTypes: ["*"] } });
      assert.equal(room.status, 201, room.text);
    });
  });
}
