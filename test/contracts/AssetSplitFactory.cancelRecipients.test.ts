// AssetSplitFactory.cancelRecipients: the split's current asset-owner recipient (or the split manager) drops a
// proposed recipient change before it is executed; nobody else can.
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

/** The fixture with a change of the fixture split's recipients to the stranger proposed. */
async function deployWithProposal() {
  const p = await deployPayments();
  await proposeRecipients(p, KEY, p.accounts.stranger.account.address, p.accounts.stranger.account.address);
  return p;
}

describe("AssetSplitFactory.cancelRecipients", () => {
  for (const who of ["assetOwner", "manager"] as const) {
    it(`the ${who === "assetOwner" ? "split's asset owner" : "split manager"} cancels: RecipientsCancelled, nothing to execute`, async () => {
      const p = await networkHelpers.loadFixture(deployWithProposal);
      const caller = p.accounts[who];
      await viem.assertions.emitWithArgs((await factoryAs(p, caller)).write.cancelRecipients([KEY]), p.factory, "RecipientsCancelled", [
        KEY,
        getAddress(p.split.address),
        getAddress(caller.account.address),
      ]);
      assert.deepEqual(await p.factory.read.pendingRecipients([KEY]), [zeroAddress, zeroAddress, 0]);
      await networkHelpers.time.increase(RECIPIENT_CHANGE_DELAY);
      await viem.assertions.revertWithCustomErrorWithArgs(
        (await factoryAs(p, p.accounts.stranger)).write.executeRecipients([KEY]),
        p.factory,
        "NoPendingRecipients",
        [KEY],
      );
      assert.equal((await p.split.read.legs())[0][0], getAddress(p.accounts.assetOwner.account.address));
    });
  }

  it("is refused with NotAssetOwner to the operator, the hot wallet, the admin and the proposed recipient", async () => {
    const p = await networkHelpers.loadFixture(deployWithProposal);
    const { operator, relayer, admin, stranger } = p.accounts;
    for (const caller of [operator, relayer, admin, stranger]) {
      await viem.assertions.revertWithCustomErrorWithArgs(
        (await factoryAs(p, caller)).write.cancelRecipients([KEY]),
        p.factory,
        "NotAssetOwner",
        [KEY, getAddress(caller.account.address)],
      );
    }
    const [owner] = await p.factory.read.pendingRecipients([KEY]);
    assert.equal(owner, getAddress(stranger.account.address), "still pending");
  });

  it("reverts with NoPendingRecipients when nothing is pending", async () => {
    const p = await networkHelpers.loadFixture(deployPayments);
    await viem.assertions.revertWithCustomErrorWithArgs(
      (await factoryAs(p, p.accounts.assetOwner)).write.cancelRecipients([KEY]),
      p.factory,
      "NoPendingRecipients",
      [KEY],
    );
  });
});
