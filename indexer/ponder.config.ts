// Ponder configuration: the chain, the database and the contracts all come from the environment
// (see env.ts) and from the foundation's generated outputs: ABIs from generated/abis.ts, addresses and start
// blocks from the deployment record generated/deployments/<DEPLOYMENT>.json. Nothing is copied by hand.
import { createConfig, factory } from "ponder";
import { getAbiItem } from "viem";
import { assetSplitAbi, assetSplitFactoryAbi, paymentRouterAbi } from "../generated/abis.ts";
import { loadDeploymentRecord, splitFactoriesOf, waitForDeploymentRecord } from "../ignition/deployment-records.ts";
import { LOCAL_CHAIN_IDS, chainName, readIndexerEnv } from "./env.ts";
import { startNewHeadsRelay } from "./new-heads-relay.ts";

const env = readIndexerEnv();
// Started beside the deployment (DEPLOYMENT_WAIT_SECONDS), Ponder has loaded itself by the time it gets here
// and waits for the record.
const record =
  env.deploymentWaitMs > 0
    ? await waitForDeploymentRecord(env.deploymentId, env.deploymentWaitMs)
    : await loadDeploymentRecord(env.deploymentId);

const router = record.contracts.PaymentRouter;
// The split factories, one per stablecoin: every split they create (one AssetSplit per asset and token, the only
// splits the router pays through) is indexed from its creation on, found by the factories' SplitCreated events
// (Ponder's factory pattern), without a restart.
const splitFactories = splitFactoriesOf(record);
const splitFactoryAddresses = splitFactories.map((f) => f.address);
const splitFactoriesStart = Math.min(...splitFactories.map((f) => f.startBlock));
if (!router || splitFactories.length === 0) {
  throw new Error(
    `deployment ${record.deploymentId} has no PaymentRouter or AssetSplitFactory (contracts: ${Object.keys(record.contracts).join(", ")})`,
  );
}

const local = LOCAL_CHAIN_IDS.includes(record.chainId);
// Ponder subscribes to new blocks through the relay (new-heads-relay.ts), which announces a block the
// subscription left out; one relay a process, should Ponder evaluate this file again.
const relays = globalThis as { newHeadsRelay?: Promise<string> };
const wsUrl =
  env.wsUrl === undefined
    ? undefined
    : await (relays.newHeadsRelay ??= startNewHeadsRelay({
        upstream: env.wsUrl,
        checkMs: env.newHeadsCheckMs,
        onAnnounced: ({ number, subscription, missed }) => {
          if (missed) console.warn(`new-heads relay: subscription ${subscription} did not announce block ${number}; the relay did`);
        },
      }).then((relay) => relay.url));
const chain = chainName(record.chainId);

export default createConfig({
  ordering: "omnichain",
  database:
    env.database.kind === "postgres"
      ? {
          kind: "postgres",
          connectionString: env.database.connectionString,
          // `ponder serve` only (scripts/indexer.ts): every pool but Ponder's internal one gets it, and a replica
          // runs only the readers' pool.
          poolConfig: env.sqlStatementTimeoutMs === undefined ? undefined : { statement_timeout: env.sqlStatementTimeoutMs },
        }
      : { kind: "pglite", directory: env.database.directory },
  chains: {
    [chain]: {
      id: record.chainId,
      rpc: Array.from({ length: env.rpcBuckets }, () => env.rpcUrl),
      // New blocks are pushed over the WebSocket when there is one, through the relay (Ponder falls back to
      // polling at pollingInterval if the connection keeps failing); an idle local chain then costs almost
      // nothing (the relay's check of the latest block number every two seconds).
      ws: wsUrl,
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
    AssetSplitFactory: {
      chain,
      abi: assetSplitFactoryAbi,
      address: splitFactoryAddresses,
      startBlock: splitFactoriesStart,
    },
    // The factories' splits: every address a SplitCreated names, each from its creation block (the split's first
    // LegsUpdated, emitted in its creation transaction, included).
    AssetSplit: {
      chain,
      abi: assetSplitAbi,
      address: factory({
        address: splitFactoryAddresses,
        event: getAbiItem({ abi: assetSplitFactoryAbi, name: "SplitCreated" }),
        parameter: "split",
      }),
      startBlock: splitFactoriesStart,
    },
  },
});
