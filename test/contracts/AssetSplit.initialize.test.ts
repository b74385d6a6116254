// AssetSplit.initialize: the factory sets a new split's asset owner and operator once, right after creating it
// (AssetSplitFactory.createSplit); the implementation itself can never be initialised.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { getAddress, parseEventLogs } from "viem";
import {
  LEG_BPS,
  USDC,
  deviceKey,
  createFactorySplit,
  deployPayments,
  expectedLegs,
  factoryAs,
  networkHelpers,
  publicClient,
  splitAssetKey,
  viem,
  type Wallet,
} from "./fixture.ts";

const DEVICE = deviceKey("device-initialised");

function splitAt(address: `0x${string}`, wallet?: Wallet) {
  return viem.getContractAt("AssetSplit", address, wallet ? { client: { wallet } } : undefined);
}

describe("AssetSplit.initialize", () => {
  it("sets the asset owner and operator beside the factory's protocol recipient, shares, token and router; emits LegsUpdated", async () => {
    const p = await networkHelpers.loadFixture(deployPayments);
    const { assetOwner, operator, protocol, relayer } = p.accounts;
    const key = splitAssetKey(DEVICE, operator.account.address, assetOwner.account.address);
    const address = await p.factory.read.predictSplit([key]);
    const hash = await (await factoryAs(p, relayer)).write.createSplit([DEVICE, operator.account.address, assetOwner.account.address]);
    const receipt = await publicClient.waitForTransactionReceipt({ hash });
    const split = await splitAt(address);
    const recipients = [operator, assetOwner, protocol].map((w) => getAddress(w.account.address));
    const [legs] = parseEventLogs({ abi: split.abi, logs: receipt.logs, eventName: "LegsUpdated" });
    assert.equal(legs.address, address.toLowerCase());
    assert.deepEqual(legs.args, { recipients, bps: [...LEG_BPS] });
    assert.deepEqual(await split.read.legs(), [recipients, [...LEG_BPS]]);
    assert.equal(await split.read.asset(), getAddress(p.token.address));
    assert.equal(await split.read.router(), getAddress(p.router.address));
    assert.equal(await split.read.factory(), getAddress(p.factory.address));
    assert.equal(await split.read.paused(), false);
    assert.equal(await split.read.surplus(), 0n);
    assert.deepEqual(await split.read.previewSplit([USDC(7)]), expectedLegs(USDC(7)));
  });

  it("is only for the factory, and once: the implementation and a created split refuse it", async () => {
    const p = await networkHelpers.loadFixture(deployPayments);
    const { admin } = p.accounts;
    const implementation = await splitAt(await p.factory.read.implementation(), admin);
    await viem.assertions.revertWithCustomErrorWithArgs(
      implementation.write.initialize([admin.account.address, admin.account.address]),
      implementation,
      "OnlyFactory",
      [getAddress(admin.account.address)],
    );
    const split = await createFactorySplit(p, DEVICE);
    await viem.assertions.revertWithCustomErrorWithArgs(
      (await splitAt(split.address, admin)).write.initialize([admin.account.address, admin.account.address]),
      split,
      "OnlyFactory",
      [getAddress(admin.account.address)],
    );
    // Even a call from the factory's address finds the implementation initialised (its constructor marked it so)
    // and the created split initialised by its creation.
    await networkHelpers.impersonateAccount(p.factory.address);
    await networkHelpers.setBalance(p.factory.address, 10n ** 18n);
    const asFactory = await viem.getWalletClient(p.factory.address);
    for (const target of [implementation.address, split.address]) {
      await viem.assertions.revertWithCustomErrorWithArgs(
        (await splitAt(target, asFactory)).write.initialize([admin.account.address, admin.account.address]),
        split,
        "AlreadyInitialized",
        [],
      );
    }
    await networkHelpers.stopImpersonatingAccount(p.factory.address);
    assert.equal((await split.read.legs())[0][0], getAddress(p.accounts.assetOwner.account.address));
  });
});
