// AssetSplitFactory.executeRecipients: anyone applies a proposed recipient change once the factory's delay has
// passed; before, or without a proposal, it reverts. What the change does to the split's credits is tested in
// AssetSplit.setRecipients.test.ts.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { getAddress, zeroAddress } from "viem";
import {
  FIXTURE_DEVICE,
  RECIPIENT_CHANGE_DELAY,
  assetKey,
  deployPayments,
  factoryAs,
  networkHelpers,
  proposeRecipients,
  viem,
} from "./fixture.ts";

const KEY = assetKey(FIXTURE_DEVICE);

describe("AssetSplitFactory.executeRecipients", () => {
  it("after the delay, anyone applies the change: RecipientsExecuted, LegsUpdated, nothing pending any more", async () => {
    const p = await networkHelpers.loadFixture(deployPayments);
    const { stranger, payer, protocol } = p.accounts;
    await proposeRecipients(p, KEY, stranger.account.address, payer.account.address);
    await networkHelpers.time.increase(RECIPIENT_CHANGE_DELAY);
    const asPayer = await factoryAs(p, payer);
    const execution = asPayer.write.executeRecipients([KEY]);
    await viem.assertions.emitWithArgs(execution, p.factory, "RecipientsExecuted", [
      KEY,
      getAddress(p.split.address),
      getAddress(stranger.account.address),
      getAddress(payer.account.address),
    ]);
    const [recipients] = await p.split.read.legs();
    assert.deepEqual(
      recipients,
      [stranger, payer, protocol].map((w) => getAddress(w.account.address)),
    );
    assert.deepEqual(await p.factory.read.pendingRecipients([KEY]), [zeroAddress, zeroAddress, 0]);
    await viem.assertions.revertWithCustomErrorWithArgs(asPayer.write.executeRecipients([KEY]), p.factory, "NoPendingRecipients", [KEY]);
  });

  it("reverts with RecipientsChangeNotReady one second before the delay ends", async () => {
    const p = await networkHelpers.loadFixture(deployPayments);
    const valid = p.accounts.stranger.account.address;
    await proposeRecipients(p, KEY, valid, valid);
    const [, , executableAt] = await p.factory.read.pendingRecipients([KEY]);
    await networkHelpers.time.setNextBlockTimestamp(executableAt - 1);
    await viem.assertions.revertWithCustomErrorWithArgs(
      (await factoryAs(p, p.accounts.stranger)).write.executeRecipients([KEY]),
      p.factory,
      "RecipientsChangeNotReady",
      [KEY, executableAt],
    );
    assert.equal((await p.split.read.legs())[0][0], getAddress(p.accounts.assetOwner.account.address));
  });

  it("reverts with NoPendingRecipients without a proposal and SplitNotFound for a key without a split", async () => {
    const p = await networkHelpers.loadFixture(deployPayments);
    const asStranger = await factoryAs(p, p.accounts.stranger);
    await viem.assertions.revertWithCustomErrorWithArgs(asStranger.write.executeRecipients([KEY]), p.factory, "NoPendingRecipients", [KEY]);
    const other = assetKey("device-without-split");
    await viem.assertions.revertWithCustomErrorWithArgs(asStranger.write.executeRecipients([other]), p.factory, "SplitNotFound", [
      other,
      await p.factory.read.predictSplit([other]),
    ]);
  });
});
