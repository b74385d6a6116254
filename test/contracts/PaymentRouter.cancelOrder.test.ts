// PaymentRouter.cancelOrder: an order canceller (the service's hot wallet), the quote signer or the admin voids one order before its expiry, without revoking
// the signer; a cancelled order pays on no rail.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { getAddress } from "viem";
import { RAILS, USDC, deployPayments, makeOrder, networkHelpers, payOnRail, prepareRail, routerAs, signVoucher, viem } from "./fixture.ts";

describe("PaymentRouter.cancelOrder", () => {
  for (const rail of RAILS) {
    it(`a cancelled order cannot be paid on the ${rail} rail: OrderIsCancelled, and nothing moves`, async () => {
      const p = await networkHelpers.loadFixture(deployPayments);
      const order = await makeOrder(p, USDC(5));
      const submit = await prepareRail(p, rail, order);
      await (await routerAs(p, p.accounts.quoteSigner)).write.cancelOrder([order.orderId]);
      await viem.assertions.revertWithCustomErrorWithArgs(submit(), p.router, "OrderIsCancelled", [order.orderId]);
      assert.equal(await p.token.read.balanceOf([p.split.address]), 0n);
      assert.equal(await p.router.read.isPaid([order.orderId]), false);
      assert.equal(await p.router.read.isCancelled([order.orderId]), true);
    });
  }

  it("an order canceller, the quote signer and the admin may cancel; emits OrderCancelled with who did", async () => {
    const p = await networkHelpers.loadFixture(deployPayments);
    for (const wallet of [p.accounts.relayer, p.accounts.quoteSigner, p.accounts.admin]) {
      const order = await makeOrder(p, USDC(1));
      await viem.assertions.emitWithArgs((await routerAs(p, wallet)).write.cancelOrder([order.orderId]), p.router, "OrderCancelled", [
        order.orderId,
        getAddress(wallet.account.address),
      ]);
    }
  });

  it("nobody else may cancel: agents, pausers, payers and strangers get AccessControlUnauthorizedAccount", async () => {
    const p = await networkHelpers.loadFixture(deployPayments);
    const order = await makeOrder(p, USDC(1));
    const role = await p.router.read.ORDER_CANCELLER_ROLE();
    for (const wallet of [p.accounts.agent, p.accounts.pauser, p.accounts.payer, p.accounts.stranger]) {
      await viem.assertions.revertWithCustomErrorWithArgs(
        (await routerAs(p, wallet)).write.cancelOrder([order.orderId]),
        p.router,
        "AccessControlUnauthorizedAccount",
        [getAddress(wallet.account.address), role],
      );
    }
    await viem.assertions.emit(payOnRail(p, "cash", order), p.router, "OrderPaid");
  });

  it("voids only that order: the signer keeps its role and its other vouchers pay, neighbours in the bitmap included", async () => {
    const p = await networkHelpers.loadFixture(deployPayments);
    const cancelled = await makeOrder(p, USDC(1), { orderId: 512n });
    await (await routerAs(p, p.accounts.quoteSigner)).write.cancelOrder([cancelled.orderId]);
    assert.equal(await p.router.read.hasRole([await p.router.read.QUOTE_SIGNER_ROLE(), p.accounts.quoteSigner.account.address]), true);
    for (const orderId of [511n, 513n, 768n]) {
      const order = await makeOrder(p, USDC(1), { orderId });
      await viem.assertions.emit(payOnRail(p, "cash", order), p.router, "OrderPaid");
      assert.equal(await p.router.read.isPaid([orderId]), true);
      assert.equal(await p.router.read.isCancelled([orderId]), false);
    }
    assert.equal(await p.router.read.isPaid([512n]), false);
  });

  it("voids every voucher of the order id, even one re-signed with other terms", async () => {
    const p = await networkHelpers.loadFixture(deployPayments);
    const order = await makeOrder(p, USDC(1));
    await (await routerAs(p, p.accounts.admin)).write.cancelOrder([order.orderId]);
    const resigned = { ...order, amount: USDC(2) };
    await viem.assertions.revertWithCustomErrorWithArgs(
      (await routerAs(p, p.accounts.agent)).write.payCash([resigned, await signVoucher(p, resigned)]),
      p.router,
      "OrderIsCancelled",
      [order.orderId],
    );
  });

  it("reverts with OrderAlreadyPaid for a paid order, and OrderIsCancelled when cancelled twice", async () => {
    const p = await networkHelpers.loadFixture(deployPayments);
    const asSigner = await routerAs(p, p.accounts.quoteSigner);
    const paid = await makeOrder(p, USDC(1));
    await payOnRail(p, "cash", paid);
    await viem.assertions.revertWithCustomErrorWithArgs(asSigner.write.cancelOrder([paid.orderId]), p.router, "OrderAlreadyPaid", [
      paid.orderId,
    ]);
    assert.equal(await p.router.read.isPaid([paid.orderId]), true);
    assert.equal(await p.router.read.isCancelled([paid.orderId]), false);
    const order = await makeOrder(p, USDC(1));
    await asSigner.write.cancelOrder([order.orderId]);
    await viem.assertions.revertWithCustomErrorWithArgs(asSigner.write.cancelOrder([order.orderId]), p.router, "OrderIsCancelled", [
      order.orderId,
    ]);
  });
});
