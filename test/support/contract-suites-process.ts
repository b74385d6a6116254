// The contract suites of test/contracts/ in one process, one file after another, on the one in-process Hardhat
// chain that test/contracts/fixture.ts connects to. Each test starts from its fixture's snapshot
// (networkHelpers.loadFixture reverts the chain to it), so no test sees another's transactions, whichever file
// ran before; the process loads Node's TypeScript support, Hardhat, viem and the compiled contracts once
// instead of once a file. Twenty suites took 11.6 CPU s (user + system) in one process against 49 in twenty
// (2-core AMD EPYC host, 2026-11-27), with the same 318 tests passing.
//
// scripts/test.ts runs the selected suites through it and names them in TEST_SHARED_PROCESS_FILES; run alone
// (`node --test test/support/contract-suites-process.ts`) it runs every suite that shares the process
// (contract-suites.ts: all but those that need a fresh chain). A suite still runs alone too:
// `node --test test/contracts/PaymentRouter.pay.test.ts`.
import path from "node:path";
import { pathToFileURL } from "node:url";
import { SHARED_PROCESS_FILES_ENV, allSharedProcessFiles, runsInSharedProcess } from "./contract-suites.ts";

const root = path.resolve(import.meta.dirname, "..", "..");
const named = process.env[SHARED_PROCESS_FILES_ENV]?.split("\n").filter((file) => file !== "");
const files = named ?? allSharedProcessFiles();
for (const file of files) {
  if (!runsInSharedProcess(file)) throw new Error(`${SHARED_PROCESS_FILES_ENV}: ${file} is not a suite of the shared process`);
  await import(pathToFileURL(path.join(root, file)).href);
}
