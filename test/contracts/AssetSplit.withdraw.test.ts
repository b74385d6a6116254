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

describe("AssetSplit.withdraw", () => {
  describe("withdraw(to)", () => {
    it("pays the caller's whole claimable amount to `to` and emits Withdrawn", async () => {
      const p = await networkHelpers.loadFixture(deployWithCredits);
      const { assetOwner, stranger, operator } = p.accounts;
      const asOwner = await splitAs(p, assetOwner);
      const { result } = await asOwner.simulate.withdraw([stranger.account.address], { account: assetOwner.account.address });
      assert.equal(result, USDC(50));
      await viem.assertions.emitWithArgs(asOwner.write.withdraw([stranger.account.address]), p.split, "Withdrawn", [
        getAddress(assetOwner.account.address),
        getAddress(stranger.account.address),
        USDC(50),
      ]);
      assert.equal(await tokenBalance(p, stranger.account.address), USDC(50));
      assert.equal(await tokenBalance(p, assetOwner.account.address), 0n);
      assert.equal(await tokenBalance(p, p.split.address), USDC(50));
      assert.equal(await p.split.read.claimable([assetOwner.account.address]), 0n);
      assert.equal(await p.split.read.claimable([operator.account.address]), USDC(40), "others keep their credit");
    });

    it("pays to the caller itself", async () => {
      const p = await networkHelpers.loadFixture(deployWithCredits);
      const { operator } = p.accounts;
      await viem.assertions.emitWithArgs((await splitAs(p, operator)).write.withdraw([operator.account.address]), p.split, "Withdrawn", [
        getAddress(operator.account.address),
        getAddress(operator.account.address),
        USDC(40),
      ]);
      assert.equal(await tokenBalance(p, operator.account.address), USDC(40));
    });

    it("reverts with NothingToWithdraw for a caller with no credit, and for a second withdrawal", async () => {
      const p = await networkHelpers.loadFixture(deployWithCredits);
      const { stranger, protocol } = p.accounts;
      await viem.assertions.revertWithCustomErrorWithArgs(
        (await splitAs(p, stranger)).write.withdraw([stranger.account.address]),
        p.split,
        "NothingToWithdraw",
        [getAddress(stranger.account.address)],
      );
      const asProtocol = await splitAs(p, protocol);
      await asProtocol.write.withdraw([protocol.account.address]);
      await viem.assertions.revertWithCustomErrorWithArgs(
        asProtocol.write.withdraw([protocol.account.address]),
        p.split,
        "NothingToWithdraw",
        [getAddress(protocol.account.address)],
      );
      assert.equal(await tokenBalance(p, protocol.account.address), USDC(10));
    });

    it("reverts with NothingToWithdraw on an empty split", async () => {
      const p = await networkHelpers.loadFixture(deployPayments);
      await viem.assertions.revertWithCustomErrorWithArgs(
        (await splitAs(p, p.accounts.assetOwner)).write.withdraw([p.accounts.assetOwner.account.address]),
        p.split,
        "NothingToWithdraw",
        [getAddress(p.accounts.assetOwner.account.address)],
      );
    });

    it("reverts with InvalidPayee for `to` = address zero or the split itself, and keeps the credit owed", async () => {
      // Paid to the split itself, a credit would become surplus, which only the admin can take.
      const p = await networkHelpers.loadFixture(deployWithCredits);
      const asOwner = await splitAs(p, p.accounts.assetOwner);
      for (const to of [getAddress(p.split.address), zeroAddress]) {
        await viem.assertions.revertWithCustomErrorWithArgs(asOwner.write.withdraw([to]), p.split, "InvalidPayee", [to]);
      }
      assert.equal(await p.split.read.claimable([p.accounts.assetOwner.account.address]), USDC(50));
      assert.equal(await p.split.read.surplus(), 0n);
      assert.equal(await tokenBalance(p, p.split.address), USDC(100));
    });

    it("works while the split is paused", async () => {
      const p = await networkHelpers.loadFixture(deployWithCredits);
      const { assetOwner, stranger } = p.accounts;
      await pauseFixtureSplit(p);
      assert.equal(await p.split.read.paused(), true);
      await viem.assertions.emitWithArgs(
        (await splitAs(p, assetOwner)).write.withdraw([assetOwner.account.address]),
        p.split,
        "Withdrawn",
        [getAddress(assetOwner.account.address), getAddress(assetOwner.account.address), USDC(50)],
      );
      await (await splitAs(p, stranger)).write.release([p.accounts.operator.account.address]);
      assert.equal(await tokenBalance(p, assetOwner.account.address), USDC(50));
      assert.equal(await tokenBalance(p, p.accounts.operator.account.address), USDC(40));
    });
  });

  describe("a recipient holding several legs", () => {
    it("gets the sum of both legs in one withdrawal and has nothing left afterwards", async () => {
      const p = await networkHelpers.loadFixture(deployPayments);
      const { assetOwner, protocol } = p.accounts;
      // The asset owner also operates the device: legs 0 and 1 go to the same address.
      await setFixtureRecipients(p, assetOwner.account.address, assetOwner.account.address);
      await payOnRail(p, "cash", await makeOrder(p, USDC(10)));
      await payOnRail(p, "approval", await makeOrder(p, 7n));
      // 10 USDC: 5 + 4; 7 units: 5 + 2.
      assert.equal(await p.split.read.claimable([assetOwner.account.address]), USDC(9) + 7n);
      assert.equal(await p.split.read.claimable([protocol.account.address]), USDC(1));
      await viem.assertions.emitWithArgs(
        (await splitAs(p, assetOwner)).write.withdraw([assetOwner.account.address]),
        p.split,
        "Withdrawn",
        [getAddress(assetOwner.account.address), getAddress(assetOwner.account.address), USDC(9) + 7n],
      );
      assert.equal(await tokenBalance(p, assetOwner.account.address), USDC(9) + 7n);
      assert.equal(await p.split.read.claimable([assetOwner.account.address]), 0n);
      assert.equal(await p.split.read.claimable([protocol.account.address]), USDC(1));
      assert.equal(await tokenBalance(p, p.split.address), USDC(1));
    });
  });

  it("withdrawals interleaved with payments pay exactly what was credited in between", async () => {
    const p = await networkHelpers.loadFixture(deployWithCredits);
    const { assetOwner, operator, protocol } = p.accounts;
    const asOwner = await splitAs(p, assetOwner);
    await asOwner.write.withdraw([assetOwner.account.address]);
    await payOnRail(p, "cash", await makeOrder(p, USDC(20)));
    assert.equal(await p.split.read.claimable([assetOwner.account.address]), USDC(10));
    assert.equal(await p.split.read.claimable([operator.account.address]), USDC(48));
    await asOwner.write.withdraw([assetOwner.account.address]);
    await (await splitAs(p, operator)).write.withdraw([operator.account.address]);
    await (await splitAs(p, protocol)).write.withdraw([protocol.account.address]);
    assert.equal(await tokenBalance(p, assetOwner.account.address), USDC(60));
    assert.equal(await tokenBalance(p, operator.account.address), USDC(48));
    assert.equal(await tokenBalance(p, protocol.account.address), USDC(12));
    assert.equal(await tokenBalance(p, p.split.address), 0n);
  });
});
