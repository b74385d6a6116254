// TelemetryAnchor: anchoring batch roots (roles, binding, no re-anchoring) and verifying readings against
// them with proofs of the relayer's batch trees.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { StandardMerkleTree } from "@openzeppelin/merkle-tree";
import { network } from "hardhat";
import { type Hex, getAddress, keccak256, toHex, zeroAddress, zeroHash } from "viem";
import {
  type BatchBinding,
  LEAF_ENCODING,
  type LeafReading,
  batchRoot,
  idKey,
  leafHash,
  leafValues,
} from "../../relayer/src/energy/anchoring/merkle.ts";

const { viem, networkHelpers } = await network.create();
const publicClient = await viem.getPublicClient();
const chainId = await publicClient.getChainId();

const DEFAULT_ADMIN_ROLE = zeroHash;
const ANCHORER_ROLE = keccak256(toHex("ANCHORER_ROLE"));
const PROJECT = idKey("prj_kibera_solar");
const DEVICE = idKey("mtr-kibera-001");
const ROOT = keccak256(toHex("a batch root"));

async function deployAnchor() {
  const [admin, anchorer, stranger, other] = await viem.getWalletClients();
  const anchor = await viem.deployContract("TelemetryAnchor", [admin.account.address, 0, anchorer.account.address]);
  const asAnchorer = await viem.getContractAt("TelemetryAnchor", anchor.address, { client: { wallet: anchorer } });
  return { anchor, asAnchorer, accounts: { admin, anchorer, stranger, other } };
}

