// TelemetryAnchor: deployment and the roles (only the anchorer anchors; the admin grants and revokes it).
// Anchoring is in TelemetryAnchor.anchorBatches.test.ts, verification in TelemetryAnchor.verifyReading.test.ts.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { getAddress, keccak256, toHex, zeroAddress, zeroHash } from "viem";
import { ANCHORER_ROLE, BATCHES_ROOT, deployAnchor, networkHelpers, viem } from "./telemetry-anchor-fixture.ts";

const DEFAULT_ADMIN_ROLE = zeroHash;

describe("TelemetryAnchor", () => {
  describe("deployment", () => {
    it("gives the admin the default admin role and the initial anchorer the anchorer role", async () => {
      const { anchor, accounts } = await networkHelpers.loadFixture(deployAnchor);
      assert.equal(await anchor.read.ANCHORER_ROLE(), ANCHORER_ROLE);
      assert.equal(await anchor.read.defaultAdmin(), getAddress(accounts.admin.account.address));
      assert.equal(await anchor.read.hasRole([ANCHORER_ROLE, accounts.anchorer.account.address]), true);
      assert.equal(await anchor.read.hasRole([ANCHORER_ROLE, accounts.admin.account.address]), false);
      assert.equal(await anchor.read.hasRole([DEFAULT_ADMIN_ROLE, accounts.anchorer.account.address]), false);
    });

    it("reverts with InvalidAnchorer for an initial anchorer of address zero", async () => {
      const { anchor, accounts } = await networkHelpers.loadFixture(deployAnchor);
      await viem.assertions.revertWithCustomErrorWithArgs(
        viem.deployContract("TelemetryAnchor", [accounts.admin.account.address, 0, zeroAddress]),
        anchor,
        "InvalidAnchorer",
        [zeroAddress],
      );
    });
  });

  describe("roles", () => {
    it("anchoring is only for the anchorer role (not even the admin)", async () => {
      const { anchor, accounts } = await networkHelpers.loadFixture(deployAnchor);
      for (const caller of [accounts.admin, accounts.stranger]) {
        const asCaller = await viem.getContractAt("TelemetryAnchor", anchor.address, { client: { wallet: caller } });
        await viem.assertions.revertWithCustomErrorWithArgs(
          asCaller.write.anchorBatches([BATCHES_ROOT, 1]),
          anchor,
          "AccessControlUnauthorizedAccount",
          [getAddress(caller.account.address), ANCHORER_ROLE],
        );
      }
      assert.equal(await anchor.read.isAnchored([BATCHES_ROOT]), false);
    });

    it("follows grants and revocations of the anchorer role by the admin", async () => {
      const { anchor, asAnchorer, accounts } = await networkHelpers.loadFixture(deployAnchor);
      await anchor.write.grantRole([ANCHORER_ROLE, accounts.other.account.address]);
      const asOther = await viem.getContractAt("TelemetryAnchor", anchor.address, { client: { wallet: accounts.other } });
      await asOther.write.anchorBatches([BATCHES_ROOT, 1]);
      assert.equal(await anchor.read.isAnchored([BATCHES_ROOT]), true);
      await anchor.write.revokeRole([ANCHORER_ROLE, accounts.anchorer.account.address]);
      await viem.assertions.revertWithCustomErrorWithArgs(
        asAnchorer.write.anchorBatches([keccak256(toHex("the next batches root")), 1]),
        anchor,
        "AccessControlUnauthorizedAccount",
        [getAddress(accounts.anchorer.account.address), ANCHORER_ROLE],
      );
    });

    it("only the admin grants the anchorer role", async () => {
      const { anchor, asAnchorer, accounts } = await networkHelpers.loadFixture(deployAnchor);
      await viem.assertions.revertWithCustomErrorWithArgs(
        asAnchorer.write.grantRole([ANCHORER_ROLE, accounts.stranger.account.address]),
        anchor,
        "AccessControlUnauthorizedAccount",
        [getAddress(accounts.anchorer.account.address), DEFAULT_ADMIN_ROLE],
      );
    });
  });
});
