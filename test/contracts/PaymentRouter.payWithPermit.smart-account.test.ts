// payWithPermit from smart-contract accounts: a 2-of-3 account (ERC-1271, a signature far longer than 65 bytes)
// pays through RehearsalUsdc's `permit(..., bytes)` (USDC v2.2's overload), deployed or not yet (ERC-6492), and
// still pays after someone front-ran its permit.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { concat, encodeFunctionData, getAddress, serializeErc6492Signature, size, type Hex } from "viem";
import { parseErc6492Signature } from "viem/utils";
import { USDC, deployPayments, deployUsdcRail, makeOrder, networkHelpers, publicClient, routerAs, signVoucher, viem } from "./fixture.ts";
import { accountPermit, fundAccount, smartAccount, type SmartAccount } from "./smart-account-fixture.ts";

async function deployWithUsdc() {
  const p = await deployPayments();
  return { ...p, ...(await deployUsdcRail(p)) };
}
type WithUsdc = Awaited<ReturnType<typeof deployWithUsdc>>;

const usdcOrder = (p: WithUsdc, amount: bigint) => makeOrder(p, amount, { token: p.usdc.address, split: p.usdcSplit.address });

async function relay(
  p: WithUsdc,
  account: SmartAccount,
  amount: bigint,
  signature: (order: Awaited<ReturnType<typeof usdcOrder>>) => Promise<Hex>,
) {
  const order = await usdcOrder(p, amount);
  const args = [order, await signVoucher(p, order), account.address, await signature(order)] as const;
  return { order, args, submit: async () => (await routerAs(p, p.accounts.relayer)).write.payWithPermit(args) };
}

