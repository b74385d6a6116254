// The contracts' build for the local stack: Hardhat's compile (its `default` build profile, the one the tests
// and the local deployment use) and generated/abis.ts, regenerated only when the ABIs in the artifacts changed.
import { readFile } from "node:fs/promises";
import path from "node:path";
import { repoRoot } from "../ignition/deployment-records.ts";
import { abisFile, abisSource } from "../scripts/generate-abis.ts";
import { withHardhatLock } from "./hardhat-lock.ts";
import { packageBin } from "./package-bin.ts";
import { startService } from "./processes.ts";

export const hardhatCli = packageBin("hardhat");
export const hardhatEnv = { HARDHAT_DISABLE_TELEMETRY: "true" };
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

/** Whether generated/abis.ts (or `file`) holds what scripts/generate-abis.ts generates from the artifacts as they are. By
 * content, not by modification times: the script leaves the file alone when its text is the same (a
 * rebuild of what depends on it follows its modification time), so after a build that rewrote the artifacts with the same ABIs (a changed
 * comment, another compiler setting) the file stays older than the artifacts and still up to date. */
export async function abisUpToDate(file = abisFile): Promise<boolean> {
  try {
    const [current, { text }] = await Promise.all([readFile(file, "utf8"), abisSource()]);
    return current === text;
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
