import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { getAddress, parseEventLogs, toHex } from "viem";
import {
  MAX_UINT256,
  USDC,
  deployPayments,
  expectedLegs,
  makeOrder,
  networkHelpers,
  publicClient,
  routerAs,
  signVoucher,
  tokenAs,
  viem,
} from "./fixture.ts";

describe("PaymentRouter.pay (approval rail)", () => {
  it("pulls exactly the order amount from the caller's allowance and settles it 50/40/10", async () => {
    const p = await networkHelpers.loadFixture(deployPayments);
    const { payer, assetOwner, operator, protocol } = p.accounts;
    const order = await makeOrder(p, USDC(2.5));
    await (await tokenAs(p, payer)).write.approve([p.router.address, USDC(2.5)]);

    const hash = await (await routerAs(p, payer)).write.pay([order, await signVoucher(p, order)]);
    const receipt = await publicClient.waitForTransactionReceipt({ hash });
    assert.equal(receipt.status, "success");

    assert.equal(await p.token.read.balanceOf([payer.account.address]), USDC(1_000) - USDC(2.5));
    assert.equal(await p.token.read.balanceOf([p.split.address]), USDC(2.5));
    assert.equal(await p.token.read.balanceOf([p.router.address]), 0n);
    assert.equal(await p.token.read.allowance([payer.account.address, p.router.address]), 0n);
    const [owner, op, proto] = expectedLegs(USDC(2.5));
    assert.deepEqual([owner, op, proto], [USDC(1.25), USDC(1), USDC(0.25)]);
    assert.equal(await p.split.read.claimable([assetOwner.account.address]), owner);
    assert.equal(await p.split.read.claimable([operator.account.address]), op);
    assert.equal(await p.split.read.claimable([protocol.account.address]), proto);
    assert.equal(await p.router.read.isPaid([order.orderId]), true);
  });

  it("spends only the order amount of a larger standing approval", async () => {
    const p = await networkHelpers.loadFixture(deployPayments);
    const { payer } = p.accounts;
    await (await tokenAs(p, payer)).write.approve([p.router.address, USDC(10)]);
    const asPayer = await routerAs(p, payer);

    const first = await makeOrder(p, USDC(2.5));
    await asPayer.write.pay([first, await signVoucher(p, first)]);
    assert.equal(await p.token.read.allowance([payer.account.address, p.router.address]), USDC(7.5));

    const second = await makeOrder(p, USDC(7.5));
    await asPayer.write.pay([second, await signVoucher(p, second)]);
    assert.equal(await p.token.read.allowance([payer.account.address, p.router.address]), 0n);
    assert.equal(await p.token.read.balanceOf([payer.account.address]), USDC(990));
    assert.equal(await p.token.read.balanceOf([p.split.address]), USDC(10));
    assert.equal(await p.token.read.balanceOf([p.router.address]), 0n);
  });

  it("emits OrderPaid with the caller as payer and the approval rail (1)", async () => {
    const p = await networkHelpers.loadFixture(deployPayments);
    const { payer } = p.accounts;
    const order = await makeOrder(p, USDC(3));
    await (await tokenAs(p, payer)).write.approve([p.router.address, MAX_UINT256]);
    await viem.assertions.emitWithArgs((await routerAs(p, payer)).write.pay([order, await signVoucher(p, order)]), p.router, "OrderPaid", [
      order.orderId,
      order.deviceId,
      getAddress(payer.account.address),
      getAddress(p.token.address),
      getAddress(p.split.address),
      USDC(3),
      1,
    ]);
  });

  it("makes the split emit YieldDeposited with the order id as reference and the router as depositor", async () => {
    const p = await networkHelpers.loadFixture(deployPayments);
    const { payer } = p.accounts;
    const order = await makeOrder(p, USDC(3.33));
    await (await tokenAs(p, payer)).write.approve([p.router.address, MAX_UINT256]);
    await viem.assertions.emitWithArgs(
      (await routerAs(p, payer)).write.pay([order, await signVoucher(p, order)]),
      p.split,
      "YieldDeposited",
      [toHex(order.orderId, { size: 32 }), getAddress(p.router.address), USDC(3.33), USDC(1.665), USDC(1.332), USDC(0.333)],
    );
  });

  it("moves the tokens in one transfer straight from the payer into the split, never through the router", async () => {
    const p = await networkHelpers.loadFixture(deployPayments);
    const { payer } = p.accounts;
    const order = await makeOrder(p, USDC(4));
    await (await tokenAs(p, payer)).write.approve([p.router.address, MAX_UINT256]);
    const hash = await (await routerAs(p, payer)).write.pay([order, await signVoucher(p, order)]);
    const receipt = await publicClient.waitForTransactionReceipt({ hash });
    const transfers = parseEventLogs({ abi: p.token.abi, eventName: "Transfer", logs: receipt.logs });
    assert.equal(transfers.length, 1);
    assert.equal(transfers[0].address, p.token.address.toLowerCase());
    assert.deepEqual(transfers[0].args, {
      from: getAddress(payer.account.address),
      to: getAddress(p.split.address),
      value: USDC(4),
    });
  });

  it("reverts with ERC20InsufficientAllowance when the allowance is one base unit short", async () => {
    const p = await networkHelpers.loadFixture(deployPayments);
    const { payer } = p.accounts;
    const order = await makeOrder(p, USDC(5));
    await (await tokenAs(p, payer)).write.approve([p.router.address, USDC(5) - 1n]);
    await viem.assertions.revertWithCustomErrorWithArgs(
      (await routerAs(p, payer)).write.pay([order, await signVoucher(p, order)]),
      p.token,
      "ERC20InsufficientAllowance",
      [getAddress(p.router.address), USDC(5) - 1n, USDC(5)],
    );
    assert.equal(await p.router.read.isPaid([order.orderId]), false);
    assert.equal(await p.token.read.balanceOf([payer.account.address]), USDC(1_000));
    assert.equal(await p.token.read.balanceOf([p.split.address]), 0n);
  });

  it("reverts with ERC20InsufficientAllowance when the caller never approved the router", async () => {
    const p = await networkHelpers.loadFixture(deployPayments);
    const order = await makeOrder(p, USDC(1));
    await viem.assertions.revertWithCustomErrorWithArgs(
      (await routerAs(p, p.accounts.payer)).write.pay([order, await signVoucher(p, order)]),
      p.token,
      "ERC20InsufficientAllowance",
      [getAddress(p.router.address), 0n, USDC(1)],
    );
  });

  it("a failed payment leaves the order payable", async () => {
    const p = await networkHelpers.loadFixture(deployPayments);
    const { payer } = p.accounts;
    const order = await makeOrder(p, USDC(1));
    const voucher = await signVoucher(p, order);
    const asPayer = await routerAs(p, payer);
    await viem.assertions.revertWithCustomError(asPayer.write.pay([order, voucher]), p.token, "ERC20InsufficientAllowance");
    await (await tokenAs(p, payer)).write.approve([p.router.address, USDC(1)]);
    await viem.assertions.emit(asPayer.write.pay([order, voucher]), p.router, "OrderPaid");
    assert.equal(await p.router.read.isPaid([order.orderId]), true);
  });

  it("reverts with ERC20InsufficientBalance when the caller's balance cannot cover the amount", async () => {
    const p = await networkHelpers.loadFixture(deployPayments);
    const { payer } = p.accounts;
    const order = await makeOrder(p, USDC(1_000) + 1n);
    await (await tokenAs(p, payer)).write.approve([p.router.address, MAX_UINT256]);
    await viem.assertions.revertWithCustomErrorWithArgs(
      (await routerAs(p, payer)).write.pay([order, await signVoucher(p, order)]),
      p.token,
      "ERC20InsufficientBalance",
      [getAddress(payer.account.address), USDC(1_000), USDC(1_000) + 1n],
    );
  });

  it("always pays from the caller: another account cannot pay with the payer's standing approval", async () => {
    const p = await networkHelpers.loadFixture(deployPayments);
    const { payer, stranger } = p.accounts;
    await (await tokenAs(p, payer)).write.approve([p.router.address, MAX_UINT256]);
    const order = await makeOrder(p, USDC(1));
    await viem.assertions.revertWithCustomErrorWithArgs(
      (await routerAs(p, stranger)).write.pay([order, await signVoucher(p, order)]),
      p.token,
      "ERC20InsufficientAllowance",
      [getAddress(p.router.address), 0n, USDC(1)],
    );
    assert.equal(await p.token.read.balanceOf([payer.account.address]), USDC(1_000));
    assert.equal(await p.token.read.allowance([payer.account.address, p.router.address]), MAX_UINT256);
  });

  it("lets any account with its own funds pay (the voucher does not name a payer)", async () => {
    const p = await networkHelpers.loadFixture(deployPayments);
    const { stranger } = p.accounts;
    await p.token.write.mint([stranger.account.address, USDC(2)]);
    await (await tokenAs(p, stranger)).write.approve([p.router.address, USDC(2)]);
    const order = await makeOrder(p, USDC(2));
    await viem.assertions.emitWithArgs(
      (await routerAs(p, stranger)).write.pay([order, await signVoucher(p, order)]),
      p.router,
      "OrderPaid",
      [
        order.orderId,
        order.deviceId,
        getAddress(stranger.account.address),
        getAddress(p.token.address),
        getAddress(p.split.address),
        USDC(2),
        1,
      ],
    );
    assert.equal(await p.token.read.balanceOf([stranger.account.address]), 0n);
  });
});
