// TelemetryAnchor.verifyReading: a reading proven through both trees (its batch's tree, then the batches
// tree) against an anchored batches root, from the reading's and the batch's fields; anything else changed,
// an unanchored root, another chain's tree, or an inner node in place of a leaf does not verify.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { StandardMerkleTree, SimpleMerkleTree } from "@openzeppelin/merkle-tree";
import { type Hex, concat, keccak256 } from "viem";
import {
  type BatchLeaf,
  LEAF_ENCODING,
  type LeafReading,
  batchLeafHash,
  batchRoot,
  batchTree,
  batchesTree,
  idKey,
  leafHash,
  leafValues,
} from "../../relayer/src/energy/anchoring/merkle.ts";
import { DEVICE, PROJECT, batchOnChain, chainId, deployAnchor, networkHelpers, onChain, sampleBatch } from "./telemetry-anchor-fixture.ts";

/** Three batches (13, 1 and 6 readings; two devices) in one batches tree, anchored. */
async function deployAnchored() {
  const deployed = await deployAnchor();
  const batches = [sampleBatch(DEVICE, 3, 13), sampleBatch(DEVICE, 4, 1), sampleBatch("mtr-kibera-002", 3, 6)];
  const batches_ = batchesTree(batches.map((b) => b.leaf));
  await deployed.asAnchorer.write.anchorBatches([batches_.root, batches.length]);
  return { ...deployed, batches, batchesTree: batches_ };
}

type Anchored = Awaited<ReturnType<typeof deployAnchored>>;

/** The reading proof of `readings[index]` in its batch's tree. */
function readingProof(batch: Anchored["batches"][number], index: number): Hex[] {
  return batchTree(batch.binding, batch.readings).getProof(leafHash(leafValues(batch.binding, batch.readings[index]))) as Hex[];
}

function verify(a: Anchored, reading: LeafReading, proof: Hex[], leaf: BatchLeaf, batchProof: Hex[]) {
  return a.anchor.read.verifyReading([onChain(reading), proof, batchOnChain(leaf), batchProof]);
}

