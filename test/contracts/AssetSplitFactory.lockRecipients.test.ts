// AssetSplitFactory.lockRecipients: the split's current asset-owner recipient makes its recipients immutable, for
// good (as 0xSplits v2 allows); a pending change is dropped and none can be proposed again.
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

describe("AssetSplitFactory.lockRecipients", () => {
  it("locks the split for good: RecipientsLocked, the pending change dropped, no proposal or execution after", async () => {
    const p = await networkHelpers.loadFixture(deployPayments);
    const { assetOwner, stranger } = p.accounts;
    await proposeRecipients(p, KEY, stranger.account.address, stranger.account.address);
    const asOwner = await factoryAs(p, assetOwner);
    await viem.assertions.emitWithArgs(asOwner.write.lockRecipients([KEY]), p.factory, "RecipientsLocked", [
      KEY,
      getAddress(p.split.address),
    ]);
    assert.equal(await p.factory.read.recipientsLocked([KEY]), true);
    assert.deepEqual(await p.factory.read.pendingRecipients([KEY]), [zeroAddress, zeroAddress, 0]);
    await networkHelpers.time.increase(RECIPIENT_CHANGE_DELAY);
    await viem.assertions.revertWithCustomErrorWithArgs(
      (await factoryAs(p, stranger)).write.executeRecipients([KEY]),
      p.factory,
      "NoPendingRecipients",
      [KEY],
    );
    await viem.assertions.revertWithCustomErrorWithArgs(
      proposeRecipients(p, KEY, stranger.account.address, stranger.account.address),
      p.factory,
      "RecipientsAreLocked",
      [KEY],
    );
    await viem.assertions.revertWithCustomErrorWithArgs(asOwner.write.lockRecipients([KEY]), p.factory, "RecipientsAreLocked", [KEY]);
    assert.equal((await p.split.read.legs())[0][0], getAddress(assetOwner.account.address));
  });

  it("is only for the split's asset owner: the manager, the operator, the hot wallet and the admin get NotAssetOwner", async () => {
    const p = await networkHelpers.loadFixture(deployPayments);
    const { manager, operator, relayer, admin } = p.accounts;
    for (const caller of [manager, operator, relayer, admin]) {
      await viem.assertions.revertWithCustomErrorWithArgs(
        (await factoryAs(p, caller)).write.lockRecipients([KEY]),
        p.factory,
        "NotAssetOwner",
        [KEY, getAddress(caller.account.address)],
      );
    }
    assert.equal(await p.factory.read.recipientsLocked([KEY]), false);
  });

  it("follows the recipients: after a change, the new asset owner locks and the former one cannot", async () => {
    const p = await networkHelpers.loadFixture(deployPayments);
    const { assetOwner, stranger, operator } = p.accounts;
    await proposeRecipients(p, KEY, stranger.account.address, operator.account.address);
    await networkHelpers.time.increase(RECIPIENT_CHANGE_DELAY);
    await (await factoryAs(p, stranger)).write.executeRecipients([KEY]);
    await viem.assertions.revertWithCustomErrorWithArgs(
      (await factoryAs(p, assetOwner)).write.lockRecipients([KEY]),
      p.factory,
      "NotAssetOwner",
      [KEY, getAddress(assetOwner.account.address)],
    );
    await (await factoryAs(p, stranger)).write.lockRecipients([KEY]);
    assert.equal(await p.factory.read.recipientsLocked([KEY]), true);
  });
});
