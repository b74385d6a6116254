// payFromDeposit: the payer sends the order amount with a plain ERC-20 transfer to the order's deposit address
// (what a wallet does for an EIP-681 payment request), and anyone collects it for the order: the router creates the
// order's OrderDeposit there (CREATE2, salt the order's digest) and moves the amount to the split.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { concatHex, encodeAbiParameters, getAddress, getContractAddress, keccak256, parseEventLogs } from "viem";
import { orderDigest } from "../../sdk/src/payment-order.ts";
import {
  USDC,
  chainId,
  deployPayments,
  deploySplitFor,
  expectedLegs,
  makeOrder,
  networkHelpers,
  publicClient,
  routerAs,
  signVoucher,
  tokenAs,
  transferToDeposit,
  TRANSFER_RAIL_ID,
  viem,
} from "./fixture.ts";

describe("PaymentRouter.payFromDeposit (transfer rail)", () => {
  it("the deposit address is the CREATE2 address of OrderDeposit(token) with the order's digest as salt", async () => {
    const p = await networkHelpers.loadFixture(deployPayments);
    const order = await makeOrder(p, USDC(2));
    const artifact = await import("../../artifacts/contracts/utils/OrderDeposit.sol/OrderDeposit.json", { with: { type: "json" } });
    const initCode = concatHex([artifact.default.bytecode as `0x${string}`, encodeAbiParameters([{ type: "address" }], [order.token])]);
    const expected = getContractAddress({
      opcode: "CREATE2",
      from: p.router.address,
      salt: orderDigest(chainId, p.router.address, order),
      bytecodeHash: keccak256(initCode),
    });
    assert.equal(await p.router.read.depositAddress([order]), expected);
    const other = { ...order, amount: order.amount + 1n };
    assert.notEqual(await p.router.read.depositAddress([other]), expected, "another order, another address");
  });

  it("collects exactly the order amount from the deposit address and settles it 50/40/10; anyone may submit it", async () => {
    const p = await networkHelpers.loadFixture(deployPayments);
    const { payer, stranger, assetOwner, operator, protocol } = p.accounts;
    const order = await makeOrder(p, USDC(2.5));
    const deposit = await transferToDeposit(p, order);
    assert.equal(await publicClient.getCode({ address: deposit }), undefined, "nothing is deployed before the payment");

    const hash = await (await routerAs(p, stranger)).write.payFromDeposit([order, await signVoucher(p, order)]);
    const receipt = await publicClient.waitForTransactionReceipt({ hash });
    assert.equal(receipt.status, "success");
    assert.equal(await p.token.read.balanceOf([payer.account.address]), USDC(1_000) - USDC(2.5));
    assert.equal(await p.token.read.balanceOf([deposit]), 0n);
    assert.equal(await p.token.read.balanceOf([p.split.address]), USDC(2.5));
    assert.equal(await p.token.read.balanceOf([p.router.address]), 0n);
    const [owner, op, proto] = expectedLegs(USDC(2.5));
    assert.equal(await p.split.read.claimable([assetOwner.account.address]), owner);
    assert.equal(await p.split.read.claimable([operator.account.address]), op);
    assert.equal(await p.split.read.claimable([protocol.account.address]), proto);
    assert.equal(await p.router.read.isPaid([order.orderId]), true);
    // The deposit keeps no code; the router holds an unlimited allowance from it.
    assert.equal(await publicClient.getCode({ address: deposit }), undefined);
    assert.equal(await p.token.read.allowance([deposit, p.router.address]), 2n ** 256n - 1n);
  });

  it("emits OrderPaid with the deposit address as payer and the transfer rail (5)", async () => {
    const p = await networkHelpers.loadFixture(deployPayments);
    const order = await makeOrder(p, USDC(3));
    const deposit = await transferToDeposit(p, order);
    await viem.assertions.emitWithArgs(p.router.write.payFromDeposit([order, await signVoucher(p, order)]), p.router, "OrderPaid", [
      order.orderId,
      order.deviceId,
      getAddress(deposit),
      getAddress(p.token.address),
      getAddress(p.split.address),
      USDC(3),
      TRANSFER_RAIL_ID,
    ]);
  });

  it("reverts with DepositShort when the address holds less than the amount, and creates nothing", async () => {
    const p = await networkHelpers.loadFixture(deployPayments);
    const order = await makeOrder(p, USDC(5));
    const deposit = await transferToDeposit(p, order, USDC(4.99));
    const voucher = await signVoucher(p, order);
    await viem.assertions.revertWithCustomErrorWithArgs(p.router.write.payFromDeposit([order, voucher]), p.router, "DepositShort", [
      getAddress(deposit),
      USDC(4.99),
      USDC(5),
    ]);
    // Nothing was created: the router has no allowance from the address, whose nonce is still 0.
    assert.equal(await p.token.read.allowance([deposit, p.router.address]), 0n);
    assert.equal(await publicClient.getTransactionCount({ address: deposit }), 0);
    assert.equal(await p.router.read.isPaid([order.orderId]), false);
    // The rest arrives: the order pays from the two transfers together.
    await (await tokenAs(p, p.accounts.payer)).write.transfer([deposit, USDC(0.01)]);
    await p.router.write.payFromDeposit([order, voucher]);
    assert.equal(await p.token.read.balanceOf([p.split.address]), USDC(5));
    assert.equal(await p.token.read.balanceOf([deposit]), 0n);
  });

  it("leaves an overpayment at the deposit address (for recoverDeposit)", async () => {
    const p = await networkHelpers.loadFixture(deployPayments);
    const order = await makeOrder(p, USDC(1));
    const deposit = await transferToDeposit(p, order, USDC(1.25));
    await p.router.write.payFromDeposit([order, await signVoucher(p, order)]);
    assert.equal(await p.token.read.balanceOf([p.split.address]), USDC(1));
    assert.equal(await p.token.read.balanceOf([deposit]), USDC(0.25));
  });

  it("refuses an expired order (OrderExpired), even with the deposit in place", async () => {
    const p = await networkHelpers.loadFixture(deployPayments);
    const order = await makeOrder(p, USDC(1));
    const deposit = await transferToDeposit(p, order);
    const voucher = await signVoucher(p, order);
    await networkHelpers.time.increaseTo(order.expiry + 1n);
    await viem.assertions.revertWithCustomErrorWithArgs(p.router.write.payFromDeposit([order, voucher]), p.router, "OrderExpired", [
      order.orderId,
      order.expiry,
    ]);
    assert.equal(await p.token.read.balanceOf([deposit]), USDC(1));
  });

  it("pays an order once: a second call reverts with OrderAlreadyPaid, even with a second deposit", async () => {
    const p = await networkHelpers.loadFixture(deployPayments);
    const order = await makeOrder(p, USDC(1));
    const deposit = await transferToDeposit(p, order);
    const voucher = await signVoucher(p, order);
    await p.router.write.payFromDeposit([order, voucher]);
    await transferToDeposit(p, order);
    await viem.assertions.revertWithCustomErrorWithArgs(p.router.write.payFromDeposit([order, voucher]), p.router, "OrderAlreadyPaid", [
      order.orderId,
    ]);
    assert.equal(await p.token.read.balanceOf([deposit]), USDC(1), "the second transfer stays at the address");
    assert.equal(await p.token.read.balanceOf([p.split.address]), USDC(1));
  });

  it("refuses a cancelled order (OrderIsCancelled) and an order already paid on another rail", async () => {
    const p = await networkHelpers.loadFixture(deployPayments);
    const cancelled = await makeOrder(p, USDC(1));
    await transferToDeposit(p, cancelled);
    await (await routerAs(p, p.accounts.relayer)).write.cancelOrder([cancelled.orderId]);
    await viem.assertions.revertWithCustomErrorWithArgs(
      p.router.write.payFromDeposit([cancelled, await signVoucher(p, cancelled)]),
      p.router,
      "OrderIsCancelled",
      [cancelled.orderId],
    );
    const paid = await makeOrder(p, USDC(1));
    await (await routerAs(p, p.accounts.agent)).write.payCash([paid, await signVoucher(p, paid)]);
    await transferToDeposit(p, paid);
    await viem.assertions.revertWithCustomErrorWithArgs(
      p.router.write.payFromDeposit([paid, await signVoucher(p, paid)]),
      p.router,
      "OrderAlreadyPaid",
      [paid.orderId],
    );
  });

  it("refuses a voucher not signed by the quote signer, and pays nothing while paused", async () => {
    const p = await networkHelpers.loadFixture(deployPayments);
    const order = await makeOrder(p, USDC(1));
    await transferToDeposit(p, order);
    await viem.assertions.revertWithCustomErrorWithArgs(
      p.router.write.payFromDeposit([order, await signVoucher(p, order, { signer: p.accounts.stranger })]),
      p.router,
      "InvalidVoucherSigner",
      [getAddress(p.accounts.stranger.account.address)],
    );
    await (await routerAs(p, p.accounts.pauser)).write.pause();
    await viem.assertions.revertWithCustomError(
      p.router.write.payFromDeposit([order, await signVoucher(p, order)]),
      p.router,
      "EnforcedPause",
    );
  });

  it("a deposit for one order does not pay another (each order has its own address)", async () => {
    const p = await networkHelpers.loadFixture(deployPayments);
    const first = await makeOrder(p, USDC(1));
    const second = await makeOrder(p, USDC(1), { expiry: first.expiry });
    const deposit = await transferToDeposit(p, first);
    const secondDeposit = await p.router.read.depositAddress([second]);
    await viem.assertions.revertWithCustomErrorWithArgs(
      p.router.write.payFromDeposit([second, await signVoucher(p, second)]),
      p.router,
      "DepositShort",
      [getAddress(secondDeposit), 0n, USDC(1)],
    );
    assert.equal(await p.token.read.balanceOf([deposit]), USDC(1));
  });

  it("pays in a USDT-like token whose transfer, transferFrom and approve return nothing", async () => {
    const p = await networkHelpers.loadFixture(deployPayments);
    const usdt = await viem.deployContract("NoReturnToken");
    const usdtSplit = await deploySplitFor(p, usdt.address);
    const order = await makeOrder(p, USDC(4), { token: usdt.address, split: usdtSplit.address });
    const deposit = await p.router.read.depositAddress([order]);
    await usdt.write.mint([deposit, USDC(4.5)]);

    const hash = await p.router.write.payFromDeposit([order, await signVoucher(p, order)]);
    const logs = parseEventLogs({
      abi: p.router.abi,
      eventName: "OrderPaid",
      logs: (await publicClient.waitForTransactionReceipt({ hash })).logs,
    });
    assert.equal(logs[0].args.rail, TRANSFER_RAIL_ID);
    assert.equal(await usdt.read.balanceOf([usdtSplit.address]), USDC(4));
    assert.equal(await usdt.read.balanceOf([deposit]), USDC(0.5));
    const [owner] = expectedLegs(USDC(4));
    assert.equal(await usdtSplit.read.claimable([p.accounts.assetOwner.account.address]), owner);
    // The surplus is recoverable once the order is paid: the deposit exists, the allowance is still unlimited.
    await p.router.write.recoverDeposit([order, p.accounts.payer.account.address, USDC(0.5)]);
    assert.equal(await usdt.read.balanceOf([p.accounts.payer.account.address]), USDC(0.5));
  });
});