function readings(count: number, start = 1): LeafReading[] {
  return Array.from({ length: count }, (_, i) => ({
    readingId: `r-${start + i}`,
    sequenceNumber: start + i,
    meterEpoch: 1,
    energyWhCumulative: 1_000_000 + (start + i) * 250,
    deviceTsMs: Date.UTC(2026, 2, 1) + (start + i) * 900_000,
    supersedesReadingId: i === 2 ? `r-${start}` : null,
  }));
}

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

  describe("anchor", () => {
    it("stores the batch's root and count and emits BatchAnchored with its binding", async () => {
      const { anchor, asAnchorer } = await networkHelpers.loadFixture(deployAnchor);
      await viem.assertions.emitWithArgs(asAnchorer.write.anchor([PROJECT, DEVICE, 1n, ROOT, 96]), anchor, "BatchAnchored", [
        PROJECT,
        DEVICE,
        1n,
        ROOT,
        96,
      ]);
      const stored = await anchor.read.anchorOf([DEVICE, 1n]);
      assert.equal(stored.root, ROOT);
      assert.equal(stored.readings, 96);
      assert.equal(stored.anchoredAt, BigInt(await networkHelpers.time.latest()));
    });

    it("anchors the next batch of the device and the same sequence of another device", async () => {
      const { anchor, asAnchorer } = await networkHelpers.loadFixture(deployAnchor);
      const otherDevice = idKey("mtr-kibera-002");
      const otherRoot = keccak256(toHex("another root"));
      await asAnchorer.write.anchor([PROJECT, DEVICE, 1n, ROOT, 1]);
      await asAnchorer.write.anchor([PROJECT, DEVICE, 2n, otherRoot, 2]);
      await asAnchorer.write.anchor([PROJECT, otherDevice, 1n, otherRoot, 3]);
      assert.equal((await anchor.read.anchorOf([DEVICE, 1n])).root, ROOT);
      assert.equal((await anchor.read.anchorOf([DEVICE, 2n])).root, otherRoot);
      assert.equal((await anchor.read.anchorOf([otherDevice, 1n])).readings, 3);
    });

    it("reverts with BatchAlreadyAnchored for a batch anchored before, whatever the root or project", async () => {
      const { anchor, asAnchorer } = await networkHelpers.loadFixture(deployAnchor);
      await asAnchorer.write.anchor([PROJECT, DEVICE, 7n, ROOT, 10]);
      for (const [project, root] of [
        [PROJECT, ROOT],
        [PROJECT, keccak256(toHex("a different root"))],
        [idKey("prj_yaba_ebike"), ROOT],
      ] as Array<[Hex, Hex]>) {
        await viem.assertions.revertWithCustomErrorWithArgs(
          asAnchorer.write.anchor([project, DEVICE, 7n, root, 10]),
          anchor,
          "BatchAlreadyAnchored",
          [DEVICE, 7n, ROOT],
        );
      }
      const stored = await anchor.read.anchorOf([DEVICE, 7n]);
      assert.equal(stored.root, ROOT, "the first root stays");
      assert.equal(stored.readings, 10);
    });

    it("reverts with EmptyRoot for a root of zero", async () => {
      const { anchor, asAnchorer } = await networkHelpers.loadFixture(deployAnchor);
      await viem.assertions.revertWithCustomError(asAnchorer.write.anchor([PROJECT, DEVICE, 1n, zeroHash, 1]), anchor, "EmptyRoot");
      assert.equal((await anchor.read.anchorOf([DEVICE, 1n])).root, zeroHash);
    });

    it("reverts with NoReadings for a batch of zero readings", async () => {
      const { anchor, asAnchorer } = await networkHelpers.loadFixture(deployAnchor);
      await viem.assertions.revertWithCustomError(asAnchorer.write.anchor([PROJECT, DEVICE, 1n, ROOT, 0]), anchor, "NoReadings");
    });

    it("is only for the anchorer role (not even the admin)", async () => {
      const { anchor, accounts } = await networkHelpers.loadFixture(deployAnchor);
      for (const caller of [accounts.admin, accounts.stranger]) {
        const asCaller = await viem.getContractAt("TelemetryAnchor", anchor.address, { client: { wallet: caller } });
        await viem.assertions.revertWithCustomErrorWithArgs(
          asCaller.write.anchor([PROJECT, DEVICE, 1n, ROOT, 1]),
          anchor,
          "AccessControlUnauthorizedAccount",
          [getAddress(caller.account.address), ANCHORER_ROLE],
        );
      }
    });

    it("follows grants and revocations of the anchorer role by the admin", async () => {
      const { anchor, asAnchorer, accounts } = await networkHelpers.loadFixture(deployAnchor);
      await anchor.write.grantRole([ANCHORER_ROLE, accounts.other.account.address]);
      const asOther = await viem.getContractAt("TelemetryAnchor", anchor.address, { client: { wallet: accounts.other } });
      await asOther.write.anchor([PROJECT, DEVICE, 1n, ROOT, 1]);
      await anchor.write.revokeRole([ANCHORER_ROLE, accounts.anchorer.account.address]);
      await viem.assertions.revertWithCustomErrorWithArgs(
        asAnchorer.write.anchor([PROJECT, DEVICE, 2n, ROOT, 1]),
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

  describe("verifyReading", () => {
    const binding: BatchBinding = { chainId, projectId: "prj_kibera_solar", deviceId: "mtr-kibera-001", batchSequence: 3 };
    const batch = readings(13);

    it("the relayer's root is the standard tree's root of the documented leaf values", () => {
      const values = batch.map((r) => leafValues(binding, r));
      assert.equal(batchRoot(binding, batch), StandardMerkleTree.of(values, [...LEAF_ENCODING]).root);
      assert.equal(batchRoot(binding, batch.slice(0, 1)), StandardMerkleTree.of(values.slice(0, 1), [...LEAF_ENCODING]).root);
    });

    it("proves every reading of an anchored batch", async () => {
      const { anchor, asAnchorer } = await networkHelpers.loadFixture(deployAnchor);
      const tree = StandardMerkleTree.of(
        batch.map((r) => leafValues(binding, r)),
        [...LEAF_ENCODING],
      );
      await asAnchorer.write.anchor([PROJECT, DEVICE, 3n, tree.root as Hex, batch.length]);
      for (const [i, values] of tree.entries()) {
        const proof = tree.getProof(i) as Hex[];
        assert.equal(await anchor.read.verifyReading([DEVICE, 3n, proof, leafHash(values)]), true, `reading ${i}`);
      }
    });

    it("rejects a reading of another batch, device or chain, or a changed value", async () => {
      const { anchor, asAnchorer } = await networkHelpers.loadFixture(deployAnchor);
      const tree = StandardMerkleTree.of(
        batch.map((r) => leafValues(binding, r)),
        [...LEAF_ENCODING],
      );
      await asAnchorer.write.anchor([PROJECT, DEVICE, 3n, tree.root as Hex, batch.length]);
      const proof = tree.getProof(0) as Hex[];
      const reading = batch[0];
      const forged = [
        leafValues({ ...binding, batchSequence: 4 }, reading),
        leafValues({ ...binding, deviceId: "mtr-kibera-002" }, reading),
        leafValues({ ...binding, chainId: chainId + 1 }, reading),
        leafValues({ ...binding, projectId: "prj_yaba_ebike" }, reading),
        leafValues(binding, { ...reading, energyWhCumulative: reading.energyWhCumulative + 1 }),
      ];
      for (const values of forged) {
        assert.equal(await anchor.read.verifyReading([DEVICE, 3n, proof, leafHash(values)]), false);
      }
      // The right leaf with another leaf's proof, and the right leaf and proof against another batch.
      const leaf = leafHash(leafValues(binding, reading));
      assert.equal(await anchor.read.verifyReading([DEVICE, 3n, tree.getProof(1) as Hex[], leaf]), false);
      assert.equal(await anchor.read.verifyReading([DEVICE, 4n, proof, leaf]), false, "batch 4 is not anchored");
    });
  });
});
