import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { getAddress, zeroAddress } from "viem";
import {
  USDC,
  deployPayments,
  deployWithCredits,
  makeOrder,
  networkHelpers,
  pauseFixtureSplit,
  payOnRail,
  setFixtureRecipients,
  splitAs,
  tokenBalance,
  viem,
} from "./fixture.ts";

describe("AssetSplit.release", () => {
  it("lets anyone push a recipient's credit to the recipient", async () => {
    const p = await networkHelpers.loadFixture(deployWithCredits);
    const { stranger, protocol } = p.accounts;
    const asStranger = await splitAs(p, stranger);
    const { result } = await asStranger.simulate.release([protocol.account.address], { account: stranger.account.address });
    assert.equal(result, USDC(10));
    await viem.assertions.emitWithArgs(asStranger.write.release([protocol.account.address]), p.split, "Withdrawn", [
      getAddress(protocol.account.address),
      getAddress(protocol.account.address),
      USDC(10),
    ]);
    assert.equal(await tokenBalance(p, protocol.account.address), USDC(10));
    assert.equal(await tokenBalance(p, stranger.account.address), 0n, "the caller gets nothing");
    assert.equal(await p.split.read.claimable([protocol.account.address]), 0n);
  });

  it("reverts with NothingToWithdraw for a recipient without credit, or already released", async () => {
    const p = await networkHelpers.loadFixture(deployWithCredits);
    const { stranger, operator } = p.accounts;
    const asStranger = await splitAs(p, stranger);
    await viem.assertions.revertWithCustomErrorWithArgs(
      asStranger.write.release([stranger.account.address]),
      p.split,
      "NothingToWithdraw",
      [getAddress(stranger.account.address)],
    );
    await asStranger.write.release([operator.account.address]);
    await viem.assertions.revertWithCustomErrorWithArgs(
      asStranger.write.release([operator.account.address]),
      p.split,
      "NothingToWithdraw",
      [getAddress(operator.account.address)],
    );
  });

  it("reverts with InvalidPayee for address zero and the split itself (neither can be a recipient)", async () => {
    const p = await networkHelpers.loadFixture(deployWithCredits);
    const asStranger = await splitAs(p, p.accounts.stranger);
    for (const recipient of [getAddress(p.split.address), zeroAddress]) {
      await viem.assertions.revertWithCustomErrorWithArgs(asStranger.write.release([recipient]), p.split, "InvalidPayee", [recipient]);
    }
    assert.equal(await p.split.read.surplus(), 0n);
  });

  it("pays a single recipient of all three legs everything", async () => {
    const p = await networkHelpers.loadFixture(deployPayments);
    // The protocol recipient (fixed by the factory) also takes the asset-owner and operator legs.
    const only = p.accounts.protocol.account.address;
    await setFixtureRecipients(p, only, only);
    await payOnRail(p, "cash", await makeOrder(p, 12_345n));
    assert.equal(await p.split.read.claimable([only]), 12_345n);
    await (await splitAs(p, p.accounts.stranger)).write.release([only]);
    assert.equal(await tokenBalance(p, only), 12_345n);
    assert.equal(await tokenBalance(p, p.split.address), 0n);
    assert.equal(await p.split.read.claimable([only]), 0n);
  });

  it("works while the split is paused", async () => {
    const p = await networkHelpers.loadFixture(deployWithCredits);
    await pauseFixtureSplit(p);
    await (await splitAs(p, p.accounts.stranger)).write.release([p.accounts.assetOwner.account.address]);
    assert.equal(await tokenBalance(p, p.accounts.assetOwner.account.address), USDC(50));
  });
});
