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
// One build of the checkout at a time, and none beside the start of a deployment to a local chain
// (lib/hardhat-lock.ts). The task first
// (on the local chain, chain id 31337) rewrites cache/.hardhat-network-instances.json, then compiles, then
// deploys: a deployment to the local chain (`localhost`) holds the lock from its start until its compile is
// done, one to another network only while it compiles; neither holds it while it deploys (seconds, and on
// another network a block's time per confirmation).
let compiled = () => {};
const compileDone = new Promise<void>((resolve) => (compiled = resolve));
const lockedBuild = overrideTask("build")
  .setInlineAction(async (args, _hre, runSuper) => {
    try {
      return await withHardhatLock(() => runSuper(args));
    } finally {
      compiled();
    }
  })
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
/** A deployment to the local chain: started inside the lock, which it leaves once it has compiled (or once the
 * task ended without compiling). */
function startedInsideTheLock() {
  return withHardhatLock(async () => {
    const running = deploy();
    await Promise.race([compileDone, running.then(undefined, () => undefined)]);
    return { running };
  });
}
const { running } = network === "localhost" ? await startedInsideTheLock() : { running: deploy() };
const result = await running;
// The task prints why a deployment did not succeed, and sets the exit code.
if ((result as { type?: string } | null)?.type !== "SUCCESSFUL_DEPLOYMENT") process.exitCode = 1;
