// A stolen hot wallet (the relayer's key, account 2 of the local stack) against the split factory as the LocalStack
// Ignition module deploys it: it holds no factory role, so every role-gated call reverts, and the calls anyone may
// make (createSplit, executeRecipients) cannot redirect a device's revenue. One test per role and per open call.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { getAddress, type Hex } from "viem";
import LocalStack from "../../ignition/modules/LocalStack.ts";
import { connection, deviceKey, networkHelpers, splitAssetKey, viem } from "./fixture.ts";

const DEVICE = deviceKey("device-of-the-hot-wallet-tests");

/** LocalStack deployed as the local chain runs it, with the device's split created (by the hot wallet, as the
 * relayer does) for the sample asset owner and operator, and the named accounts of the deployment. */
async function deployLocalStack() {
  const wallets = await viem.getWalletClients();
  const [admin, , hotWallet, , assetOwner, operator, protocol] = wallets;
  const manager = wallets[13];
  const { assetSplitFactory, paymentRouter, plainSplitFactory, plainStablecoin } = await connection.ignition.deploy(LocalStack);
  const asHotWallet = await viem.getContractAt("AssetSplitFactory", assetSplitFactory.address, { client: { wallet: hotWallet } });
  await asHotWallet.write.createSplit([DEVICE, assetOwner.account.address, operator.account.address]);
  const key = splitAssetKey(DEVICE, assetOwner.account.address, operator.account.address);
  const split = await viem.getContractAt("AssetSplit", await assetSplitFactory.read.predictSplit([key]));
  return {
    factory: assetSplitFactory,
    plainFactory: plainSplitFactory,
    plainStablecoin,
    router: paymentRouter,
    asHotWallet,
    split,
    key,
    admin,
    hotWallet,
    manager,
    assetOwner,
    operator,
    protocol,
  };
}

type Stack = Awaited<ReturnType<typeof deployLocalStack>>;

async function refused(s: Stack, call: Promise<unknown>, role: Hex) {
  await viem.assertions.revertWithCustomErrorWithArgs(call, s.factory, "AccessControlUnauthorizedAccount", [
    getAddress(s.hotWallet.account.address),
    role,
  ]);
}

/** The split still pays the device's own recipients, the protocol's leg and shares untouched. */
async function assertRecipientsKept(s: Stack) {
  const [recipients, bps] = await s.split.read.legs();
  assert.deepEqual(
    recipients,
    [s.assetOwner, s.operator, s.protocol].map((w) => getAddress(w.account.address)),
  );
  assert.deepEqual(bps, [5000, 4000, 1000]);
  assert.equal(await s.factory.read.recipientsLocked([s.key]), false);
}

