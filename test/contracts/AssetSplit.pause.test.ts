// AssetSplit.pause and unpause: the factory's pauser stops and resumes one split's settlements and deposits
// (AssetSplitFactory.pauseSplit / unpauseSplit); withdrawals and releases stay open.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { getAddress, toHex } from "viem";
import {
  FIXTURE_DEVICE,
  USDC,
  assetKey,
  createFactorySplit,
  deviceKey,
  deployPayments,
  factoryAs,
  makeOrder,
  networkHelpers,
  payOnRail,
  splitAs,
  viem,
} from "./fixture.ts";

const KEY = assetKey(FIXTURE_DEVICE);
const ref = (n: number) => toHex(n, { size: 32 });

/** The fixture after one 100 USDC cash payment (50 / 40 / 10 USDC accrued), with the relayer account holding the
 * factory's depositor role. */
async function deployWithAccruals() {
  const p = await deployPayments();
  await payOnRail(p, "cash", await makeOrder(p, USDC(100)));
  await p.factory.write.grantRole([await p.factory.read.DEPOSITOR_ROLE(), p.accounts.relayer.account.address]);
  return p;
}

describe("AssetSplit.pause and unpause", () => {
  it("the pauser pauses one split's payments; withdrawals stay open; other splits keep settling; unpause resumes", async () => {
    const p = await networkHelpers.loadFixture(deployWithAccruals);
    const asPauser = await factoryAs(p, p.accounts.pauser);
    await viem.assertions.emitWithArgs(asPauser.write.pauseSplit([KEY]), p.split, "Paused", [getAddress(p.factory.address)]);
    assert.equal(await p.split.read.paused(), true);
    const order = await makeOrder(p, USDC(1));
    await viem.assertions.revertWithCustomErrorWithArgs(payOnRail(p, "cash", order), p.split, "EnforcedPause", []);
    assert.equal(await p.router.read.isPaid([order.orderId]), false);

    const device2 = assetKey("device-2");
    const other = await createFactorySplit(p, deviceKey("device-2"));
    await viem.assertions.emit(
      payOnRail(p, "cash", await makeOrder(p, USDC(1), { split: other.address, deviceId: device2 })),
      other,
      "YieldDeposited",
    );

    await (await splitAs(p, p.accounts.stranger)).write.release([p.accounts.operator.account.address]);
    await (await splitAs(p, p.accounts.assetOwner)).write.withdraw([p.accounts.assetOwner.account.address]);
    assert.equal(await p.token.read.balanceOf([p.accounts.operator.account.address]), USDC(40));
    assert.equal(await p.token.read.balanceOf([p.accounts.assetOwner.account.address]), USDC(50));

    await viem.assertions.emitWithArgs(asPauser.write.unpauseSplit([KEY]), p.split, "Unpaused", [getAddress(p.factory.address)]);
    assert.equal(await p.split.read.paused(), false);
    await viem.assertions.emit(payOnRail(p, "cash", order), p.split, "YieldDeposited");
  });

  it("settle and deposit revert with EnforcedPause while paused, before the backing check; the tokens sent wait", async () => {
    const p = await networkHelpers.loadFixture(deployWithAccruals);
    const asSettler = await splitAs(p, p.accounts.relayer);
    await (await factoryAs(p, p.accounts.pauser)).write.pauseSplit([KEY]);
    await p.token.write.mint([p.split.address, USDC(1)]);
    await viem.assertions.revertWithCustomErrorWithArgs(asSettler.write.settle([ref(1), USDC(1)]), p.split, "EnforcedPause", []);
    // An unbacked settlement is refused as paused too.
    await viem.assertions.revertWithCustomErrorWithArgs(asSettler.write.settle([ref(2), USDC(100)]), p.split, "EnforcedPause", []);
    await viem.assertions.revertWithCustomErrorWithArgs(asSettler.write.deposit([ref(3), USDC(1)]), p.split, "EnforcedPause", []);
    assert.equal(await p.split.read.claimable([p.accounts.assetOwner.account.address]), USDC(50));
    assert.equal(await p.split.read.surplus(), USDC(1), "the tokens sent stay unsettled");

    await (await factoryAs(p, p.accounts.pauser)).write.unpauseSplit([KEY]);
    // The tokens sent while paused back the settlement once unpaused.
    await viem.assertions.emit(asSettler.write.settle([ref(1), USDC(1)]), p.split, "YieldDeposited");
    assert.equal(await p.split.read.claimable([p.accounts.assetOwner.account.address]), USDC(50.5));
    assert.equal(await p.split.read.surplus(), 0n);
  });

  it("takes orders from its factory only: a direct pause or unpause reverts with OnlyFactory, even from the pauser", async () => {
    const p = await networkHelpers.loadFixture(deployWithAccruals);
    for (const caller of [p.accounts.pauser, p.accounts.admin, p.accounts.stranger]) {
      const asCaller = await splitAs(p, caller);
      await viem.assertions.revertWithCustomErrorWithArgs(asCaller.write.pause(), p.split, "OnlyFactory", [
        getAddress(caller.account.address),
      ]);
      await viem.assertions.revertWithCustomErrorWithArgs(asCaller.write.unpause(), p.split, "OnlyFactory", [
        getAddress(caller.account.address),
      ]);
    }
    assert.equal(await p.split.read.paused(), false);
  });

  it("pausing a paused split reverts with EnforcedPause, unpausing a running one with ExpectedPause", async () => {
    const p = await networkHelpers.loadFixture(deployWithAccruals);
    const asPauser = await factoryAs(p, p.accounts.pauser);
    await viem.assertions.revertWithCustomErrorWithArgs(asPauser.write.unpauseSplit([KEY]), p.split, "ExpectedPause", []);
    await asPauser.write.pauseSplit([KEY]);
    await viem.assertions.revertWithCustomErrorWithArgs(asPauser.write.pauseSplit([KEY]), p.split, "EnforcedPause", []);
    assert.equal(await p.split.read.paused(), true);
  });
});
