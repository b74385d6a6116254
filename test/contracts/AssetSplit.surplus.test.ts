// Tokens the split holds beyond what it owes (credits plus accruals): sent to it directly, they are surplus, never
// credited to a recipient unless a depositor settles them, and only the factory's default admin can recover them
// (through the factory: the split takes orders from its factory only).
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { getAddress, keccak256, toHex, zeroAddress, zeroHash, type Address } from "viem";
import {
  FIXTURE_DEVICE,
  USDC,
  assetKey,
  deployPayments,
  factoryAs,
  makeOrder,
  networkHelpers,
  pauseFixtureSplit,
  payOnRail,
  setFixtureRecipients,
  splitAs,
  tokenAs,
  viem,
  type Payments,
} from "./fixture.ts";

const DEFAULT_ADMIN_ROLE = zeroHash;
const KEY = assetKey(FIXTURE_DEVICE);

/** The fixture after one 100 USDC cash payment (50 / 40 / 10 USDC claimable) and a 7 USDC donation. */
async function deployWithDonation() {
  const p = await deployPayments();
  await payOnRail(p, "cash", await makeOrder(p, USDC(100)));
  await p.token.write.mint([p.split.address, USDC(7)]);
  return p;
}

function recipients(p: Payments): Address[] {
  return [p.accounts.assetOwner, p.accounts.operator, p.accounts.protocol].map((w) => w.account.address);
}

async function claimables(p: Payments) {
  const out: bigint[] = [];
  for (const who of recipients(p)) out.push(await p.split.read.claimable([who]));
  return out;
}

/** balanceOf(split) == sum of claimable + surplus, with the surplus expected. */
async function assertHeld(p: Payments, surplus: bigint, what: string) {
  const owed = (await claimables(p)).reduce((a, b) => a + b, 0n);
  assert.equal(await p.split.read.surplus(), surplus, `${what}: surplus`);
  assert.equal(await p.token.read.balanceOf([p.split.address]), owed + surplus, `${what}: balance == owed + surplus`);
}

