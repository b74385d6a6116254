// One Hardhat build of the checkout at a time, across processes, and no build beside the start of an Ignition
// deployment to a local chain. Both write files of the checkout that every run shares: a build writes its
// compile cache as cache/compile-cache.json.tmp and renames it (two builds at once share that temporary name,
// and the second rename fails with ENOENT), and a deployment to a local chain (chain id 31337) reads, changes
// and rewrites cache/.hardhat-network-instances.json in place before it compiles. Test files deploy side by
// side, `npm run rehearsal` builds beside them: every build this repository starts (lib/contracts.ts's compile,
// the one Ignition runs before a deployment) and the start of every deployment to a local chain, up to its
// compile (lib/ignition-deploy.ts), run inside withHardhatLock. A compile with nothing to do takes a second or
// two, and `npm test` builds before its suites start, so a wait here is short.
import path from "node:path";
import { repoRoot } from "../ignition/deployment-records.ts";
import { withFileLock } from "./file-lock.ts";

/** The checkout's Hardhat lock. */
export const HARDHAT_LOCK_FILE = path.join(repoRoot, "cache", "hardhat.lock");

/** Runs `work` while this process holds the checkout's Hardhat lock (lib/file-lock.ts). */
export function withHardhatLock<T>(work: () => Promise<T>): Promise<T> {
  return withFileLock(HARDHAT_LOCK_FILE, work);
}
