// End to end: the transfer rail, for a wallet that only sends what an EIP-681 QR code asks for. An order's
// paymentDetails.transfer carries a payment request to the order's own deposit address; the test parses it with the
// SDK's parsePaymentRequest and pays from it with viem, as a phone wallet would: a plain token.transfer. The
// relayer's deposit watcher sees the deposit and submits payFromDeposit from the hot wallet; the order reaches
// success through the chain, the indexer and the payment sync, with rail `transfer` and the deposit address as
// payer. A transfer short of the amount leaves the order pending and the hot wallet sends nothing for it; the rest
// arriving later pays it. Tokens sent to a paid order's address are reported (payg_deposit_stray_total).
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { type Address, erc20Abi, getAddress } from "viem";
import { paymentRouterAbi } from "../../generated/abis.ts";
import { localAccount } from "../../lib/sample-data.ts";
import { type Order, parsePaymentRequest, paymentOrderOf } from "../../sdk/src/index.ts";
import { selectedDatabaseKinds } from "../support/databases.ts";
import { type OrderBody, clients, createOrder, readEventStream, waitForOrder } from "../support/pay.ts";
import { type Stack, startStack } from "../support/stack.ts";

/** The deposit watcher's interval in this suite (ms). */
const WATCH_MS = 200;

