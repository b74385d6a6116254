// Expiry: a quote can only become an order before it expires (409), an unpaid order turns expired and the
// router refuses it from then on. Runs the relayer with 5-second lifetimes.
import assert from "node:assert/strict";
import { before, describe, it } from "node:test";
import { BaseError, ContractFunctionRevertedError } from "viem";
import { createOrder, pay, readEventStream, signPermit, waitForOrder } from "../../support/pay.ts";
import type { Stack } from "../../support/stack.ts";
import { expectError } from "./expect.ts";

export function expiryCases(stack: () => Stack) {
  describe("expiry", () => {
    before(async () => {
      await stack().restartRelayer({ env: { QUOTE_TTL_SECONDS: "5", ORDER_TTL_SECONDS: "5", EXPIRY_GRACE_SECONDS: "1" } });
    });

    it("refuses to order an expired quote with 409 quote_expired", async () => {
      const s = stack();
      const quote = await s.api("POST", "/v1/quote", { body: { deviceId: "kiosk-nbo-001", chain: "local", token: "USDC", tier: "1h" } });
      await new Promise((resolve) => setTimeout(resolve, 5_500));
      const order = await s.api("POST", "/v1/orders", {
        body: { deviceId: "kiosk-nbo-001", chain: "local", token: "USDC", amountUsd: 0.5, quoteId: quote.body.quoteId },
      });
      expectError(order, 409, "quote_expired");
    });

    it("turns an unpaid order expired, streams it, and refuses to pay it afterwards (off-chain and on-chain)", async () => {
      const s = stack();
      const order = await createOrder(s, "kiosk-nbo-001", "30m");
      const permit = await signPermit(s, order);
      const expired = await waitForOrder(s, order.id, (o) => o.status === "expired", 15_000);
      assert.equal(expired.payment, null);
      const events = await readEventStream(`${s.relayerUrl}/v1/orders/${order.id}/events`);
      assert.deepEqual(
        events.map((e) => e.event),
        ["state"],
      );
      assert.equal(JSON.parse(events[0].data).status, "expired");
      const resumed = await readEventStream(`${s.relayerUrl}/v1/orders/${order.id}/events`, { headers: { "last-event-id": "0" } });
      assert.deepEqual(
        resumed.map((e) => e.event),
        ["order.created", "order.expired"],
      );

      expectError(await s.api("POST", `/v1/orders/${order.id}/permit`, { body: permit }), 409, "order_expired");
      await assert.rejects(pay(s, order, "wallet-permit"), (error: unknown) => {
        const reverted = error instanceof BaseError && error.walk((e) => e instanceof ContractFunctionRevertedError);
        assert.ok(reverted instanceof ContractFunctionRevertedError, String(error));
        assert.equal(reverted.data?.errorName, "OrderExpired");
        return true;
      });
      expectError(await s.api("GET", `/v1/orders/${order.id}/receipt`), 409, "order_unpaid");
    });
  });
}
