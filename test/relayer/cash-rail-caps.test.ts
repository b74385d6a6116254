// End to end: the cash rail's caps (relayer/src/payments/cash-limits.ts). An agent's cash confirmation makes
// the relayer pay the order from its own float, so the rail is capped: a confirmation that would take one
// agent key over CASH_DAILY_LIMIT_USD_PER_KEY, or the tenant's agent keys together over
// CASH_DAILY_LIMIT_USD_PER_TENANT, is 422 cash_limit_exceeded naming the limit, the order stays unpaid and
// nothing is queued; repeating an accepted confirmation counts nothing more; two confirmations racing for
// the tenant's last room (on PostgreSQL through two relayer processes) let exactly one through. After a
// change of a device's payout parties its orders are refused on the cash rail (409 payout_change_pending with
// Retry-After) for PAYOUT_CHANGE_DELAY_SECONDS.
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { localAccount } from "../../lib/sample-data.ts";
import { selectedDatabaseKinds } from "../support/databases.ts";
import { type OrderBody, createOrder, waitForOrder } from "../support/pay.ts";
import { type Stack, startStack } from "../support/stack.ts";
import { login } from "../webhooks/support.ts";
import { expectError } from "./cases/expect.ts";

/** The 30-minute tier of the sample kiosks: 0.30 USD. Two fit under the key's limit, three under the tenant's. */
const PRICE_USD = 0.3;
const PER_KEY_USD = 0.6;
const PER_TENANT_USD = 0.9;
const DELAY_SECONDS = 3_600;

