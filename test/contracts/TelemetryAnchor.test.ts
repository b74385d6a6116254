// TelemetryAnchor: anchoring batch roots (roles, binding, no re-anchoring, keyed by project, device and batch)
// and verifying readings, from their fields, against them with proofs of the relayer's batch trees.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { StandardMerkleTree, SimpleMerkleTree } from "@openzeppelin/merkle-tree";
import { network } from "hardhat";
import { type Hex, concat, getAddress, keccak256, toHex, zeroAddress, zeroHash } from "viem";
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

/** A reading as TelemetryAnchor.verifyReading takes it. */
function onChain(r: LeafReading) {
  return {
    readingId: r.readingId,
    sequenceNumber: BigInt(r.sequenceNumber),
    meterEpoch: BigInt(r.meterEpoch),
    energyWhCumulative: BigInt(r.energyWhCumulative),
    deviceTsMs: BigInt(r.deviceTsMs),
    supersedesReadingId: r.supersedesReadingId ?? "",
  };
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
    it("stores the batch's root and emits BatchAnchored with its binding and count", async () => {
      const { anchor, asAnchorer } = await networkHelpers.loadFixture(deployAnchor);
      await viem.assertions.emitWithArgs(asAnchorer.write.anchor([PROJECT, DEVICE, 1n, ROOT, 96]), anchor, "BatchAnchored", [
        PROJECT,
        DEVICE,
        1n,
        ROOT,
        96,
      ]);
      assert.equal(await anchor.read.rootOf([PROJECT, DEVICE, 1n]), ROOT);
    });

    it("anchors the next batch of the device and the same sequence of another device", async () => {
      const { anchor, asAnchorer } = await networkHelpers.loadFixture(deployAnchor);
      const otherDevice = idKey("mtr-kibera-002");
      const otherRoot = keccak256(toHex("another root"));
      await asAnchorer.write.anchor([PROJECT, DEVICE, 1n, ROOT, 1]);
      await asAnchorer.write.anchor([PROJECT, DEVICE, 2n, otherRoot, 2]);
      await asAnchorer.write.anchor([PROJECT, otherDevice, 1n, otherRoot, 3]);
      assert.equal(await anchor.read.rootOf([PROJECT, DEVICE, 1n]), ROOT);
      assert.equal(await anchor.read.rootOf([PROJECT, DEVICE, 2n]), otherRoot);
      assert.equal(await anchor.read.rootOf([PROJECT, otherDevice, 1n]), otherRoot);
    });

    it("reverts with BatchAlreadyAnchored for a batch anchored before, whatever the root or count", async () => {
      const { anchor, asAnchorer } = await networkHelpers.loadFixture(deployAnchor);
      await asAnchorer.write.anchor([PROJECT, DEVICE, 7n, ROOT, 10]);
      for (const [root, count] of [
        [ROOT, 10],
        [keccak256(toHex("a different root")), 10],
        [ROOT, 11],
      ] as Array<[Hex, number]>) {
        await viem.assertions.revertWithCustomErrorWithArgs(
          asAnchorer.write.anchor([PROJECT, DEVICE, 7n, root, count]),
          anchor,
          "BatchAlreadyAnchored",
          [PROJECT, DEVICE, 7n, ROOT],
        );
      }
      assert.equal(await anchor.read.rootOf([PROJECT, DEVICE, 7n]), ROOT, "the first root stays");
    });

    it("keys batches by project too: the same device and sequence in another project is another batch", async () => {
      const { anchor, asAnchorer } = await networkHelpers.loadFixture(deployAnchor);
      const otherProject = idKey("prj_yaba_ebike");
      const otherRoot = keccak256(toHex("the other project's root"));
      await asAnchorer.write.anchor([PROJECT, DEVICE, 7n, ROOT, 10]);
      await viem.assertions.emitWithArgs(asAnchorer.write.anchor([otherProject, DEVICE, 7n, otherRoot, 4]), anchor, "BatchAnchored", [
        otherProject,
        DEVICE,
        7n,
        otherRoot,
        4,
      ]);
      assert.equal(await anchor.read.rootOf([PROJECT, DEVICE, 7n]), ROOT);
      assert.equal(await anchor.read.rootOf([otherProject, DEVICE, 7n]), otherRoot);
      assert.equal(await anchor.read.rootOf([idKey("prj_none"), DEVICE, 7n]), zeroHash);
    });

    it("reverts with EmptyRoot for a root of zero", async () => {
      const { anchor, asAnchorer } = await networkHelpers.loadFixture(deployAnchor);
      await viem.assertions.revertWithCustomError(asAnchorer.write.anchor([PROJECT, DEVICE, 1n, zeroHash, 1]), anchor, "EmptyRoot");
      assert.equal(await anchor.read.rootOf([PROJECT, DEVICE, 1n]), zeroHash);
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

    it("readingLeaf is the relayer's leaf hash of the documented values on this chain", async () => {
      const { anchor } = await networkHelpers.loadFixture(deployAnchor);
      for (const reading of batch) {
        assert.equal(await anchor.read.readingLeaf([PROJECT, DEVICE, 3n, onChain(reading)]), leafHash(leafValues(binding, reading)));
      }
    });

    it("proves every reading of an anchored batch from its fields", async () => {
      const { anchor, asAnchorer } = await networkHelpers.loadFixture(deployAnchor);
      const tree = StandardMerkleTree.of(
        batch.map((r) => leafValues(binding, r)),
        [...LEAF_ENCODING],
      );
      await asAnchorer.write.anchor([PROJECT, DEVICE, 3n, tree.root as Hex, batch.length]);
      for (const [i, reading] of batch.entries()) {
        const proof = tree.getProof(leafValues(binding, reading)) as Hex[];
        assert.equal(await anchor.read.verifyReading([PROJECT, DEVICE, 3n, onChain(reading), proof]), true, `reading ${i}`);
      }
    });

    it("rejects a reading of another batch, device or project, or a changed value", async () => {
      const { anchor, asAnchorer } = await networkHelpers.loadFixture(deployAnchor);
      const tree = StandardMerkleTree.of(
        batch.map((r) => leafValues(binding, r)),
        [...LEAF_ENCODING],
      );
      await asAnchorer.write.anchor([PROJECT, DEVICE, 3n, tree.root as Hex, batch.length]);
      const reading = batch[0];
      const proof = tree.getProof(leafValues(binding, reading)) as Hex[];
      const verify = (project: Hex, device: Hex, sequence: bigint, r: LeafReading, p: Hex[]) =>
        anchor.read.verifyReading([project, device, sequence, onChain(r), p]);
      assert.equal(await verify(PROJECT, DEVICE, 3n, reading, proof), true);
      for (const changed of [
        { ...reading, energyWhCumulative: reading.energyWhCumulative + 1 },
        { ...reading, sequenceNumber: reading.sequenceNumber + 1 },
        { ...reading, deviceTsMs: reading.deviceTsMs + 1 },
        { ...reading, readingId: `${reading.readingId}x` },
        { ...reading, supersedesReadingId: "r-0" },
      ]) {
        assert.equal(await verify(PROJECT, DEVICE, 3n, changed, proof), false);
      }
      // Another leaf's proof; another batch, device or project (none anchored).
      assert.equal(await verify(PROJECT, DEVICE, 3n, reading, tree.getProof(leafValues(binding, batch[1])) as Hex[]), false);
      assert.equal(await verify(PROJECT, DEVICE, 4n, reading, proof), false, "batch 4 is not anchored");
      assert.equal(await verify(PROJECT, idKey("mtr-kibera-002"), 3n, reading, proof), false);
      assert.equal(await verify(idKey("prj_yaba_ebike"), DEVICE, 3n, reading, proof), false);
      // The same tree anchored under another project binds the other project into nothing it proves.
      await asAnchorer.write.anchor([idKey("prj_yaba_ebike"), DEVICE, 3n, tree.root as Hex, batch.length]);
      assert.equal(await verify(idKey("prj_yaba_ebike"), DEVICE, 3n, reading, proof), false);
    });

    it("rejects the readings of a tree built for another chain id", async () => {
      const { anchor, asAnchorer } = await networkHelpers.loadFixture(deployAnchor);
      const elsewhere = { ...binding, chainId: chainId + 1 };
      const tree = StandardMerkleTree.of(
        batch.map((r) => leafValues(elsewhere, r)),
        [...LEAF_ENCODING],
      );
      await asAnchorer.write.anchor([PROJECT, DEVICE, 3n, tree.root as Hex, batch.length]);
      for (const reading of batch.slice(0, 3)) {
        const proof = tree.getProof(leafValues(elsewhere, reading)) as Hex[];
        assert.equal(await anchor.read.verifyReading([PROJECT, DEVICE, 3n, onChain(reading), proof]), false);
      }
    });

    it("an inner node of the tree never verifies as a reading: the contract builds the double-hashed leaf", async () => {
      // With the leaf as an argument, the hash of two sibling leaves with the rest of a leaf's proof verified
      // (a "reading" no one ever sent). Built from a reading's fields, a leaf is always a double hash.
      const { anchor, asAnchorer } = await networkHelpers.loadFixture(deployAnchor);
      const leaves = batch.map((r) => leafHash(leafValues(binding, r)));
      const tree = SimpleMerkleTree.of(leaves);
      await asAnchorer.write.anchor([PROJECT, DEVICE, 3n, tree.root as Hex, batch.length]);
      const [sibling, ...rest] = tree.getProof(leaves[0]) as Hex[];
      const pair = [leaves[0], sibling].sort((a, b) => (BigInt(a) < BigInt(b) ? -1 : 1));
      const innerNode = keccak256(concat(pair));
      assert.equal(SimpleMerkleTree.verify(tree.root, innerNode, rest), true, "the inner node is in the tree");
      for (const reading of batch) {
        assert.equal(await anchor.read.verifyReading([PROJECT, DEVICE, 3n, onChain(reading), rest]), false);
        assert.notEqual(await anchor.read.readingLeaf([PROJECT, DEVICE, 3n, onChain(reading)]), innerNode);
      }
    });
  });
});
