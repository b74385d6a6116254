// `hardhat ignition deploy` of ignition/modules/LocalStack.ts to the `localhost` network (RPC_URL), with the
// `default` build profile, run through Hardhat's runtime-environment API rather than its command line: the
// same task, with the same output, but Node loads the TypeScript config and modules itself, where the
// command line first registers a TypeScript loader for every import after it (some 1.5 s of CPU per run).
// lib/chain.ts (deployLocalStack) runs it as a child process. Usage: node lib/ignition-deploy.ts <deployment-id>
import path from "node:path";
import { createHardhatRuntimeEnvironment } from "hardhat/hre";
import config from "../hardhat.config.ts";
import { repoRoot } from "../ignition/deployment-records.ts";

const deploymentId = process.argv[2];
if (!deploymentId) throw new Error("usage: node lib/ignition-deploy.ts <deployment-id>");

const hre = await createHardhatRuntimeEnvironment(
  config,
  { network: "localhost", buildProfile: "default", config: path.join(repoRoot, "hardhat.config.ts") },
  repoRoot,
);
const result = await hre.tasks.getTask(["ignition", "deploy"]).run({
  modulePath: path.join(repoRoot, "ignition", "modules", "LocalStack.ts"),
  parameters: path.join(repoRoot, "ignition", "parameters", "local.json"),
  deploymentId,
});
// The task prints why a deployment did not succeed, and sets the exit code.
if ((result as { type?: string } | null)?.type !== "SUCCESSFUL_DEPLOYMENT") process.exitCode = 1;
