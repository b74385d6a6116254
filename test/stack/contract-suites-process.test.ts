// The contract suites' shared process (test/support/contract-suites-process.ts): which suites it runs, that it runs
// exactly those the runner names, and that a name it does not know fails it instead of being skipped.
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { globSync } from "node:fs";
import path from "node:path";
import { describe, it } from "node:test";
import { SHARED_PROCESS_ENTRY, SHARED_PROCESS_FILES_ENV, allSharedProcessFiles, runsInSharedProcess } from "../support/contract-suites.ts";

const root = path.resolve(import.meta.dirname, "..", "..");

/** Runs the shared process under Node's test runner (TAP) with `files` named; returns its exit code and output.
 * (Without the runner's NODE_TEST_CONTEXT, which would make the child report to this process instead.) */
function runShared(files: string[]) {
  const { NODE_TEST_CONTEXT: _, ...env } = process.env;
  const result = spawnSync(process.execPath, ["--test", "--test-reporter=tap", path.join(root, SHARED_PROCESS_ENTRY)], {
    cwd: root,
    env: { ...env, HARDHAT_DISABLE_TELEMETRY: "true", [SHARED_PROCESS_FILES_ENV]: files.join("\n") },
    encoding: "utf8",
    timeout: 120_000,
  });
  return { status: result.status, stdout: result.stdout, stderr: result.stderr };
}

/** The top-level results of a TAP stream: `ok N - name` / `not ok N - name` at column 0. */
const topLevel = (tap: string) => tap.split("\n").filter((line) => /^(not )?ok \d+ - /.test(line));

describe("the contract suites' shared process", () => {
  it("takes every contract suite but those that need a fresh chain, and is not itself a test file", () => {
    const suites = globSync("test/contracts/*.test.ts", { cwd: root }).sort();
    const shared = allSharedProcessFiles();
    assert.ok(shared.length >= 20, `${shared.length} suites share the process`);
    assert.deepEqual(
      suites.filter((file) => !shared.includes(file)),
      ["test/contracts/gas-snapshot.test.ts"],
      "the gas snapshot measures on a chain with nothing mined: it keeps a process of its own",
    );
    assert.equal(runsInSharedProcess(SHARED_PROCESS_ENTRY), false);
    assert.equal(runsInSharedProcess("test/relayer/api.test.ts"), false);
    assert.ok(!SHARED_PROCESS_ENTRY.endsWith(".test.ts"), "the runner's glob would run the entry as a file of its own");
    assert.ok(!SHARED_PROCESS_ENTRY.startsWith("test/contracts/"), "Hardhat's test runner (npm run coverage) runs every file there");
  });

  it("runs exactly the suites it is given, one after another, and passes when they pass", () => {
    const run = runShared(["test/contracts/TestStablecoin.test.ts", "test/contracts/TelemetryAnchor.test.ts"]);
    assert.equal(run.status, 0, run.stdout + run.stderr);
    assert.deepEqual(topLevel(run.stdout), ["ok 1 - TestStablecoin", "ok 2 - TelemetryAnchor"]);
  });

  it("fails on a file that is not one of its suites, instead of leaving it out", () => {
    const run = runShared(["test/contracts/TestStablecoin.test.ts", "test/contracts/gas-snapshot.test.ts"]);
    assert.notEqual(run.status, 0);
    assert.match(run.stdout + run.stderr, /gas-snapshot\.test\.ts is not a suite of the shared process/);
  });
});
