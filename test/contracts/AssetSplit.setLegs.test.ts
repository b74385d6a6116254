import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { getAddress, parseEventLogs, zeroAddress, zeroHash, type Address } from "viem";
import {
  LEG_BPS,
  USDC,
  deployPayments,
  expectedLegs,
  makeOrder,
  networkHelpers,
  payOnRail,
  publicClient,
  splitAs,
  viem,
  type Payments,
} from "./fixture.ts";

type Triple = [Address, Address, Address];

function checksummed(t: Triple): Triple {
  return [getAddress(t[0]), getAddress(t[1]), getAddress(t[2])];
}

function defaultRecipients(p: Payments): Triple {
  return [p.accounts.assetOwner.account.address, p.accounts.operator.account.address, p.accounts.protocol.account.address];
}

describe("AssetSplit.setLegs", () => {
  it("is only for the default admin", async () => {
    const p = await networkHelpers.loadFixture(deployPayments);
    for (const caller of [p.accounts.stranger, p.accounts.pauser, p.accounts.assetOwner]) {
      await viem.assertions.revertWithCustomErrorWithArgs(
        (await splitAs(p, caller)).write.setLegs([defaultRecipients(p), [10_000, 0, 0]]),
        p.split,
        "AccessControlUnauthorizedAccount",
        [getAddress(caller.account.address), zeroHash],
      );
    }
    // The router, a depositor, cannot change the legs either.
    assert.equal(await p.split.read.hasRole([zeroHash, p.router.address]), false);
    const [, bps] = await p.split.read.legs();
    assert.deepEqual(bps, [...LEG_BPS]);
  });

  it("reverts with InvalidRecipient(i) for a zero recipient at leg i (the first one found)", async () => {
    const p = await networkHelpers.loadFixture(deployPayments);
    const r = defaultRecipients(p);
    const cases: Array<[Triple, bigint]> = [
      [[zeroAddress, r[1], r[2]], 0n],
      [[r[0], zeroAddress, r[2]], 1n],
      [[r[0], r[1], zeroAddress], 2n],
      [[r[0], zeroAddress, zeroAddress], 1n],
      [[zeroAddress, zeroAddress, zeroAddress], 0n],
    ];
    for (const [recipients, leg] of cases) {
      await viem.assertions.revertWithCustomErrorWithArgs(p.split.write.setLegs([recipients, [...LEG_BPS]]), p.split, "InvalidRecipient", [
        leg,
      ]);
    }
  });

  it("reverts with InvalidRecipient(i) for the split itself as the recipient of leg i", async () => {
    // Its credit could never be paid out (a payout to the split is refused) and would stay stuck.
    const p = await networkHelpers.loadFixture(deployPayments);
    const r = defaultRecipients(p);
    for (const leg of [0, 1, 2]) {
      const recipients = [...r] as Triple;
      recipients[leg] = p.split.address;
      await viem.assertions.revertWithCustomErrorWithArgs(p.split.write.setLegs([recipients, [...LEG_BPS]]), p.split, "InvalidRecipient", [
        BigInt(leg),
      ]);
    }
  });

  it("reverts with InvalidBasisPoints(sum) unless the shares sum to 10,000", async () => {
    const p = await networkHelpers.loadFixture(deployPayments);
    const cases: Array<[[number, number, number], bigint]> = [
      [[5000, 4000, 999], 9_999n],
      [[5000, 4000, 1001], 10_001n],
      [[0, 0, 0], 0n],
      [[65_535, 65_535, 65_535], 196_605n], // summed in uint256: no uint16 wrap-around
      [[0, 10_000, 1], 10_001n],
    ];
    for (const [bps, sum] of cases) {
      await viem.assertions.revertWithCustomErrorWithArgs(
        p.split.write.setLegs([defaultRecipients(p), bps]),
        p.split,
        "InvalidBasisPoints",
        [sum],
      );
    }
  });

  it("checks recipients before shares", async () => {
    const p = await networkHelpers.loadFixture(deployPayments);
    const r = defaultRecipients(p);
    await viem.assertions.revertWithCustomErrorWithArgs(
      p.split.write.setLegs([
        [r[0], r[1], zeroAddress],
        [1, 1, 1],
      ]),
      p.split,
      "InvalidRecipient",
      [2n],
    );
  });

  it("emits LegsUpdated and updates legs()", async () => {
    const p = await networkHelpers.loadFixture(deployPayments);
    const { stranger, operator, protocol } = p.accounts;
    const recipients: Triple = [stranger.account.address, protocol.account.address, operator.account.address];
    await viem.assertions.emitWithArgs(p.split.write.setLegs([recipients, [7000, 2500, 500]]), p.split, "LegsUpdated", [
      checksummed(recipients),
      [7000, 2500, 500],
    ]);
    assert.deepEqual(await p.split.read.legs(), [checksummed(recipients), [7000, 2500, 500]]);
  });

  it("accepts a leg with all 10,000 bps and legs of zero", async () => {
    const p = await networkHelpers.loadFixture(deployPayments);
    const r = defaultRecipients(p);
    for (const bps of [
      [10_000, 0, 0],
      [0, 10_000, 0],
      [0, 0, 10_000],
    ] as Array<[number, number, number]>) {
      await p.split.write.setLegs([r, bps]);
      assert.deepEqual((await p.split.read.legs())[1], bps);
      assert.deepEqual(
        await p.split.read.previewSplit([999n]),
        bps.map((b) => (b === 10_000 ? 999n : 0n)),
      );
    }
  });

  it("LegsUpdated is emitted at construction with the initial legs", async () => {
    const p = await networkHelpers.loadFixture(deployPayments);
    const recipients = defaultRecipients(p);
    const { contract, deploymentTransaction } = await viem.sendDeploymentTransaction("AssetSplit", [
      p.token.address,
      p.accounts.admin.account.address,
      0,
      recipients,
      [6000, 3000, 1000],
    ]);
    const receipt = await publicClient.waitForTransactionReceipt({ hash: deploymentTransaction.hash });
    assert.equal(receipt.contractAddress, contract.address.toLowerCase());
    const logs = parseEventLogs({ abi: contract.abi, eventName: "LegsUpdated", logs: receipt.logs });
    assert.equal(logs.length, 1);
    assert.equal(logs[0].address, contract.address.toLowerCase());
    assert.deepEqual(logs[0].args, { recipients: checksummed(recipients), bps: [6000, 3000, 1000] });
    assert.deepEqual(await contract.read.legs(), [checksummed(recipients), [6000, 3000, 1000]]);
    assert.equal(await contract.read.asset(), getAddress(p.token.address));
  });

  it("the constructor rejects invalid legs", async () => {
    const p = await networkHelpers.loadFixture(deployPayments);
    const r = defaultRecipients(p);
    await assert.rejects(
      viem.deployContract("AssetSplit", [p.token.address, p.accounts.admin.account.address, 0, [r[0], zeroAddress, r[2]], [...LEG_BPS]]),
      (error: Error) => error.message.includes("InvalidRecipient"),
    );
    await assert.rejects(
      viem.deployContract("AssetSplit", [p.token.address, p.accounts.admin.account.address, 0, r, [5000, 5000, 1]]),
      (error: Error) => error.message.includes("InvalidBasisPoints"),
    );
  });

  it("the constructor rejects asset address zero with InvalidAsset, whatever the legs", async () => {
    const p = await networkHelpers.loadFixture(deployPayments);
    const r = defaultRecipients(p);
    await viem.assertions.revertWithCustomErrorWithArgs(
      viem.deployContract("AssetSplit", [zeroAddress, p.accounts.admin.account.address, 0, r, [...LEG_BPS]]),
      p.split,
      "InvalidAsset",
      [],
    );
    // The asset is checked before the legs.
    await viem.assertions.revertWithCustomErrorWithArgs(
      viem.deployContract("AssetSplit", [
        zeroAddress,
        p.accounts.admin.account.address,
        0,
        [zeroAddress, zeroAddress, zeroAddress],
        [1, 1, 1],
      ]),
      p.split,
      "InvalidAsset",
      [],
    );
    // Any non-zero address is accepted as the asset (the router checks what it registers).
    const split = await viem.deployContract("AssetSplit", [p.router.address, p.accounts.admin.account.address, 0, r, [...LEG_BPS]]);
    assert.equal(await split.read.asset(), getAddress(p.router.address));
  });

  it("amounts accrued before a change stay with the old recipients; new shares apply to later settlements", async () => {
    const p = await networkHelpers.loadFixture(deployPayments);
    const { assetOwner, operator, protocol, stranger, relayer } = p.accounts;
    const claimables = async () => {
      const out: bigint[] = [];
      for (const w of [assetOwner, operator, protocol, stranger, relayer]) out.push(await p.split.read.claimable([w.account.address]));
      return out;
    };

    await payOnRail(p, "cash", await makeOrder(p, USDC(100)));
    assert.deepEqual(await claimables(), [USDC(50), USDC(40), USDC(10), 0n, 0n]);

    // New asset owner (stranger) and operator (relayer); the protocol stays, shares 30/30/40.
    await p.split.write.setLegs([
      [stranger.account.address, relayer.account.address, protocol.account.address],
      [3000, 3000, 4000],
    ]);
    assert.deepEqual(await claimables(), [USDC(50), USDC(40), USDC(10), 0n, 0n], "nothing moved at the change");
    assert.deepEqual(await p.split.read.previewSplit([USDC(100)]), [USDC(30), USDC(30), USDC(40)]);

    await payOnRail(p, "cash", await makeOrder(p, USDC(100)));
    assert.deepEqual(await claimables(), [USDC(50), USDC(40), USDC(50), USDC(30), USDC(30)]);

    // The old recipients withdraw what they earned before; the new ones what they earned after.
    await (await splitAs(p, assetOwner)).write.withdraw([assetOwner.account.address]);
    await (await splitAs(p, stranger)).write.release([relayer.account.address]);
    assert.deepEqual(await claimables(), [0n, USDC(40), USDC(50), USDC(30), 0n]);
    assert.equal(await p.token.read.balanceOf([assetOwner.account.address]), USDC(50));
    assert.equal(await p.token.read.balanceOf([relayer.account.address]), USDC(30));

    // A second change back to the original legs keeps every credit where it is.
    await p.split.write.setLegs([defaultRecipients(p), [...LEG_BPS]]);
    await payOnRail(p, "cash", await makeOrder(p, USDC(10)));
    assert.deepEqual(await claimables(), [USDC(5), USDC(44), USDC(51), USDC(30), 0n]);
    await (await splitAs(p, operator)).write.withdraw([operator.account.address]);
    await (await splitAs(p, stranger)).write.withdraw([stranger.account.address]);
    assert.deepEqual(await claimables(), [USDC(5), 0n, USDC(51), 0n, 0n]);
    assert.equal(await p.token.read.balanceOf([p.split.address]), USDC(56));
  });

  it("rounding is applied per settlement with the shares in force at that moment", async () => {
    const p = await networkHelpers.loadFixture(deployPayments);
    const { assetOwner, operator, protocol } = p.accounts;
    await payOnRail(p, "cash", await makeOrder(p, 7n)); // 5 / 2 / 0
    await p.split.write.setLegs([
      [protocol.account.address, assetOwner.account.address, operator.account.address],
      [3334, 3333, 3333],
    ]);
    await payOnRail(p, "cash", await makeOrder(p, 7n)); // 3 / 2 / 2
    assert.equal(await p.split.read.claimable([assetOwner.account.address]), 5n + 2n);
    assert.equal(await p.split.read.claimable([operator.account.address]), 2n + 2n);
    assert.equal(await p.split.read.claimable([protocol.account.address]), 0n + 3n);
    assert.deepEqual(expectedLegs(7n, [3334, 3333, 3333]), [3n, 2n, 2n]);
  });

  it("works while the split is paused", async () => {
    const p = await networkHelpers.loadFixture(deployPayments);
    await (await splitAs(p, p.accounts.pauser)).write.pause();
    await viem.assertions.emit(p.split.write.setLegs([defaultRecipients(p), [1, 2, 9997]]), p.split, "LegsUpdated");
    assert.deepEqual((await p.split.read.legs())[1], [1, 2, 9997]);
  });
});
