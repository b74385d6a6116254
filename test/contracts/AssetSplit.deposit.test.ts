import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { getAddress, keccak256, parseEventLogs, toHex } from "viem";
import {
  FIXTURE_DEVICE,
  MAX_UINT256,
  USDC,
  assetKey,
  deployPayments,
  deploySplitFor,
  expectedLegs,
  factoryAs,
  makeOrder,
  networkHelpers,
  payOnRail,
  publicClient,
  splitAs,
  tokenAs,
  viem,
} from "./fixture.ts";

/** The fixture plus a batch depositor (the relayer account) holding the factory's depositor role, 500 USDC and an
 * unlimited approval of the split. */
async function deployWithDepositor() {
  const p = await deployPayments();
  const depositor = p.accounts.relayer;
  await p.factory.write.grantRole([await p.factory.read.DEPOSITOR_ROLE(), depositor.account.address]);
  await p.token.write.mint([depositor.account.address, USDC(500)]);
  await (await tokenAs(p, depositor)).write.approve([p.split.address, MAX_UINT256]);
  return { ...p, depositor };
}

const batch = keccak256(toHex("cash-batch-42"));

describe("AssetSplit.deposit", () => {
  it("pulls gross from the depositor and credits the three legs", async () => {
    const p = await networkHelpers.loadFixture(deployWithDepositor);
    const { assetOwner, operator, protocol } = p.accounts;
    const hash = await (await splitAs(p, p.depositor)).write.deposit([batch, USDC(200)]);
    const receipt = await publicClient.waitForTransactionReceipt({ hash });
    const transfers = parseEventLogs({ abi: p.token.abi, eventName: "Transfer", logs: receipt.logs });
    assert.equal(transfers.length, 1);
    assert.deepEqual(transfers[0].args, {
      from: getAddress(p.depositor.account.address),
      to: getAddress(p.split.address),
      value: USDC(200),
    });

    assert.equal(await p.token.read.balanceOf([p.depositor.account.address]), USDC(300));
    assert.equal(await p.token.read.balanceOf([p.split.address]), USDC(200));
    assert.equal(await p.split.read.claimable([assetOwner.account.address]), USDC(100));
    assert.equal(await p.split.read.claimable([operator.account.address]), USDC(80));
    assert.equal(await p.split.read.claimable([protocol.account.address]), USDC(20));
  });

  it("emits YieldDeposited with the caller as depositor", async () => {
    const p = await networkHelpers.loadFixture(deployWithDepositor);
    await viem.assertions.emitWithArgs((await splitAs(p, p.depositor)).write.deposit([batch, 9_999n]), p.split, "YieldDeposited", [
      batch,
      getAddress(p.depositor.account.address),
      9_999n,
      5_001n,
      3_999n,
      999n,
    ]);
  });

  it("is only for the router and the factory's depositors, even with tokens and an approval", async () => {
    const p = await networkHelpers.loadFixture(deployWithDepositor);
    const { stranger } = p.accounts;
    await p.token.write.mint([stranger.account.address, USDC(10)]);
    await (await tokenAs(p, stranger)).write.approve([p.split.address, MAX_UINT256]);
    await viem.assertions.revertWithCustomErrorWithArgs(
      (await splitAs(p, stranger)).write.deposit([batch, USDC(10)]),
      p.split,
      "NotDepositor",
      [getAddress(stranger.account.address)],
    );
    assert.equal(await p.token.read.balanceOf([stranger.account.address]), USDC(10));
    assert.equal(await p.token.read.balanceOf([p.split.address]), 0n);
  });

  it("reverts with ZeroAmount for a deposit of zero", async () => {
    const p = await networkHelpers.loadFixture(deployWithDepositor);
    await viem.assertions.revertWithCustomErrorWithArgs(
      (await splitAs(p, p.depositor)).write.deposit([batch, 0n]),
      p.split,
      "ZeroAmount",
      [],
    );
  });

  it("reverts with EnforcedPause while paused", async () => {
    const p = await networkHelpers.loadFixture(deployWithDepositor);
    await (await factoryAs(p, p.accounts.pauser)).write.pauseSplit([assetKey(FIXTURE_DEVICE)]);
    await viem.assertions.revertWithCustomErrorWithArgs(
      (await splitAs(p, p.depositor)).write.deposit([batch, USDC(1)]),
      p.split,
      "EnforcedPause",
      [],
    );
    assert.equal(await p.token.read.balanceOf([p.depositor.account.address]), USDC(500));
  });

  it("reverts with the token's errors when the depositor's allowance or balance is short", async () => {
    const p = await networkHelpers.loadFixture(deployWithDepositor);
    const asDepositor = await splitAs(p, p.depositor);
    await viem.assertions.revertWithCustomErrorWithArgs(
      asDepositor.write.deposit([batch, USDC(500) + 1n]),
      p.token,
      "ERC20InsufficientBalance",
      [getAddress(p.depositor.account.address), USDC(500), USDC(500) + 1n],
    );
    await (await tokenAs(p, p.depositor)).write.approve([p.split.address, USDC(1)]);
    await viem.assertions.revertWithCustomErrorWithArgs(
      asDepositor.write.deposit([batch, USDC(2)]),
      p.token,
      "ERC20InsufficientAllowance",
      [getAddress(p.split.address), USDC(1), USDC(2)],
    );
  });

  it("reverts with UnexpectedBalance(gross, received) for a fee-on-transfer token", async () => {
    const p = await networkHelpers.loadFixture(deployWithDepositor);
    const fee = await viem.deployContract("FeeOnTransferToken");
    const split = await deploySplitFor(p, fee.address, { setFactory: false });
    const feeFactory = await viem.getContractAt("AssetSplitFactory", await split.read.factory());
    await feeFactory.write.grantRole([await feeFactory.read.DEPOSITOR_ROLE(), p.depositor.account.address]);
    await fee.write.mint([p.depositor.account.address, 10n ** 18n]);
    const feeAsDepositor = await viem.getContractAt("FeeOnTransferToken", fee.address, { client: { wallet: p.depositor } });
    await feeAsDepositor.write.approve([split.address, MAX_UINT256]);
    const asDepositor = await viem.getContractAt("AssetSplit", split.address, { client: { wallet: p.depositor } });
    await viem.assertions.revertWithCustomErrorWithArgs(asDepositor.write.deposit([batch, 1_000n]), split, "UnexpectedBalance", [
      1_000n,
      990n,
    ]);
    // Under 100 base units the token's fee rounds to zero and the deposit goes through.
    await viem.assertions.emit(asDepositor.write.deposit([batch, 99n]), split, "YieldDeposited");
    assert.equal(await fee.read.balanceOf([split.address]), 99n);
  });

  it("adds to what router payments credited; tokens sent directly are not credited", async () => {
    const p = await networkHelpers.loadFixture(deployWithDepositor);
    const { assetOwner, operator, protocol } = p.accounts;
    await payOnRail(p, "cash", await makeOrder(p, USDC(10)));
    await (await splitAs(p, p.depositor)).write.deposit([batch, USDC(30)]);
    await p.token.write.mint([p.split.address, USDC(5)]); // a stray transfer
    const legs = expectedLegs(USDC(40));
    assert.equal(await p.split.read.claimable([assetOwner.account.address]), legs[0]);
    assert.equal(await p.split.read.claimable([operator.account.address]), legs[1]);
    assert.equal(await p.split.read.claimable([protocol.account.address]), legs[2]);
    assert.equal(await p.token.read.balanceOf([p.split.address]), USDC(45));
    assert.equal(await p.split.read.surplus(), USDC(5), "the stray transfer is surplus");
  });

  it("does not take the surplus as payment: it pulls the whole gross even when the split holds unsettled tokens", async () => {
    const p = await networkHelpers.loadFixture(deployWithDepositor);
    await p.token.write.mint([p.split.address, USDC(50)]);
    await (await splitAs(p, p.depositor)).write.deposit([batch, USDC(20)]);
    assert.equal(await p.token.read.balanceOf([p.depositor.account.address]), USDC(480));
    assert.equal(await p.token.read.balanceOf([p.split.address]), USDC(70));
    assert.equal(await p.split.read.surplus(), USDC(50));
    assert.equal(await p.split.read.claimable([p.accounts.assetOwner.account.address]), USDC(10));
  });
});
