// AssetSplit.setRecipients: the factory replaces a split's asset-owner and operator recipients when a change its
// split manager proposed is executed (AssetSplitFactory.proposeRecipients, executeRecipients); the protocol leg and
// the shares are the factory's, fixed for good.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { getAddress, zeroAddress, type Address } from "viem";
import {
  LEG_BPS,
  USDC,
  deployPayments,
  makeOrder,
  networkHelpers,
  pauseFixtureSplit,
  payOnRail,
  setFixtureRecipients,
  splitAs,
  viem,
  type Payments,
} from "./fixture.ts";

/** The fixture after one 100 USDC cash payment: 50 / 40 / 10 USDC accrued. */
async function deployWithAccruals() {
  const p = await deployPayments();
  await payOnRail(p, "cash", await makeOrder(p, USDC(100)));
  return p;
}

async function claimables(p: Payments, who: Address[]) {
  const out: bigint[] = [];
  for (const address of who) out.push(await p.split.read.claimable([address]));
  return out;
}

describe("AssetSplit.setRecipients", () => {
  it("emits LegsUpdated with the new recipients, the factory's protocol recipient and the fixed shares", async () => {
    const p = await networkHelpers.loadFixture(deployPayments);
    const { stranger, payer, protocol } = p.accounts;
    const expected = [stranger, payer, protocol].map((w) => getAddress(w.account.address)) as [Address, Address, Address];
    await viem.assertions.emitWithArgs(setFixtureRecipients(p, stranger.account.address, payer.account.address), p.split, "LegsUpdated", [
      expected,
      [...LEG_BPS],
    ]);
    assert.deepEqual(await p.split.read.legs(), [expected, [...LEG_BPS]]);
  });

  it("takes orders from its factory only: the split manager's direct call and everyone else's revert with OnlyFactory", async () => {
    const p = await networkHelpers.loadFixture(deployPayments);
    const { admin, relayer, assetOwner, stranger } = p.accounts;
    for (const caller of [admin, relayer, assetOwner, stranger]) {
      await viem.assertions.revertWithCustomErrorWithArgs(
        (await splitAs(p, caller)).write.setRecipients([caller.account.address, caller.account.address]),
        p.split,
        "OnlyFactory",
        [getAddress(caller.account.address)],
      );
    }
    const [recipients] = await p.split.read.legs();
    assert.deepEqual(
      recipients,
      [p.accounts.assetOwner, p.accounts.operator, p.accounts.protocol].map((w) => getAddress(w.account.address)),
    );
  });

  it("a change to address zero or to the split itself is refused when proposed (InvalidProposedRecipients)", async () => {
    const p = await networkHelpers.loadFixture(deployPayments);
    const valid = p.accounts.stranger.account.address;
    const split = p.split.address;
    for (const [owner, op] of [
      [zeroAddress, valid],
      [valid, zeroAddress],
      [split, valid],
      [valid, split],
      [zeroAddress, split],
    ] as const) {
      await viem.assertions.revertWithCustomErrorWithArgs(setFixtureRecipients(p, owner, op), p.factory, "InvalidProposedRecipients", [
        getAddress(owner),
        getAddress(op),
      ]);
    }
    assert.equal((await p.split.read.legs())[0][0], getAddress(p.accounts.assetOwner.account.address));
  });

  it("amounts accrued before a change stay with the old recipients; later settlements go to the new ones", async () => {
    const p = await networkHelpers.loadFixture(deployWithAccruals);
    const { assetOwner, operator, protocol, stranger, relayer } = p.accounts;
    const everyone = [assetOwner, operator, protocol, stranger, relayer].map((w) => w.account.address);
    assert.deepEqual(await claimables(p, everyone), [USDC(50), USDC(40), USDC(10), 0n, 0n]);

    await setFixtureRecipients(p, stranger.account.address, relayer.account.address);
    assert.deepEqual(await claimables(p, everyone), [USDC(50), USDC(40), USDC(10), 0n, 0n], "nothing moved at the change");
    assert.deepEqual(await p.split.read.previewSplit([USDC(100)]), [USDC(50), USDC(40), USDC(10)], "the shares stay");

    await payOnRail(p, "cash", await makeOrder(p, USDC(100)));
    assert.deepEqual(await claimables(p, everyone), [USDC(50), USDC(40), USDC(20), USDC(50), USDC(40)]);

    // The old recipients withdraw what they earned before; the new ones what they earned after.
    await (await splitAs(p, assetOwner)).write.withdraw([assetOwner.account.address]);
    await (await splitAs(p, stranger)).write.release([relayer.account.address]);
    assert.deepEqual(await claimables(p, everyone), [0n, USDC(40), USDC(20), USDC(50), 0n]);
    assert.equal(await p.token.read.balanceOf([assetOwner.account.address]), USDC(50));
    assert.equal(await p.token.read.balanceOf([relayer.account.address]), USDC(40));

    // A change back to the original recipients keeps every credit where it is.
    await setFixtureRecipients(p, assetOwner.account.address, operator.account.address);
    await payOnRail(p, "cash", await makeOrder(p, USDC(10)));
    assert.deepEqual(await claimables(p, everyone), [USDC(5), USDC(44), USDC(21), USDC(50), 0n]);
    await (await splitAs(p, operator)).write.withdraw([operator.account.address]);
    await (await splitAs(p, stranger)).write.withdraw([stranger.account.address]);
    assert.deepEqual(await claimables(p, everyone), [USDC(5), 0n, USDC(21), 0n, 0n]);
    assert.equal(await p.token.read.balanceOf([p.split.address]), USDC(26));
  });

  it("no role can change the protocol recipient or the shares: a split takes orders from its factory only", async () => {
    const p = await networkHelpers.loadFixture(deployWithAccruals);
    for (const caller of [p.accounts.admin, p.accounts.relayer, p.accounts.assetOwner, p.accounts.stranger]) {
      const asCaller = await splitAs(p, caller);
      const who: [Address] = [getAddress(caller.account.address)];
      await viem.assertions.revertWithCustomErrorWithArgs(
        asCaller.write.initialize([caller.account.address, caller.account.address]),
        p.split,
        "OnlyFactory",
        who,
      );
      // The factory's own recipient change names the asset owner and operator only.
      await setFixtureRecipients(p, caller.account.address, caller.account.address);
    }
    const [recipients, bps] = await p.split.read.legs();
    assert.equal(recipients[2], getAddress(p.accounts.protocol.account.address));
    assert.deepEqual(bps, [...LEG_BPS]);
    assert.deepEqual(await p.split.read.previewSplit([USDC(10)]), [USDC(5), USDC(4), USDC(1)]);
  });

  it("works while the split is paused", async () => {
    const p = await networkHelpers.loadFixture(deployWithAccruals);
    await pauseFixtureSplit(p);
    const { stranger } = p.accounts;
    await viem.assertions.emit(setFixtureRecipients(p, stranger.account.address, stranger.account.address), p.split, "LegsUpdated");
    assert.equal((await p.split.read.legs())[0][1], getAddress(stranger.account.address));
    assert.equal(await p.split.read.claimable([p.accounts.operator.account.address]), USDC(40), "the accrual stays the old operator's");
  });
});
