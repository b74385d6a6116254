// `npm run bench`: every benchmark in sequence, each as a child process (one that crashes does not hide
// the others), then a summary table. Each benchmark writes bench/results/<name>.json (and its output to
// bench/results/<name>.log); this writes bench/results/summary.json: every headline figure and target of
// the run, with the machine, its load average and the databases used.
//
//   npm run bench                                   the default selection (below), about 17-20 minutes on 2 cores
//   npm run bench -- --only e2e-latency,http-throughput
//   npm run bench -- --skip indexer-catchup
//   npm run bench -- --db postgres                  every service benchmark on PostgreSQL only (pglite, both)
//   npm run bench -- --quick                        smaller runs (a smoke test of the benchmarks, ~6 minutes)
//   npm run bench -- --list                         what would run, with its command
//
// Default databases: PostgreSQL (the production database) for every service benchmark, plus PGlite (the
// embedded default of the local stack) where it is cheap: end-to-end latency, webhook dispatch, indexer
// latency and idle CPU. The figures printed say which database each comes from.
import { spawn, type ChildProcess } from "node:child_process";
import { createWriteStream, existsSync, readFileSync } from "node:fs";
import { mkdir, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { type Headline, type Target, machine, machineInfo, option, resultsDir } from "./common.ts";

type Db = "postgres" | "pglite";
type Bench = {
  name: string;
  script: string;
  what: string;
  /** The databases it runs on by default (empty: none needed). */
  databases: Db[];
  args: string[];
  quickArgs: string[];
};

const BENCHMARKS: Bench[] = [
  { name: "gas", script: "gas.ts", what: "gas of every contract entry point", databases: [], args: [], quickArgs: [] },
  {
    name: "e2e-latency",
    script: "e2e-latency.ts",
    what: "payment mined -> order success -> SSE -> webhook verified",
    databases: ["postgres", "pglite"],
    args: ["--payments", "200"],
    quickArgs: ["--payments", "30"],
  },
  {
    name: "http-throughput",
    script: "http-throughput.ts",
    what: "autocannon, 50 connections, against a bare Hono route",
    databases: ["postgres"],
    args: ["--seconds", "5", "--rounds", "3", "--warmup", "3"],
    quickArgs: ["--seconds", "3", "--rounds", "1", "--warmup", "1"],
  },
  {
    name: "webhook-dispatch",
    script: "webhook-dispatch.ts",
    what: "5,000 webhook events to one local receiver",
    databases: ["postgres", "pglite"],
    args: ["--events", "5000"],
    quickArgs: ["--events", "500", "--seconds", "3"],
  },
  {
    name: "energy-ingest",
    script: "energy-ingest.ts",
    what: "telemetry ingest throughput and anchoring",
    databases: ["postgres"],
    args: ["--seconds", "20", "--warmup", "5", "--latency-samples", "10", "--drain", "15"],
    quickArgs: ["--seconds", "5", "--warmup", "2", "--latency-samples", "3", "--drain", "5"],
  },
  {
    name: "indexer-latency",
    script: "indexer-latency.ts",
    what: "payment mined -> order row readable through the indexer",
    databases: ["postgres", "pglite"],
    args: ["--payments", "200"],
    quickArgs: ["--payments", "30"],
  },
  {
    name: "idle-cpu",
    script: "idle-cpu.ts",
    what: "CPU of an idle relayer + indexer (no requests for 60 s)",
    databases: ["postgres", "pglite"],
    args: ["--seconds", "60"],
    quickArgs: ["--seconds", "20", "--settle", "20"],
  },
  {
    name: "start-time",
    script: "start-time.ts",
    what: "npm start until ready: a fresh clone, a new chain, the same chain again",
    databases: [],
    args: ["--runs", "3"],
    quickArgs: ["--runs", "1"],
  },
  {
    name: "scale-out",
    script: "scale-out.ts",
    what: "relayed payments/s and HTTP req/s with 1 and 3 relayer processes behind a proxy",
    databases: ["postgres"],
    args: ["--payments", "150", "--wallets", "50", "--seconds", "5", "--warmup", "2"],
    quickArgs: ["--payments", "40", "--wallets", "20", "--seconds", "2", "--warmup", "1"],
  },
  {
    name: "data-scale",
    script: "data-scale.ts",
    what: "database time of each list/stat route and worker at 10k, 100k and 1M orders",
    databases: [],
    args: [],
    quickArgs: ["--quick"],
  },
  {
    name: "indexer-catchup",
    script: "indexer-catchup.ts",
    what: "indexer backfill throughput",
    databases: ["postgres"],
    args: ["--payments", "3000"],
    quickArgs: ["--payments", "500"],
  },
];

const list = (value: string) =>
  value
    .split(",")
    .map((s) => s.trim())
    .filter(Boolean);
const only = list(option("only", ""));
const skip = list(option("skip", ""));
const dbOption = option("db", "");
const quick = process.argv.includes("--quick");
for (const name of [...only, ...skip]) {
  if (!BENCHMARKS.some((b) => b.name === name))
    throw new Error(`unknown benchmark ${name}; known: ${BENCHMARKS.map((b) => b.name).join(", ")}`);
}
if (dbOption && !["postgres", "pglite", "both"].includes(dbOption)) throw new Error(`--db must be postgres, pglite or both`);

type Planned = { bench: Bench; db?: Db; args: string[] };
const plan: Planned[] = [];
for (const bench of BENCHMARKS) {
  if (only.length > 0 && !only.includes(bench.name)) continue;
  if (skip.includes(bench.name)) continue;
  const databases: Array<Db | undefined> =
    bench.databases.length === 0
      ? [undefined]
      : dbOption === "both"
        ? ["postgres", "pglite"]
        : dbOption
          ? [dbOption as Db]
          : bench.databases;
  // One child per database: a crash on one database does not lose the other's figures.
  for (const db of databases) plan.push({ bench, db, args: [...(quick ? bench.quickArgs : bench.args), ...(db ? ["--db", db] : [])] });
}

const command = (p: Planned) => `node bench/${p.bench.script} ${p.args.join(" ")}`;
if (process.argv.includes("--list")) {
  for (const p of plan) console.log(`${p.bench.name.padEnd(18)} ${(p.db ?? "-").padEnd(9)} ${command(p)}`);
  process.exit(0);
}

type Outcome = {
  benchmark: string;
  database: Db | null;
  command: string;
  exitCode: number | null;
  seconds: number;
  resultFile: string | null;
  headlines: Headline[];
  targets: Target[];
  loadAverage: { start: number[]; end: number[] };
};

const runStarted = new Date();
const machineAtStart = machineInfo();
await mkdir(resultsDir, { recursive: true });
console.log(`npm run bench, ${runStarted.toISOString()}: ${machine()}`);
console.log(`CPU: ${machineAtStart.cpuModel}, ${machineAtStart.cores} cores; load average ${machineAtStart.loadAverage.join(" ")}`);
console.log("plan:");
for (const p of plan) console.log(`  ${p.bench.name.padEnd(18)} ${(p.db ?? "no database").padEnd(12)} ${p.bench.what}`);

let current: ChildProcess | undefined;
let interrupted = false;
const stopCurrent = async () => {
  const child = current;
  if (!child || child.exitCode !== null || child.signalCode !== null) return;
  child.kill("SIGTERM"); // the benchmark stops its own services (bench/common.ts onInterrupt)
  const killer = setTimeout(() => child.kill("SIGKILL"), 30_000);
  await new Promise((resolve) => child.once("exit", resolve));
  clearTimeout(killer);
};
for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"] as const) {
  process.on(signal, () => {
    if (interrupted) return;
    interrupted = true;
    console.error(`\n${signal}: stopping the running benchmark`);
    void stopCurrent();
  });
}