for (const database of selectedDatabaseKinds()) {
  describe(`cash rail caps (${database})`, { timeout: 300_000 }, () => {
    let stack: Stack;
    let jwt: string;
    /** A second relayer process on the same database (PostgreSQL), else the one relayer. */
    let otherRelayerUrl: string;

    before(
      async () => {
        stack = await startStack({
          label: "cash-caps",
          database,
          relayerEnv: {
            CASH_DAILY_LIMIT_USD_PER_KEY: String(PER_KEY_USD),
            CASH_DAILY_LIMIT_USD_PER_TENANT: String(PER_TENANT_USD),
            PAYOUT_CHANGE_DELAY_SECONDS: String(DELAY_SECONDS),
          },
        });
        jwt = await login(stack);
        otherRelayerUrl = database === "postgres" ? (await stack.startExtraRelayer()).url : stack.relayerUrl;
      },
      { timeout: 240_000 },
    );
    after(async () => {
      await stack?.stop();
    });

    const confirmCash = (order: OrderBody, key: string, baseUrl = stack.relayerUrl) =>
      fetch(`${baseUrl}/v1/orders/${order.id}/cash`, { method: "POST", headers: { authorization: `Bearer ${key}` } }).then(
        async (response) => {
          const text = await response.text();
          return { status: response.status, headers: response.headers, body: JSON.parse(text), text };
        },
      );

    /** The order as GET /v1/orders/{id} shows it. */
    const read = async (order: OrderBody) => (await stack.api("GET", `/v1/orders/${order.id}`)).body;

    /** Creates an order, retrying while the device's split is being created (409 split_not_ready). */
    async function createOrderWhenSplitReady(deviceId: string, tier: string): Promise<OrderBody> {
      const deadline = Date.now() + 120_000;
      for (;;) {
        try {
          return await createOrder(stack, deviceId, tier);
        } catch (error) {
          if (!/split_not_ready/.test((error as Error).message) || Date.now() > deadline) throw error;
          await new Promise((resolve) => setTimeout(resolve, 500));
        }
      }
    }

    it("refuses cash for a device whose payout parties changed, for PAYOUT_CHANGE_DELAY_SECONDS (409 payout_change_pending)", async () => {
      const deviceId = "kiosk-nbo-002";
      const order = await createOrderWhenSplitReady(deviceId, "30m");
      const assets = await stack.api("GET", "/v1/assets", { token: jwt });
      const before = assets.body.data.find((a: { deviceId: string }) => a.deviceId === deviceId);
      const changed = await stack.api("PUT", `/v1/assets/${deviceId}/payout`, {
        token: jwt,
        body: { assetOwner: localAccount(3).address, operator: before.payout.operator },
      });
      assert.equal(changed.status, 200, changed.text);

      const refused = await confirmCash(order, stack.sample.agentKey);
      expectError(refused, 409, "payout_change_pending");
      const retryAfter = Number(refused.headers.get("retry-after"));
      assert.ok(retryAfter > DELAY_SECONDS - 600 && retryAfter <= DELAY_SECONDS, `retry-after ${retryAfter}`);
      assert.match(refused.body.error.message, new RegExp(`device ${deviceId}`));
      assert.equal((await stack.api("GET", `/v1/orders/${order.id}`)).body.status, "pending");
      // A device whose parties did not change still takes cash (and the refused order counted nothing: see below).
      const other = await createOrderWhenSplitReady("charger-los-001", "30m");
      const accepted = await confirmCash(other, stack.sample.agentKey);
      assert.equal(accepted.status, 202, accepted.text);
      await waitForOrder(stack, other.id, (o) => o.status === "success", 60_000);
      // Its 0.40 is this key's and tenant's usage from here on; the next test counts from it.
    });

    it("caps each agent key's and the tenant's cash per day: a confirmation over a limit is 422 cash_limit_exceeded naming it", async () => {
      // Used so far: 0.40 (charger-los-001's 30m, above) by the sample agent key. Limits 0.60 per key, 0.90 per
      // tenant; kiosk orders of 0.30 each.
      const created = await stack.api("POST", "/v1/api-keys", { token: jwt, body: { name: "second agent", role: "agent" } });
      assert.equal(created.status, 201, created.text);
      const secondKey: string = created.body.key;
      const a = await createOrderWhenSplitReady("kiosk-nbo-001", "30m");
      const b = await createOrder(stack, "kiosk-nbo-001", "30m");
      assert.equal(a.amountUsd, PRICE_USD);

      // The sample key: 0.40 + 0.30 is over its 0.60 (the tenant's 0.90 is not).
      const overKey = await confirmCash(a, stack.sample.agentKey);
      expectError(overKey, 422, "cash_limit_exceeded");
      assert.match(overKey.body.error.message, /CASH_DAILY_LIMIT_USD_PER_KEY/);
      assert.equal(overKey.body.error.details[0].path, "CASH_DAILY_LIMIT_USD_PER_KEY");
      const refused = await read(a);
      assert.equal(refused.status, "pending");
      assert.equal(refused.relay, null, "nothing was queued for the refused confirmation");

      // The second key: 0.30 (tenant 0.70), accepted; the same request again is the same payment, counted once.
      const first = await confirmCash(a, secondKey);
      assert.equal(first.status, 202, first.text);
      const again = await confirmCash(a, secondKey);
      assert.equal(again.status, 202, again.text);
      // 0.30 more fits the second key's 0.60, not the tenant's 0.90 (0.70 + 0.30): the tenant's limit is named.
      const overTenant = await confirmCash(b, secondKey, otherRelayerUrl);
      expectError(overTenant, 422, "cash_limit_exceeded");
      assert.match(overTenant.body.error.message, /CASH_DAILY_LIMIT_USD_PER_TENANT/);
      assert.equal(overTenant.body.error.details[0].path, "CASH_DAILY_LIMIT_USD_PER_TENANT");
      assert.equal((await read(b)).relay, null);
      await waitForOrder(stack, a.id, (o) => o.status === "success", 60_000);
      assert.equal((await read(b)).status, "pending");
    });

    it("lets exactly one of two confirmations racing for a tenant's last room through (two relayer processes on PostgreSQL)", async () => {
      // A tenant of its own (no cash confirmed yet) with two agent keys; its 0.50 orders: each key's 0.60 takes
      // one, the tenant's 0.90 one only.
      const other = await stack.seed({
        tenant: { id: "tn_cash_caps", name: "Cash caps tenant" },
        apiKeys: [
          { name: "caps agent one", role: "agent" },
          { name: "caps agent two", role: "agent" },
        ],
        devices: [
          {
            id: "kiosk-caps-001",
            name: "Caps kiosk",
            deviceClass: "kiosk",
            region: "Nairobi",
            tiers: { "4h": 500_000 },
            assetOwner: localAccount(8).address,
            operator: localAccount(10).address,
          },
        ],
      });
      const [one, two] = other.createdKeys.map((k) => k.key);
      assert.ok(one && two);
      const first = await createOrderWhenSplitReady("kiosk-caps-001", "4h");
      const second = await createOrder(stack, "kiosk-caps-001", "4h");
      const raced = await Promise.all([confirmCash(first, one), confirmCash(second, two, otherRelayerUrl)]);
      assert.deepEqual(raced.map((r) => r.status).sort(), [202, 422], raced.map((r) => r.text).join("\n"));
      const refused = raced.find((r) => r.status === 422)!;
      expectError(refused, 422, "cash_limit_exceeded");
      assert.equal(refused.body.error.details[0].path, "CASH_DAILY_LIMIT_USD_PER_TENANT");
      const paid = raced[0].status === 202 ? first : second;
      await waitForOrder(stack, paid.id, (o) => o.status === "success", 60_000);
    });
  });
}