describe("PaymentRouter.payWithPermit from a smart-contract account", () => {
  it("a 2-of-3 account pays with its owners' ERC-1271 signature through the token's bytes overload", async () => {
    const p = await networkHelpers.loadFixture(deployWithUsdc);
    const account = await smartAccount();
    await fundAccount(p.usdc.address, account);
    const { order, args, submit } = await relay(p, account, USDC(2.5), (o) => accountPermit(p, account, o));
    assert.ok(size(args[3]) > 65, "the account's signature is longer than an ECDSA signature");

    await viem.assertions.emitWithArgs(submit(), p.router, "OrderPaid", [
      order.orderId,
      order.deviceId,
      getAddress(account.address),
      getAddress(p.usdc.address),
      getAddress(p.usdcSplit.address),
      USDC(2.5),
      0,
    ]);
    assert.equal(await p.usdc.read.balanceOf([account.address]), USDC(97.5));
    assert.equal(await p.usdc.read.balanceOf([p.usdcSplit.address]), USDC(2.5));
    assert.equal(await p.usdc.read.nonces([account.address]), 1n);
  });

  it("an account not deployed yet pays with an ERC-6492 signature: the router has its factory deploy it first", async () => {
    const p = await networkHelpers.loadFixture(deployWithUsdc);
    const account = await smartAccount({ deployed: false });
    await fundAccount(p.usdc.address, account);
    assert.equal(await publicClient.getCode({ address: account.address }), undefined, "not deployed");
    const { order, args, submit } = await relay(p, account, USDC(3), (o) => accountPermit(p, account, o, { erc6492: true }));
    assert.equal(parseErc6492Signature(args[3]).address, getAddress(account.factory));

    await submit();
    assert.ok((await publicClient.getCode({ address: account.address }))?.length, "deployed by the payment");
    assert.equal(await p.router.read.isPaid([order.orderId]), true);
    assert.equal(await p.usdc.read.balanceOf([account.address]), USDC(97));

    // Once deployed, the same kind of wrapped signature still pays (the factory call is skipped).
    const next = await relay(p, account, USDC(1), (o) => accountPermit(p, account, o, { erc6492: true }));
    await next.submit();
    assert.equal(await p.usdc.read.balanceOf([account.address]), USDC(96));
  });

  it("a front-run of the account's permit still pays: the router checks the consumed permit by ERC-1271", async () => {
    const p = await networkHelpers.loadFixture(deployWithUsdc);
    const { stranger } = p.accounts;
    const account = await smartAccount();
    await fundAccount(p.usdc.address, account);
    const { order, args, submit } = await relay(p, account, USDC(4), (o) => accountPermit(p, account, o));

    // Someone watching the mempool submits the account's permit straight to the token.
    const usdcAsStranger = await viem.getContractAt("RehearsalUsdc", p.usdc.address, { client: { wallet: stranger } });
    await usdcAsStranger.write.permit([
      account.address,
      p.router.address,
      order.amount,
      await p.router.read.permitDeadline([order]),
      args[3],
    ]);
    assert.equal(await p.usdc.read.allowance([account.address, p.router.address]), USDC(4));

    await submit();
    assert.equal(await p.router.read.isPaid([order.orderId]), true);
    assert.equal(await p.usdc.read.balanceOf([account.address]), USDC(96));
    assert.equal(await p.usdc.read.allowance([account.address, p.router.address]), 0n);
  });

  describe("reverts with InvalidPermit(account) and charges nothing", () => {
    const rejects = async (p: WithUsdc, account: SmartAccount, submit: () => Promise<Hex>, orderId: bigint) => {
      await viem.assertions.revertWithCustomErrorWithArgs(submit(), p.router, "InvalidPermit", [getAddress(account.address)]);
      assert.equal(await p.router.read.isPaid([orderId]), false);
      assert.equal(await p.usdc.read.balanceOf([account.address]), USDC(100));
    };

    it("when fewer owners signed than the threshold", async () => {
      const p = await networkHelpers.loadFixture(deployWithUsdc);
      const account = await smartAccount();
      await fundAccount(p.usdc.address, account);
      const { order, submit } = await relay(p, account, USDC(1), (o) => accountPermit(p, account, o, { count: 1 }));
      await rejects(p, account, submit, order.orderId);
    });

    it("when the signature is another account's, or not a signature at all", async () => {
      const p = await networkHelpers.loadFixture(deployWithUsdc);
      const account = await smartAccount();
      const other = await smartAccount();
      await fundAccount(p.usdc.address, account);
      const forOther = await relay(p, account, USDC(1), async (o) => accountPermit(p, other, o));
      await rejects(p, account, forOther.submit, forOther.order.orderId);
      const garbage = await relay(p, account, USDC(1), async () => concat(["0x1234", `0x${"00".repeat(200)}`]));
      await rejects(p, account, garbage.submit, garbage.order.orderId);
    });

    it("when an undeployed account's signature carries no ERC-6492 wrapper (the token finds no code to ask)", async () => {
      const p = await networkHelpers.loadFixture(deployWithUsdc);
      const account = await smartAccount({ deployed: false });
      await fundAccount(p.usdc.address, account);
      const { order, submit } = await relay(p, account, USDC(1), (o) => accountPermit(p, account, o));
      await rejects(p, account, submit, order.orderId);
    });
  });

  it("reverts with InvalidErc6492Signature(account) when the ERC-6492 wrapper does not decode", async () => {
    const p = await networkHelpers.loadFixture(deployWithUsdc);
    const account = await smartAccount({ deployed: false });
    const magic = "0x6492649264926492649264926492649264926492649264926492649264926492";
    const { submit } = await relay(p, account, USDC(1), async () => concat([`0x${"ff".repeat(40)}`, magic]));
    await viem.assertions.revertWithCustomErrorWithArgs(submit(), p.router, "InvalidErc6492Signature", [getAddress(account.address)]);
  });

  it("runs the ERC-6492 factory call from its account deployer, never as the router", async () => {
    const p = await networkHelpers.loadFixture(deployWithUsdc);
    const account = await smartAccount({ deployed: false });
    await fundAccount(p.usdc.address, account);
    // A wrapper whose "factory" is the token and whose calldata moves the router's tokens: it runs as the deployer,
    // which holds nothing, so the router's tokens stay where they are (and the payment fails: no account).
    await p.usdc.write.mint([p.router.address, USDC(5)]);
    const steal = encodeFunctionData({ abi: p.usdc.abi, functionName: "transfer", args: [p.accounts.stranger.account.address, USDC(5)] });
    const { order, submit } = await relay(p, account, USDC(1), async (o) =>
      serializeErc6492Signature({ address: p.usdc.address, data: steal, signature: await accountPermit(p, account, o) }),
    );
    await viem.assertions.revertWithCustomError(submit(), p.router, "InvalidPermit");
    assert.equal(await p.usdc.read.balanceOf([p.router.address]), USDC(5));
    assert.equal(await p.router.read.isPaid([order.orderId]), false);
  });
});
