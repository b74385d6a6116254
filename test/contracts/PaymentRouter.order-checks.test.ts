// The voucher checks every rail runs before any token moves: expiry, amount, token/split registration, the quote
// signer's signature (bound to this chain and router) and single payment per order id.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { concat, getAddress, numberToHex, parseSignature, recoverTypedDataAddress, serializeSignature, zeroAddress, type Hex } from "viem";
import { orderTypedData } from "../../sdk/src/payment-order.ts";
import {
  createFactorySplit,
  RAILS,
  RAIL_ID,
  USDC,
  chainId,
  deployPayments,
  deploySplitFor,
  makeOrder,
  networkHelpers,
  payOnRail,
  prepareRail,
  publicClient,
  railPayer,
  signVoucher,
  viem,
  type Payments,
} from "./fixture.ts";
import type { PaymentOrder } from "../../sdk/src/payment-order.ts";

const SECP256K1_N = 0xfffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141n;

/** The address the router recovers from `signature` for `order` under its own domain. */
function recoveredByRouter(p: Payments, order: PaymentOrder, signature: Hex) {
  return recoverTypedDataAddress({ ...orderTypedData(chainId, p.router.address, order), signature });
}

async function splitBalance(p: Payments) {
  return p.token.read.balanceOf([p.split.address]);
}

