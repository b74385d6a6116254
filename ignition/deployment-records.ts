// Deployment records: what the indexer and the relayer need to know of an Ignition deployment, read from
// Ignition's journal (never copied by hand).
import { mkdir, readFile, rename, writeFile } from "node:fs/promises";
import path from "node:path";
import { fileURLToPath } from "node:url";

// fileURLToPath rather than import.meta.dirname: Ponder's module runner (vite-node) leaves the latter undefined.
export const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
export const deploymentsDir = path.join(repoRoot, "ignition", "deployments");
export const generatedDeploymentsDir = path.join(repoRoot, "generated", "deployments");

export type DeployedContract = { address: `0x${string}`; startBlock: number; blockHash: `0x${string}` };
export type DeploymentRecord = {
  deploymentId: string;
  chainId: number;
  contracts: Record<string, DeployedContract>;
};

type JournalLine = {
  type: string;
  chainId?: number;
  futureId?: string;
  receipt?: { blockNumber: number; blockHash: `0x${string}`; contractAddress?: `0x${string}` };
};

/** The record name of the main token's split factory; another token's is `AssetSplitFactory_<SYMBOL>`. */
export const SPLIT_FACTORY = "AssetSplitFactory";

/** The split factories a deployment made, one per token, the main token's first (AssetSplitFactory, then the
 * others by name). */
export function splitFactoriesOf(record: DeploymentRecord): Array<DeployedContract & { name: string }> {
  return Object.entries(record.contracts)
    .filter(([name]) => name === SPLIT_FACTORY || name.startsWith(`${SPLIT_FACTORY}_`))
    .sort(([a], [b]) => (a === SPLIT_FACTORY ? -1 : b === SPLIT_FACTORY ? 1 : a < b ? -1 : a > b ? 1 : 0))
    .map(([name, contract]) => ({ name, ...contract }));
}

/** Reads an Ignition deployment's journal into a record. */
export async function readDeployment(deploymentId: string): Promise<DeploymentRecord> {
  const journal = await readFile(path.join(deploymentsDir, deploymentId, "journal.jsonl"), "utf8");
  const record: DeploymentRecord = { deploymentId, chainId: 0, contracts: {} };
  for (const line of journal.split("\n")) {
    if (!line.trim()) continue;
    const entry = JSON.parse(line) as JournalLine;
    if (entry.type === "DEPLOYMENT_INITIALIZE" && entry.chainId !== undefined) record.chainId = entry.chainId;
    if (entry.type === "TRANSACTION_CONFIRM" && entry.receipt?.contractAddress && entry.futureId) {
      const name = entry.futureId.slice(entry.futureId.indexOf("#") + 1);
      record.contracts[name] = {
        address: entry.receipt.contractAddress,
        startBlock: entry.receipt.blockNumber,
        blockHash: entry.receipt.blockHash,
      };
    }
  }
  if (!record.chainId) throw new Error(`deployment ${deploymentId}: no chain id in its journal`);
  return record;
}

/** Reads an Ignition deployment and writes its record to generated/deployments/<id>.json. */
export async function writeDeploymentRecord(deploymentId: string): Promise<DeploymentRecord> {
  return saveDeploymentRecord(await readDeployment(deploymentId));
}

/** Writes `record` to generated/deployments/<id>.json, whole or not at all (a reader waiting for the file,
 * waitForDeploymentRecord, never sees half of it). */
export async function saveDeploymentRecord(record: DeploymentRecord): Promise<DeploymentRecord> {
  await mkdir(generatedDeploymentsDir, { recursive: true });
  const file = deploymentRecordPath(record.deploymentId);
  const partial = `${file}.${process.pid}.partial`;
  await writeFile(partial, `${JSON.stringify(record, null, 2)}\n`);
  await rename(partial, file);
  return record;
}

export function deploymentRecordPath(deploymentId: string): string {
  return path.join(generatedDeploymentsDir, `${deploymentId}.json`);
}

/** Loads a generated deployment record once it exists, checking every 50 ms for at most `timeoutMs`: for a
 * reader started while the deployment is under way (saveDeploymentRecord writes the file whole). */
export async function waitForDeploymentRecord(deploymentId: string, timeoutMs: number): Promise<DeploymentRecord> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      return JSON.parse(await readFile(deploymentRecordPath(deploymentId), "utf8")) as DeploymentRecord;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "ENOENT" || Date.now() >= deadline) return loadDeploymentRecord(deploymentId);
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** Loads a generated deployment record. */
export async function loadDeploymentRecord(deploymentId: string): Promise<DeploymentRecord> {
  try {
    return JSON.parse(await readFile(deploymentRecordPath(deploymentId), "utf8")) as DeploymentRecord;
  } catch (error) {
    throw new Error(
      `no deployment record ${deploymentRecordPath(deploymentId)}: deploy with Ignition, then run ` +
        `\`node scripts/generate-deployments.ts ${deploymentId}\` (${(error as Error).message})`,
    );
  }
}
