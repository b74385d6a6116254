// Which contract suites (test/contracts/*.test.ts) run in one shared process (contract-suites-process.ts), and
// how scripts/test.ts hands that process its files. A module of its own, without side effects, so that the
// runner can import it. Both live here, not in test/contracts/: Hardhat's test runner (`npm run coverage`) runs
// every TypeScript file of that folder, and would run the suites twice.
import { globSync } from "node:fs";
import path from "node:path";

const root = path.resolve(import.meta.dirname, "..", "..");

/** The entry module of the shared process, relative to the repository. */
export const SHARED_PROCESS_ENTRY = "test/support/contract-suites-process.ts";

/** The environment variable through which the runner names the files the shared process runs (one path
 * relative to the repository a line). Only the shared process reads it. */
export const SHARED_PROCESS_FILES_ENV = "TEST_SHARED_PROCESS_FILES";

/** Suites that need the in-process chain as Hardhat starts it (nothing mined before them): each keeps a
 * process, and so a chain, of its own. */
const OWN_CHAIN = new Set(["test/contracts/gas-snapshot.test.ts"]);

/** Whether `file` (relative to the repository, with forward slashes) runs in the shared process. */
export function runsInSharedProcess(file: string): boolean {
  return file.startsWith("test/contracts/") && file.endsWith(".test.ts") && !OWN_CHAIN.has(file);
}

/** Every suite of the shared process, in path order. */
export function allSharedProcessFiles(): string[] {
  return globSync("test/contracts/*.test.ts", { cwd: root })
    .map((file) => file.split(path.sep).join("/"))
    .filter(runsInSharedProcess)
    .sort();
}
