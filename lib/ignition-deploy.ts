// `hardhat ignition deploy` run through Hardhat's runtime-environment API rather than its command line: the
// same task, with the same output, but Node loads the TypeScript config and modules itself, where the
// command line first registers a TypeScript loader for every import after it (some 1.5 s of CPU per run).
// Deploys with the `default` build profile (lib/chain.ts says why). lib/chain.ts runs it as a child process.
//
// Usage: node lib/ignition-deploy.ts <deployment-id> [<module> <parameters file> <network>]
//   Without the last three: ignition/modules/LocalStack.ts with ignition/parameters/local.json to the
//   `localhost` network (RPC_URL). `npm run rehearsal` passes Payments, its parameters and `rehearsal`.
// IGNITION_CONFIRMATIONS: the blocks Ignition waits on top of each transaction on a chain that does not
// automine (Ignition's default: 5).
import path from "node:path";
import { overrideTask } from "hardhat/config";
import { createHardhatRuntimeEnvironment } from "hardhat/hre";
import config from "../hardhat.config.ts";
import { repoRoot } from "../ignition/deployment-records.ts";
import { withHardhatLock } from "./hardhat-lock.ts";

const [
  deploymentId,
  moduleName = "LocalStack",
  parameters = path.join(repoRoot, "ignition", "parameters", "local.json"),
  network = "localhost",
] = process.argv.slice(2);
if (!deploymentId) throw new Error("usage: node lib/ignition-deploy.ts <deployment-id> [<module> <parameters file> <network>]");
if (!/^[A-Za-z][A-Za-z0-9]*$/.test(moduleName)) throw new Error(`not a module name: ${moduleName}`);

const confirmations = process.env.IGNITION_CONFIRMATIONS === undefined ? undefined : Number(process.env.IGNITION_CONFIRMATIONS);
if (confirmations !== undefined && !(Number.isInteger(confirmations) && confirmations >= 1)) {
  throw new Error(`IGNITION_CONFIRMATIONS must be a positive integer, got "${process.env.IGNITION_CONFIRMATIONS}"`);
}
// One build, or deployment to a local chain, of the checkout at a time (lib/hardhat-lock.ts): Ignition's
// compile before it deploys takes the lock; a deployment to the local chain (`localhost`) holds it throughout,
// one to another network (which waits for confirmations, seconds a block) only while it compiles.
const lockedBuild = overrideTask("build")
  .setInlineAction((args, _hre, runSuper) => withHardhatLock(() => runSuper(args)))
  .build();
const hre = await createHardhatRuntimeEnvironment(
  {
    ...config,
    tasks: [...(config.tasks ?? []), lockedBuild],
    ...(confirmations === undefined ? {} : { ignition: { ...config.ignition, requiredConfirmations: confirmations } }),
  },
  { network, buildProfile: "default", config: path.join(repoRoot, "hardhat.config.ts") },
  repoRoot,
);
const deploy = () =>
  hre.tasks.getTask(["ignition", "deploy"]).run({
    modulePath: path.join(repoRoot, "ignition", "modules", `${moduleName}.ts`),
    parameters: path.resolve(parameters),
    deploymentId,
  });
const result = network === "localhost" ? await withHardhatLock(deploy) : await deploy();
// The task prints why a deployment did not succeed, and sets the exit code.
if ((result as { type?: string } | null)?.type !== "SUCCESSFUL_DEPLOYMENT") process.exitCode = 1;
