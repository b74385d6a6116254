// The local chain (a Hardhat node on loopback) and the local Ignition deployment.
import { isDeepStrictEqual } from "node:util";
import { rm } from "node:fs/promises";
import path from "node:path";
import {
  type DeploymentRecord,
  deploymentsDir,
  loadDeploymentRecord,
  readDeployment,
  repoRoot,
  saveDeploymentRecord,
} from "../ignition/deployment-records.ts";
import { hardhatEnv } from "./contracts.ts";
import { installPermit2 } from "./permit2.ts";
import { type Service, startService, waitUntil } from "./processes.ts";

/** A JSON-RPC call with a timeout. */
export async function rpc<T = unknown>(url: string, method: string, params: unknown[] = []): Promise<T> {
  const response = await fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method, params }),
    signal: AbortSignal.timeout(5_000),
  });
  const body = (await response.json()) as { result?: T; error?: { message: string } };
  if (body.error) throw new Error(`${method}: ${body.error.message}`);
  return body.result as T;
}

const hardhatNode = path.join(repoRoot, "lib", "hardhat-node.ts");

/** Starts a Hardhat node (lib/hardhat-node.ts) on 127.0.0.1:`port` and waits until it answers. `network`: the simulated network
 * of hardhat.config.ts it runs (default Hardhat's `node`: automining, chain id 31337). */
export async function startChain(opts: { port: number; network?: string; logFile?: string; echo?: boolean }): Promise<{
  service: Service;
  rpcUrl: string;
}> {
  const service = startService("chain", process.execPath, [hardhatNode, String(opts.port), ...(opts.network ? [opts.network] : [])], {
    cwd: repoRoot,
    env: hardhatEnv,
    logFile: opts.logFile,
    echo: opts.echo,
  });
  const rpcUrl = `http://127.0.0.1:${opts.port}`;
  await waitUntil("the local chain", () => rpc<string>(rpcUrl, "eth_chainId"), { service, timeoutMs: 180_000 });
  return { service, rpcUrl };
}

const ignitionDeploy = path.join(repoRoot, "lib", "ignition-deploy.ts");

/** Deploys ignition/modules/LocalStack.ts (or `module`) to the chain at `rpcUrl` as `deploymentId` with Ignition (see
 * lib/ignition-deploy.ts) and writes its record to generated/deployments/ (unless the record there is the
 * same already: a running indexer may be reading it). A fresh deployment (the default) first removes any
 * earlier one with that id; otherwise Ignition continues the existing deployment, deploying only what it
 * lacks.
 *
 * Ignition compiles what changed first, with the `default` build profile: the contracts the tests run are
 * the ones deployed, and the artifacts stay those of `hardhat build` (Ignition's usual `production` profile
 * compiles every contract in a job of its own, several times the work, and rewrites every artifact). */
export async function deployWithIgnition(opts: {
  rpcUrl: string;
  deploymentId: string;
  fresh?: boolean;
  logFile?: string;
  echo?: boolean;
  /** Another module than LocalStack: its name (ignition/modules/<name>.ts), its parameters file, the
   * Hardhat network to deploy to (configured with `env`), and the confirmations Ignition waits for. */
  module?: { name: string; parameters: string; network: string; env: NodeJS.ProcessEnv; confirmations: number };
}): Promise<DeploymentRecord> {
  if (opts.fresh !== false) await rm(path.join(deploymentsDir, opts.deploymentId), { recursive: true, force: true });
  const m = opts.module;
  const args = m ? [ignitionDeploy, opts.deploymentId, m.name, m.parameters, m.network] : [ignitionDeploy, opts.deploymentId];
  const deploy = startService("deploy", process.execPath, args, {
    cwd: repoRoot,
    env: m
      ? { ...hardhatEnv, ...m.env, IGNITION_CONFIRMATIONS: String(m.confirmations), IGNITION_BLOCK_POLLING_MS: "250" }
      : { ...hardhatEnv, RPC_URL: opts.rpcUrl, IGNITION_BLOCK_POLLING_MS: "50" },
    logFile: opts.logFile,
    echo: opts.echo,
  });
  const code = await deploy.exited;
  if (code !== 0) throw new Error(`Ignition deployment failed (exit ${code}):\n${deploy.recentOutput()}`);
  // Permit2 (the router's Permit2 rail) at its canonical address; a public network has it there already.
  await installPermit2((method, params) => rpc(opts.rpcUrl, method, params));
  const record = await readDeployment(opts.deploymentId);
  const saved = await loadDeploymentRecord(opts.deploymentId).catch(() => undefined);
  return isDeepStrictEqual(saved, record) ? record : saveDeploymentRecord(record);
}

/** Whether the chain at `rpcUrl` is the one `record` was deployed to (same block hash at the deployment
 * block). A restarted local chain is a new chain. */
export async function isSameChain(rpcUrl: string, record: DeploymentRecord): Promise<boolean> {
  const first = Object.values(record.contracts)[0];
  if (!first) return false;
  try {
    const chainId = Number(await rpc<string>(rpcUrl, "eth_chainId"));
    if (chainId !== record.chainId) return false;
    const block = await rpc<{ hash: string } | null>(rpcUrl, "eth_getBlockByNumber", [`0x${first.startBlock.toString(16)}`, false]);
    return block?.hash === first.blockHash;
  } catch {
    return false;
  }
}
