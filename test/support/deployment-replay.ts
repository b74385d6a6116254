// Test chains get the LocalStack deployment in about a second. The first chain of a build deploys it with
// Ignition (the real path, as `npm start` does); its transactions are then recorded from the chain, and every
// later fresh chain replays them in order from the same unlocked accounts. A Hardhat node starts from the same
// genesis, so the replay yields the same contract addresses and state (only blocks and timestamps differ: the
// replay mines one block), which is checked: a replay that lands anywhere else fails loudly.
//
// The recording is keyed by the compiled contracts, the Ignition modules and their parameters, so any change
// to what gets deployed records afresh. TEST_DEPLOY=ignition deploys with Ignition on every chain.
import { createHash } from "node:crypto";
import { mkdir, readFile, readdir, rename, writeFile } from "node:fs/promises";
import path from "node:path";
import { type DeploymentRecord, repoRoot, saveDeploymentRecord } from "../../ignition/deployment-records.ts";
import { rpc } from "../../lib/chain.ts";
import { withFileLock } from "../../lib/file-lock.ts";
import { installPermit2 } from "../../lib/permit2.ts";

type Hex = `0x${string}`;
type RecordedTransaction = { from: Hex; to: Hex | null; input: Hex; value: Hex; gas: Hex };
type Recording = { contracts: DeploymentRecord["contracts"]; chainId: number; transactions: RecordedTransaction[] };

const recordingDir = path.join(repoRoot, "test-results", ".deployment-replay");

/** Whether replays are allowed (TEST_DEPLOY=ignition turns them off). */
export const replayEnabled = process.env.TEST_DEPLOY !== "ignition";

async function filesUnder(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { withFileTypes: true, recursive: true }).catch(() => []);
  return entries
    .filter((entry) => entry.isFile())
    .map((entry) => path.join(entry.parentPath, entry.name))
    .sort();
}

/** A digest of everything the LocalStack deployment depends on. */
async function recordingKey(): Promise<string> {
  const hash = createHash("sha256");
  const files = [
    ...(await filesUnder(path.join(repoRoot, "artifacts", "contracts"))).filter((f) => !f.endsWith(".dbg.json")),
    ...(await filesUnder(path.join(repoRoot, "ignition", "modules"))),
    path.join(repoRoot, "ignition", "parameters", "local.json"),
  ];
  for (const file of files) {
    hash.update(path.relative(repoRoot, file));
    hash.update(await readFile(file));
  }
  return hash.digest("hex").slice(0, 24);
}

async function recordingPath(): Promise<string> {
  return path.join(recordingDir, `${await recordingKey()}.json`);
}

/** The recording for the current build, if one was made. */
export async function loadRecording(): Promise<Recording | undefined> {
  if (!replayEnabled) return undefined;
  try {
    return JSON.parse(await readFile(await recordingPath(), "utf8")) as Recording;
  } catch {
    return undefined;
  }
}

/** Runs `work` (look for the recording, and make it if there is none) while no other process of the checkout
 * does: the test files that start first all find no recording; one deploys with Ignition and records, the
 * others then replay. */
export function whileRecording<T>(work: () => Promise<T>): Promise<T> {
  return withFileLock(path.join(recordingDir, "recording.lock"), work);
}

/** Records the deployment `record` made on the fresh chain at `rpcUrl` (every transaction since genesis). */
export async function recordDeployment(rpcUrl: string, record: DeploymentRecord): Promise<void> {
  if (!replayEnabled) return;
  const head = Number(await rpc<Hex>(rpcUrl, "eth_blockNumber"));
  const transactions: RecordedTransaction[] = [];
  for (let n = 1; n <= head; n++) {
    const block = await rpc<{ transactions: RecordedTransaction[] }>(rpcUrl, "eth_getBlockByNumber", [`0x${n.toString(16)}`, true]);
    for (const tx of block.transactions) transactions.push({ from: tx.from, to: tx.to, input: tx.input, value: tx.value, gas: tx.gas });
  }
  const recording: Recording = { contracts: record.contracts, chainId: record.chainId, transactions };
  const file = await recordingPath();
  await mkdir(recordingDir, { recursive: true });
  // Files running at the same time may record at once: write aside, then rename (atomic).
  const partial = `${file}.${process.pid}.partial`;
  await writeFile(partial, JSON.stringify(recording));
  await rename(partial, file);
}

/** Replays `recording` on the fresh chain at `rpcUrl` and writes the deployment record of `deploymentId`. */
export async function replayDeployment(rpcUrl: string, deploymentId: string, recording: Recording): Promise<DeploymentRecord> {
  const chainId = Number(await rpc<Hex>(rpcUrl, "eth_chainId"));
  const start = Number(await rpc<Hex>(rpcUrl, "eth_blockNumber"));
  if (chainId !== recording.chainId || start !== 0) {
    throw new Error(`deployment replay needs a fresh chain ${recording.chainId} (found chain ${chainId} at block ${start})`);
  }
  // All in one block: an automining node gives each block at least its parent's timestamp + 1 s, so a block a
  // transaction would put the chain's clock tens of seconds ahead of the wall clock (and short-lived vouchers
  // would expire early on chain).
  const hashes: Hex[] = [];
  await rpc(rpcUrl, "evm_setAutomine", [false]);
  try {
    for (const tx of recording.transactions) {
      hashes.push(
        await rpc<Hex>(rpcUrl, "eth_sendTransaction", [
          { from: tx.from, ...(tx.to ? { to: tx.to } : {}), data: tx.input, value: tx.value, gas: tx.gas },
        ]),
      );
    }
    await rpc(rpcUrl, "evm_mine");
  } finally {
    await rpc(rpcUrl, "evm_setAutomine", [true]);
  }
  const mined = new Map<string, { blockNumber: number; blockHash: Hex }>();
  for (const hash of hashes) {
    const receipt = await rpc<{ status: Hex; blockNumber: Hex; blockHash: Hex; contractAddress: Hex | null } | null>(
      rpcUrl,
      "eth_getTransactionReceipt",
      [hash],
    );
    if (!receipt || receipt.status !== "0x1") throw new Error(`deployment replay: transaction ${hash} failed`);
    if (receipt.contractAddress) {
      mined.set(receipt.contractAddress.toLowerCase(), { blockNumber: Number(receipt.blockNumber), blockHash: receipt.blockHash });
    }
  }
  // Permit2 at its canonical address, as after an Ignition deployment (lib/chain.ts): not a transaction to replay.
  await installPermit2((method, params) => rpc(rpcUrl, method, params));
  const contracts: DeploymentRecord["contracts"] = {};
  for (const [name, recorded] of Object.entries(recording.contracts)) {
    const block = mined.get(recorded.address.toLowerCase());
    if (!block) throw new Error(`deployment replay: ${name} was not created at ${recorded.address}`);
    contracts[name] = { address: recorded.address, startBlock: block.blockNumber, blockHash: block.blockHash };
  }
  return saveDeploymentRecord({ deploymentId, chainId, contracts });
}
