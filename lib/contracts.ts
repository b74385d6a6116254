// The contracts' build for the local stack: Hardhat's compile (its `default` build profile, the one the tests
// and the local deployment use) and generated/abis.ts, regenerated only when the artifacts changed.
import { readdir, stat } from "node:fs/promises";
import path from "node:path";
import { repoRoot } from "../ignition/deployment-records.ts";
import { withHardhatLock } from "./hardhat-lock.ts";
import { startService } from "./processes.ts";

export const hardhatCli = path.join(repoRoot, "node_modules", "hardhat", "dist", "src", "cli.js");
export const hardhatEnv = { HARDHAT_DISABLE_TELEMETRY: "true" };
const artifactsDir = path.join(repoRoot, "artifacts", "contracts");
const abisFile = path.join(repoRoot, "generated", "abis.ts");
const generateAbisScript = path.join(repoRoot, "scripts", "generate-abis.ts");

/** Runs `node <script> ...args` from the repository root; fails with its output if it fails. */
async function run(name: string, args: string[], opts: { env?: NodeJS.ProcessEnv; logFile?: string } = {}): Promise<void> {
  const service = startService(name, process.execPath, args, { cwd: repoRoot, env: opts.env, logFile: opts.logFile });
  const code = await service.exited;
  if (code !== 0) throw new Error(`${name} failed (exit ${code}):\n${service.recentOutput()}`);
}

/** Compiles what changed in contracts/ (not the Solidity tests); a build with nothing to do is a no-op. One
 * build of the checkout at a time (lib/hardhat-lock.ts). */
export function compileContracts(opts: { logFile?: string } = {}): Promise<void> {
  return withHardhatLock(() => run("build", [hardhatCli, "build", "--quiet", "--no-tests"], { env: hardhatEnv, logFile: opts.logFile }));
}

/** Whether generated/abis.ts was written after the last change to what it is generated from: the artifacts of
 * contracts/*.sol and the folder that lists them (a contract added or removed). */
export async function abisUpToDate(): Promise<boolean> {
  try {
    const generated = (await stat(abisFile)).mtimeMs;
    let newest = (await stat(artifactsDir)).mtimeMs;
    for (const entry of await readdir(artifactsDir)) {
      if (!entry.endsWith(".sol")) continue;
      const artifact = path.join(artifactsDir, entry, `${entry.slice(0, -".sol".length)}.json`);
      newest = Math.max(newest, (await stat(artifact)).mtimeMs);
    }
    return generated >= newest;
  } catch {
    return false;
  }
}

/** Writes generated/abis.ts (scripts/generate-abis.ts) unless it is up to date; returns whether it wrote it. */
export async function generateAbis(opts: { logFile?: string } = {}): Promise<boolean> {
  if (await abisUpToDate()) return false;
  await run("generate-abis", [generateAbisScript], { logFile: opts.logFile });
  return true;
}