for (const database of selectedDatabaseKinds()) {
  describe(`transfer rail: EIP-681 request, deposit address, payFromDeposit (${database})`, { timeout: 300_000 }, () => {
    let stack: Stack;

    before(
      async () => {
        stack = await startStack({ label: "transfer-rail", database, relayerEnv: { DEPOSIT_WATCH_INTERVAL_MS: String(WATCH_MS) } });
      },
      { timeout: 240_000 },
    );
    after(async () => {
      await stack?.stop();
    });

    /** The order's EIP-681 request, parsed by the SDK (for this chain and the order's token). */
    function requestOf(order: OrderBody) {
      const details = order.paymentDetails as Order["paymentDetails"];
      assert.ok(details?.transfer, "the order carries a transfer request");
      const request = parsePaymentRequest(details.transfer.uri, {
        chainId: stack.chain.record.chainId,
        token: details.token.address as Address,
      });
      return { details, transfer: details.transfer, request };
    }

    /** The wallet pays from the request: token.transfer(to, amount) as the URI says (or another amount). */
    async function transferAsRequested(request: { token: Address; to: Address; amount: bigint }, amount = request.amount) {
      const { walletClient, publicClient } = clients(stack);
      const hash = await walletClient.writeContract({
        address: request.token,
        abi: erc20Abi,
        functionName: "transfer",
        args: [request.to, amount],
      });
      const receipt = await publicClient.waitForTransactionReceipt({ hash });
      assert.equal(receipt.status, "success");
      return receipt;
    }

    it("the request names the order's token, chain, exact amount and its deposit address, the router's own depositAddress", async () => {
      const order = await createOrder(stack);
      const { details, transfer, request } = requestOf(order);
      assert.equal(request.token, getAddress(details.token.address));
      assert.equal(request.chainId, stack.chain.record.chainId);
      assert.equal(request.amount, BigInt(details.amount));
      assert.equal(request.to, transfer.depositAddress);
      assert.equal(transfer.expiresAt, order.expiresAt);
      const { publicClient } = clients(stack);
      const onChain = await publicClient.readContract({
        address: details.router as Address,
        abi: paymentRouterAbi,
        functionName: "depositAddress",
        args: [paymentOrderOf(details.order)],
      });
      assert.equal(onChain, transfer.depositAddress, "the relayer computes the address the router collects from");
      const qr = await fetch(transfer.qrCodeUrl);
      assert.equal(qr.status, 200);
      assert.equal(qr.headers.get("content-type"), "image/svg+xml");
      assert.match(await qr.text(), /^<svg/);
    });

    it("a short transfer leaves the order pending with no relayer transaction; the rest pays it: rail transfer, payer the deposit address", async () => {
      const order = await createOrder(stack);
      const { request } = requestOf(order);
      const { publicClient } = clients(stack);
      const hotWallet = localAccount(2).address;

      await transferAsRequested(request, request.amount - 1n);
      // Many watcher ticks: none may queue a payment for a deposit short of the amount.
      await new Promise((resolve) => setTimeout(resolve, WATCH_MS * 15));
      const short = (await stack.api("GET", `/v1/orders/${order.id}`)).body;
      assert.equal(short.status, "pending");
      assert.equal(short.relay, null, "the hot wallet sent nothing for the order");
      assert.equal(
        await publicClient.readContract({ address: request.token, abi: erc20Abi, functionName: "balanceOf", args: [request.to] }),
        request.amount - 1n,
      );

      // The order's stream, opened while the order is pending (as the checkout page follows it).
      const stream = readEventStream(`${stack.relayerUrl}/v1/orders/${order.id}/events`, {
        until: (e) => e.event === "payment.succeeded",
        timeoutMs: 60_000,
      });
      const rest = await transferAsRequested(request, 1n);
      const paid = await waitForOrder(stack, order.id, (o) => o.status === "success", 60_000);
      assert.equal(paid.payment.rail, "transfer");
      assert.equal(paid.payment.payer, request.to);
      assert.ok(BigInt(paid.payment.blockNumber) >= rest.blockNumber);
      const receipt = await publicClient.getTransactionReceipt({ hash: paid.payment.transactionHash });
      assert.equal(getAddress(receipt.from), hotWallet, "the relayer's hot wallet submitted payFromDeposit");
      assert.equal(paid.relay.status, "mined");
      assert.equal(
        await publicClient.readContract({ address: request.token, abi: erc20Abi, functionName: "balanceOf", args: [request.to] }),
        0n,
      );

      // The order's stream tells the story, whatever rail paid it.
      const events = await stream;
      assert.equal(JSON.parse(events[0]!.data).status, "pending");
      const submitted = events.find((e) => e.event === "payment.submitted");
      assert.deepEqual(JSON.parse(submitted!.data), { rail: "transfer", payer: request.to });
      const succeeded = JSON.parse(events.find((e) => e.event === "payment.succeeded")!.data);
      assert.equal(succeeded.rail, "transfer");
      assert.equal(succeeded.payer, request.to);

      // The tenant's webhook event says the same.
      const log = await stack.api("GET", "/v1/events?type=payment.succeeded&limit=100", { token: stack.sample.developerKey });
      assert.equal(log.status, 200, log.text);
      const webhook = (log.body.data as Array<{ data: { orderId: string; rail: string; payer: string } }>).find(
        (e) => e.data.orderId === order.id,
      );
      assert.equal(webhook?.data.rail, "transfer");
      assert.equal(webhook?.data.payer, request.to);
    });

    it("tokens sent to a paid order's deposit address stay there and are reported for recovery (payg_deposit_stray_total)", async () => {
      const stray = async () => {
        const text = await (await fetch(`${stack.relayerUrl}/metrics`)).text();
        const line = text.split("\n").find((l) => l.startsWith('payg_deposit_stray_total{reason="paid"}'));
        return line ? Number(line.split(" ")[1]) : 0;
      };
      const order = await createOrder(stack);
      const { request } = requestOf(order);
      await transferAsRequested(request);
      await waitForOrder(stack, order.id, (o) => o.status === "success", 60_000);
      const before = await stray();
      await transferAsRequested(request, 5n);
      const deadline = Date.now() + 30_000;
      while ((await stray()) === before && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, WATCH_MS));
      assert.equal(await stray(), before + 1, "the stray deposit is reported once");
      const view = (await stack.api("GET", `/v1/orders/${order.id}`)).body;
      assert.equal(view.status, "success");
      assert.equal(view.payment.rail, "transfer");
    });
  });
}
