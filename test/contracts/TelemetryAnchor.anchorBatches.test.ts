// TelemetryAnchor.anchorBatches: one transaction anchors the root of a batches tree (one slot, one event),
// once; empty roots and empty trees are refused. The relayer's batches tree is the standard tree of the
// documented batch leaf values.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { StandardMerkleTree } from "@openzeppelin/merkle-tree";
import { type Hex, keccak256, toHex, zeroHash } from "viem";
import { BATCH_LEAF_ENCODING, batchLeafHash, batchLeafValues, batchesTree } from "../../relayer/src/energy/anchoring/merkle.ts";
import {
  BATCHES_ROOT,
  DEVICE,
  batchOnChain,
  deployAnchor,
  networkHelpers,
  publicClient,
  sampleBatch,
  viem,
} from "./telemetry-anchor-fixture.ts";

describe("TelemetryAnchor.anchorBatches", () => {
  it("marks the batches root anchored and emits BatchesAnchored with the number of batches", async () => {
    const { anchor, asAnchorer } = await networkHelpers.loadFixture(deployAnchor);
    assert.equal(await anchor.read.isAnchored([BATCHES_ROOT]), false);
    await viem.assertions.emitWithArgs(asAnchorer.write.anchorBatches([BATCHES_ROOT, 250]), anchor, "BatchesAnchored", [BATCHES_ROOT, 250]);
    assert.equal(await anchor.read.isAnchored([BATCHES_ROOT]), true);
    assert.equal(await anchor.read.isAnchored([keccak256(toHex("another batches root"))]), false);
  });

  it("costs the same whatever the number of batches: only the root is stored", async () => {
    const { asAnchorer } = await networkHelpers.loadFixture(deployAnchor);
    const gas: bigint[] = [];
    for (const [i, count] of [1, 1_000].entries()) {
      const hash = await asAnchorer.write.anchorBatches([keccak256(toHex(`root ${i}`)), count]);
      gas.push((await publicClient.waitForTransactionReceipt({ hash })).gasUsed);
    }
    // Only the calldata's bytes of the count differ.
    assert.ok(gas[1] - gas[0] < 100n, `${gas[0]} vs ${gas[1]}`);
  });

  it("anchors further batches roots beside the first", async () => {
    const { anchor, asAnchorer } = await networkHelpers.loadFixture(deployAnchor);
    const other = keccak256(toHex("the next batches root"));
    await asAnchorer.write.anchorBatches([BATCHES_ROOT, 3]);
    await asAnchorer.write.anchorBatches([other, 1]);
    assert.equal(await anchor.read.isAnchored([BATCHES_ROOT]), true);
    assert.equal(await anchor.read.isAnchored([other]), true);
  });

  it("reverts with BatchesRootAlreadyAnchored for a root anchored before, whatever the count", async () => {
    const { anchor, asAnchorer } = await networkHelpers.loadFixture(deployAnchor);
    await asAnchorer.write.anchorBatches([BATCHES_ROOT, 10]);
    for (const count of [10, 11]) {
      await viem.assertions.revertWithCustomErrorWithArgs(
        asAnchorer.write.anchorBatches([BATCHES_ROOT, count]),
        anchor,
        "BatchesRootAlreadyAnchored",
        [BATCHES_ROOT],
      );
    }
  });

  it("reverts with EmptyRoot for a root of zero", async () => {
    const { anchor, asAnchorer } = await networkHelpers.loadFixture(deployAnchor);
    await viem.assertions.revertWithCustomError(asAnchorer.write.anchorBatches([zeroHash, 1]), anchor, "EmptyRoot");
    assert.equal(await anchor.read.isAnchored([zeroHash]), false);
  });

  it("reverts with NoBatches for a tree of zero batches", async () => {
    const { anchor, asAnchorer } = await networkHelpers.loadFixture(deployAnchor);
    await viem.assertions.revertWithCustomError(asAnchorer.write.anchorBatches([BATCHES_ROOT, 0]), anchor, "NoBatches");
    assert.equal(await anchor.read.isAnchored([BATCHES_ROOT]), false);
  });

  it("the relayer's batches root is the standard tree's root of the documented batch leaf values", async () => {
    const { anchor } = await networkHelpers.loadFixture(deployAnchor);
    const leaves = [1, 2, 3, 4, 5].map((sequence) => sampleBatch(sequence % 2 ? DEVICE : "mtr-kibera-002", sequence, sequence).leaf);
    const standard = StandardMerkleTree.of(leaves.map(batchLeafValues), [...BATCH_LEAF_ENCODING]);
    const tree = batchesTree(leaves);
    assert.equal(tree.root, standard.root);
    assert.equal(batchesTree(leaves.slice(0, 1)).root, StandardMerkleTree.of([batchLeafValues(leaves[0])], [...BATCH_LEAF_ENCODING]).root);
    for (const [i, leaf] of leaves.entries()) {
      assert.deepEqual(tree.proofs[i], standard.getProof(batchLeafValues(leaf)) as Hex[]);
      assert.equal(await anchor.read.batchLeaf([batchOnChain(leaf)]), batchLeafHash(leaf), "batchLeaf is the relayer's leaf hash");
    }
  });
});
