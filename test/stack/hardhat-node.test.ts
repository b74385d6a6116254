// lib/hardhat-node.ts runs the node on the project's config without its plugins (they cost most of a node's
// start and add nothing a node runs). This checks that what it serves is the chain the project's config with
// its plugins simulates: for the default `node` network and for `rehearsalChain`, the chain id, the accounts
// and their balances, the genesis block's settings, mining, and a transfer's receipt (and its fees on the automining chain).
import assert from "node:assert/strict";
import { after, describe, it } from "node:test";
import { createHardhatRuntimeEnvironment } from "hardhat/hre";
import config from "../../hardhat.config.ts";
import { repoRoot } from "../../ignition/deployment-records.ts";
import { rpc, startChain } from "../../lib/chain.ts";
import { type Service, freePort } from "../../lib/processes.ts";

type Block = Record<string, unknown>;
type Provider = { request(args: { method: string; params?: unknown[] }): Promise<unknown> };

/** What two chains started from the same config must agree on (not the times, nor what hashes them). On a chain
 * that mines on an interval (rehearsalChain), the interval is stopped first, and the fees, which fall with every
 * empty block mined before that, are left out: how many were mined depends on when each chain was asked. */
async function describeChain(call: (method: string, params?: unknown[]) => Promise<unknown>) {
  const automine = await call("hardhat_getAutomine");
  if (!automine) await call("evm_setIntervalMining", [0]);
  const accounts = (await call("eth_accounts")) as string[];
  const genesis = (await call("eth_getBlockByNumber", ["0x0", false])) as Block;
  const { hash: _hash, timestamp: _timestamp, parentBeaconBlockRoot: _root, stateRoot: _state, ...settings } = genesis;
  const balances = await Promise.all(accounts.map((account) => call("eth_getBalance", [account, "latest"])));
  const metadata = (await call("hardhat_metadata")) as Record<string, unknown>;
  // A value transfer, mined at once on an automining chain, by hand otherwise.
  const hash = (await call("eth_sendTransaction", [{ from: accounts[0], to: accounts[1], value: "0x1" }])) as string;
  if (!automine) await call("evm_mine");
  const receipt = (await call("eth_getTransactionReceipt", [hash])) as Record<string, unknown>;
  const transaction = (await call("eth_getTransactionByHash", [hash])) as Record<string, unknown>;
  return {
    chainId: await call("eth_chainId"),
    accounts,
    balances,
    settings,
    chainType: { clientVersion: metadata.clientVersion, chainId: metadata.chainId, forkedNetwork: metadata.forkedNetwork },
    automine,
    transaction: {
      type: transaction.type,
      gas: transaction.gas,
      status: receipt.status,
      gasUsed: receipt.gasUsed,
    },
    fees: automine
      ? {
          gasPrice: await call("eth_gasPrice"),
          maxFeePerGas: transaction.maxFeePerGas,
          maxPriorityFeePerGas: transaction.maxPriorityFeePerGas,
          effectiveGasPrice: receipt.effectiveGasPrice,
        }
      : undefined,
  };
}

describe("lib/hardhat-node.ts", () => {
  const nodes: Service[] = [];
  after(async () => {
    for (const node of nodes) await node.stop();
  });

  for (const network of [undefined, "rehearsalChain"]) {
    it(`serves the chain the project's config with its plugins simulates (${network ?? "node"})`, async () => {
      const { service, rpcUrl } = await startChain({ port: await freePort(), network });
      nodes.push(service);
      const served = await describeChain((method, params) => rpc(rpcUrl, method, params));

      const hre = await createHardhatRuntimeEnvironment(config, {}, repoRoot);
      assert.ok(hre.config.plugins.length > 0, "the project's config has plugins");
      const connection = await hre.network.connect({ network: network ?? "node" });
      const provider = connection.provider as Provider;
      try {
        const simulated = await describeChain((method, params) => provider.request({ method, params }));
        assert.deepEqual(served, simulated);
      } finally {
        await connection.close();
      }
      assert.equal(served.chainId, network ? "0x14a34" : "0x7a69");
      assert.equal(served.accounts.length, 20);
    });
  }
});