for (const rail of RAILS) {
  describe(`PaymentRouter order checks on the ${rail} rail`, () => {
    describe("expiry", () => {
      it("still pays at the exact expiry second", async () => {
        const p = await networkHelpers.loadFixture(deployPayments);
        const order = await makeOrder(p, USDC(1));
        const submit = await prepareRail(p, rail, order);
        await networkHelpers.time.setNextBlockTimestamp(order.expiry);
        const receipt = await publicClient.waitForTransactionReceipt({ hash: await submit() });
        assert.equal(receipt.status, "success");
        const block = await publicClient.getBlock({ blockNumber: receipt.blockNumber });
        assert.equal(block.timestamp, order.expiry);
        assert.equal(await p.router.read.isPaid([order.orderId]), true);
      });

      it("reverts with OrderExpired one second after the expiry", async () => {
        const p = await networkHelpers.loadFixture(deployPayments);
        const order = await makeOrder(p, USDC(1));
        const submit = await prepareRail(p, rail, order);
        await networkHelpers.time.increaseTo(order.expiry + 1n);
        await viem.assertions.revertWithCustomErrorWithArgs(submit(), p.router, "OrderExpired", [order.orderId, order.expiry]);
        assert.equal(await p.router.read.isPaid([order.orderId]), false);
      });

      it("reverts with OrderExpired long after the expiry and for an expiry of zero", async () => {
        const p = await networkHelpers.loadFixture(deployPayments);
        const late = await makeOrder(p, USDC(1));
        const submitLate = await prepareRail(p, rail, late);
        await networkHelpers.time.increaseTo(late.expiry + 86_400n * 365n);
        await viem.assertions.revertWithCustomErrorWithArgs(submitLate(), p.router, "OrderExpired", [late.orderId, late.expiry]);
        const zero = await makeOrder(p, USDC(1), { expiry: 0n });
        await viem.assertions.revertWithCustomErrorWithArgs((await prepareRail(p, rail, zero))(), p.router, "OrderExpired", [
          zero.orderId,
          0n,
        ]);
      });
    });

    it("reverts with ZeroAmount for an order of zero", async () => {
      const p = await networkHelpers.loadFixture(deployPayments);
      const order = await makeOrder(p, 0n);
      const submit = await prepareRail(p, rail, order);
      await viem.assertions.revertWithCustomErrorWithArgs(submit(), p.router, "ZeroAmount", []);
      assert.equal(await p.router.read.isPaid([order.orderId]), false);
    });

    describe("token and split", () => {
      it("reverts with TokenNotAllowed for a split its factory did not create (another factory's split of the device)", async () => {
        const p = await networkHelpers.loadFixture(deployPayments);
        const foreign = await deploySplitFor(p, p.token.address, { setFactory: false });
        const order = await makeOrder(p, USDC(1), { split: foreign.address });
        await viem.assertions.revertWithCustomErrorWithArgs((await prepareRail(p, rail, order))(), p.router, "TokenNotAllowed", [
          getAddress(p.token.address),
          getAddress(foreign.address),
        ]);
        assert.equal(await p.token.read.balanceOf([foreign.address]), 0n);
        assert.equal(await p.router.read.isPaid([order.orderId]), false);
      });

      it("reverts with TokenNotAllowed for a split of another token, in both directions", async () => {
        const p = await networkHelpers.loadFixture(deployPayments);
        const other = await viem.deployContract("TestStablecoin", ["Other USD", "OUSD", p.accounts.admin.account.address]);
        await other.write.mint([p.accounts.payer.account.address, USDC(10)]);
        const otherSplit = await deploySplitFor(p, other.address, { setFactory: false });
        assert.equal(await otherSplit.read.asset(), getAddress(other.address));

        const usdcThroughOtherSplit = await makeOrder(p, USDC(1), { split: otherSplit.address });
        await viem.assertions.revertWithCustomErrorWithArgs(
          (await prepareRail(p, rail, usdcThroughOtherSplit))(),
          p.router,
          "TokenNotAllowed",
          [getAddress(p.token.address), getAddress(otherSplit.address)],
        );
        const otherThroughUsdcSplit = await makeOrder(p, USDC(1), { token: other.address });
        await viem.assertions.revertWithCustomErrorWithArgs(
          (await prepareRail(p, rail, otherThroughUsdcSplit))(),
          p.router,
          "TokenNotAllowed",
          [getAddress(other.address), getAddress(p.split.address)],
        );
        assert.equal(await splitBalance(p), 0n);
      });

      it("reverts with TokenNotAllowed for token address zero, also with split address zero", async () => {
        const p = await networkHelpers.loadFixture(deployPayments);
        // The token is checked before the split (and the factory's token is never zero).
        for (const split of [zeroAddress, p.split.address]) {
          const order = await makeOrder(p, USDC(1), { token: zeroAddress, split });
          await viem.assertions.revertWithCustomErrorWithArgs((await prepareRail(p, rail, order))(), p.router, "TokenNotAllowed", [
            zeroAddress,
            getAddress(split),
          ]);
        }
      });

      it("reverts with TokenNotAllowed while the router has no split factory for the token, and pays again once it is set back", async () => {
        const p = await networkHelpers.loadFixture(deployPayments);
        await p.router.write.removeSplitFactory([p.token.address]);
        const order = await makeOrder(p, USDC(1));
        await viem.assertions.revertWithCustomErrorWithArgs((await prepareRail(p, rail, order))(), p.router, "TokenNotAllowed", [
          getAddress(p.token.address),
          getAddress(p.split.address),
        ]);
        await p.router.write.setSplitFactory([p.factory.address]);
        await viem.assertions.emitWithArgs((await prepareRail(p, rail, order))(), p.router, "OrderPaid", [
          order.orderId,
          order.deviceId,
          getAddress(railPayer(p, rail).account.address),
          getAddress(p.token.address),
          getAddress(p.split.address),
          USDC(1),
          RAIL_ID[rail],
        ]);
      });
    });

    describe("voucher signature", () => {
      it("reverts with InvalidVoucherSigner naming the signer when it lacks the quote-signer role", async () => {
        const p = await networkHelpers.loadFixture(deployPayments);
        for (const signer of [p.accounts.stranger, p.accounts.admin, p.accounts.agent]) {
          const order = await makeOrder(p, USDC(1));
          const voucher = await signVoucher(p, order, { signer });
          await viem.assertions.revertWithCustomErrorWithArgs(
            (await prepareRail(p, rail, order, voucher))(),
            p.router,
            "InvalidVoucherSigner",
            [getAddress(signer.account.address)],
          );
        }
      });

      it("reverts with InvalidVoucherSigner for a quote signer whose role was revoked", async () => {
        const p = await networkHelpers.loadFixture(deployPayments);
        const order = await makeOrder(p, USDC(1));
        const voucher = await signVoucher(p, order);
        await p.router.write.revokeRole([await p.router.read.QUOTE_SIGNER_ROLE(), p.accounts.quoteSigner.account.address]);
        await viem.assertions.revertWithCustomErrorWithArgs(
          (await prepareRail(p, rail, order, voucher))(),
          p.router,
          "InvalidVoucherSigner",
          [getAddress(p.accounts.quoteSigner.account.address)],
        );
      });

      it("reverts with InvalidVoucherSigner(0) for garbage signatures that recover no address", async () => {
        const p = await networkHelpers.loadFixture(deployPayments);
        const order = await makeOrder(p, USDC(1));
        const valid = parseSignature(await signVoucher(p, order));
        // The same signature with s mirrored to the upper half of the curve order recovers the same signer with
        // ecrecover; OpenZeppelin's ECDSA rejects it (malleability), so the router sees address zero.
        const highS = serializeSignature({
          r: valid.r,
          s: numberToHex(SECP256K1_N - BigInt(valid.s), { size: 32 }),
          yParity: valid.yParity === 0 ? 1 : 0,
        });
        const garbage: Hex[] = [
          `0x${"00".repeat(65)}`, // r = s = 0, v = 0
          concat([`0x${"00".repeat(64)}`, "0x1b"]), // r = s = 0, v = 27
          concat([valid.r, valid.s, "0x05"]), // v neither 27 nor 28
          highS,
          "0x", // empty
          "0x1234", // wrong length
          concat([valid.r, valid.s]), // 64 bytes: compact signatures are not accepted
        ];
        for (const signature of garbage) {
          await viem.assertions.revertWithCustomErrorWithArgs(
            (await prepareRail(p, rail, order, signature))(),
            p.router,
            "InvalidVoucherSigner",
            [zeroAddress],
          );
        }
        assert.equal(await p.router.read.isPaid([order.orderId]), false);
      });

      it("reverts with InvalidVoucherSigner when any field of the order was changed after signing", async () => {
        const p = await networkHelpers.loadFixture(deployPayments);
        const signed = await makeOrder(p, USDC(5));
        const voucher = await signVoucher(p, signed);
        // Another device with a split of its own: the device and the split changed together pass the split check.
        const otherSplit = await createFactorySplit(p, `0x${"ab".repeat(32)}`);
        const otherDevice: Hex = otherSplit.assetKey;
        const tampered: PaymentOrder[] = [
          { ...signed, amount: USDC(0.01) },
          { ...signed, orderId: signed.orderId + 1_000_000n },
          { ...signed, deviceId: otherDevice, split: otherSplit.address },
          { ...signed, expiry: signed.expiry + 86_400n },
        ];
        for (const order of tampered) {
          const recovered = await recoveredByRouter(p, order, voucher);
          assert.notEqual(recovered, getAddress(p.accounts.quoteSigner.account.address));
          await viem.assertions.revertWithCustomErrorWithArgs(
            (await prepareRail(p, rail, order, voucher))(),
            p.router,
            "InvalidVoucherSigner",
            [recovered],
          );
        }
        // The device changed alone no longer matches the split: the split check refuses it first.
        const moved = { ...signed, deviceId: otherDevice };
        await viem.assertions.revertWithCustomErrorWithArgs((await prepareRail(p, rail, moved, voucher))(), p.router, "TokenNotAllowed", [
          getAddress(p.token.address),
          getAddress(p.split.address),
        ]);
      });

      it("reverts with InvalidVoucherSigner for a voucher signed for another chain id", async () => {
        const p = await networkHelpers.loadFixture(deployPayments);
        const order = await makeOrder(p, USDC(1));
        const voucher = await signVoucher(p, order, { chainId: chainId + 1 });
        const recovered = await recoveredByRouter(p, order, voucher);
        assert.notEqual(recovered, getAddress(p.accounts.quoteSigner.account.address));
        await viem.assertions.revertWithCustomErrorWithArgs(
          (await prepareRail(p, rail, order, voucher))(),
          p.router,
          "InvalidVoucherSigner",
          [recovered],
        );
      });

      it("reverts with InvalidVoucherSigner for a voucher signed for another router", async () => {
        const p = await networkHelpers.loadFixture(deployPayments);
        const otherRouter = await viem.deployContract("PaymentRouter", [p.accounts.admin.account.address, 0]);
        await otherRouter.write.grantRole([await otherRouter.read.QUOTE_SIGNER_ROLE(), p.accounts.quoteSigner.account.address]);
        const order = await makeOrder(p, USDC(1));
        const voucher = await signVoucher(p, order, { router: otherRouter.address });
        const recovered = await recoveredByRouter(p, order, voucher);
        assert.notEqual(recovered, getAddress(p.accounts.quoteSigner.account.address));
        await viem.assertions.revertWithCustomErrorWithArgs(
          (await prepareRail(p, rail, order, voucher))(),
          p.router,
          "InvalidVoucherSigner",
          [recovered],
        );
        // The other router digests the same order differently.
        assert.notEqual(await otherRouter.read.hashOrder([order]), await p.router.read.hashOrder([order]));
      });

      it("accepts a voucher from a second account granted the quote-signer role", async () => {
        const p = await networkHelpers.loadFixture(deployPayments);
        await p.router.write.grantRole([await p.router.read.QUOTE_SIGNER_ROLE(), p.accounts.stranger.account.address]);
        const order = await makeOrder(p, USDC(1));
        const voucher = await signVoucher(p, order, { signer: p.accounts.stranger });
        await viem.assertions.emit((await prepareRail(p, rail, order, voucher))(), p.router, "OrderPaid");
      });
    });

    describe("single payment per order id", () => {
      for (const second of RAILS) {
        it(`reverts with OrderAlreadyPaid when an order paid on the ${rail} rail is paid again on the ${second} rail`, async () => {
          const p = await networkHelpers.loadFixture(deployPayments);
          const order = await makeOrder(p, USDC(2));
          const voucher = await signVoucher(p, order);
          await payOnRail(p, rail, order, voucher);
          assert.equal(await p.router.read.isPaid([order.orderId]), true);
          const payerBalance = await p.token.read.balanceOf([railPayer(p, second).account.address]);

          await viem.assertions.revertWithCustomErrorWithArgs(
            (await prepareRail(p, second, order, voucher))(),
            p.router,
            "OrderAlreadyPaid",
            [order.orderId],
          );
          assert.equal(await p.token.read.balanceOf([railPayer(p, second).account.address]), payerBalance);
          assert.equal(await splitBalance(p), USDC(2));
        });
      }

      it("reverts with OrderAlreadyPaid for a re-signed order that reuses a paid order id", async () => {
        const p = await networkHelpers.loadFixture(deployPayments);
        const order = await makeOrder(p, USDC(2));
        await payOnRail(p, rail, order);
        const requoted = { ...order, amount: USDC(1), expiry: order.expiry + 60n };
        await viem.assertions.revertWithCustomErrorWithArgs((await prepareRail(p, rail, requoted))(), p.router, "OrderAlreadyPaid", [
          order.orderId,
        ]);
      });
    });
  });
}