describe("AssetSplit surplus", () => {
  describe("surplus()", () => {
    it("is zero at deployment and after payments, deposits and withdrawals: the balance is exactly what is owed", async () => {
      const p = await networkHelpers.loadFixture(deployPayments);
      await assertHeld(p, 0n, "deployment");
      for (const rail of ["permit", "approval", "cash"] as const) {
        await payOnRail(p, rail, await makeOrder(p, USDC(3.33)));
        await assertHeld(p, 0n, `${rail} payment`);
      }
      const depositor = p.accounts.relayer;
      await p.factory.write.grantRole([await p.factory.read.DEPOSITOR_ROLE(), depositor.account.address]);
      await p.token.write.mint([depositor.account.address, USDC(20)]);
      await (await tokenAs(p, depositor)).write.approve([p.split.address, USDC(20)]);
      await (await splitAs(p, depositor)).write.deposit([keccak256(toHex("batch")), USDC(20)]);
      await assertHeld(p, 0n, "deposit");
      await (await splitAs(p, p.accounts.operator)).write.withdraw([p.accounts.operator.account.address]);
      await assertHeld(p, 0n, "withdrawal");
      assert.equal(await p.token.read.balanceOf([p.split.address]), USDC(29.99) - USDC(11.996));
    });

    it("donations become surplus and are never credited, through payments, recipient changes and withdrawals", async () => {
      const p = await networkHelpers.loadFixture(deployPayments);
      const { assetOwner, operator, protocol, stranger } = p.accounts;
      await p.token.write.mint([p.split.address, USDC(5)]);
      await assertHeld(p, USDC(5), "first donation");
      assert.deepEqual(await claimables(p), [0n, 0n, 0n]);

      await payOnRail(p, "cash", await makeOrder(p, USDC(100)));
      assert.deepEqual(await claimables(p), [USDC(50), USDC(40), USDC(10)], "a payment credits its own amount only");
      await assertHeld(p, USDC(5), "after a payment");

      // A second donation, by a transfer from an account.
      await p.token.write.mint([stranger.account.address, USDC(2)]);
      await (await tokenAs(p, stranger)).write.transfer([p.split.address, USDC(2)]);
      assert.deepEqual(await claimables(p), [USDC(50), USDC(40), USDC(10)]);
      await assertHeld(p, USDC(7), "second donation");

      // A recipient change checkpoints the accruals; the surplus stays where it is.
      await setFixtureRecipients(p, operator.account.address, assetOwner.account.address);
      await payOnRail(p, "approval", await makeOrder(p, USDC(10)));
      assert.deepEqual(await claimables(p), [USDC(54), USDC(45), USDC(11)]);
      await assertHeld(p, USDC(7), "after a recipient change and a payment");

      // Every recipient withdraws everything it is owed, and not one unit more.
      for (const w of [assetOwner, operator, protocol]) {
        const expected = await p.split.read.claimable([w.account.address]);
        await viem.assertions.emitWithArgs((await splitAs(p, w)).write.withdraw([w.account.address]), p.split, "Withdrawn", [
          getAddress(w.account.address),
          getAddress(w.account.address),
          expected,
        ]);
        await viem.assertions.revertWithCustomErrorWithArgs(
          (await splitAs(p, w)).write.withdraw([w.account.address]),
          p.split,
          "NothingToWithdraw",
          [getAddress(w.account.address)],
        );
      }
      await assertHeld(p, USDC(7), "after all withdrawals");
      assert.equal(await p.token.read.balanceOf([p.split.address]), USDC(7), "only the donations are left");
      assert.equal(await p.token.read.balanceOf([assetOwner.account.address]), USDC(54));
      assert.equal(await p.token.read.balanceOf([operator.account.address]), USDC(45));
      assert.equal(await p.token.read.balanceOf([protocol.account.address]), USDC(11));
    });

    it("stays the same across withdrawals and releases; it is the balance minus everything still owed", async () => {
      const p = await networkHelpers.loadFixture(deployWithDonation);
      const { assetOwner, operator, protocol, stranger } = p.accounts;
      await assertHeld(p, USDC(7), "start");
      await (await splitAs(p, assetOwner)).write.withdraw([stranger.account.address]);
      assert.equal(await p.token.read.balanceOf([p.split.address]), USDC(57));
      await assertHeld(p, USDC(7), "after withdraw(to)");
      await (await splitAs(p, stranger)).write.release([protocol.account.address]);
      await assertHeld(p, USDC(7), "after release");
      // Credits accrued after a withdrawal are owed too.
      await payOnRail(p, "cash", await makeOrder(p, USDC(20)));
      assert.deepEqual(await claimables(p), [USDC(10), USDC(48), USDC(2)]);
      await assertHeld(p, USDC(7), "after another payment");
      await (await splitAs(p, operator)).write.withdraw([operator.account.address]);
      await assertHeld(p, USDC(7), "after the operator's withdrawal");
      assert.equal(await p.token.read.balanceOf([p.split.address]), USDC(19));
    });

    it("tokens sent directly stay surplus until a depositor settles them, which credits them like any settlement", async () => {
      const p = await networkHelpers.loadFixture(deployWithDonation);
      const settler = p.accounts.relayer;
      await p.factory.write.grantRole([await p.factory.read.DEPOSITOR_ROLE(), settler.account.address]);
      const asSettler = await splitAs(p, settler);
      await viem.assertions.revertWithCustomErrorWithArgs(asSettler.write.settle([zeroHash, USDC(8)]), p.split, "UnbackedSettlement", [
        USDC(8),
        USDC(7),
      ]);
      await asSettler.write.settle([zeroHash, USDC(4)]);
      assert.deepEqual(await claimables(p), [USDC(52), USDC(41.6), USDC(10.4)]);
      await assertHeld(p, USDC(3), "after settling part of the surplus");
    });
  });

  describe("recoverSurplus(to), called through the factory's recoverSurplus(assetKey, to)", () => {
    it("sends exactly the surplus to `to`, returns it and emits SurplusRecovered; credits are untouched", async () => {
      const p = await networkHelpers.loadFixture(deployWithDonation);
      const { admin, stranger } = p.accounts;
      const { result } = await p.factory.simulate.recoverSurplus([KEY, stranger.account.address], { account: admin.account.address });
      assert.equal(result, USDC(7));
      await viem.assertions.emitWithArgs(p.factory.write.recoverSurplus([KEY, stranger.account.address]), p.split, "SurplusRecovered", [
        getAddress(stranger.account.address),
        USDC(7),
      ]);
      assert.equal(await p.token.read.balanceOf([stranger.account.address]), USDC(7));
      assert.equal(await p.token.read.balanceOf([admin.account.address]), 0n);
      assert.deepEqual(await claimables(p), [USDC(50), USDC(40), USDC(10)]);
      await assertHeld(p, 0n, "after recovery");
      assert.equal(await p.token.read.balanceOf([p.split.address]), USDC(100));

      // Everything credited is still paid in full afterwards.
      for (const who of recipients(p)) await (await splitAs(p, stranger)).write.release([who]);
      assert.equal(await p.token.read.balanceOf([p.split.address]), 0n);
      assert.equal(await p.token.read.balanceOf([p.accounts.assetOwner.account.address]), USDC(50));
      assert.equal(await p.token.read.balanceOf([p.accounts.operator.account.address]), USDC(40));
      assert.equal(await p.token.read.balanceOf([p.accounts.protocol.account.address]), USDC(10));
    });

    it("reverts with NothingToWithdraw(split) when there is no surplus: empty split, all owed, or already recovered", async () => {
      const p = await networkHelpers.loadFixture(deployPayments);
      const { admin } = p.accounts;
      const nothing = async () =>
        viem.assertions.revertWithCustomErrorWithArgs(
          p.factory.write.recoverSurplus([KEY, admin.account.address]),
          p.split,
          "NothingToWithdraw",
          [getAddress(p.split.address)],
        );
      await nothing();
      await payOnRail(p, "cash", await makeOrder(p, USDC(100)));
      await nothing();
      await p.token.write.mint([p.split.address, 1n]);
      await viem.assertions.emitWithArgs(p.factory.write.recoverSurplus([KEY, admin.account.address]), p.split, "SurplusRecovered", [
        getAddress(admin.account.address),
        1n,
      ]);
      await nothing();
      assert.equal(await p.token.read.balanceOf([admin.account.address]), 1n);
      await assertHeld(p, 0n, "end");
    });

    it("is only for the factory's default admin: recipients, depositors, the split manager and the pauser cannot take it", async () => {
      const p = await networkHelpers.loadFixture(deployWithDonation);
      const { stranger, pauser, assetOwner, relayer, admin } = p.accounts;
      await p.factory.write.grantRole([await p.factory.read.DEPOSITOR_ROLE(), relayer.account.address]);
      for (const caller of [stranger, pauser, assetOwner, relayer]) {
        await viem.assertions.revertWithCustomErrorWithArgs(
          (await factoryAs(p, caller)).write.recoverSurplus([KEY, caller.account.address]),
          p.factory,
          "AccessControlUnauthorizedAccount",
          [getAddress(caller.account.address), DEFAULT_ADMIN_ROLE],
        );
        assert.equal(await p.token.read.balanceOf([caller.account.address]), 0n);
      }
      // The split itself takes the call from its factory only, even from the factory's admin.
      for (const caller of [admin, stranger]) {
        await viem.assertions.revertWithCustomErrorWithArgs(
          (await splitAs(p, caller)).write.recoverSurplus([caller.account.address]),
          p.split,
          "OnlyFactory",
          [getAddress(caller.account.address)],
        );
      }
      await assertHeld(p, USDC(7), "after the refused calls");
    });

    it("follows the factory's default admin role to a new admin", async () => {
      const p = await networkHelpers.loadFixture(deployWithDonation);
      const { admin, stranger } = p.accounts;
      await p.factory.write.beginDefaultAdminTransfer([stranger.account.address]);
      const asNewAdmin = await factoryAs(p, stranger);
      await asNewAdmin.write.acceptDefaultAdminTransfer();
      await viem.assertions.revertWithCustomErrorWithArgs(
        p.factory.write.recoverSurplus([KEY, admin.account.address]),
        p.factory,
        "AccessControlUnauthorizedAccount",
        [getAddress(admin.account.address), DEFAULT_ADMIN_ROLE],
      );
      await viem.assertions.emitWithArgs(asNewAdmin.write.recoverSurplus([KEY, stranger.account.address]), p.split, "SurplusRecovered", [
        getAddress(stranger.account.address),
        USDC(7),
      ]);
    });

    it("works while the split is paused", async () => {
      const p = await networkHelpers.loadFixture(deployWithDonation);
      await pauseFixtureSplit(p);
      await viem.assertions.emitWithArgs(
        p.factory.write.recoverSurplus([KEY, p.accounts.admin.account.address]),
        p.split,
        "SurplusRecovered",
        [getAddress(p.accounts.admin.account.address), USDC(7)],
      );
      await assertHeld(p, 0n, "after recovery while paused");
    });

    it("reverts with the token's ERC20InvalidReceiver for `to` = address zero and keeps the surplus", async () => {
      const p = await networkHelpers.loadFixture(deployWithDonation);
      await viem.assertions.revertWithCustomErrorWithArgs(
        p.factory.write.recoverSurplus([KEY, zeroAddress]),
        p.token,
        "ERC20InvalidReceiver",
        [zeroAddress],
      );
      await assertHeld(p, USDC(7), "after the failed recovery");
    });
  });
});