describe("TelemetryAnchor.verifyReading", () => {
  it("the relayer's batch root is the standard tree's root of the documented leaf values", () => {
    const { binding, readings } = sampleBatch(DEVICE, 3, 13);
    const values = readings.map((r) => leafValues(binding, r));
    assert.equal(batchRoot(binding, readings), StandardMerkleTree.of(values, [...LEAF_ENCODING]).root);
    assert.equal(batchRoot(binding, readings.slice(0, 1)), StandardMerkleTree.of(values.slice(0, 1), [...LEAF_ENCODING]).root);
  });

  it("readingLeaf is the relayer's leaf hash of the documented values on this chain", async () => {
    const { anchor } = await networkHelpers.loadFixture(deployAnchor);
    const { binding, readings } = sampleBatch(DEVICE, 3, 13);
    for (const reading of readings) {
      assert.equal(
        await anchor.read.readingLeaf([idKey(PROJECT), idKey(DEVICE), 3n, onChain(reading)]),
        leafHash(leafValues(binding, reading)),
      );
    }
  });

  it("proves every reading of every batch through both trees", async () => {
    const a = await networkHelpers.loadFixture(deployAnchored);
    for (const [b, batch] of a.batches.entries()) {
      for (const [i, reading] of batch.readings.entries()) {
        assert.equal(
          await verify(a, reading, readingProof(batch, i), batch.leaf, a.batchesTree.proofs[b]),
          true,
          `batch ${b} reading ${i}`,
        );
      }
    }
  });

  it("rejects a changed reading, another reading's proof, or another batch's proof", async () => {
    const a = await networkHelpers.loadFixture(deployAnchored);
    const [batch] = a.batches;
    const reading = batch.readings[0];
    const proof = readingProof(batch, 0);
    const batchProof = a.batchesTree.proofs[0];
    for (const changed of [
      { ...reading, energyWhCumulative: reading.energyWhCumulative + 1 },
      { ...reading, sequenceNumber: reading.sequenceNumber + 1 },
      { ...reading, meterEpoch: reading.meterEpoch + 1 },
      { ...reading, deviceTsMs: reading.deviceTsMs + 1 },
      { ...reading, readingId: `${reading.readingId}x` },
      { ...reading, supersedesReadingId: "r-0" },
    ]) {
      assert.equal(await verify(a, changed, proof, batch.leaf, batchProof), false);
    }
    assert.equal(await verify(a, reading, readingProof(batch, 1), batch.leaf, batchProof), false, "another reading's proof");
    assert.equal(await verify(a, reading, proof, batch.leaf, a.batchesTree.proofs[2]), false, "another batch's proof");
  });

  it("rejects wrong batch fields: project, device, batch sequence, root or count", async () => {
    const a = await networkHelpers.loadFixture(deployAnchored);
    const [batch, second, third] = a.batches;
    const reading = batch.readings[0];
    const proof = readingProof(batch, 0);
    const batchProof = a.batchesTree.proofs[0];
    for (const [what, leaf] of [
      ["project", { ...batch.leaf, projectId: "prj_yaba_ebike" }],
      ["device", { ...batch.leaf, deviceId: third.leaf.deviceId }],
      ["batch sequence", { ...batch.leaf, batchSequence: second.leaf.batchSequence }],
      ["root", { ...batch.leaf, root: second.leaf.root }],
      ["count", { ...batch.leaf, readings: batch.leaf.readings + 1 }],
    ] as Array<[string, BatchLeaf]>) {
      assert.equal(await verify(a, reading, proof, leaf, batchProof), false, what);
    }
    // A reading of the batch under another batch's (anchored) leaf and proof.
    assert.equal(await verify(a, reading, proof, second.leaf, a.batchesTree.proofs[1]), false);
  });

  it("rejects the readings of a batches root that is not anchored", async () => {
    const a = await networkHelpers.loadFixture(deployAnchored);
    const unanchored = [sampleBatch(DEVICE, 9, 4), sampleBatch(DEVICE, 10, 2)];
    const tree = batchesTree(unanchored.map((b) => b.leaf));
    assert.equal(await a.anchor.read.isAnchored([tree.root]), false);
    assert.equal(await verify(a, unanchored[0].readings[1], readingProof(unanchored[0], 1), unanchored[0].leaf, tree.proofs[0]), false);
    // Once anchored, it verifies.
    await a.asAnchorer.write.anchorBatches([tree.root, 2]);
    assert.equal(await verify(a, unanchored[0].readings[1], readingProof(unanchored[0], 1), unanchored[0].leaf, tree.proofs[0]), true);
  });

  it("rejects the readings of a batch tree built for another chain id", async () => {
    const a = await networkHelpers.loadFixture(deployAnchor);
    const binding = { chainId: chainId + 1, projectId: PROJECT, deviceId: DEVICE, batchSequence: 3 };
    const { readings } = sampleBatch(DEVICE, 3, 5);
    const leaf: BatchLeaf = { projectId: PROJECT, deviceId: DEVICE, batchSequence: 3, root: batchRoot(binding, readings), readings: 5 };
    const tree = batchesTree([leaf]);
    await a.asAnchorer.write.anchorBatches([tree.root, 1]);
    const readingTree = batchTree(binding, readings);
    for (const reading of readings) {
      const proof = readingTree.getProof(leafHash(leafValues(binding, reading))) as Hex[];
      assert.equal(await a.anchor.read.verifyReading([onChain(reading), proof, batchOnChain(leaf), tree.proofs[0]]), false);
    }
  });

  it("an inner node of the batches tree never verifies as a batch: the contract builds the double-hashed leaf", async () => {
    // With the batch's leaf as an argument, the hash of two sibling leaves with the rest of a leaf's proof
    // would verify. Built from a batch's fields, a leaf is always a double hash.
    const a = await networkHelpers.loadFixture(deployAnchored);
    const leaves = a.batches.map((b) => batchLeafHash(b.leaf));
    const tree = SimpleMerkleTree.of(leaves);
    assert.equal(tree.root, a.batchesTree.root);
    const [sibling, ...rest] = tree.getProof(leaves[0]) as Hex[];
    const innerNode = keccak256(concat([leaves[0], sibling].sort((x, y) => (BigInt(x) < BigInt(y) ? -1 : 1)) as Hex[]));
    assert.equal(SimpleMerkleTree.verify(tree.root, innerNode, rest), true, "the inner node is in the tree");
    for (const [b, batch] of a.batches.entries()) {
      assert.notEqual(await a.anchor.read.batchLeaf([batchOnChain(batch.leaf)]), innerNode);
      // Any batch with the inner node's rest of the proof (a shortened proof) fails.
      assert.equal(await verify(a, batch.readings[0], readingProof(batch, 0), batch.leaf, rest), false, `batch ${b}`);
    }
  });

  it("an inner node of a batch's tree never verifies as a reading", async () => {
    const a = await networkHelpers.loadFixture(deployAnchored);
    const [batch] = a.batches;
    const leaves = batch.readings.map((r) => leafHash(leafValues(batch.binding, r)));
    const tree = SimpleMerkleTree.of(leaves);
    const [sibling, ...rest] = tree.getProof(leaves[0]) as Hex[];
    const innerNode = keccak256(concat([leaves[0], sibling].sort((x, y) => (BigInt(x) < BigInt(y) ? -1 : 1)) as Hex[]));
    assert.equal(SimpleMerkleTree.verify(tree.root, innerNode, rest), true, "the inner node is in the tree");
    for (const reading of batch.readings) {
      assert.equal(await verify(a, reading, rest, batch.leaf, a.batchesTree.proofs[0]), false);
    }
  });
});
