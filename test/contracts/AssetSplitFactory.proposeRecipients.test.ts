// AssetSplitFactory.proposeRecipients: the split manager (an offline key, not the hot wallet) proposes a split's new
// asset-owner and operator recipients; nothing changes before the delay (AssetSplitFactory.executeRecipients).
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
  publicClient,
  viem,
} from "./fixture.ts";

const KEY = assetKey(FIXTURE_DEVICE);

describe("AssetSplitFactory.proposeRecipients", () => {
  it("records the change, executable after the delay, emits RecipientsProposed and leaves the split as it is", async () => {
    const p = await networkHelpers.loadFixture(deployPayments);
    const { stranger, payer, assetOwner, operator, protocol } = p.accounts;
    const hash = await proposeRecipients(p, KEY, stranger.account.address, payer.account.address);
    const { blockNumber } = await publicClient.waitForTransactionReceipt({ hash });
    const { timestamp } = await publicClient.getBlock({ blockNumber });
    const executableAt = Number(timestamp + RECIPIENT_CHANGE_DELAY);
    await viem.assertions.emitWithArgs(Promise.resolve(hash), p.factory, "RecipientsProposed", [
      KEY,
      getAddress(p.split.address),
      getAddress(stranger.account.address),
      getAddress(payer.account.address),
      executableAt,
    ]);
    assert.deepEqual(await p.factory.read.pendingRecipients([KEY]), [
      getAddress(stranger.account.address),
      getAddress(payer.account.address),
      executableAt,
    ]);
    const [recipients] = await p.split.read.legs();
    assert.deepEqual(
      recipients,
      [assetOwner, operator, protocol].map((w) => getAddress(w.account.address)),
    );
  });

  it("a new proposal replaces the pending one and restarts its delay", async () => {
    const p = await networkHelpers.loadFixture(deployPayments);
    const { stranger, payer } = p.accounts;
    await proposeRecipients(p, KEY, stranger.account.address, stranger.account.address);
    await networkHelpers.time.increase(3_600);
    await proposeRecipients(p, KEY, payer.account.address, payer.account.address);
    const [owner, operator, executableAt] = await p.factory.read.pendingRecipients([KEY]);
    assert.deepEqual([owner, operator], [getAddress(payer.account.address), getAddress(payer.account.address)]);
    assert.equal(BigInt(executableAt), BigInt(await networkHelpers.time.latest()) + RECIPIENT_CHANGE_DELAY);
  });

  it("is only for the split manager: the hot wallet, the admin, the pauser and the recipients cannot", async () => {
    const p = await networkHelpers.loadFixture(deployPayments);
    const role = await p.factory.read.SPLIT_MANAGER_ROLE();
    const { relayer, agent, admin, pauser, assetOwner, operator } = p.accounts;
    for (const caller of [relayer, agent, admin, pauser, assetOwner, operator]) {
      await viem.assertions.revertWithCustomErrorWithArgs(
        (await factoryAs(p, caller)).write.proposeRecipients([KEY, caller.account.address, caller.account.address]),
        p.factory,
        "AccessControlUnauthorizedAccount",
        [getAddress(caller.account.address), role],
      );
    }
    assert.deepEqual(await p.factory.read.pendingRecipients([KEY]), [zeroAddress, zeroAddress, 0]);
  });

  it("reverts with SplitNotFound for a key without a split and InvalidProposedRecipients for zero or the split", async () => {
    const p = await networkHelpers.loadFixture(deployPayments);
    const valid = p.accounts.stranger.account.address;
    const other = assetKey("device-without-split");
    await viem.assertions.revertWithCustomErrorWithArgs(proposeRecipients(p, other, valid, valid), p.factory, "SplitNotFound", [
      other,
      await p.factory.read.predictSplit([other]),
    ]);
    for (const [owner, op] of [
      [zeroAddress, valid],
      [valid, zeroAddress],
      [p.split.address, valid],
      [valid, p.split.address],
    ] as const) {
      await viem.assertions.revertWithCustomErrorWithArgs(proposeRecipients(p, KEY, owner, op), p.factory, "InvalidProposedRecipients", [
        getAddress(owner),
        getAddress(op),
      ]);
    }
  });

  it("reverts with RecipientsAreLocked once the asset owner locked the split", async () => {
    const p = await networkHelpers.loadFixture(deployPayments);
    await (await factoryAs(p, p.accounts.assetOwner)).write.lockRecipients([KEY]);
    const valid = p.accounts.stranger.account.address;
    await viem.assertions.revertWithCustomErrorWithArgs(proposeRecipients(p, KEY, valid, valid), p.factory, "RecipientsAreLocked", [KEY]);
  });
});
