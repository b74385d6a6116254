// Every payment rail ends in the same place: the order turns success from the indexed payment, its event
// stream shows it, the device is powered on, the split is recorded.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { createPublicClient, erc20Abi, http, maxUint256 } from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { localAccount, localPrivateKey } from "../../../lib/sample-data.ts";
import { assetSplitAbi, assetSplitFactoryAbi } from "../../../generated/abis.ts";
import type { Order } from "../../../sdk/src/index.ts";
import { signOrderPayment } from "../../../sdk/src/pay.ts";
import { PERMIT2_ADDRESS, paymentOrderOf, permit2TypedData, signOrderAuthorization } from "../../../sdk/src/payment-order.ts";
import { clients, createOrder, pay, readEventStream, signPermit, waitForOrder } from "../../support/pay.ts";
import type { Stack } from "../../support/stack.ts";
import { expectError } from "./expect.ts";

const rails = [
  ["relayed-authorization", "authorization"],
  ["relayed-permit", "permit"],
  ["wallet-permit", "permit"],
  ["wallet-approval", "approval"],
  ["cash", "cash"],
] as const;

export function railCases(stack: () => Stack) {
  describe("payment rails", () => {
    for (const [rail, onchainRail] of rails) {
      it(`${rail}: the order turns success, the device is powered on, the receipt shows the split`, async () => {
        const s = stack();
        const order = await createOrder(s, "kiosk-nbo-001", "30m");
        const result = await pay(s, order, rail);
        if (rail === "relayed-authorization" || rail === "relayed-permit" || rail === "cash") {
          assert.equal(result.status, 202, JSON.stringify(result.body));
          assert.equal(result.body.orderId, order.id);
        }
        const paid = await waitForOrder(s, order.id, (o) => o.status === "success" && o.device.poweredOnAt !== null);
        assert.equal(paid.payment.rail, onchainRail);
        assert.equal(paid.paymentDetails, undefined, "no payment details once paid");
        const payer = rail === "cash" ? localAccount(2).address : localAccount(7).address;
        assert.equal(paid.payment.payer, payer, "the payer, EIP-55 checksummed");
        if (result.hash) assert.equal(paid.payment.transactionHash, result.hash);
        assert.equal(paid.settlement.transactionHash, paid.payment.transactionHash, "settled in the same transaction");

        const chain = createPublicClient({ transport: http(s.chain.rpcUrl) });
        const receipt = await chain.getTransactionReceipt({ hash: paid.payment.transactionHash });
        assert.equal(receipt.status, "success");

        const session = await (await fetch(`${s.deviceCloudUrl}/devices/kiosk-nbo-001/sessions/${order.id}`)).json();
        assert.equal(session.durationSeconds, 1800, "powered on for the tier's length");

        const proof = await s.api("GET", `/v1/orders/${order.id}/receipt`);
        assert.equal(proof.status, 200);
        assert.equal(proof.body.payment.rail, onchainRail);
        const legs = proof.body.settlement.legs.map((l: { amount: string }) => BigInt(l.amount));
        assert.deepEqual(legs, [150_000n, 120_000n, 30_000n]);
        assert.equal(
          legs.reduce((a: bigint, b: bigint) => a + b, 0n),
          BigInt(proof.body.settlement.gross),
        );
      });
    }

    it("relayed-permit2: the wallet approves Permit2 once and signs paymentDetails.permit2; the relayer pays on the Permit2 rail", async () => {
      const s = stack();
      const order = await createOrder(s, "kiosk-nbo-001", "30m");
      const details = order.paymentDetails;
      const voucher = paymentOrderOf(details.order);
      // The typed data the order offers is the SDK's (the order as witness, nonce its id, deadline its expiry).
      const typedData = permit2TypedData({ chainId: details.chainId, router: details.router, order: voucher });
      assert.equal(details.permit2.domain.verifyingContract, PERMIT2_ADDRESS);
      assert.equal(details.permit2.message.nonce, voucher.orderId.toString());
      assert.equal(details.permit2.message.deadline, voucher.expiry.toString());
      assert.deepEqual(Object.keys(details.permit2.types), Object.keys(typedData.types));

      const { account, walletClient, publicClient } = clients(s);
      const wallet = privateKeyToAccount(localPrivateKey(7));
      const unapproved = await s.api("POST", `/v1/orders/${order.id}/permit2`, {
        body: { owner: account.address, signature: await wallet.signTypedData(typedData) },
      });
      if (unapproved.status === 422) assert.match(unapproved.body.error.message, /Permit2/);
      else assert.equal(unapproved.status, 202, "the wallet had approved Permit2 in an earlier test");
      if (unapproved.status === 422) {
        const approve = await walletClient.writeContract({
          address: voucher.token,
          abi: erc20Abi,
          functionName: "approve",
          args: [PERMIT2_ADDRESS, maxUint256],
        });
        await publicClient.waitForTransactionReceipt({ hash: approve });
        const wrong = await s.api("POST", `/v1/orders/${order.id}/permit2`, {
          body: { owner: account.address, signature: await localAccount(8).signTypedData(typedData) },
        });
        expectError(wrong, 422, "invalid_parameters");
        assert.equal(wrong.body.error.details[0].path, "signature");
        const relayed = await s.api("POST", `/v1/orders/${order.id}/permit2`, {
          body: { owner: account.address, signature: await wallet.signTypedData(typedData) },
        });
        assert.equal(relayed.status, 202, JSON.stringify(relayed.body));
      }
      const paid = await waitForOrder(s, order.id, (o) => o.status === "success");
      assert.equal(paid.payment.rail, "permit2");
      assert.equal(paid.payment.payer, account.address);
    });

    it("USDT, without EIP-2612 or EIP-3009: its order offers Permit2 and no permit, and pays through the device's own USDT split", async () => {
      const s = stack();
      const order = await createOrder(s, "kiosk-nbo-001", "30m", "USDT");
      const details = order.paymentDetails;
      assert.equal(details.token.symbol, "USDT");
      assert.equal(details.token.address, s.chain.record.contracts.PlainStablecoin!.address);
      assert.deepEqual(
        ["permit", "relay", "authorization", "permit2"].map((rail) => rail in details),
        [false, false, false, true],
        "Permit2 is the token's only gasless rail",
      );
      // The device's split in USDT is its own, at the USDT factory, created by the quote: not its USDC split.
      const device = await s.api("GET", "/v1/devices/kiosk-nbo-001", { token: s.sample.developerKey });
      assert.notEqual(details.split.toLowerCase(), device.body.payout.split.toLowerCase());
      const { account, walletClient, publicClient } = clients(s);
      const usdtFactory = s.chain.record.contracts.AssetSplitFactory_USDT!.address;
      assert.equal(
        await publicClient.readContract({
          address: usdtFactory,
          abi: assetSplitFactoryAbi,
          functionName: "predictSplit",
          args: [details.order.deviceId],
        }),
        details.split,
      );
      const [legs] = await publicClient.readContract({ address: details.split, abi: assetSplitAbi, functionName: "legs" });
      assert.deepEqual(legs.slice(0, 2), [device.body.payout.assetOwner, device.body.payout.operator], "it pays the device's parties");
      // The rails the token does not have are refused with a clear error.
      const permit = await s.api("POST", `/v1/orders/${order.id}/permit`, {
        body: { owner: account.address, signature: `0x${"11".repeat(65)}` },
      });
      expectError(permit, 422, "invalid_parameters");
      assert.match(permit.body.error.message, /no EIP-2612 permits: pay through Permit2/);
      const authorization = await s.api("POST", `/v1/orders/${order.id}/authorization`, {
        body: { from: account.address, signature: `0x${"11".repeat(65)}` },
      });
      expectError(authorization, 422, "invalid_parameters");
      // The SDK picks Permit2 by itself; the wallet approves Permit2 for USDT once.
      const approve = await walletClient.writeContract({
        address: details.token.address,
        abi: erc20Abi,
        functionName: "approve",
        args: [PERMIT2_ADDRESS, maxUint256],
      });
      await publicClient.waitForTransactionReceipt({ hash: approve });
      const signed = await signOrderPayment(order as Order, privateKeyToAccount(localPrivateKey(7)));
      assert.equal(signed.rail, "permit2");
      const relayed = await s.api("POST", `/v1/orders/${order.id}/permit2`, { body: signed.body });
      assert.equal(relayed.status, 202, JSON.stringify(relayed.body));
      const paid = await waitForOrder(s, order.id, (o) => o.status === "success" && o.settlement !== null);
      assert.equal(paid.payment.rail, "permit2");
      assert.equal(paid.token.symbol, "USDT");
      const proof = await s.api("GET", `/v1/orders/${order.id}/receipt`);
      assert.equal(proof.status, 200);
      assert.equal(proof.body.settlement.split, details.split);
      assert.deepEqual(
        proof.body.settlement.legs.map((l: { amount: string }) => BigInt(l.amount)),
        [150_000n, 120_000n, 30_000n],
        "50/40/10 in USDT",
      );
      const claimable = await publicClient.readContract({
        address: details.split,
        abi: assetSplitAbi,
        functionName: "claimable",
        args: [device.body.payout.operator],
      });
      assert.ok(claimable >= 120_000n, "the operator's USDT leg is claimable at the USDT split");
      // The next quote finds the split created: no second creation.
      const again = await createOrder(s, "kiosk-nbo-001", "30m", "USDT");
      assert.equal(again.paymentDetails.split, details.split);
    });

    it("streams the order: current state, payment, split, power-on, then closes; resumes after Last-Event-ID", async () => {
      const s = stack();
      const order = await createOrder(s, "kiosk-nbo-002", "1h");
      const streaming = readEventStream(`${s.relayerUrl}/v1/orders/${order.id}/events`);
      await new Promise((resolve) => setTimeout(resolve, 200));
      await pay(s, order, "relayed-permit");
      const events = (await streaming).filter((e) => !e.comment);
      const types = events.map((e) => e.event);
      assert.deepEqual(types, ["state", "payment.submitted", "payment.succeeded", "split.settled", "device.powered_on"]);
      assert.equal(JSON.parse(events[0].data).status, "pending");
      assert.equal(JSON.parse(events[2].data).rail, "permit");
      const ids = events.map((e) => Number(e.id));
      assert.deepEqual(
        [...ids].sort((a, b) => a - b),
        ids,
        "ids increase",
      );

      const resumed = await readEventStream(`${s.relayerUrl}/v1/orders/${order.id}/events`, {
        headers: { "last-event-id": events[2].id ?? "" },
      });
      assert.deepEqual(
        resumed.map((e) => e.event),
        ["split.settled", "device.powered_on"],
      );

      const after = await readEventStream(`${s.relayerUrl}/v1/orders/${order.id}/events`);
      assert.deepEqual(
        after.map((e) => e.event),
        ["state"],
        "a finished order's stream gives its state and closes",
      );
      assert.equal(JSON.parse(after[0].data).status, "success");
    });

    it("relays once: repeating the permit returns the same transaction; a paid order is 409", async () => {
      const s = stack();
      const order = await createOrder(s);
      const permit = await signPermit(s, order);
      const [a, b] = await Promise.all([
        s.api("POST", `/v1/orders/${order.id}/permit`, { body: permit }),
        s.api("POST", `/v1/orders/${order.id}/permit`, { body: permit }),
      ]);
      assert.equal(a.status, 202, a.text);
      assert.equal(b.status, 202, b.text);
      // The indexed payment and the sender's receipt are two observers of one block: wait for both.
      await waitForOrder(s, order.id, (o) => o.status === "success" && o.relay?.status === "mined");
      const again = await s.api("POST", `/v1/orders/${order.id}/permit`, { body: permit });
      assert.equal(again.status, 202, "the mined relay is returned again");
      assert.equal(again.body.status, "mined");
      const chain = createPublicClient({ transport: http(s.chain.rpcUrl) });
      const nonce = await chain.getTransactionCount({ address: localAccount(2).address });
      const cash = await s.api("POST", `/v1/orders/${order.id}/cash`, { token: s.sample.agentKey });
      expectError(cash, 409, "order_already_paid");
      assert.equal(await chain.getTransactionCount({ address: localAccount(2).address }), nonce, "nothing else was sent");
    });

    it("checks the permit before relaying: wrong signer or amount is 422, no funds is 422", async () => {
      const s = stack();
      const order = await createOrder(s);
      const permit = await signPermit(s, order);
      const wrongOwner = await s.api("POST", `/v1/orders/${order.id}/permit`, {
        body: { owner: localAccount(8).address, signature: permit.signature },
      });
      expectError(wrongOwner, 422, "invalid_parameters");
      assert.equal(wrongOwner.body.error.details[0].path, "signature");
      // A smart-contract account's signature may be longer than 65 bytes: one that verifies for nobody (neither by
      // ECDSA nor by the owner's ERC-1271, asked of the chain) is refused on the signature, one past 8 KiB as malformed.
      const long = await s.api("POST", `/v1/orders/${order.id}/permit`, {
        body: { owner: permit.owner, signature: `0x${"ab".repeat(300)}` },
      });
      expectError(long, 422, "invalid_parameters");
      assert.equal(long.body.error.details[0].path, "signature");
      expectError(
        await s.api("POST", `/v1/orders/${order.id}/permit`, { body: { owner: permit.owner, signature: `0x${"ab".repeat(8_193)}` } }),
        422,
        "invalid_parameters",
      );
      const broke = await signPermit(s, order, 9);
      const noFunds = await s.api("POST", `/v1/orders/${order.id}/permit`, { body: broke });
      expectError(noFunds, 422, "invalid_parameters");
      assert.match(noFunds.body.error.message, /balance/);
      expectError(
        await s.api("POST", `/v1/orders/${order.id}/permit`, { body: { owner: "0x12", signature: "0x00" } }),
        422,
        "invalid_parameters",
      );
      expectError(
        await s.api("POST", `/v1/orders/${order.id}/permit`, { body: "nope", headers: { "content-type": "application/json" } }),
        400,
        "invalid_body",
      );
      const still = await s.api("GET", `/v1/orders/${order.id}`);
      assert.equal(still.body.status, "pending");
      assert.equal(still.body.relay, null, "nothing was queued");
    });

    it("offers the EIP-3009 authorization of the local stack's USDC beside the permit: another signer's is 422, a paid order 409", async () => {
      // The local stack's stablecoin has USDC v2.2's signatures: the relayer asked the token (authorizationState
      // answers) and read its EIP-712 domain without ERC-5267 (name "USDC", version "2", checked against
      // DOMAIN_SEPARATOR()). The order offers both rails; the authorization's nonce binds it to the order.
      const s = stack();
      const order = await createOrder(s);
      const details = order.paymentDetails;
      assert.equal(details.permit.primaryType, "Permit");
      assert.equal(details.authorization.primaryType, "ReceiveWithAuthorization");
      assert.deepEqual(details.authorization.domain, {
        name: "USDC",
        version: "2",
        chainId: details.chainId,
        verifyingContract: details.token.address,
      });
      assert.deepEqual(details.permit.domain, details.authorization.domain);
      const wallet = privateKeyToAccount(localPrivateKey(7));
      const signed = {
        chainId: details.chainId,
        router: details.router,
        order: paymentOrderOf(details.order),
        tokenDomain: details.authorization.domain,
      };
      const stranger = await signOrderAuthorization(localAccount(8), signed);
      const wrong = await s.api("POST", `/v1/orders/${order.id}/authorization`, { body: { from: wallet.address, signature: stranger } });
      expectError(wrong, 422, "invalid_parameters");
      assert.equal(wrong.body.error.details[0].path, "signature");
      assert.equal((await s.api("GET", `/v1/orders/${order.id}`)).body.relay, null, "nothing was queued");
      const signature = await signOrderAuthorization(wallet, signed);
      const relayed = await s.api("POST", `/v1/orders/${order.id}/authorization`, { body: { from: wallet.address, signature } });
      assert.equal(relayed.status, 202, relayed.text);
      const paid = await waitForOrder(s, order.id, (o) => o.status === "success");
      assert.equal(paid.payment.rail, "authorization");
      assert.equal(paid.payment.payer, wallet.address);
      expectError(await s.api("POST", `/v1/orders/${order.id}/permit`, { body: await signPermit(s, order) }), 409, "order_already_paid");
    });

    it("takes cash confirmations only from an agent key of the order's tenant", async () => {
      const s = stack();
      const order = await createOrder(s);
      expectError(await s.api("POST", `/v1/orders/${order.id}/cash`), 401, "unauthorized");
      expectError(await s.api("POST", `/v1/orders/${order.id}/cash`, { token: s.sample.developerKey }), 403, "forbidden");
      const unknown = await s.api("POST", "/v1/orders/ord_00000000000000000000000000/cash", { token: s.sample.agentKey });
      expectError(unknown, 404, "not_found");
    });
  });
}
