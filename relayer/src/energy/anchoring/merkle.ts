// The Merkle tree of a telemetry batch: OpenZeppelin's standard tree (@openzeppelin/merkle-tree), one leaf
// per accepted reading, each leaf bound to the chain id, the project, the device and the batch's sequence
// number. The root is what TelemetryAnchor anchors.
//
// Leaf values, ABI-encoded as LEAF_ENCODING, hashed as keccak256(bytes.concat(keccak256(abi.encode(values)))):
//   chain id, keccak256(project_id), keccak256(device_id), batch sequence, reading_id, sequence_number,
//   meter_epoch, energy_wh_cumulative, device_ts in Unix milliseconds, supersedes_reading_id ("" if none).
// The root equals StandardMerkleTree.of(values, LEAF_ENCODING).root; it is computed from the leaf hashes with
// SimpleMerkleTree (same library, same sorted-pair node hash) because that is several times faster than
// StandardMerkleTree's own ABI encoder.
import { SimpleMerkleTree } from "@openzeppelin/merkle-tree";
import { type Hex, encodeAbiParameters, keccak256, parseAbiParameters, toHex } from "viem";

export const LEAF_ENCODING = [
  "uint256",
  "bytes32",
  "bytes32",
  "uint64",
  "string",
  "uint64",
  "uint64",
  "uint64",
  "int64",
  "string",
] as const;

const leafParameters = parseAbiParameters(LEAF_ENCODING.join(", "));

/** What binds a batch's leaves: they prove nothing about another chain, project, device or batch. */
export type BatchBinding = { chainId: number; projectId: string; deviceId: string; batchSequence: number };

export type LeafReading = {
  readingId: string;
  sequenceNumber: number;
  meterEpoch: number;
  energyWhCumulative: number;
  /** device_ts in Unix milliseconds. */
  deviceTsMs: number;
  supersedesReadingId: string | null;
};

export type LeafValues = [bigint, Hex, Hex, bigint, string, bigint, bigint, bigint, bigint, string];

/** keccak256 of an identifier's UTF-8 bytes: how projects and devices are named on chain. */
export function idKey(id: string): Hex {
  return keccak256(toHex(id));
}

/** The leaf values of one reading (as StandardMerkleTree takes them, in LEAF_ENCODING). */
export function leafValues(binding: BatchBinding, reading: LeafReading): LeafValues {
  return [
    BigInt(binding.chainId),
    idKey(binding.projectId),
    idKey(binding.deviceId),
    BigInt(binding.batchSequence),
    reading.readingId,
    BigInt(reading.sequenceNumber),
    BigInt(reading.meterEpoch),
    BigInt(reading.energyWhCumulative),
    BigInt(reading.deviceTsMs),
    reading.supersedesReadingId ?? "",
  ];
}

/** The standard tree's leaf hash of `values`. */
export function leafHash(values: LeafValues): Hex {
  return keccak256(keccak256(encodeAbiParameters(leafParameters, values)));
}

/** The batch's tree (leaves sorted, as the standard tree sorts them). */
export function batchTree(binding: BatchBinding, readings: LeafReading[]): SimpleMerkleTree {
  if (readings.length === 0) throw new Error("a batch tree needs at least one reading");
  return SimpleMerkleTree.of(readings.map((reading) => leafHash(leafValues(binding, reading))));
}

/** The Merkle root of the batch's readings. */
export function batchRoot(binding: BatchBinding, readings: LeafReading[]): Hex {
  return batchTree(binding, readings).root as Hex;
}

// The batches tree: what one TelemetryAnchor.anchorBatches transaction anchors. Another OpenZeppelin
// standard tree, one leaf per batch, hashed the same way:
//   keccak256(project_id), keccak256(device_id), batch sequence, batch root, readings (the batch's leaves).
// The chain id is in every reading's leaf, hence in the batch root.
export const BATCH_LEAF_ENCODING = ["bytes32", "bytes32", "uint64", "bytes32", "uint32"] as const;

const batchLeafParameters = parseAbiParameters(BATCH_LEAF_ENCODING.join(", "));

/** A batch as its leaf in a batches tree binds it. */
export type BatchLeaf = { projectId: string; deviceId: string; batchSequence: number; root: Hex; readings: number };

export type BatchLeafValues = [Hex, Hex, bigint, Hex, number];

/** The leaf values of one batch (as StandardMerkleTree takes them, in BATCH_LEAF_ENCODING). */
export function batchLeafValues(batch: BatchLeaf): BatchLeafValues {
  return [idKey(batch.projectId), idKey(batch.deviceId), BigInt(batch.batchSequence), batch.root, batch.readings];
}

/** The standard tree's leaf hash of a batch. */
export function batchLeafHash(batch: BatchLeaf): Hex {
  return keccak256(keccak256(encodeAbiParameters(batchLeafParameters, batchLeafValues(batch))));
}

/** The batches tree of `batches`: its root, and each batch's proof (in the order of `batches`). */
export function batchesTree(batches: BatchLeaf[]): { root: Hex; proofs: Hex[][] } {
  if (batches.length === 0) throw new Error("a batches tree needs at least one batch");
  const leaves = batches.map(batchLeafHash);
  const tree = SimpleMerkleTree.of(leaves);
  return { root: tree.root as Hex, proofs: leaves.map((leaf) => tree.getProof(leaf) as Hex[]) };
}
