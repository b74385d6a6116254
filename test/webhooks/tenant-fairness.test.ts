// One tenant cannot delay another's webhooks (relayer/src/webhooks/dispatcher.ts): tenant A floods test pings
// to an endpoint that never answers (each attempt holds a slot until WEBHOOK_TIMEOUT_MS, then is retried);
// tenant B's test ping still reaches B's receiver within seconds, because A's deliveries take at most
// WEBHOOK_TENANT_CONCURRENCY (4) of the process's 16 slots and claims go round the tenants. Then the test
// route's rate limit, per tenant: A is refused with 429 whichever of its subscriptions it tests, B is not.
// On PostgreSQL two relayer processes share the work (each with its own 16 slots, A at most 4 in each), and
// every delivery is still attempted once.
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { pickFairly } from "../../relayer/src/webhooks/dispatcher.ts";
import { selectedDatabaseKinds } from "../support/databases.ts";
import { type ApiResponse, type Stack, startStack } from "../support/stack.ts";
import { type WebhookReceiver, startWebhookReceiver } from "../support/webhook-receiver.ts";
import { login, sendTest, subscribe } from "./support.ts";

const TIMEOUT_MS = 6_000;
/** WEBHOOK_TENANT_CONCURRENCY's default. */
const TENANT_SLOTS = 4;
const FLOOD = 100;
/** Raised from the default (10) so that tenant A can flood; the last test reaches it. */
const PINGS_PER_MINUTE = 120;

describe("pickFairly: a claim's share of the slots", () => {
  const c = (id: string, tenantId: string, retry = false) => ({ id, tenantId, retry });
  it("takes each tenant's free slots at most, retries within their room, up to the room", () => {
    // In the claim's order: every tenant's oldest first, then every tenant's second...
    const candidates = [c("a1", "A"), c("b1", "B", true), c("c1", "C"), c("a2", "A", true), c("b2", "B", true), c("c2", "C"), c("a3", "A")];
    const ids = (opts: Partial<Parameters<typeof pickFairly>[1]>) =>
      pickFairly(candidates, { room: 10, tenantCap: 4, free: new Map(), retryRoom: 10, ...opts }).map((p) => p.id);
    assert.deepEqual(ids({}), ["a1", "b1", "c1", "a2", "b2", "c2", "a3"]);
    assert.deepEqual(ids({ room: 3 }), ["a1", "b1", "c1"]);
    assert.deepEqual(
      ids({
        free: new Map([
          ["A", 1],
          ["C", 0],
        ]),
      }),
      ["a1", "b1", "b2"],
    );
    assert.deepEqual(ids({ tenantCap: 1 }), ["a1", "b1", "c1"]);
    assert.deepEqual(ids({ retryRoom: 1 }), ["a1", "b1", "c1", "c2", "a3"]);
    assert.deepEqual(ids({ retryRoom: 0 }), ["a1", "c1", "c2", "a3"]);
  });
});

