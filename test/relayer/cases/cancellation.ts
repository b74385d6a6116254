// POST /v1/orders/{id}/cancel: the tenant voids an unpaid order's voucher on-chain (PaymentRouter.cancelOrder
// sent by the relayer's hot wallet, which holds the order-canceller role). The order expires once that is
// mined, with reason `cancelled`; the router refuses the voucher on every rail from then on; the relayer
// relays nothing for it meanwhile; only the order's own tenant's developer key may cancel; a payment mined
// first wins.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { type Address, BaseError, ContractFunctionRevertedError } from "viem";
import { paymentRouterAbi } from "../../../generated/abis.ts";
import { clients, createOrder, pay, readEventStream, waitForOrder } from "../../support/pay.ts";
import type { Stack } from "../../support/stack.ts";
import { expectError } from "./expect.ts";

function revertName(error: unknown): string | undefined {
  const reverted = error instanceof BaseError && error.walk((e) => e instanceof ContractFunctionRevertedError);
  return reverted instanceof ContractFunctionRevertedError ? reverted.data?.errorName : undefined;
}

export function cancellationCases(stack: () => Stack, other: () => { key: string; agentKey: string }) {
  describe("cancelling an order", () => {
    it("voids the voucher on-chain: the order expires with reason cancelled and no rail pays it any more", async () => {
      const s = stack();
      const order = await createOrder(s, "kiosk-nbo-002", "30m");
      const cancel = await s.api("POST", `/v1/orders/${order.id}/cancel`, { token: s.sample.developerKey });
      assert.equal(cancel.status, 202, cancel.text);
      assert.equal(cancel.body.orderId, order.id);
      assert.ok(["queued", "sent", "mined"].includes(cancel.body.status), cancel.text);
      // The same request again is the same cancellation, not a second transaction.
      const again = await s.api("POST", `/v1/orders/${order.id}/cancel`, { token: s.sample.developerKey });
      assert.equal(again.status, 202, again.text);
      assert.equal(again.body.orderId, order.id);

      const expired = await waitForOrder(s, order.id, (o) => o.status === "expired", 20_000);
      assert.equal(expired.payment, null);
      const { publicClient } = clients(s);
      const onchainId = BigInt(order.paymentDetails.order.orderId);
      const router = order.paymentDetails.router as Address;
      assert.equal(
        await publicClient.readContract({ address: router, abi: paymentRouterAbi, functionName: "isCancelled", args: [onchainId] }),
        true,
      );

      const events = await readEventStream(`${s.relayerUrl}/v1/orders/${order.id}/events`, { headers: { "last-event-id": "0" } });
      assert.deepEqual(
        events.map((e) => e.event),
        ["order.created", "order.cancel_requested", "order.expired"],
      );
      assert.equal(JSON.parse(events[2].data).reason, "cancelled");

      expectError(await s.api("POST", `/v1/orders/${order.id}/cash`, { token: s.sample.agentKey }), 409, "order_expired");
      for (const rail of ["wallet-permit", "wallet-approval"] as const) {
        await assert.rejects(pay(s, order, rail), (error: unknown) => {
          assert.equal(revertName(error), "OrderIsCancelled", String(error));
          return true;
        });
      }
      // Asked again afterwards: the mined cancellation, still no second transaction.
      const after = await s.api("POST", `/v1/orders/${order.id}/cancel`, { token: s.sample.developerKey });
      assert.equal(after.status, 202, after.text);
      assert.equal(after.body.status, "mined");
      assert.match(after.body.transactionHash, /^0x[0-9a-f]{64}$/);
    });

    it("relays no payment while the cancellation is under way (409 order_cancelled, or order_expired once it is mined)", async () => {
      const s = stack();
      const order = await createOrder(s, "kiosk-nbo-002", "30m");
      const cancel = await s.api("POST", `/v1/orders/${order.id}/cancel`, { token: s.sample.developerKey });
      assert.equal(cancel.status, 202, cancel.text);
      const cash = await s.api("POST", `/v1/orders/${order.id}/cash`, { token: s.sample.agentKey });
      assert.equal(cash.status, 409, cash.text);
      assert.ok(["order_cancelled", "order_expired"].includes(cash.body.error.code), cash.text);
      await waitForOrder(s, order.id, (o) => o.status === "expired", 20_000);
    });

    it("only the order's own tenant's developer key may cancel: 401 without a key, 403 for an agent key, 404 for another tenant", async () => {
      const s = stack();
      const order = await createOrder(s, "kiosk-nbo-002", "30m");
      expectError(await s.api("POST", `/v1/orders/${order.id}/cancel`), 401, "unauthorized");
      expectError(await s.api("POST", `/v1/orders/${order.id}/cancel`, { token: s.sample.agentKey }), 403, "forbidden");
      expectError(await s.api("POST", `/v1/orders/${order.id}/cancel`, { token: other().key }), 404, "not_found");
      expectError(await s.api("POST", "/v1/orders/ord_doesnotexist/cancel", { token: s.sample.developerKey }), 404, "not_found");
      // None of them touched it: it still pays.
      assert.equal((await pay(s, order, "cash")).status, 202);
      await waitForOrder(s, order.id, (o) => o.status === "success", 20_000);
    });

    it("refuses a paid order with 409 order_already_paid; a payment mined before the cancellation wins", async () => {
      const s = stack();
      const paidFirst = await createOrder(s, "kiosk-nbo-002", "30m");
      assert.equal((await pay(s, paidFirst, "cash")).status, 202);
      await waitForOrder(s, paidFirst.id, (o) => o.status === "success", 20_000);
      expectError(await s.api("POST", `/v1/orders/${paidFirst.id}/cancel`, { token: s.sample.developerKey }), 409, "order_already_paid");

      // Paid by the wallet on-chain directly: the relayer may not have recorded it yet when the cancellation
      // comes; either way the cancellation voids nothing and the order ends success.
      const order = await createOrder(s, "kiosk-nbo-002", "30m");
      await pay(s, order, "wallet-permit");
      const cancel = await s.api("POST", `/v1/orders/${order.id}/cancel`, { token: s.sample.developerKey });
      assert.ok(cancel.status === 202 || (cancel.status === 409 && cancel.body.error.code === "order_already_paid"), cancel.text);
      await waitForOrder(s, order.id, (o) => o.status === "success", 20_000);
      // The cancellation (if it was queued) has ended without expiring the order.
      await new Promise((resolve) => setTimeout(resolve, 2_000));
      const final = await s.api("GET", `/v1/orders/${order.id}`);
      assert.equal(final.body.status, "success");
      const events = await readEventStream(`${s.relayerUrl}/v1/orders/${order.id}/events`, {
        headers: { "last-event-id": "0" },
        until: (e) => e.event === "device.powered_on" || e.event === "device.power_on_failed",
        timeoutMs: 20_000,
      });
      assert.ok(!events.some((e) => e.event === "order.expired"), events.map((e) => e.event).join(", "));
    });
  });
}
