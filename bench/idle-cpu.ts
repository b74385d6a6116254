// Benchmark: what an idle stack costs. The whole system runs on loopback as in the end-to-end tests (a local
// Hardhat chain, the device cloud, the indexer at its local settings, the relayer with all its workers and
// LOG_LEVEL=info, seeded with the sample tenant); after a settling pause nobody sends it anything, and the
// CPU time the relayer and the indexer use over the window (user + system, from /proc/<pid>/stat, every
// thread of the process and of its descendants) is divided by the window's length: the share of one core
// each keeps busy doing nothing but their background loops. The chain is reported too, outside the target
// (it stands in for a node the stack does not own).
//
// The settling pause (30 s by default) lets the start-up work end, including V8's memory reducer: some 20 s
// after a process's start-up allocations it compacts the heap once (0.2-0.4 s of CPU per process), a
// one-off that is not what an idle stack costs.
//
//   node bench/idle-cpu.ts [--seconds 60] [--settle 30] [--db postgres|pglite|both]
import { setTimeout as sleep } from "node:timers/promises";
import { type Stack, startStack } from "../test/support/stack.ts";
import {
  type Headline,
  type Target,
  benchDatabases,
  cpuSecondsOf,
  descendants,
  fmt,
  machine,
  machineInfo,
  onInterrupt,
  option,
  target,
  writeResult,
} from "./common.ts";

const seconds = Number(option("seconds", "60"));
const settle = Number(option("settle", "30"));
if (!(seconds > 0) || !(settle >= 0)) throw new Error("--seconds must be > 0 and --settle >= 0");
/** Both processes together, in percent of one core. */
const TARGET_PERCENT = 2;

/** CPU seconds of `pid` and of every process below it. */
function treeCpuSeconds(pid: number): number {
  return [pid, ...descendants(pid)]
    .map(cpuSecondsOf)
    .filter(Number.isFinite)
    .reduce((a, b) => a + b, 0);
}

type Figures = { relayer: number; indexer: number; chain: number; total: number };

async function measure(stack: Stack): Promise<Figures> {
  const pids = {
    relayer: stack.relayer.process.pid!,
    indexer: stack.indexer!.process.pid!,
    chain: stack.chain.chain.process.pid,
  };
  await sleep(settle * 1000);
  const before = Object.fromEntries(Object.entries(pids).map(([k, pid]) => [k, pid ? treeCpuSeconds(pid) : Number.NaN]));
  const started = performance.now();
  await sleep(seconds * 1000);
  const elapsed = (performance.now() - started) / 1000;
  const share = (k: keyof typeof pids) => {
    const pid = pids[k];
    return pid ? ((treeCpuSeconds(pid) - before[k]!) / elapsed) * 100 : Number.NaN;
  };
  const relayer = share("relayer");
  const indexer = share("indexer");
  if (stack.relayer.process.exitCode !== null || stack.indexer!.process.exitCode !== null) {
    throw new Error("the relayer or the indexer exited during the window");
  }
  return { relayer, indexer, chain: share("chain"), total: relayer + indexer };
}

const startedAt = new Date().toISOString();
const machineAtStart = machineInfo();
console.log(`idle CPU: relayer + indexer over ${seconds} s without requests (after ${settle} s settling); ${machine()}`);
const results: Record<string, Figures> = {};
const headlines: Headline[] = [];
const targets: Target[] = [];
for (const kind of benchDatabases(["postgres", "pglite"])) {
  const stackStarting = startStack({ label: `bench-idle-${kind}`, database: kind });
  const forget = onInterrupt(async () => (await stackStarting).stop());
  const stack = await stackStarting;
  try {
    const f = await measure(stack);
    results[kind] = f;
    console.log(`\n${kind}                 % of one core`);
    console.log(`  relayer            ${fmt(f.relayer, 2).padStart(6)}`);
    console.log(`  indexer            ${fmt(f.indexer, 2).padStart(6)}`);
    console.log(`  together           ${fmt(f.total, 2).padStart(6)}   target <= ${TARGET_PERCENT}`);
    console.log(`  (chain             ${fmt(f.chain, 2).padStart(6)}: not in the target)`);
    headlines.push({
      label: `${kind}: idle relayer + indexer, % of one core`,
      value: `${fmt(f.total, 2)}% (relayer ${fmt(f.relayer, 2)}%, indexer ${fmt(f.indexer, 2)}%; ${seconds} s)`,
      target: `<= ${TARGET_PERCENT}%`,
      met: f.total <= TARGET_PERCENT,
    });
    targets.push(target(`${kind} idle CPU relayer + indexer`, Math.round(f.total * 100) / 100, "atMost", TARGET_PERCENT, "% of a core"));
  } finally {
    await stack.stop();
    forget();
  }
}
console.log(`\ntarget: relayer + indexer idle <= ${TARGET_PERCENT}% of one core`);
for (const t of targets) console.log(`  ${t.met ? "met   " : "MISSED"} ${t.name}: ${fmt(t.value, 2)} ${t.unit} (<= ${t.limit})`);
const file = await writeResult("idle-cpu", {
  startedAt,
  machine: machineAtStart,
  settings: { seconds, settle, relayerLogLevel: "info" },
  results,
  headlines,
  targets,
});
console.log(`wrote ${file}`);
process.exit(0);