describe("a stolen hot wallet against the split factory (LocalStack)", () => {
  it("the deployment grants the hot wallet no factory role, and the split manager is a distinct account", async () => {
    const s = await networkHelpers.loadFixture(deployLocalStack);
    const roles = await Promise.all([
      s.factory.read.DEFAULT_ADMIN_ROLE(),
      s.factory.read.SPLIT_MANAGER_ROLE(),
      s.factory.read.PAUSER_ROLE(),
      s.factory.read.DEPOSITOR_ROLE(),
    ]);
    // The second stablecoin's (USDT's) factory too, and the router pays through each in its own token.
    for (const factory of [s.factory, s.plainFactory]) {
      for (const role of roles) assert.equal(await factory.read.hasRole([role, s.hotWallet.account.address]), false, role);
      assert.equal(await factory.read.hasRole([roles[1], s.manager.account.address]), true);
      assert.equal(await s.router.read.tokenSplitFactory([await factory.read.token()]), getAddress(factory.address));
    }
    assert.equal(await s.plainFactory.read.token(), getAddress(s.plainStablecoin.address));
    assert.equal(await s.router.read.splitFactory(), getAddress(s.factory.address), "USDC's factory is the main one");
    assert.notEqual(getAddress(s.manager.account.address), getAddress(s.hotWallet.account.address));
  });

  it("split manager role: proposeRecipients and cancelRecipients revert", async () => {
    const s = await networkHelpers.loadFixture(deployLocalStack);
    const thief = s.hotWallet.account.address;
    await refused(s, s.asHotWallet.write.proposeRecipients([s.key, thief, thief]), await s.factory.read.SPLIT_MANAGER_ROLE());
    // A genuine proposal of the manager: the hot wallet cannot cancel it (nor execute it early).
    const asManager = await viem.getContractAt("AssetSplitFactory", s.factory.address, { client: { wallet: s.manager } });
    await asManager.write.proposeRecipients([s.key, s.assetOwner.account.address, s.assetOwner.account.address]);
    await viem.assertions.revertWithCustomErrorWithArgs(s.asHotWallet.write.cancelRecipients([s.key]), s.factory, "NotAssetOwner", [
      s.key,
      getAddress(thief),
    ]);
    const [, , executableAt] = await s.factory.read.pendingRecipients([s.key]);
    await viem.assertions.revertWithCustomErrorWithArgs(
      s.asHotWallet.write.executeRecipients([s.key]),
      s.factory,
      "RecipientsChangeNotReady",
      [s.key, executableAt],
    );
    await assertRecipientsKept(s);
  });

  it("executeRecipients (open to anyone) applies only what the manager proposed, never a recipient of the caller's", async () => {
    const s = await networkHelpers.loadFixture(deployLocalStack);
    await viem.assertions.revertWithCustomErrorWithArgs(s.asHotWallet.write.executeRecipients([s.key]), s.factory, "NoPendingRecipients", [
      s.key,
    ]);
    await assertRecipientsKept(s);
  });

  it("createSplit (open to anyone) with the thief's recipients lands on another split, which no order of the device names", async () => {
    const s = await networkHelpers.loadFixture(deployLocalStack);
    const thief = s.hotWallet.account.address;
    await s.asHotWallet.write.createSplit([DEVICE, thief, thief]);
    const squat = await s.factory.read.predictSplit([splitAssetKey(DEVICE, thief, thief)]);
    assert.notEqual(squat, getAddress(s.split.address));
    // The device's split is where the device's asset key says, with its recipients; the same creation again reverts.
    await viem.assertions.revertWithCustomErrorWithArgs(
      s.asHotWallet.write.createSplit([DEVICE, s.assetOwner.account.address, s.operator.account.address]),
      s.factory,
      "SplitAlreadyCreated",
      [s.key, getAddress(s.split.address)],
    );
    await assertRecipientsKept(s);
  });

  it("lock role (the asset owner's): lockRecipients reverts with NotAssetOwner", async () => {
    const s = await networkHelpers.loadFixture(deployLocalStack);
    await viem.assertions.revertWithCustomErrorWithArgs(s.asHotWallet.write.lockRecipients([s.key]), s.factory, "NotAssetOwner", [
      s.key,
      getAddress(s.hotWallet.account.address),
    ]);
    await assertRecipientsKept(s);
  });

  it("pauser role: pauseSplit and unpauseSplit revert", async () => {
    const s = await networkHelpers.loadFixture(deployLocalStack);
    const role = await s.factory.read.PAUSER_ROLE();
    await refused(s, s.asHotWallet.write.pauseSplit([s.key]), role);
    await refused(s, s.asHotWallet.write.unpauseSplit([s.key]), role);
    assert.equal(await s.split.read.paused(), false);
  });

  it("depositor role: the split refuses its settle and deposit", async () => {
    const s = await networkHelpers.loadFixture(deployLocalStack);
    const asHotWallet = await viem.getContractAt("AssetSplit", s.split.address, { client: { wallet: s.hotWallet } });
    const thief = getAddress(s.hotWallet.account.address);
    await viem.assertions.revertWithCustomErrorWithArgs(asHotWallet.write.settle([s.key, 1n]), s.split, "NotDepositor", [thief]);
    await viem.assertions.revertWithCustomErrorWithArgs(asHotWallet.write.deposit([s.key, 1n]), s.split, "NotDepositor", [thief]);
  });

  it("default admin role: recoverSurplus, grantRole (of every role) and beginDefaultAdminTransfer revert", async () => {
    const s = await networkHelpers.loadFixture(deployLocalStack);
    const thief = s.hotWallet.account.address;
    const admin = await s.factory.read.DEFAULT_ADMIN_ROLE();
    await refused(s, s.asHotWallet.write.recoverSurplus([s.key, thief]), admin);
    for (const role of [
      await s.factory.read.SPLIT_MANAGER_ROLE(),
      await s.factory.read.PAUSER_ROLE(),
      await s.factory.read.DEPOSITOR_ROLE(),
    ]) {
      await refused(s, s.asHotWallet.write.grantRole([role, thief]), admin);
    }
    await refused(s, s.asHotWallet.write.beginDefaultAdminTransfer([thief]), admin);
    assert.equal(await s.factory.read.defaultAdmin(), getAddress(s.admin.account.address));
  });

  it("the split itself takes orders from its factory only: setRecipients, initialize, pause and recoverSurplus revert", async () => {
    const s = await networkHelpers.loadFixture(deployLocalStack);
    const asHotWallet = await viem.getContractAt("AssetSplit", s.split.address, { client: { wallet: s.hotWallet } });
    const thief = s.hotWallet.account.address;
    for (const call of [
      asHotWallet.write.setRecipients([thief, thief]),
      asHotWallet.write.initialize([thief, thief]),
      asHotWallet.write.pause(),
      asHotWallet.write.recoverSurplus([thief]),
    ]) {
      await viem.assertions.revertWithCustomErrorWithArgs(call, s.split, "OnlyFactory", [getAddress(thief)]);
    }
    await assertRecipientsKept(s);
  });
});
