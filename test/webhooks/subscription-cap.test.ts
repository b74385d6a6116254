// The cap of 25 active webhook subscriptions a tenant may have holds under parallel requests: 40 creates
// at once leave exactly 25 active and answer the other 15 with 409 too_many_subscriptions; re-enabling
// disabled subscriptions in parallel stops at the cap too; and on PostgreSQL the same holds with the
// creates spread over two relayer processes. On each selected database.
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { selectedDatabaseKinds, withPostgres } from "../support/databases.ts";
import { type Stack, startStack } from "../support/stack.ts";
import { type WebhookReceiver, startWebhookReceiver } from "../support/webhook-receiver.ts";
import { login } from "./support.ts";

const CAP = 25;
const PARALLEL = 40;

for (const database of selectedDatabaseKinds()) {
  describe(`webhook subscription cap under parallel requests (${database})`, { concurrency: false }, () => {
    let stack: Stack;
    let receiver: WebhookReceiver;

    before(
      async () => {
        receiver = await startWebhookReceiver();
        stack = await startStack({
          label: `subscription-cap-${database}`,
          database,
          indexer: false,
          tenants: [1, 2].map((n) => ({
            tenant: { id: `tn_cap_${n}`, name: `Cap tenant ${n}` },
            user: { email: `cap${n}@cap.example`, password: "cap-password-123", name: `Cap ${n}` },
          })),
        });
      },
      { timeout: 240_000 },
    );
    after(async () => {
      await stack?.stop();
      await receiver?.close();
    });

    /** POST /v1/webhooks/subscriptions on `relayerUrl`: the status and body. */
    async function create(relayerUrl: string, token: string, i: number) {
      const response = await fetch(`${relayerUrl}/v1/webhooks/subscriptions`, {
        method: "POST",
        headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
        body: JSON.stringify({ url: receiver.url(`/cap-${i}`), eventTypes: ["payment.succeeded"] }),
      });
      return { status: response.status, body: (await response.json()) as { id?: string; error?: { code: string } } };
    }

    async function activeCount(token: string): Promise<number> {
      const list = await stack.api("GET", "/v1/webhooks/subscriptions", { token });
      assert.equal(list.status, 200, list.text);
      return (list.body.data as Array<{ status: string }>).filter((s) => s.status === "active").length;
    }

    function assertCapped(results: Array<{ status: number; body: { error?: { code: string } } }>, allowed: number) {
      const statuses = results.map((r) => r.status);
      assert.equal(statuses.filter((s) => s === 201 || s === 200).length, allowed, JSON.stringify(statuses));
      const refused = results.filter((r) => r.status === 409);
      assert.equal(refused.length, results.length - allowed, JSON.stringify(statuses));
      for (const r of refused) assert.equal(r.body.error?.code, "too_many_subscriptions");
    }

    it(`${PARALLEL} parallel creates leave exactly ${CAP} active`, async () => {
      const token = await login(stack, "cap1@cap.example", "cap-password-123");
      const results = await Promise.all(Array.from({ length: PARALLEL }, (_, i) => create(stack.relayerUrl, token, i)));
      assertCapped(results, CAP);
      assert.equal(await activeCount(token), CAP);
    });

    it("re-enabling in parallel stops at the cap too", async () => {
      const token = await login(stack, "cap1@cap.example", "cap-password-123");
      const list = await stack.api("GET", "/v1/webhooks/subscriptions", { token });
      const ids = (list.body.data as Array<{ id: string }>).map((s) => s.id).slice(0, 10);
      for (const id of ids) {
        const disabled = await stack.api("PATCH", `/v1/webhooks/subscriptions/${id}`, { token, body: { status: "disabled" } });
        assert.equal(disabled.status, 200, disabled.text);
      }
      assert.equal(await activeCount(token), CAP - 10);
      // 5 creates and 10 re-enables at once, for 10 free places.
      const results = await Promise.all([
        ...Array.from({ length: 5 }, (_, i) => create(stack.relayerUrl, token, 100 + i)),
        ...ids.map(async (id) => {
          const response = await stack.api("PATCH", `/v1/webhooks/subscriptions/${id}`, { token, body: { status: "active" } });
          return { status: response.status, body: response.body };
        }),
      ]);
      assertCapped(results, 10);
      assert.equal(await activeCount(token), CAP);
    });

    if (database === "postgres") {
      it(`${PARALLEL} parallel creates through two relayer processes leave exactly ${CAP} active`, async () => {
        const second = await stack.startExtraRelayer();
        const token = await login(stack, "cap2@cap.example", "cap-password-123");
        const relayers = [stack.relayerUrl, second.url];
        const results = await Promise.all(Array.from({ length: PARALLEL }, (_, i) => create(relayers[i % 2], token, i)));
        assertCapped(results, CAP);
        const db = stack.relayerOptions.database;
        assert.equal(db.kind, "postgres");
        if (db.kind !== "postgres") return;
        const [{ n }] = await withPostgres(db.url, async (client) => {
          await client.query(`set search_path to "${db.schema}"`);
          return (
            await client.query("select count(*)::int as n from webhook_subscriptions where tenant_id = 'tn_cap_2' and status = 'active'")
          ).rows as Array<{ n: number }>;
        });
        assert.equal(n, CAP);
      });
    }
  });
}