const outcomes: Outcome[] = [];

async function runOne(p: Planned): Promise<Outcome> {
  const name = p.db ? `${p.bench.name}-${p.db}` : p.bench.name;
  const logFile = path.join(resultsDir, `${name}.log`);
  const log = createWriteStream(logFile);
  const started = performance.now();
  const startedAt = Date.now();
  const load = os.loadavg().map((l) => Math.round(l * 100) / 100);
  console.log(`\n=== ${p.bench.name}${p.db ? ` (${p.db})` : ""}: ${command(p)}`);
  const child = spawn(process.execPath, [path.join(import.meta.dirname, p.bench.script), ...p.args], {
    cwd: path.join(import.meta.dirname, ".."),
    env: { ...process.env, HARDHAT_DISABLE_TELEMETRY: "true", PONDER_TELEMETRY_DISABLED: "1", BENCH_RESULT_NAME: name },
    stdio: ["ignore", "pipe", "pipe"],
  });
  current = child;
  const tee = (chunk: Buffer, to: NodeJS.WriteStream) => {
    to.write(chunk);
    log.write(chunk);
  };
  child.stdout!.on("data", (chunk: Buffer) => tee(chunk, process.stdout));
  child.stderr!.on("data", (chunk: Buffer) => tee(chunk, process.stderr));
  const exitCode = await new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)));
  current = undefined;
  await new Promise((resolve) => log.end(resolve));
  const resultFile = path.join(resultsDir, `${name}.json`);
  let headlines: Headline[] = [];
  let targets: Target[] = [];
  let written = false;
  if (existsSync(resultFile)) {
    try {
      const result = JSON.parse(readFileSync(resultFile, "utf8")) as { finishedAt?: string; headlines?: Headline[]; targets?: Target[] };
      if (result.finishedAt && Date.parse(result.finishedAt) >= startedAt) {
        written = true;
        headlines = result.headlines ?? [];
        targets = result.targets ?? [];
      }
    } catch {
      // unreadable: reported as not written
    }
  }
  return {
    benchmark: p.bench.name,
    database: p.db ?? null,
    command: command(p),
    exitCode,
    seconds: Math.round((performance.now() - started) / 100) / 10,
    resultFile: written ? path.relative(path.join(import.meta.dirname, ".."), resultFile) : null,
    headlines,
    targets,
    loadAverage: { start: load, end: os.loadavg().map((l) => Math.round(l * 100) / 100) },
  };
}

