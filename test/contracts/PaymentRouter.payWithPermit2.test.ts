// payWithPermit2: one Permit2 signature with the order as its witness pays a token that has neither EIP-2612 nor
// EIP-3009 (PlainStablecoin, as USDT on many chains), gaslessly, once, before the order's expiry; Permit2 itself
// is the one compiled from @uniswap/v4-periphery's sources, installed at its canonical address as on the local stack.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { domainSeparator, getAddress, toHex, type TypedDataDefinition } from "viem";
import { PERMIT2_ADDRESS, permit2TypedData, permit2WitnessTypes } from "../../sdk/src/payment-order.ts";
import {
  MAX_UINT256,
  PERMIT2_RAIL_ID,
  USDC,
  connection,
  deployPayments,
  deployPermit2Rail,
  expectedLegs,
  makeOrder,
  networkHelpers,
  permit2Payment,
  publicClient,
  routerAs,
  signPermit2,
  signVoucher,
  viem,
} from "./fixture.ts";
import { signAsAccount, smartAccount } from "./smart-account-fixture.ts";

async function deployWithPermit2() {
  const p = await deployPayments();
  return { ...p, ...(await deployPermit2Rail(p)) };
}
type WithPermit2 = Awaited<ReturnType<typeof deployWithPermit2>>;

const plainOrder = (p: WithPermit2, amount: bigint, overrides = {}) =>
  makeOrder(p, amount, { token: p.plain.address, split: p.plainSplit.address, ...overrides });

