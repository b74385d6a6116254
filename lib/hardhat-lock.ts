// One Hardhat build of the checkout at a time, across processes, and no build beside the start of an Ignition
// deployment to a local chain. Both write files of the checkout that every run shares: a build writes its
// compile cache as cache/compile-cache.json.tmp and renames it (two builds at once share that temporary name,
// and the second rename fails with ENOENT), and a deployment to a local chain (chain id 31337) reads, changes
// and rewrites cache/.hardhat-network-instances.json in place before it compiles. Test files deploy side by
// side, `npm run rehearsal` builds beside them: every build this repository starts (lib/contracts.ts's compile,
// the one Ignition runs before a deployment) and the start of every deployment to a local chain, up to its
// compile (lib/ignition-deploy.ts), run inside withHardhatLock. A compile with nothing to do takes a second or
// two, and `npm test` builds before its suites start, so a wait here is short.
// The lock serves other files too (withHardhatLock's `lockFile`).
import { closeSync, mkdirSync, openSync, readFileSync, unlinkSync, writeSync } from "node:fs";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { repoRoot } from "../ignition/deployment-records.ts";
import { processAlive } from "./processes.ts";

const LOCK_FILE = path.join(repoRoot, "cache", "hardhat.lock");
const RETRY_MS = 50;
const WAIT_LIMIT_MS = 10 * 60_000;

/** The locks this process holds, and how deep. */
const held = new Map<string, number>();

/** Runs `work` while this process holds `lockFile` (default: the checkout's Hardhat lock), a file that names
 * the holder's pid, created exclusively; a lock whose holder is gone is taken over. Waits up to ten minutes
 * for it. Reentrant within a process (work inside work runs at once); a child process waits like any other. */
export async function withHardhatLock<T>(work: () => Promise<T>, lockFile = LOCK_FILE): Promise<T> {
  const depth = held.get(lockFile) ?? 0;
  if (depth > 0) {
    held.set(lockFile, depth + 1);
    try {
      return await work();
    } finally {
      held.set(lockFile, depth);
    }
  }
  const deadline = Date.now() + WAIT_LIMIT_MS;
  while (!tryLock(lockFile)) {
    if (Date.now() > deadline) throw new Error(`the lock ${lockFile} is still held by process ${holderOf(lockFile)}`);
    await sleep(RETRY_MS);
  }
  held.set(lockFile, 1);
  try {
    return await work();
  } finally {
    held.delete(lockFile);
    try {
      unlinkSync(lockFile);
    } catch {
      // Taken over meanwhile (this process was judged gone): nothing to release.
    }
  }
}

function tryLock(lockFile: string): boolean {
  mkdirSync(path.dirname(lockFile), { recursive: true });
  try {
    const fd = openSync(lockFile, "wx");
    writeSync(fd, String(process.pid));
    closeSync(fd);
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
  }
  const holder = holderOf(lockFile);
  // An empty file: its holder is between creating it and writing its pid. Wait.
  if (holder === undefined || processAlive(holder)) return false;
  try {
    unlinkSync(lockFile);
  } catch {
    // Another waiter removed it first.
  }
  return false;
}

function holderOf(lockFile: string): number | undefined {
  try {
    const pid = Number(readFileSync(lockFile, "utf8"));
    return Number.isSafeInteger(pid) && pid > 0 ? pid : undefined;
  } catch {
    return undefined;
  }
}
