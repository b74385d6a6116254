// Ponder configuration: the chain, the database and the contracts all come from the environment
// (see env.ts) and from the foundation's generated outputs: ABIs from generated/abis.ts, addresses and start
// blocks from the deployment record generated/deployments/<DEPLOYMENT>.json. Nothing is copied by hand.
import { createConfig } from "ponder";
import { assetSplitAbi, paymentRouterAbi } from "../generated/abis.ts";
import { loadDeploymentRecord } from "../ignition/deployment-records.ts";
import { LOCAL_CHAIN_IDS, chainName, readIndexerEnv } from "./env.ts";


const env = readIndexerEnv();
const record = await loadDeploymentRecord(env.deploymentId);

const router = record.contracts.PaymentRouter;
// Every AssetSplit of the deployment ("AssetSplit", or more splits deployed under ids starting with it).
const splits = Object.entries(record.contracts)
  .filter(([name]) => name.startsWith("AssetSplit"))
  .map(([, contract]) => contract);
if (!router || splits.length === 0) {
  throw new Error(
    `deployment ${record.deploymentId} has no PaymentRouter or AssetSplit (contracts: ${Object.keys(record.contracts).join(", ")})`,
  );
}

const local = LOCAL_CHAIN_IDS.includes(record.chainId);
const chain = chainName(record.chainId);

export default createConfig({
  ordering: "omnichain",
  database:
    env.database.kind === "postgres"
      ? { kind: "postgres", connectionString: env.database.connectionString }
      : { kind: "pglite", directory: env.database.directory },
  chains: {
    [chain]: {
      id: record.chainId,
      rpc: Array.from({ length: env.rpcBuckets }, () => env.rpcUrl),
      // New blocks are pushed over the WebSocket when there is one (Ponder falls back to polling at
      // pollingInterval if the subscription keeps failing); an idle local chain then costs nothing.
      ws: env.wsUrl,
      pollingInterval: env.pollingIntervalMs ?? (local ? 100 : 1_000),
      // A local node restarted with the same chain id is a different chain: never reuse cached RPC data.
      disableCache: local,
    },
  },
  contracts: {
    PaymentRouter: {
      chain,
      abi: paymentRouterAbi,
      address: router.address,
      startBlock: router.startBlock,
    },
    AssetSplit: {
      chain,
      abi: assetSplitAbi,
      address: splits.map((split) => split.address),
      startBlock: Math.min(...splits.map((split) => split.startBlock)),
    },
  },
});
