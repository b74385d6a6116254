// `hardhat node` run through Hardhat's runtime-environment API rather than its command line, as
// lib/ignition-deploy.ts does for deployments: the same task and output, but Node loads the TypeScript
// config itself, where the command line first registers a TypeScript loader (about 0.8 s of CPU of the 1.8 s
// a node took to answer its first request, measured on a 2-core host). lib/chain.ts runs it as a child process.
//
// The runtime environment is the project's config without its plugins: the node task, the
// simulated networks and the JSON-RPC server are Hardhat's built-in plugins, and the project's plugins (the
// viem toolbox's Ignition, viem, verification, keystore and test-runner plugins, and the parallel build) add
// tasks, config fields and per-connection extensions that a node never runs. Loading them took 1.2 of the
// 2.0 CPU s a node needed to answer its first request (0.84 s without them, three starts each, 2-core Intel
// host, 2026-11-28). test/stack/hardhat-node.test.ts checks that the node serves the chain the project's
// config with its plugins simulates.
//
// Usage: node lib/hardhat-node.ts <port> [<network>]
//   Binds 127.0.0.1:<port>. <network>: the simulated network of hardhat.config.ts to run (default Hardhat's
//   `node`: automining, chain id 31337).
import path from "node:path";
import { createHardhatRuntimeEnvironment } from "hardhat/hre";
import config from "../hardhat.config.ts";
import { repoRoot } from "../ignition/deployment-records.ts";

const [portArg, network] = process.argv.slice(2);
const port = Number(portArg);
if (!Number.isInteger(port) || port < 1 || port > 65_535) throw new Error("usage: node lib/hardhat-node.ts <port> [<network>]");

const hre = await createHardhatRuntimeEnvironment(
  { ...config, plugins: [] },
  { ...(network ? { network } : {}), config: path.join(repoRoot, "hardhat.config.ts") },
  repoRoot,
);
await hre.tasks.getTask("node").run({ hostname: "127.0.0.1", port });
