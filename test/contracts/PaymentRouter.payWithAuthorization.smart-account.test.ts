// payWithAuthorization from smart-contract accounts: a 2-of-3 account (ERC-1271) pays through RehearsalUsdc's
// `receiveWithAuthorization(..., bytes)` (USDC v2.2's overload), deployed or not yet (ERC-6492).
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { getAddress, size, type Hex } from "viem";
import {
  AUTHORIZATION_RAIL_ID,
  USDC,
  deployPayments,
  deployUsdcRail,
  makeOrder,
  networkHelpers,
  publicClient,
  routerAs,
  signVoucher,
  viem,
} from "./fixture.ts";
import { accountAuthorization, fundAccount, smartAccount, type SmartAccount } from "./smart-account-fixture.ts";

async function deployWithUsdc() {
  const p = await deployPayments();
  return { ...p, ...(await deployUsdcRail(p)) };
}
type WithUsdc = Awaited<ReturnType<typeof deployWithUsdc>>;
type Order = Awaited<ReturnType<typeof makeOrder>>;

async function relay(p: WithUsdc, account: SmartAccount, amount: bigint, signature: (order: Order) => Promise<Hex>) {
  const order = await makeOrder(p, amount, { token: p.usdc.address, split: p.usdcSplit.address });
  const args = [order, await signVoucher(p, order), account.address, await signature(order)] as const;
  return { order, args, submit: async () => (await routerAs(p, p.accounts.stranger)).write.payWithAuthorization(args) };
}

describe("PaymentRouter.payWithAuthorization from a smart-contract account", () => {
  it("a 2-of-3 account pays with its owners' ERC-1271 signature through the token's bytes overload", async () => {
    const p = await networkHelpers.loadFixture(deployWithUsdc);
    const account = await smartAccount();
    await fundAccount(p.usdc.address, account);
    const { order, args, submit } = await relay(p, account, USDC(2.5), (o) => accountAuthorization(p, account, o));
    assert.ok(size(args[3]) > 65, "the account's signature is longer than an ECDSA signature");

    await viem.assertions.emitWithArgs(submit(), p.router, "OrderPaid", [
      order.orderId,
      order.deviceId,
      getAddress(account.address),
      getAddress(p.usdc.address),
      getAddress(p.usdcSplit.address),
      USDC(2.5),
      AUTHORIZATION_RAIL_ID,
    ]);
    assert.equal(await p.usdc.read.balanceOf([account.address]), USDC(97.5));
    assert.equal(await p.usdc.read.balanceOf([p.usdcSplit.address]), USDC(2.5));
    assert.equal(await p.usdc.read.balanceOf([p.router.address]), 0n);
    assert.equal(await p.usdc.read.authorizationState([account.address, await p.router.read.authorizationNonce([order])]), true);
  });

  it("an account not deployed yet pays with an ERC-6492 signature: the router has its factory deploy it first", async () => {
    const p = await networkHelpers.loadFixture(deployWithUsdc);
    const account = await smartAccount({ deployed: false });
    await fundAccount(p.usdc.address, account);
    const { order, submit } = await relay(p, account, USDC(3), (o) => accountAuthorization(p, account, o, { erc6492: true }));
    assert.equal(await publicClient.getCode({ address: account.address }), undefined, "not deployed");

    await submit();
    assert.ok((await publicClient.getCode({ address: account.address }))?.length, "deployed by the payment");
    assert.equal(await p.router.read.isPaid([order.orderId]), true);
    assert.equal(await p.usdc.read.balanceOf([account.address]), USDC(97));
  });

  describe("reverts with InvalidAuthorization(account) and charges nothing", () => {
    const rejects = async (p: WithUsdc, account: SmartAccount, submit: () => Promise<Hex>, orderId: bigint) => {
      await viem.assertions.revertWithCustomErrorWithArgs(submit(), p.router, "InvalidAuthorization", [getAddress(account.address)]);
      assert.equal(await p.router.read.isPaid([orderId]), false);
      assert.equal(await p.usdc.read.balanceOf([account.address]), USDC(100));
    };

    it("when fewer owners signed than the threshold", async () => {
      const p = await networkHelpers.loadFixture(deployWithUsdc);
      const account = await smartAccount();
      await fundAccount(p.usdc.address, account);
      const { order, submit } = await relay(p, account, USDC(1), (o) => accountAuthorization(p, account, o, { count: 1 }));
      await rejects(p, account, submit, order.orderId);
    });

    it("when the owners signed the authorization of another order", async () => {
      const p = await networkHelpers.loadFixture(deployWithUsdc);
      const account = await smartAccount();
      await fundAccount(p.usdc.address, account);
      const other = await makeOrder(p, USDC(1), { token: p.usdc.address, split: p.usdcSplit.address });
      const signed = await accountAuthorization(p, account, other);
      const { order, submit } = await relay(p, account, USDC(1), async () => signed);
      await rejects(p, account, submit, order.orderId);
    });

    it("when an undeployed account's signature carries no ERC-6492 wrapper", async () => {
      const p = await networkHelpers.loadFixture(deployWithUsdc);
      const account = await smartAccount({ deployed: false });
      await fundAccount(p.usdc.address, account);
      const { order, submit } = await relay(p, account, USDC(1), (o) => accountAuthorization(p, account, o));
      await rejects(p, account, submit, order.orderId);
    });
  });
});
