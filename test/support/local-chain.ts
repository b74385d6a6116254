// A local chain for end-to-end suites: a Hardhat node on a free loopback port with the LocalStack Ignition
// module deployed under a unique deployment id (replayed from a recording after the first Ignition deploy of
// a build: deployment-replay.ts), and its cleanup (stop the node, remove the deployment's
// Ignition journal and generated record).
//
// Accounts are the node's well-known ones (Hardhat's default mnemonic): 0 admin, pauser and owner of the
// stablecoin (RehearsalUsdc: it mints), 1 quote signer,
// 2 agent (relayer) with an approved float, 3 spare, 4-5 the asset owner and operator of the splits tests
// create, 6 the protocol recipient of every split, 7 a funded test wallet, 13 the split manager (proposes
// recipient changes; the agent holds no split factory role).
import { randomBytes } from "node:crypto";
import { rm } from "node:fs/promises";
import path from "node:path";
import { type Address, erc20Abi, parseAbi } from "viem";
import { deployWithIgnition, rpc, startChain } from "../../lib/chain.ts";
import { type DeploymentRecord, deploymentRecordPath, deploymentsDir, repoRoot } from "../../ignition/deployment-records.ts";
import { type Service, freePort } from "../../lib/processes.ts";
import { LOCAL_MNEMONIC, localAccount } from "../../lib/sample-data.ts";
import { loadRecording, recordDeployment, replayDeployment, replayEnabled, whileRecording } from "./deployment-replay.ts";

export { LOCAL_MNEMONIC, localAccount };

/** Roles of the local node's accounts in the LocalStack deployment. */
export const LOCAL_ACCOUNT_INDEX = {
  admin: 0,
  quoteSigner: 1,
  agent: 2,
  spare: 3,
  assetOwner: 4,
  operator: 5,
  protocol: 6,
  testWallet: 7,
  splitManager: 13,
} as const;

/** The functions of the LocalStack's stablecoin (RehearsalUsdc, USDC v2.2's behaviour) the suites call: ERC-20,
 * its owner's mint, and the EIP-2612 permit's nonce and domain version. */
export const localStablecoinAbi = [
  ...erc20Abi,
  ...parseAbi([
    "function mint(address to, uint256 amount)",
    "function nonces(address owner) view returns (uint256)",
    "function version() view returns (string)",
  ]),
] as const;

/** The address of the LocalStack deployment's stablecoin. */
export function localStablecoin(record: DeploymentRecord): Address {
  const token = record.contracts.RehearsalUsdc;
  if (!token) throw new Error(`deployment ${record.deploymentId} has no RehearsalUsdc: not a LocalStack deployment`);
  return token.address;
}

export type LocalChain = {
  deploymentId: string;
  rpcUrl: string;
  port: number;
  record: DeploymentRecord;
  chain: Service;
  /** A JSON-RPC call to the node. */
  rpc<T = unknown>(method: string, params?: unknown[]): Promise<T>;
  /** Stops the node and removes the deployment's files. Safe to call more than once. */
  stop(): Promise<void>;
};

/** Where suites write service logs (gitignored). */
export function testLogDir(suite: string): string {
  return path.join(repoRoot, "test-results", suite);
}

/** Starts a node on a free port and deploys LocalStack as `<label>-<pid>-<random>`. */
export async function startLocalChain(opts: { label?: string; logDir?: string; echo?: boolean } = {}): Promise<LocalChain> {
  const label = (opts.label ?? "e2e").replace(/[^A-Za-z0-9_-]+/g, "-");
  const deploymentId = `${label}-${process.pid}-${randomBytes(3).toString("hex")}`;
  const port = await freePort();
  const logFile = opts.logDir ? path.join(opts.logDir, `${deploymentId}.chain.log`) : undefined;
  const { service, rpcUrl } = await startChain({ port, logFile, echo: opts.echo });
  const cleanup = async () => {
    await service.stop();
    await rm(path.join(deploymentsDir, deploymentId), { recursive: true, force: true });
    await rm(deploymentRecordPath(deploymentId), { force: true });
  };
  let record: DeploymentRecord;
  try {
    const deploy = async () => {
      const recording = await loadRecording();
      if (recording) return replayDeployment(rpcUrl, deploymentId, recording);
      const deployed = await deployWithIgnition({
        rpcUrl,
        deploymentId,
        logFile: opts.logDir ? path.join(opts.logDir, `${deploymentId}.deploy.log`) : undefined,
        echo: opts.echo,
      });
      await recordDeployment(rpcUrl, deployed);
      return deployed;
    };
    // The first chains of a build find no recording: one deploys and records at a time, the next replay.
    record = !replayEnabled || (await loadRecording()) ? await deploy() : await whileRecording(deploy);
  } catch (error) {
    await cleanup();
    throw error;
  }
  let stopped: Promise<void> | undefined;
  return {
    deploymentId,
    rpcUrl,
    port,
    record,
    chain: service,
    rpc: (method, params = []) => rpc(rpcUrl, method, params),
    stop: () => (stopped ??= cleanup()),
  };
}
