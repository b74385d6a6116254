import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { getAddress, toHex } from "viem";
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

describe("PaymentRouter.payCash (cash rail)", () => {
  it("pays the order from the agent's float and settles it 50/40/10", async () => {
    const p = await networkHelpers.loadFixture(deployPayments);
    const { agent, payer, assetOwner, operator, protocol } = p.accounts;
    const order = await makeOrder(p, USDC(7.77));

    const hash = await (await routerAs(p, agent)).write.payCash([order, await signVoucher(p, order)]);
    assert.equal((await publicClient.waitForTransactionReceipt({ hash })).status, "success");

    assert.equal(await p.token.read.balanceOf([agent.account.address]), USDC(1_000) - USDC(7.77));
    assert.equal(await p.token.read.balanceOf([payer.account.address]), USDC(1_000), "the customer paid cash, not tokens");
    assert.equal(await p.token.read.balanceOf([p.split.address]), USDC(7.77));
    assert.equal(await p.token.read.balanceOf([p.router.address]), 0n);
    assert.equal(
      await p.token.read.allowance([agent.account.address, p.router.address]),
      MAX_UINT256,
      "an infinite float approval is not decreased",
    );
    const [owner, op, proto] = expectedLegs(USDC(7.77));
    assert.deepEqual([owner, op, proto], [3_885_000n, 3_108_000n, 777_000n]);
    assert.equal(await p.split.read.claimable([assetOwner.account.address]), owner);
    assert.equal(await p.split.read.claimable([operator.account.address]), op);
    assert.equal(await p.split.read.claimable([protocol.account.address]), proto);
    assert.equal(await p.router.read.isPaid([order.orderId]), true);
  });

  it("emits OrderPaid with the agent as payer and the cash rail (2)", async () => {
    const p = await networkHelpers.loadFixture(deployPayments);
    const { agent } = p.accounts;
    const order = await makeOrder(p, USDC(3));
    await viem.assertions.emitWithArgs(
      (await routerAs(p, agent)).write.payCash([order, await signVoucher(p, order)]),
      p.router,
      "OrderPaid",
      [
        order.orderId,
        order.deviceId,
        getAddress(agent.account.address),
        getAddress(p.token.address),
        getAddress(p.split.address),
        USDC(3),
        2,
      ],
    );
  });

  it("makes the split emit YieldDeposited with the order id as reference", async () => {
    const p = await networkHelpers.loadFixture(deployPayments);
    const order = await makeOrder(p, USDC(9.99));
    await viem.assertions.emitWithArgs(
      (await routerAs(p, p.accounts.agent)).write.payCash([order, await signVoucher(p, order)]),
      p.split,
      "YieldDeposited",
      [toHex(order.orderId, { size: 32 }), getAddress(p.router.address), USDC(9.99), ...expectedLegs(USDC(9.99))],
    );
  });

  it("reverts with AccessControlUnauthorizedAccount for a caller without the agent role", async () => {
    const p = await networkHelpers.loadFixture(deployPayments);
    const { stranger, payer, admin } = p.accounts;
    const agentRole = await p.router.read.AGENT_ROLE();
    const order = await makeOrder(p, USDC(1));
    const voucher = await signVoucher(p, order);
    for (const caller of [stranger, admin]) {
      await viem.assertions.revertWithCustomErrorWithArgs(
        (await routerAs(p, caller)).write.payCash([order, voucher]),
        p.router,
        "AccessControlUnauthorizedAccount",
        [getAddress(caller.account.address), agentRole],
      );
    }
    // A payer who approved the router still cannot use the cash rail.
    await (await tokenAs(p, payer)).write.approve([p.router.address, MAX_UINT256]);
    await viem.assertions.revertWithCustomErrorWithArgs(
      (await routerAs(p, payer)).write.payCash([order, voucher]),
      p.router,
      "AccessControlUnauthorizedAccount",
      [getAddress(payer.account.address), agentRole],
    );
    assert.equal(await p.router.read.isPaid([order.orderId]), false);
    assert.equal(await p.token.read.balanceOf([p.split.address]), 0n);
  });

  it("stops an agent whose role was revoked and admits a newly granted one", async () => {
    const p = await networkHelpers.loadFixture(deployPayments);
    const { agent, stranger } = p.accounts;
    const agentRole = await p.router.read.AGENT_ROLE();
    await p.router.write.revokeRole([agentRole, agent.account.address]);
    const order = await makeOrder(p, USDC(1));
    const voucher = await signVoucher(p, order);
    await viem.assertions.revertWithCustomErrorWithArgs(
      (await routerAs(p, agent)).write.payCash([order, voucher]),
      p.router,
      "AccessControlUnauthorizedAccount",
      [getAddress(agent.account.address), agentRole],
    );

    await p.router.write.grantRole([agentRole, stranger.account.address]);
    await p.token.write.mint([stranger.account.address, USDC(1)]);
    await (await tokenAs(p, stranger)).write.approve([p.router.address, USDC(1)]);
    await viem.assertions.emitWithArgs((await routerAs(p, stranger)).write.payCash([order, voucher]), p.router, "OrderPaid", [
      order.orderId,
      order.deviceId,
      getAddress(stranger.account.address),
      getAddress(p.token.address),
      getAddress(p.split.address),
      USDC(1),
      2,
    ]);
    assert.equal(await p.token.read.balanceOf([stranger.account.address]), 0n);
  });

  it("reverts with ERC20InsufficientBalance when the agent's float is too small", async () => {
    const p = await networkHelpers.loadFixture(deployPayments);
    const { agent } = p.accounts;
    const order = await makeOrder(p, USDC(1_000.01));
    await viem.assertions.revertWithCustomErrorWithArgs(
      (await routerAs(p, agent)).write.payCash([order, await signVoucher(p, order)]),
      p.token,
      "ERC20InsufficientBalance",
      [getAddress(agent.account.address), USDC(1_000), USDC(1_000.01)],
    );
    assert.equal(await p.router.read.isPaid([order.orderId]), false);
  });

  it("reverts with ERC20InsufficientAllowance when the agent has not approved its float", async () => {
    const p = await networkHelpers.loadFixture(deployPayments);
    const { agent } = p.accounts;
    await (await tokenAs(p, agent)).write.approve([p.router.address, USDC(0.5)]);
    const order = await makeOrder(p, USDC(1));
    await viem.assertions.revertWithCustomErrorWithArgs(
      (await routerAs(p, agent)).write.payCash([order, await signVoucher(p, order)]),
      p.token,
      "ERC20InsufficientAllowance",
      [getAddress(p.router.address), USDC(0.5), USDC(1)],
    );
  });

  it("drains the float exactly across several cash orders", async () => {
    const p = await networkHelpers.loadFixture(deployPayments);
    const { agent } = p.accounts;
    const asAgent = await routerAs(p, agent);
    for (const amount of [USDC(600), USDC(399.999999), 1n]) {
      const order = await makeOrder(p, amount);
      await asAgent.write.payCash([order, await signVoucher(p, order)]);
    }
    assert.equal(await p.token.read.balanceOf([agent.account.address]), 0n);
    assert.equal(await p.token.read.balanceOf([p.split.address]), USDC(1_000));
    const order = await makeOrder(p, 1n);
    await viem.assertions.revertWithCustomErrorWithArgs(
      asAgent.write.payCash([order, await signVoucher(p, order)]),
      p.token,
      "ERC20InsufficientBalance",
      [getAddress(agent.account.address), 0n, 1n],
    );
  });
});
