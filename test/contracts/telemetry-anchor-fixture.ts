// Shared deployment and tree helpers of TelemetryAnchor's tests: the relayer's own trees (merkle.ts), and
// the values TelemetryAnchor's functions take.
import { network } from "hardhat";
import { type Hex, keccak256, toHex } from "viem";
import { type BatchLeaf, type LeafReading, batchRoot, idKey } from "../../relayer/src/energy/anchoring/merkle.ts";

export const { viem, networkHelpers } = await network.create();
export const publicClient = await viem.getPublicClient();
export const chainId = await publicClient.getChainId();

export const ANCHORER_ROLE = keccak256(toHex("ANCHORER_ROLE"));
export const PROJECT = "prj_kibera_solar";
export const DEVICE = "mtr-kibera-001";
export const BATCHES_ROOT = keccak256(toHex("a batches root"));

export async function deployAnchor() {
  const [admin, anchorer, stranger, other] = await viem.getWalletClients();
  const anchor = await viem.deployContract("TelemetryAnchor", [admin.account.address, 0, anchorer.account.address]);
  const asAnchorer = await viem.getContractAt("TelemetryAnchor", anchor.address, { client: { wallet: anchorer } });
  return { anchor, asAnchorer, accounts: { admin, anchorer, stranger, other } };
}

/** A reading as TelemetryAnchor takes it. */
export function onChain(r: LeafReading) {
  return {
    readingId: r.readingId,
    sequenceNumber: BigInt(r.sequenceNumber),
    meterEpoch: BigInt(r.meterEpoch),
    energyWhCumulative: BigInt(r.energyWhCumulative),
    deviceTsMs: BigInt(r.deviceTsMs),
    supersedesReadingId: r.supersedesReadingId ?? "",
  };
}

/** A batch as TelemetryAnchor takes it. */
export function batchOnChain(b: BatchLeaf) {
  return {
    projectId: idKey(b.projectId),
    deviceId: idKey(b.deviceId),
    root: b.root,
    batchSequence: BigInt(b.batchSequence),
    readings: b.readings,
  };
}

export function readings(count: number, start = 1): LeafReading[] {
  return Array.from({ length: count }, (_, i) => ({
    readingId: `r-${start + i}`,
    sequenceNumber: start + i,
    meterEpoch: 1,
    energyWhCumulative: 1_000_000 + (start + i) * 250,
    deviceTsMs: Date.UTC(2026, 2, 1) + (start + i) * 900_000,
    supersedesReadingId: i === 2 ? `r-${start}` : null,
  }));
}

/** A batch of `count` readings of `deviceId`'s batch `batchSequence` on this chain: its readings and its leaf. */
export function sampleBatch(deviceId: string, batchSequence: number, count: number, projectId = PROJECT) {
  const batchReadings = readings(count, batchSequence * 1_000);
  const binding = { chainId, projectId, deviceId, batchSequence };
  const leaf: BatchLeaf = { projectId, deviceId, batchSequence, root: batchRoot(binding, batchReadings) as Hex, readings: count };
  return { binding, readings: batchReadings, leaf };
}