describe("PaymentRouter.payWithPermit2", () => {
  it("Permit2 is at its canonical address, with its EIP-712 domain for this chain and that address", async () => {
    const p = await networkHelpers.loadFixture(deployWithPermit2);
    assert.equal(getAddress(await p.router.read.PERMIT2()), PERMIT2_ADDRESS);
    assert.equal(
      await p.permit2.read.DOMAIN_SEPARATOR(),
      domainSeparator({ domain: { name: "Permit2", chainId: await publicClient.getChainId(), verifyingContract: PERMIT2_ADDRESS } }),
    );
  });

  it("moves exactly the order amount from the payer to the split with one signature and settles it 50/40/10", async () => {
    const p = await networkHelpers.loadFixture(deployWithPermit2);
    const { payer, relayer, assetOwner, operator, protocol } = p.accounts;
    const order = await plainOrder(p, USDC(2.5));

    const hash = await (await routerAs(p, relayer)).write.payWithPermit2(await permit2Payment(p, order));
    const receipt = await publicClient.waitForTransactionReceipt({ hash });
    assert.equal(receipt.from, relayer.account.address.toLowerCase(), "the relayer paid the gas");
    assert.equal(await p.plain.read.balanceOf([payer.account.address]), USDC(1_000) - USDC(2.5));
    assert.equal(await p.plain.read.balanceOf([p.plainSplit.address]), USDC(2.5));
    assert.equal(await p.plain.read.balanceOf([p.router.address]), 0n);
    const [owner, op, proto] = expectedLegs(USDC(2.5));
    assert.equal(await p.plainSplit.read.claimable([assetOwner.account.address]), owner);
    assert.equal(await p.plainSplit.read.claimable([operator.account.address]), op);
    assert.equal(await p.plainSplit.read.claimable([protocol.account.address]), proto);
    // Permit2 spent the order id as the payer's nonce.
    const bitmap = await p.permit2.read.nonceBitmap([payer.account.address, order.orderId >> 8n]);
    assert.equal((bitmap >> (order.orderId & 0xffn)) & 1n, 1n);
  });

  it("emits OrderPaid with the Permit2 rail", async () => {
    const p = await networkHelpers.loadFixture(deployWithPermit2);
    const order = await plainOrder(p, USDC(3));
    await viem.assertions.emitWithArgs(p.router.write.payWithPermit2(await permit2Payment(p, order)), p.router, "OrderPaid", [
      order.orderId,
      order.deviceId,
      getAddress(p.accounts.payer.account.address),
      getAddress(p.plain.address),
      getAddress(p.plainSplit.address),
      USDC(3),
      PERMIT2_RAIL_ID,
    ]);
  });

  it("signs the witness type the router names: the SDK's types encode to PERMIT2_WITNESS_TYPE", async () => {
    const p = await networkHelpers.loadFixture(deployWithPermit2);
    const encode = (name: keyof typeof permit2WitnessTypes) =>
      `${name}(${permit2WitnessTypes[name].map((f) => `${f.type} ${f.name}`).join(",")})`;
    assert.equal(await p.router.read.PERMIT2_WITNESS_TYPE(), `PaymentOrder witness)${encode("PaymentOrder")}${encode("TokenPermissions")}`);
  });

  describe("one order, once, until its expiry", () => {
    it("the same signature again reverts with OrderAlreadyPaid, and charges once", async () => {
      const p = await networkHelpers.loadFixture(deployWithPermit2);
      const order = await plainOrder(p, USDC(1));
      const args = await permit2Payment(p, order);
      await p.router.write.payWithPermit2(args);
      await viem.assertions.revertWithCustomErrorWithArgs(p.router.write.payWithPermit2(args), p.router, "OrderAlreadyPaid", [
        order.orderId,
      ]);
      assert.equal(await p.plain.read.balanceOf([p.accounts.payer.account.address]), USDC(999));
    });

    it("a signature for one order does not pay another of the same amount and expiry", async () => {
      const p = await networkHelpers.loadFixture(deployWithPermit2);
      const first = await plainOrder(p, USDC(1));
      const second = await plainOrder(p, USDC(1), { expiry: first.expiry });
      const signature = await signPermit2(p, first);
      await viem.assertions.revertWithCustomErrorWithArgs(
        p.router.write.payWithPermit2([second, await signVoucher(p, second), p.accounts.payer.account.address, signature]),
        p.router,
        "InvalidPermit2",
        [getAddress(p.accounts.payer.account.address)],
      );
      assert.equal(await p.router.read.isPaid([second.orderId]), false);
    });

    it("reverts with OrderExpired after the order's expiry, the Permit2 deadline", async () => {
      const p = await networkHelpers.loadFixture(deployWithPermit2);
      const order = await plainOrder(p, USDC(1));
      const args = await permit2Payment(p, order);
      await networkHelpers.time.increaseTo(order.expiry + 1n);
      await viem.assertions.revertWithCustomErrorWithArgs(p.router.write.payWithPermit2(args), p.router, "OrderExpired", [
        order.orderId,
        order.expiry,
      ]);
    });

    it("the payer voids the signature by spending the order id's Permit2 nonce (invalidateUnorderedNonces)", async () => {
      const p = await networkHelpers.loadFixture(deployWithPermit2);
      const { payer } = p.accounts;
      const order = await plainOrder(p, USDC(1));
      const args = await permit2Payment(p, order);
      const permit2AsPayer = await viem.getContractAt("Permit2", PERMIT2_ADDRESS, { client: { wallet: payer } });
      await permit2AsPayer.write.invalidateUnorderedNonces([order.orderId >> 8n, 1n << (order.orderId & 0xffn)]);
      await viem.assertions.revertWithCustomError(p.router.write.payWithPermit2(args), p.router, "InvalidPermit2");
    });
  });

  describe("reverts with InvalidPermit2(payer) and charges nothing", () => {
    const rejects = async (p: WithPermit2, args: Awaited<ReturnType<typeof permit2Payment>>) => {
      await viem.assertions.revertWithCustomErrorWithArgs(p.router.write.payWithPermit2(args), p.router, "InvalidPermit2", [
        getAddress(args[2]),
      ]);
      assert.equal(await p.router.read.isPaid([args[0].orderId]), false);
      assert.equal(await p.plain.read.balanceOf([p.accounts.payer.account.address]), USDC(1_000));
    };

    it("when the signature is another account's", async () => {
      const p = await networkHelpers.loadFixture(deployWithPermit2);
      const order = await plainOrder(p, USDC(1));
      const signature = await signPermit2(p, order, { signer: p.accounts.stranger });
      await rejects(p, [order, await signVoucher(p, order), p.accounts.payer.account.address, signature]);
    });

    it("when the payer signed another amount", async () => {
      const p = await networkHelpers.loadFixture(deployWithPermit2);
      const order = await plainOrder(p, USDC(5));
      const signature = await signPermit2(p, order, { signed: { ...order, amount: USDC(4) } });
      await rejects(p, [order, await signVoucher(p, order), p.accounts.payer.account.address, signature]);
    });

    it("when the payer has not approved Permit2 for the token", async () => {
      const p = await networkHelpers.loadFixture(deployWithPermit2);
      const asPayer = await viem.getContractAt("PlainStablecoin", p.plain.address, { client: { wallet: p.accounts.payer } });
      await asPayer.write.approve([PERMIT2_ADDRESS, 0n]);
      await rejects(p, await permit2Payment(p, await plainOrder(p, USDC(1))));
    });

    it("when the payer cannot cover the amount", async () => {
      const p = await networkHelpers.loadFixture(deployWithPermit2);
      const order = await plainOrder(p, USDC(5_000));
      await viem.assertions.revertWithCustomError(
        p.router.write.payWithPermit2(await permit2Payment(p, order)),
        p.router,
        "InvalidPermit2",
      );
    });
  });

  it("a multi-owner smart-contract account pays with its ERC-1271 signature (Permit2 asks the account)", async () => {
    const p = await networkHelpers.loadFixture(deployWithPermit2);
    const account = await smartAccount();
    await p.plain.write.mint([account.address, USDC(10)]);
    // The account approved Permit2 once (its own transaction, sent here on its behalf).
    await networkHelpers.impersonateAccount(account.address);
    await networkHelpers.setBalance(account.address, 10n ** 18n);
    const { viem: v } = connection;
    const asAccount = await v.getContractAt("PlainStablecoin", p.plain.address, {
      client: { wallet: await v.getWalletClient(account.address) },
    });
    await asAccount.write.approve([PERMIT2_ADDRESS, MAX_UINT256]);
    await networkHelpers.stopImpersonatingAccount(account.address);

    const order = await plainOrder(p, USDC(2));
    const typedData = permit2TypedData({ chainId: await publicClient.getChainId(), router: p.router.address, order });
    const signature = await signAsAccount(account, typedData as unknown as TypedDataDefinition);
    await (await routerAs(p, p.accounts.relayer)).write.payWithPermit2([order, await signVoucher(p, order), account.address, signature]);
    assert.equal(await p.plain.read.balanceOf([account.address]), USDC(8));
    assert.equal(await p.router.read.isPaid([order.orderId]), true);

    const short = await plainOrder(p, USDC(1));
    const oneOwner = await signAsAccount(
      account,
      permit2TypedData({
        chainId: await publicClient.getChainId(),
        router: p.router.address,
        order: short,
      }) as unknown as TypedDataDefinition,
      { count: 1 },
    );
    await viem.assertions.revertWithCustomError(
      p.router.write.payWithPermit2([short, await signVoucher(p, short), account.address, oneOwner]),
      p.router,
      "InvalidPermit2",
    );
  });

  it("checks the voucher and the pause like every rail", async () => {
    const p = await networkHelpers.loadFixture(deployWithPermit2);
    const order = await plainOrder(p, USDC(1));
    const signature = await signPermit2(p, order);
    const forged = await signVoucher(p, order, { signer: p.accounts.stranger });
    await viem.assertions.revertWithCustomError(
      p.router.write.payWithPermit2([order, forged, p.accounts.payer.account.address, signature]),
      p.router,
      "InvalidVoucherSigner",
    );
    await (await routerAs(p, p.accounts.pauser)).write.pause();
    await viem.assertions.revertWithCustomError(p.router.write.payWithPermit2(await permit2Payment(p, order)), p.router, "EnforcedPause");
    assert.equal(toHex(await p.plain.read.balanceOf([p.plainSplit.address])), "0x0");
  });
});