async function finish(code: number): Promise<never> {
  const finishedAt = new Date();
  const lines: string[] = [];
  const say = (line = "") => {
    lines.push(line);
    console.log(line);
  };
  say(`\n${"=".repeat(100)}`);
  say(
    `summary: ${runStarted.toISOString()} to ${finishedAt.toISOString()} (${((finishedAt.getTime() - runStarted.getTime()) / 60_000).toFixed(1)} min)`,
  );
  say(`machine: ${machineAtStart.cores} cores (${machineAtStart.cpuModel}), ${machineAtStart.memGiB} GiB, node ${machineAtStart.node}`);
  say(
    `load average at start ${machineAtStart.loadAverage.join(" ")}, at end ${os
      .loadavg()
      .map((l) => l.toFixed(2))
      .join(" ")} (the machine may be shared)`,
  );
  for (const o of outcomes) {
    const status = o.exitCode === 0 ? "" : o.exitCode === null ? "  [killed]" : `  [FAILED: exit ${o.exitCode}]`;
    say(
      `\n${o.benchmark}${o.database ? ` (${o.database})` : ""}, ${o.seconds} s, load ${o.loadAverage.start[0]} -> ${o.loadAverage.end[0]}${status}`,
    );
    if (o.headlines.length === 0)
      say(
        `  no figures (${o.resultFile ? "none reported" : "no result file written"}; see bench/results/${o.benchmark}${o.database ? `-${o.database}` : ""}.log)`,
      );
    const width = Math.max(0, ...o.headlines.map((h) => h.label.length));
    for (const h of o.headlines) {
      const verdict = h.met === undefined ? "" : h.met ? "  met" : "  MISSED";
      say(`  ${h.label.padEnd(width)}  ${h.value}${h.target ? `  [target ${h.target}]` : ""}${verdict}`);
    }
  }
  const targets = outcomes.flatMap((o) => o.targets);
  const missed = targets.filter((t) => !t.met);
  const failed = outcomes.filter((o) => o.exitCode !== 0);
  say(
    `\ntargets: ${targets.length - missed.length} of ${targets.length} met${missed.length ? `; missed: ${missed.map((t) => t.name).join(", ")}` : ""}`,
  );
  if (failed.length)
    say(`benchmarks that failed: ${failed.map((o) => `${o.benchmark}${o.database ? ` (${o.database})` : ""}`).join(", ")}`);
  const summary = {
    startedAt: runStarted.toISOString(),
    finishedAt: finishedAt.toISOString(),
    interrupted,
    machine: {
      ...machineAtStart,
      loadAverageAtStart: machineAtStart.loadAverage,
      loadAverageAtEnd: os.loadavg().map((l) => Math.round(l * 100) / 100),
    },
    options: { only, skip, db: dbOption || "default", quick },
    benchmarks: outcomes,
    targets: { total: targets.length, met: targets.length - missed.length, missed: missed.map((t) => t.name) },
  };
  await writeFile(path.join(resultsDir, "summary.json"), `${JSON.stringify(summary, null, 2)}\n`);
  await writeFile(path.join(resultsDir, "summary.txt"), `${lines.join("\n").trim()}\n`);
  console.log(`\nwrote bench/results/summary.json and summary.txt`);
  process.exit(code);
}

for (const p of plan) {
  if (interrupted) break;
  outcomes.push(await runOne(p));
}
await finish(interrupted ? 130 : outcomes.some((o) => o.exitCode !== 0) ? 1 : 0);
