// Gas of every contract entry point, on Hardhat's in-process chain (deterministic): the measurement is
// bench/gas-measure.ts. Run: node bench/gas.ts, or `npm run bench -- --only gas` (after `npm run build`).
// Prints a table and writes bench/results/gas.json (with the run's settings; `figures` is every figure as a flat
// object, name -> gas, the names of the table). With `--write-docs` (`npm run gas:snapshot`) it also writes the
// checked-in snapshot bench/gas-snapshot.json, which test/contracts/gas-snapshot.test.ts compares every test run
// with (a change that costs gas shows in review as a change of that file), and the gas table of
// docs/benchmarks.md from the same figures; without it no tracked file changes.
import { readFile, writeFile } from "node:fs/promises";
import os from "node:os";
import { fileURLToPath } from "node:url";
import { GAS_TABLE_FILE, GAS_TARGETS, SNAPSHOT_FILE, gasTable, measureGas, snapshotOf, snapshotText, withGasTable } from "./gas-measure.ts";
import { machineInfo, target, writeResult } from "./common.ts";

const startedAt = new Date().toISOString();
const machineAtStart = machineInfo();

const rows = await measureGas();
const width = Math.max(...rows.map((r) => r.name.length));
const solcVersion = (await import("solc/package.json", { with: { type: "json" } })).default.version;
console.log(`Gas per operation (solc ${solcVersion}, optimizer 10,000 runs, cancun; ${os.cpus().length} cores)\n`);
for (const r of rows) console.log(`${r.name.padEnd(width)}  ${String(r.gas).padStart(7)}  ${r.note}`);
console.log("\nFor comparison: Coinbase commerce-payments' charge() costs about 165,000 gas.");
const limitOf = (name: string) => (Object.hasOwn(GAS_TARGETS, name) ? GAS_TARGETS[name] : undefined);
const out = await writeResult("gas", {
  startedAt,
  machine: machineAtStart,
  compiler: { solc: solcVersion, optimizerRuns: 10_000, evmVersion: "cancun" },
  figures: snapshotOf(rows),
  results: rows.map((r) => ({ operation: r.name, gas: r.gas, note: r.note })),
  headlines: rows.map((r) => {
    const limit = limitOf(r.name);
    return {
      label: r.name,
      value: `${r.gas.toLocaleString("en-US")} gas`,
      ...(limit === undefined ? {} : { target: `<= ${limit.toLocaleString("en-US")}`, met: r.gas <= limit }),
    };
  }),
  targets: rows.flatMap((r) => {
    const limit = limitOf(r.name);
    return limit === undefined ? [] : [target(r.name, r.gas, "atMost", limit, "gas")];
  }),
});
console.log(`wrote ${out}`);
if (process.argv.includes("--write-docs")) {
  await writeFile(SNAPSHOT_FILE, snapshotText(rows));
  console.log(`wrote ${fileURLToPath(SNAPSHOT_FILE)}`);
  await writeFile(GAS_TABLE_FILE, withGasTable(await readFile(GAS_TABLE_FILE, "utf8"), gasTable(snapshotOf(rows))));
  console.log(`wrote the gas table of ${fileURLToPath(GAS_TABLE_FILE)}`);
}
process.exit(0);
