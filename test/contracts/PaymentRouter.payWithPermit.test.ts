import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { getAddress, toHex } from "viem";
import {
  USDC,
  deployPayments,
  expectedLegs,
  makeOrder,
  networkHelpers,
  permitPayment,
  publicClient,
  routerAs,
  signPermit,
  signVoucher,
  viem,
} from "./fixture.ts";

describe("PaymentRouter.payWithPermit", () => {
  it("pulls exactly the order amount with one permit and settles it 50/40/10 in the same transaction", async () => {
    const p = await networkHelpers.loadFixture(deployPayments);
    const { payer, relayer, assetOwner, operator, protocol } = p.accounts;
    const order = await makeOrder(p, USDC(2.5));

    const asRelayer = await routerAs(p, relayer);
    const hash = await asRelayer.write.payWithPermit(await permitPayment(p, order));
    const receipt = await publicClient.waitForTransactionReceipt({ hash });
    assert.equal(receipt.status, "success");
    assert.equal(receipt.from, relayer.account.address.toLowerCase(), "the relayer paid the gas");

    assert.equal(await p.token.read.balanceOf([payer.account.address]), USDC(1_000) - USDC(2.5));
    assert.equal(await p.token.read.balanceOf([p.split.address]), USDC(2.5));
    assert.equal(await p.token.read.balanceOf([p.router.address]), 0n);
    assert.equal(await p.token.read.allowance([payer.account.address, p.router.address]), 0n);
    const [owner, op, proto] = expectedLegs(USDC(2.5));
    assert.equal(await p.split.read.claimable([assetOwner.account.address]), owner);
    assert.equal(await p.split.read.claimable([operator.account.address]), op);
    assert.equal(await p.split.read.claimable([protocol.account.address]), proto);
    assert.equal(await p.router.read.isPaid([order.orderId]), true);
  });

  it("emits OrderPaid with the permit rail", async () => {
    const p = await networkHelpers.loadFixture(deployPayments);
    const order = await makeOrder(p, USDC(3));
    await viem.assertions.emitWithArgs(p.router.write.payWithPermit(await permitPayment(p, order)), p.router, "OrderPaid", [
      order.orderId,
      order.deviceId,
      getAddress(p.accounts.payer.account.address),
      getAddress(p.token.address),
      getAddress(p.split.address),
      USDC(3),
      0,
    ]);
  });

  it("makes the split emit YieldDeposited with the order id as reference and the three legs", async () => {
    const p = await networkHelpers.loadFixture(deployPayments);
    const order = await makeOrder(p, USDC(3.33));
    await viem.assertions.emitWithArgs(p.router.write.payWithPermit(await permitPayment(p, order)), p.split, "YieldDeposited", [
      toHex(order.orderId, { size: 32 }),
      getAddress(p.router.address),
      USDC(3.33),
      ...expectedLegs(USDC(3.33)),
    ]);
  });

  it("reverts with InvalidPermit when the permit is not the payer's", async () => {
    const p = await networkHelpers.loadFixture(deployPayments);
    const order = await makeOrder(p, USDC(1));
    const permit = await signPermit(p, order, { owner: p.accounts.stranger });
    await viem.assertions.revertWithCustomErrorWithArgs(
      p.router.write.payWithPermit([order, await signVoucher(p, order), p.accounts.payer.account.address, permit.signature]),
      p.router,
      "InvalidPermit",
      [getAddress(p.accounts.payer.account.address)],
    );
    assert.equal(await p.router.read.isPaid([order.orderId]), false);
  });

  it("reverts with InvalidPermit when the permit's deadline is not the order's digest", async () => {
    const p = await networkHelpers.loadFixture(deployPayments);
    const order = await makeOrder(p, USDC(1));
    const permit = await signPermit(p, order, { deadline: order.expiry });
    await viem.assertions.revertWithCustomError(
      p.router.write.payWithPermit([order, await signVoucher(p, order), permit.owner, permit.signature]),
      p.router,
      "InvalidPermit",
    );
  });

  it("reverts with InvalidPermit when the permit grants less than the order amount", async () => {
    const p = await networkHelpers.loadFixture(deployPayments);
    const order = await makeOrder(p, USDC(5));
    const permit = await signPermit(p, order, { value: USDC(4) });
    await viem.assertions.revertWithCustomError(
      p.router.write.payWithPermit([order, await signVoucher(p, order), permit.owner, permit.signature]),
      p.router,
      "InvalidPermit",
    );
  });

  it("reverts with the token's error when the payer cannot cover the amount", async () => {
    const p = await networkHelpers.loadFixture(deployPayments);
    const order = await makeOrder(p, USDC(5_000));
    await viem.assertions.revertWithCustomError(
      p.router.write.payWithPermit(await permitPayment(p, order)),
      p.token,
      "ERC20InsufficientBalance",
    );
  });
});
