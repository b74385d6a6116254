// recoverDeposit: tokens at an order's deposit address that the order did not take (an overpayment, a transfer
// after the order's expiry or cancellation, a second transfer) are never lost: the default admin sends them back,
// once the order can no longer be paid.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { getAddress } from "viem";
import {
  USDC,
  deployPayments,
  makeOrder,
  networkHelpers,
  publicClient,
  routerAs,
  signVoucher,
  transferToDeposit,
  viem,
} from "./fixture.ts";

describe("PaymentRouter.recoverDeposit", () => {
  it("sends an overpayment back after the order paid, and emits DepositRecovered", async () => {
    const p = await networkHelpers.loadFixture(deployPayments);
    const { payer } = p.accounts;
    const order = await makeOrder(p, USDC(1));
    const deposit = await transferToDeposit(p, order, USDC(1.4));
    await p.router.write.payFromDeposit([order, await signVoucher(p, order)]);
    const before = await p.token.read.balanceOf([payer.account.address]);

    await viem.assertions.emitWithArgs(
      p.router.write.recoverDeposit([order, payer.account.address, USDC(0.4)]),
      p.router,
      "DepositRecovered",
      [order.orderId, getAddress(deposit), getAddress(payer.account.address), getAddress(p.token.address), USDC(0.4)],
    );
    assert.equal(await p.token.read.balanceOf([payer.account.address]), before + USDC(0.4));
    assert.equal(await p.token.read.balanceOf([deposit]), 0n);
  });

  it("recovers a transfer to a cancelled order's address, creating its deposit first", async () => {
    const p = await networkHelpers.loadFixture(deployPayments);
    const { payer, relayer } = p.accounts;
    const order = await makeOrder(p, USDC(2));
    await (await routerAs(p, relayer)).write.cancelOrder([order.orderId]);
    const deposit = await transferToDeposit(p, order, USDC(2));
    assert.equal(await p.token.read.allowance([deposit, p.router.address]), 0n);

    await p.router.write.recoverDeposit([order, payer.account.address, USDC(2)]);
    assert.equal(await p.token.read.balanceOf([deposit]), 0n);
    assert.equal(await p.token.read.balanceOf([payer.account.address]), USDC(1_000));
    // A later transfer to the same address is recovered again without a second creation.
    await transferToDeposit(p, order, USDC(1));
    await p.router.write.recoverDeposit([order, payer.account.address, USDC(1)]);
    assert.equal(await p.token.read.balanceOf([payer.account.address]), USDC(1_000));
  });

  it("recovers a transfer that arrived after the order's expiry", async () => {
    const p = await networkHelpers.loadFixture(deployPayments);
    const order = await makeOrder(p, USDC(2));
    await networkHelpers.time.increaseTo(order.expiry + 1n);
    const deposit = await transferToDeposit(p, order, USDC(2));
    await p.router.write.recoverDeposit([order, p.accounts.stranger.account.address, USDC(2)]);
    assert.equal(await p.token.read.balanceOf([p.accounts.stranger.account.address]), USDC(2));
    assert.equal(await p.token.read.balanceOf([deposit]), 0n);
  });

  it("refuses while the order can still be paid (DepositStillPayable): the tokens are the order's", async () => {
    const p = await networkHelpers.loadFixture(deployPayments);
    const order = await makeOrder(p, USDC(2));
    const deposit = await transferToDeposit(p, order, USDC(2));
    await viem.assertions.revertWithCustomErrorWithArgs(
      p.router.write.recoverDeposit([order, p.accounts.admin.account.address, USDC(2)]),
      p.router,
      "DepositStillPayable",
      [order.orderId],
    );
    assert.equal(await p.token.read.balanceOf([deposit]), USDC(2));
    await p.router.write.payFromDeposit([order, await signVoucher(p, order)]);
    assert.equal(await p.token.read.balanceOf([p.split.address]), USDC(2));
  });

  it("only the default admin recovers: anyone else, the quote signer and the pauser included, is refused", async () => {
    const p = await networkHelpers.loadFixture(deployPayments);
    const order = await makeOrder(p, USDC(1));
    const deposit = await transferToDeposit(p, order, USDC(1.5));
    await p.router.write.payFromDeposit([order, await signVoucher(p, order)]);
    const adminRole = await p.router.read.DEFAULT_ADMIN_ROLE();
    for (const wallet of [p.accounts.stranger, p.accounts.quoteSigner, p.accounts.pauser, p.accounts.relayer, p.accounts.payer]) {
      await viem.assertions.revertWithCustomErrorWithArgs(
        (await routerAs(p, wallet)).write.recoverDeposit([order, wallet.account.address, USDC(0.5)]),
        p.router,
        "AccessControlUnauthorizedAccount",
        [getAddress(wallet.account.address), adminRole],
      );
    }
    assert.equal(await p.token.read.balanceOf([deposit]), USDC(0.5));
  });

  it("cannot take more than the address holds", async () => {
    const p = await networkHelpers.loadFixture(deployPayments);
    const order = await makeOrder(p, USDC(1));
    const deposit = await transferToDeposit(p, order, USDC(1.5));
    await p.router.write.payFromDeposit([order, await signVoucher(p, order)]);
    await viem.assertions.revertWithCustomError(
      p.router.write.recoverDeposit([order, p.accounts.admin.account.address, USDC(0.6)]),
      p.token,
      "ERC20InsufficientBalance",
    );
    assert.equal(await p.token.read.balanceOf([deposit]), USDC(0.5));
    assert.equal(await publicClient.getCode({ address: deposit }), undefined);
  });
});
