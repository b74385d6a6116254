import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { getAddress, toHex } from "viem";
import { orderDigest, permitSignatureParts } from "../../sdk/src/payment-order.ts";
import {
  AUTHORIZATION_RAIL_ID,
  DUMMY_SIGNATURE,
  USDC,
  authorizationPayment,
  chainId,
  deployPayments,
  deploySplitFor,
  deployUsdcRail,
  expectedLegs,
  makeOrder,
  networkHelpers,
  publicClient,
  routerAs,
  signAuthorization,
  signVoucher,
  usdcDomain,
  viem,
} from "./fixture.ts";

/** The fixture with RehearsalUsdc (EIP-3009), the router paying through a split factory of it. */
async function deployWithUsdc() {
  const p = await deployPayments();
  return { ...p, ...(await deployUsdcRail(p)) };
}
type WithUsdc = Awaited<ReturnType<typeof deployWithUsdc>>;

const usdcOrder = (p: WithUsdc, amount: bigint, overrides = {}) =>
  makeOrder(p, amount, { token: p.usdc.address, split: p.usdcSplit.address, ...overrides });

describe("PaymentRouter.payWithAuthorization", () => {
  it("moves exactly the order amount with one receive authorization and settles it 50/40/10, submitted by anyone", async () => {
    const p = await networkHelpers.loadFixture(deployWithUsdc);
    const { payer, stranger, assetOwner, operator, protocol } = p.accounts;
    const order = await usdcOrder(p, USDC(2.5));

    const hash = await (await routerAs(p, stranger)).write.payWithAuthorization(await authorizationPayment(p, order));
    const receipt = await publicClient.waitForTransactionReceipt({ hash });
    assert.equal(receipt.status, "success");
    assert.equal(receipt.from, stranger.account.address.toLowerCase(), "a stranger submitted it and paid the gas");

    assert.equal(await p.usdc.read.balanceOf([payer.account.address]), USDC(1_000) - USDC(2.5));
    assert.equal(await p.usdc.read.balanceOf([p.usdcSplit.address]), USDC(2.5));
    assert.equal(await p.usdc.read.balanceOf([p.router.address]), 0n, "nothing stays in the router");
    const [owner, op, proto] = expectedLegs(USDC(2.5));
    assert.equal(await p.usdcSplit.read.claimable([assetOwner.account.address]), owner);
    assert.equal(await p.usdcSplit.read.claimable([operator.account.address]), op);
    assert.equal(await p.usdcSplit.read.claimable([protocol.account.address]), proto);
    assert.equal(await p.router.read.isPaid([order.orderId]), true);
    assert.equal(await p.usdc.read.authorizationState([payer.account.address, await p.router.read.authorizationNonce([order])]), true);
  });

  it("emits OrderPaid with the authorization rail, and the split's YieldDeposited with the three legs", async () => {
    const p = await networkHelpers.loadFixture(deployWithUsdc);
    const order = await usdcOrder(p, USDC(3.33));
    const args = await authorizationPayment(p, order);
    const hash = await p.router.write.payWithAuthorization(args);
    await viem.assertions.emitWithArgs(Promise.resolve(hash), p.router, "OrderPaid", [
      order.orderId,
      order.deviceId,
      getAddress(p.accounts.payer.account.address),
      getAddress(p.usdc.address),
      getAddress(p.usdcSplit.address),
      USDC(3.33),
      AUTHORIZATION_RAIL_ID,
    ]);
    await viem.assertions.emitWithArgs(Promise.resolve(hash), p.usdcSplit, "YieldDeposited", [
      toHex(order.orderId, { size: 32 }),
      getAddress(p.router.address),
      USDC(3.33),
      ...expectedLegs(USDC(3.33)),
    ]);
    await viem.assertions.emitWithArgs(Promise.resolve(hash), p.usdc, "AuthorizationUsed", [
      getAddress(p.accounts.payer.account.address),
      await p.router.read.hashOrder([order]),
    ]);
  });

  it("takes the order's digest as the authorization nonce, the same value as the permit deadline and the SDK's", async () => {
    const p = await networkHelpers.loadFixture(deployWithUsdc);
    const order = await usdcOrder(p, USDC(1));
    const nonce = await p.router.read.authorizationNonce([order]);
    assert.equal(nonce, await p.router.read.hashOrder([order]));
    assert.equal(BigInt(nonce), await p.router.read.permitDeadline([order]));
    assert.equal(nonce, orderDigest(chainId, p.router.address, order));
  });

  describe("front-running", () => {
    it("the token refuses the authorization from anyone but the router, which still pays the order with it", async () => {
      const p = await networkHelpers.loadFixture(deployWithUsdc);
      const { payer, stranger } = p.accounts;
      const order = await usdcOrder(p, USDC(4));
      const auth = await signAuthorization(p, order);
      const nonce = await p.router.read.authorizationNonce([order]);
      const usdcAsStranger = await viem.getContractAt("RehearsalUsdc", p.usdc.address, { client: { wallet: stranger } });
      const call = [payer.account.address, p.router.address, order.amount, 0n, order.expiry, nonce, auth.v, auth.r, auth.s] as const;

      await viem.assertions.revertWithCustomErrorWithArgs(usdcAsStranger.write.receiveWithAuthorization(call), p.usdc, "CallerNotPayee", [
        getAddress(stranger.account.address),
        getAddress(p.router.address),
      ]);
      // A receive authorization is no transfer authorization (another type hash): it cannot move the tokens either.
      await viem.assertions.revertWithCustomError(usdcAsStranger.write.transferWithAuthorization(call), p.usdc, "InvalidSignature");

      await p.router.write.payWithAuthorization([order, await signVoucher(p, order), auth.from, auth.signature]);
      assert.equal(await p.router.read.isPaid([order.orderId]), true);
      assert.equal(await p.usdc.read.balanceOf([payer.account.address]), USDC(1_000) - USDC(4));
    });

    it("someone who submits the payment first pays the order once; the relayer's call then reverts", async () => {
      const p = await networkHelpers.loadFixture(deployWithUsdc);
      const { payer, relayer, stranger } = p.accounts;
      const order = await usdcOrder(p, USDC(4));
      const args = await authorizationPayment(p, order);

      await (await routerAs(p, stranger)).write.payWithAuthorization(args);
      await viem.assertions.revertWithCustomErrorWithArgs(
        (await routerAs(p, relayer)).write.payWithAuthorization(args),
        p.router,
        "OrderAlreadyPaid",
        [order.orderId],
      );
      assert.equal(await p.usdc.read.balanceOf([payer.account.address]), USDC(1_000) - USDC(4), "charged once");
      assert.equal(await p.usdc.read.balanceOf([p.usdcSplit.address]), USDC(4));
    });
  });

  describe("replay", () => {
    it("the same signature again reverts with OrderAlreadyPaid", async () => {
      const p = await networkHelpers.loadFixture(deployWithUsdc);
      const order = await usdcOrder(p, USDC(1));
      const args = await authorizationPayment(p, order);
      await p.router.write.payWithAuthorization(args);
      await viem.assertions.revertWithCustomErrorWithArgs(p.router.write.payWithAuthorization(args), p.router, "OrderAlreadyPaid", [
        order.orderId,
      ]);
      assert.equal(await p.usdc.read.balanceOf([p.accounts.payer.account.address]), USDC(1_000) - USDC(1));
    });

    it("an authorization signed for one order does not pay another of the same amount and expiry", async () => {
      const p = await networkHelpers.loadFixture(deployWithUsdc);
      const { payer } = p.accounts;
      const first = await usdcOrder(p, USDC(1));
      const auth = await signAuthorization(p, first);
      const second = await usdcOrder(p, USDC(1), { expiry: first.expiry });

      await viem.assertions.revertWithCustomErrorWithArgs(
        p.router.write.payWithAuthorization([second, await signVoucher(p, second), auth.from, auth.signature]),
        p.router,
        "InvalidAuthorization",
        [getAddress(payer.account.address)],
      );
      assert.equal(await p.router.read.isPaid([second.orderId]), false);
      await p.router.write.payWithAuthorization([first, await signVoucher(p, first), auth.from, auth.signature]);
      assert.equal(await p.usdc.read.balanceOf([payer.account.address]), USDC(1_000) - USDC(1));
    });
  });

  describe("expiry", () => {
    it("reverts with OrderExpired after the order's expiry", async () => {
      const p = await networkHelpers.loadFixture(deployWithUsdc);
      const order = await usdcOrder(p, USDC(1));
      const args = await authorizationPayment(p, order);
      await networkHelpers.time.increaseTo(order.expiry + 1n);
      await viem.assertions.revertWithCustomErrorWithArgs(p.router.write.payWithAuthorization(args), p.router, "OrderExpired", [
        order.orderId,
        order.expiry,
      ]);
    });

    it("ends a second before the order's expiry: the token takes validBefore as exclusive", async () => {
      const p = await networkHelpers.loadFixture(deployWithUsdc);
      const order = await usdcOrder(p, USDC(1));
      const args = await authorizationPayment(p, order);
      await networkHelpers.time.setNextBlockTimestamp(order.expiry);
      await viem.assertions.revertWithCustomError(p.router.write.payWithAuthorization(args), p.router, "InvalidAuthorization");

      const next = await usdcOrder(p, USDC(1), { expiry: BigInt(await networkHelpers.time.latest()) + 60n });
      const nextArgs = await authorizationPayment(p, next);
      await networkHelpers.time.setNextBlockTimestamp(next.expiry - 1n);
      await p.router.write.payWithAuthorization(nextArgs);
      assert.equal(await p.router.read.isPaid([next.orderId]), true);
    });
  });

  describe("reverts with InvalidAuthorization and charges nothing", () => {
    const rejects = async (p: WithUsdc, pay: Promise<unknown>, orderId: bigint) => {
      await viem.assertions.revertWithCustomErrorWithArgs(pay as Promise<`0x${string}`>, p.router, "InvalidAuthorization", [
        getAddress(p.accounts.payer.account.address),
      ]);
      assert.equal(await p.router.read.isPaid([orderId]), false);
      assert.equal(await p.usdc.read.balanceOf([p.accounts.payer.account.address]), USDC(1_000));
    };

    it("when the authorization was signed for another amount", async () => {
      const p = await networkHelpers.loadFixture(deployWithUsdc);
      const order = await usdcOrder(p, USDC(5));
      const auth = await signAuthorization(p, order, { value: USDC(4) });
      await rejects(p, p.router.write.payWithAuthorization([order, await signVoucher(p, order), auth.from, auth.signature]), order.orderId);
    });

    it("when the authorization was signed by someone else than the payer named", async () => {
      const p = await networkHelpers.loadFixture(deployWithUsdc);
      const order = await usdcOrder(p, USDC(1));
      const auth = await signAuthorization(p, order, { from: p.accounts.stranger });
      const voucher = await signVoucher(p, order);
      await rejects(
        p,
        p.router.write.payWithAuthorization([order, voucher, p.accounts.payer.account.address, auth.signature]),
        order.orderId,
      );
    });

    it("when the payer cancelled the authorization with cancelAuthorization first", async () => {
      const p = await networkHelpers.loadFixture(deployWithUsdc);
      const { payer, stranger } = p.accounts;
      const order = await usdcOrder(p, USDC(1));
      const args = await authorizationPayment(p, order);
      const nonce = await p.router.read.authorizationNonce([order]);
      const cancellation = permitSignatureParts(
        await payer.signTypedData({
          account: payer.account,
          domain: await usdcDomain(p.usdc.address),
          types: {
            CancelAuthorization: [
              { name: "authorizer", type: "address" },
              { name: "nonce", type: "bytes32" },
            ],
          },
          primaryType: "CancelAuthorization",
          message: { authorizer: payer.account.address, nonce },
        }),
      );
      // Anyone may submit the payer's signed cancellation.
      const usdcAsStranger = await viem.getContractAt("RehearsalUsdc", p.usdc.address, { client: { wallet: stranger } });
      await usdcAsStranger.write.cancelAuthorization([payer.account.address, nonce, cancellation.v, cancellation.r, cancellation.s]);
      await rejects(p, p.router.write.payWithAuthorization(args), order.orderId);
    });

    it("when the payer is blocklisted by the token", async () => {
      const p = await networkHelpers.loadFixture(deployWithUsdc);
      const order = await usdcOrder(p, USDC(1));
      const args = await authorizationPayment(p, order);
      await p.usdc.write.blacklist([p.accounts.payer.account.address]);
      await rejects(p, p.router.write.payWithAuthorization(args), order.orderId);
    });

    it("when the payer cannot cover the amount", async () => {
      const p = await networkHelpers.loadFixture(deployWithUsdc);
      const order = await usdcOrder(p, USDC(5_000));
      await rejects(p, p.router.write.payWithAuthorization(await authorizationPayment(p, order)), order.orderId);
    });
  });

  it("reverts with InvalidAuthorization for a token without EIP-3009 (the test stablecoin)", async () => {
    const p = await networkHelpers.loadFixture(deployWithUsdc);
    await p.router.write.setSplitFactory([p.factory.address]); // back to the test stablecoin's splits
    const order = await makeOrder(p, USDC(1));
    // The payer signs an authorization as for USDC, but the test stablecoin has no receiveWithAuthorization.
    const auth = await signAuthorization(p, order);
    await viem.assertions.revertWithCustomErrorWithArgs(
      p.router.write.payWithAuthorization([order, await signVoucher(p, order), auth.from, auth.signature]),
      p.router,
      "InvalidAuthorization",
      [getAddress(p.accounts.payer.account.address)],
    );
    assert.equal(await p.router.read.isPaid([order.orderId]), false);
  });

  it("a token whose fallback accepts any call never becomes the router's, so tokens the router holds by mistake cannot pay an order", async () => {
    const p = await networkHelpers.loadFixture(deployWithUsdc);
    const phantom = await viem.deployContract("PhantomPermitToken");
    const split = await deploySplitFor(p, phantom.address, { setFactory: false });
    await viem.assertions.revertWithCustomErrorWithArgs(
      p.router.write.setSplitFactory([await split.read.factory()]),
      p.router,
      "TokenAcceptsInvalidSignature",
      [getAddress(phantom.address)],
    );
    // Tokens sent to the router by mistake must not pay the order.
    await phantom.write.mint([p.router.address, USDC(10)]);
    const order = await makeOrder(p, USDC(1), { token: phantom.address, split: split.address });
    await viem.assertions.revertWithCustomErrorWithArgs(
      p.router.write.payWithAuthorization([order, await signVoucher(p, order), p.accounts.payer.account.address, DUMMY_SIGNATURE]),
      p.router,
      "TokenNotAllowed",
      [getAddress(phantom.address), getAddress(split.address)],
    );
    assert.equal(await phantom.read.balanceOf([p.router.address]), USDC(10));
    assert.equal(await phantom.read.balanceOf([split.address]), 0n);
  });

  it("checks the voucher and the pause like every rail", async () => {
    const p = await networkHelpers.loadFixture(deployWithUsdc);
    const order = await usdcOrder(p, USDC(1));
    const auth = await signAuthorization(p, order);
    const forged = await signVoucher(p, order, { signer: p.accounts.stranger });
    await viem.assertions.revertWithCustomErrorWithArgs(
      p.router.write.payWithAuthorization([order, forged, auth.from, auth.signature]),
      p.router,
      "InvalidVoucherSigner",
      [getAddress(p.accounts.stranger.account.address)],
    );
    await (await routerAs(p, p.accounts.pauser)).write.pause();
    await viem.assertions.revertWithCustomError(
      p.router.write.payWithAuthorization([order, await signVoucher(p, order), auth.from, auth.signature]),
      p.router,
      "EnforcedPause",
    );
  });
});