describe("PaymentRouter.isPaid bitmap", () => {
  const ids = [0n, 1n, 255n, 256n, 2n ** 255n, 2n ** 256n - 1n];
  const neighbours = [2n, 254n, 257n, 511n, 512n, 2n ** 255n - 1n, 2n ** 255n + 1n, 2n ** 256n - 2n];

  async function paidSet(p: Payments, candidates: bigint[]) {
    const out: bigint[] = [];
    for (const id of candidates) if (await p.router.read.isPaid([id])) out.push(id);
    return out;
  }

  it("marks exactly the paid ids, whether they share a 256-bit word or not", async () => {
    const p = await networkHelpers.loadFixture(deployPayments);
    const all = [...ids, ...neighbours];
    assert.deepEqual(await paidSet(p, all), []);
    const paid: bigint[] = [];
    for (const [i, orderId] of ids.entries()) {
      const order = await makeOrder(p, USDC(1), { orderId });
      await payOnRail(p, RAILS[i % RAILS.length], order);
      paid.push(orderId);
      assert.deepEqual(await paidSet(p, all), paid, `after paying ${orderId}`);
    }
  });

  it("ids in the same word stay independently payable and each is refused a second time", async () => {
    const p = await networkHelpers.loadFixture(deployPayments);
    for (const orderId of [0n, 255n, 1n, 256n, 2n ** 255n]) {
      const order = await makeOrder(p, USDC(1), { orderId });
      await payOnRail(p, "cash", order);
    }
    for (const orderId of [0n, 1n, 255n, 256n, 2n ** 255n]) {
      const order = await makeOrder(p, USDC(1), { orderId });
      await viem.assertions.revertWithCustomErrorWithArgs((await prepareRail(p, "cash", order))(), p.router, "OrderAlreadyPaid", [orderId]);
    }
    // 2 (same word as 0, 1 and 255) and 257 (same word as 256) are still open.
    for (const orderId of [2n, 257n]) {
      await viem.assertions.emit(payOnRail(p, "cash", await makeOrder(p, USDC(1), { orderId })), p.router, "OrderPaid");
    }
    assert.equal(await splitBalance(p), USDC(7));
  });
});