for (const database of selectedDatabaseKinds()) {
  describe(`webhook delivery is fair across tenants (${database})`, { concurrency: false }, () => {
    /** Relayer processes: two on PostgreSQL. */
    const processes = database === "postgres" ? 2 : 1;
    let stack: Stack;
    let relayerUrls: string[];
    let receiver: WebhookReceiver;
    let tokenA: string;
    let tokenB: string;
    let tarpit: { id: string };
    let endpointB: { id: string };

    before(
      async () => {
        receiver = await startWebhookReceiver();
        receiver.respond("/tarpit", () => "hang");
        stack = await startStack({
          label: `webhook-fairness-${database}`,
          database,
          indexer: false,
          relayerEnv: {
            WEBHOOK_TIMEOUT_MS: String(TIMEOUT_MS),
            // A's failed attempts are retried at once: its retries compete for slots too.
            WEBHOOK_RETRY_BASE_MS: "50",
            WEBHOOK_TEST_PINGS_PER_MINUTE: String(PINGS_PER_MINUTE),
          },
          tenants: [
            {
              tenant: { id: "tn_fairness_b", name: "Tenant B" },
              user: { email: "b@fairness.example", password: "tenant-b-password-123", name: "B" },
            },
          ],
        });
        tokenA = await login(stack);
        tokenB = await login(stack, "b@fairness.example", "tenant-b-password-123");
        tarpit = await subscribe(stack, tokenA, receiver, "/tarpit", ["test.ping"]);
        endpointB = await subscribe(stack, tokenB, receiver, "/b", ["test.ping"]);
        relayerUrls = [stack.relayerUrl];
        if (processes === 2) relayerUrls.push((await stack.startExtraRelayer()).url);
      },
      { timeout: 240_000 },
    );
    after(async () => {
      await stack?.stop();
      await receiver?.close();
    });

    it(
      "delivers tenant B's webhook within seconds while tenant A floods an endpoint that never answers",
      { timeout: 180_000 },
      async () => {
        for (let sent = 0; sent < FLOOD; sent += 10) {
          await Promise.all(Array.from({ length: 10 }, (_, i) => sendTest(stack, tokenA, tarpit.id, relayerUrls[i % processes])));
        }
        const first = await receiver.waitFor((d) => d.path === "/tarpit", 30_000, "A's first attempt");

        const sentAt = Date.now();
        const eventId = await sendTest(stack, tokenB, endpointB.id);
        const delivered = await receiver.waitFor(
          (d) => d.path === "/b" && d.envelope?.data.subscriptionId === endpointB.id,
          120_000,
          "B's test ping",
        );
        const seconds = (delivered.receivedAt - sentAt) / 1000;
        console.log(`B's test ping (${eventId}) arrived ${seconds.toFixed(2)} s after it was sent, behind ${FLOOD} of A's to a tarpit`);
        assert.ok(delivered.standardOk && delivered.serviceOk, delivered.verifyError);
        // Unfair (oldest first into 16 slots of 6 s), it would wait for A's 100 first attempts: over 30 s.
        assert.ok(seconds < 15, `B's delivery took ${seconds.toFixed(1)} s`);

        // A held at most its share of the slots: while its first attempts hung (they end after TIMEOUT_MS), no more
        // than TENANT_SLOTS of them per process had been made.
        const early = receiver.deliveries("/tarpit").filter((d) => d.receivedAt < first.receivedAt + TIMEOUT_MS - 1_000);
        assert.ok(early.length <= TENANT_SLOTS * processes, `${early.length} of A's attempts hung at once`);
        assert.ok(early.length >= 1);
        // Each of A's deliveries had one attempt at a time: the same webhook-id never arrived twice in that window.
        assert.equal(new Set(early.map((d) => d.headers["webhook-id"])).size, early.length);
      },
    );

    it(
      "rate-limits the test route per tenant: 429 with Retry-After for A, whichever subscription; B still sends",
      { timeout: 120_000 },
      async () => {
        const other = await subscribe(stack, tokenA, receiver, "/a-other", ["test.ping"]);
        const route = `/v1/webhooks/subscriptions/${other.id}/test`;
        let limited: ApiResponse | undefined;
        let accepted = 0;
        const started = Date.now();
        for (let round = 0; round < 20 && !limited; round++) {
          const answers = await Promise.all(Array.from({ length: 20 }, () => stack.api("POST", route, { token: tokenA })));
          for (const answer of answers) {
            if (answer.status === 202) accepted++;
            else {
              assert.equal(answer.status, 429, answer.text);
              limited ??= answer;
            }
          }
        }
        assert.ok(limited, `no 429 after ${accepted} test pings`);
        assert.equal(limited.body.error.code, "rate_limited");
        assert.match(limited.headers.get("retry-after") ?? "", /^[1-9][0-9]*$/);
        // At most a full bucket plus what it refilled meanwhile.
        const refilled = ((Date.now() - started) / 60_000) * PINGS_PER_MINUTE;
        assert.ok(accepted <= PINGS_PER_MINUTE + refilled + 1, `${accepted} accepted before the limit`);
        // Another tenant's bucket is its own.
        await sendTest(stack, tokenB, endpointB.id);
      },
    );

    it("delivers every one of B's test pings exactly once, sent to each process in turn", { timeout: 120_000 }, async () => {
      const events = await Promise.all(
        Array.from({ length: 20 }, (_, i) => sendTest(stack, tokenB, endpointB.id, relayerUrls[i % processes])),
      );
      assert.equal(new Set(events).size, 20);
      const deadline = Date.now() + 60_000;
      const arrived = () => receiver.deliveries("/b");
      // The two earlier pings of B, and these 20.
      while (arrived().length < 22 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 100));
      await new Promise((resolve) => setTimeout(resolve, 1_000));
      const ids = arrived().map((d) => d.headers["webhook-id"]);
      assert.equal(ids.length, 22, `B's receiver got ${ids.length} deliveries`);
      assert.equal(new Set(ids).size, 22, "each delivery once");
    });
  });
}
