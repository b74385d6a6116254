// A lock across the processes of this machine: a file that names its holder's pid, created exclusively; a lock
// whose holder is gone is taken over. Reentrant within a process (withFileLock says how). Used for the checkout's Hardhat lock
// (lib/hardhat-lock.ts) and by the test support (one deployment recording at a time).
import { closeSync, mkdirSync, openSync, readFileSync, unlinkSync, writeSync } from "node:fs";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { processAlive } from "./processes.ts";

const RETRY_MS = 50;
const WAIT_LIMIT_MS = 10 * 60_000;

/** The locks this process holds, and how deep. */
const held = new Map<string, number>();

/** Runs `work` while this process holds `lockFile`. Waits up to ten minutes for it. It excludes other processes
 * only: while this process holds the lock, a further call of this process (nested in `work` or not) runs at
 * once; a child process waits like any other. */
export async function withFileLock<T>(lockFile: string, work: () => Promise<T>): Promise<T> {
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
