// `hardhat node` run through Hardhat's runtime-environment API rather than its command line, as
// lib/ignition-deploy.ts does for deployments: the same task and output, but Node loads the TypeScript
// config itself, where the command line first registers a TypeScript loader (about 0.8 s of CPU of the 1.8 s
// a node took to answer its first request, measured on a 2-core host). lib/chain.ts runs it as a child process.
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
  config,
  { ...(network ? { network } : {}), config: path.join(repoRoot, "hardhat.config.ts") },
  repoRoot,
);
await hre.tasks.getTask("node").run({ hostname: "127.0.0.1", port });
