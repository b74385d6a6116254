// Webhook callbacks never reach the stack's own services, end to end: with loopback allowlisted (localhost
// and [::1] on every port, 127.0.0.1 on the receiver's port only), a subscription pointing at the relayer
// itself, the chain's JSON-RPC, the indexer, the device cloud or the relayer's PostgreSQL is refused with 422
// (a portal user could otherwise make the relayer POST there and read the answer's excerpt in the delivery
// log); an allowlisted host:port gets its deliveries and another port of that host is refused; and every
// attempt is checked again, so a subscription the allowlist no longer covers gets nothing. On one database
// (oneDatabaseKind, PostgreSQL when selected: the one of the two with an endpoint of its own to refuse).
import assert from "node:assert/strict";
import { once } from "node:events";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { after, before, describe, it } from "node:test";
import { oneDatabaseKind } from "../support/databases.ts";
import { type Stack, startStack } from "../support/stack.ts";
import { type WebhookReceiver, startWebhookReceiver } from "../support/webhook-receiver.ts";
import { login, sendTest, subscribe, waitForDelivery } from "./support.ts";

for (const database of [oneDatabaseKind()]) {
  describe(`webhook callbacks and the stack's own endpoints (${database})`, { concurrency: false }, () => {
    let stack: Stack;
    let receiver: WebhookReceiver;
    let other: http.Server;
    let otherHits = 0;
    let token: string;

    before(
      async () => {
        receiver = await startWebhookReceiver();
        other = http.createServer((req, res) => {
          otherHits++;
          req.resume();
          res.writeHead(200).end("a service that must not be reached");
        });
        other.listen(0, "127.0.0.1");
        await once(other, "listening");
        stack = await startStack({
          label: `own-endpoints-${database}`,
          database,
          // No indexer process (its start is most of a stack's): no payment is made here, and the relayer refuses
          // the endpoint its INDEXER_URL names whether or not anything listens there.
          indexer: false,
          relayerEnv: {
            WEBHOOK_ALLOWED_PRIVATE_HOSTS: `localhost,[::1],127.0.0.1:${receiver.port}`,
            WEBHOOK_RETRY_BASE_MS: "20",
            WEBHOOK_TIMEOUT_MS: "1500",
          },
        });
        token = await login(stack);
      },
      { timeout: 240_000 },
    );
    after(async () => {
      await stack?.stop();
      await receiver?.close();
      if (other) await new Promise<void>((resolve) => other.close(() => resolve()));
    });

    const register = (url: string) =>
      stack.api("POST", "/v1/webhooks/subscriptions", {
        token,
        body: { url, eventTypes: ["ticket.created"], description: "own endpoint" },
      });

    it("refuses with 422 the relayer's own port, the chain's RPC, the indexer and the device cloud (and the database), although loopback is allowlisted", async () => {
      const targets: Array<[string, string]> = [
        ["the relayer", stack.relayerUrl],
        ["the chain's JSON-RPC", stack.chain.rpcUrl],
        ["the indexer", stack.indexerUrl],
        ["the device cloud", stack.deviceCloudUrl],
      ];
      const db = stack.relayerOptions.database;
      if (db.kind === "postgres") targets.push(["the database", db.url]);
      for (const [what, target] of targets) {
        const port = new URL(target).port || "5432";
        for (const url of [`http://localhost:${port}/`, `http://[::1]:${port}/v1/health`, `https://localhost:${port}/x`]) {
          const response = await register(url);
          assert.equal(response.status, 422, `${what} at ${url}: ${response.text}`);
          assert.equal(response.body.error.details[0].path, "url");
          assert.match(
            response.body.error.message,
            /is an endpoint of the payment service itself; webhooks are never delivered to it/,
            `${what}: ${url}`,
          );
        }
      }
      // Changing an existing subscription's URL is checked the same way.
      const ok = await register(receiver.url("/patched"));
      assert.equal(ok.status, 201, ok.text);
      const patched = await stack.api("PATCH", `/v1/webhooks/subscriptions/${ok.body.id}`, {
        token,
        body: { url: `http://localhost:${new URL(stack.chain.rpcUrl).port}/` },
      });
      assert.equal(patched.status, 422, patched.text);
      assert.match(patched.body.error.message, /endpoint of the payment service itself/);
    });

    it("delivers to the allowlisted host:port, and refuses another port of that host", async () => {
      const sub = await subscribe(stack, token, receiver, "/allowed", ["ticket.created"]);
      const eventId = await sendTest(stack, token, sub.id);
      await waitForDelivery(stack, token, sub.id, (d) => d.eventId === eventId && d.status === "succeeded");
      assert.equal(receiver.deliveries("/allowed").length, 1);
      assert.ok(receiver.deliveries("/allowed")[0].standardOk);

      const otherPort = (other.address() as AddressInfo).port;
      for (const url of [`http://127.0.0.1:${otherPort}/x`, `https://127.0.0.1:${otherPort}/x`]) {
        const response = await register(url);
        assert.equal(response.status, 422, `${url}: ${response.text}`);
      }
      assert.equal(otherHits, 0);
    });

    it("checks every attempt again: a subscription the allowlist no longer covers gets nothing", async () => {
      const later = await register(`http://localhost:${receiver.port}/later`);
      assert.equal(later.status, 201, later.text);
      await stack.restartRelayer({ env: { WEBHOOK_ALLOWED_PRIVATE_HOSTS: `127.0.0.1:${receiver.port}` } });
      token = await login(stack);
      const eventId = await sendTest(stack, token, later.body.id);
      const failed = await waitForDelivery(stack, token, later.body.id, (d) => d.eventId === eventId && d.status === "failed", 30_000);
      assert.equal(failed.attempts, 5);
      assert.ok(
        failed.attemptLog.every((a) => a.statusCode === null && /^refused: the URL must be https/.test(a.error ?? "")),
        JSON.stringify(failed.attemptLog),
      );
      assert.equal(receiver.deliveries("/later").length, 0);
    });
  });
}
