// The gas of every contract entry point equals the checked-in snapshot bench/gas-snapshot.json, so that a
// change that costs (or saves) gas shows in review as a change of that file. The measurement is the gas
// benchmark's own (bench/gas-measure.ts), on Hardhat's in-process chain.
import assert from "node:assert/strict";
import { readFile } from "node:fs/promises";
import { describe, it } from "node:test";
import hre from "hardhat";
import {
  GAS_TABLE_END,
  GAS_TABLE_FILE,
  GAS_TABLE_START,
  SNAPSHOT_FILE,
  gasTable,
  measureGas,
  snapshotOf,
} from "../../bench/gas-measure.ts";

const UPDATE = "If the change is intended, update the snapshot and the gas table with `npm run gas:snapshot` and commit them.";

/** One line per figure that moved, appeared or disappeared. */
function differences(expected: Record<string, number>, actual: Record<string, number>): string[] {
  const lines: string[] = [];
  for (const [name, gas] of Object.entries(actual)) {
    const before = Object.hasOwn(expected, name) ? expected[name] : undefined;
    if (before === undefined) lines.push(`  ${name}: ${gas} (not in the snapshot)`);
    else if (before !== gas) lines.push(`  ${name}: ${before} -> ${gas} (${gas > before ? "+" : ""}${gas - before})`);
  }
  for (const name of Object.keys(expected)) {
    if (!Object.hasOwn(actual, name)) lines.push(`  ${name}: no longer measured`);
  }
  return lines;
}

// Coverage instruments the contracts, which changes every figure: the snapshot is of the real bytecode.
describe("gas snapshot", { skip: hre.globalOptions.coverage ? "not under coverage (instrumented bytecode)" : false }, () => {
  it("every figure equals bench/gas-snapshot.json, and measuring again gives the same figures", async () => {
    const expected = JSON.parse(await readFile(SNAPSHOT_FILE, "utf8")) as Record<string, number>;
    const actual = snapshotOf(await measureGas());
    const moved = differences(expected, actual);
    assert.deepEqual(actual, expected, `gas differs from bench/gas-snapshot.json:\n${moved.join("\n")}\n${UPDATE}`);

    // Deterministic: measured again, later by the clock, the figures are the same (nothing they depend on,
    // such as an order's expiry, comes from the clock).
    assert.deepEqual(snapshotOf(await measureGas()), actual, "a second measurement gave other figures");
  });

  it("the gas table of docs/benchmarks.md shows the snapshot's figures", async () => {
    const expected = JSON.parse(await readFile(SNAPSHOT_FILE, "utf8")) as Record<string, number>;
    const page = await readFile(GAS_TABLE_FILE, "utf8");
    const start = page.indexOf(GAS_TABLE_START);
    const end = page.indexOf(GAS_TABLE_END);
    assert.ok(start >= 0 && end > start, "docs/benchmarks.md has the gas table's markers");
    assert.equal(page.slice(start + GAS_TABLE_START.length, end).trim(), gasTable(expected), UPDATE);
  });
});
