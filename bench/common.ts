// Shared pieces of the service benchmarks (e2e-latency, http-throughput, webhook-dispatch, and the JSON
// output of the others): latency summaries, the machine's description, the results files that
// bench/run.ts collects, sampling a process's resident size, and stopping every child on an interrupt.
import { spawn } from "node:child_process";
import { existsSync, readFileSync, readdirSync } from "node:fs";
import { mkdir, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import type { Result } from "autocannon";
import { percentile } from "./indexer-common.ts";

export { benchDatabases, machine, option, percentile } from "./indexer-common.ts";

export const resultsDir = path.join(import.meta.dirname, "results");

/** Whether `--name` (or `--name=true`) is on the command line. */
export function flag(name: string): boolean {
  return process.argv.slice(2).some((arg) => arg === `--${name}` || arg === `--${name}=true`);
}

export type Summary = { n: number; p50: number; p90: number; p99: number; max: number; mean: number };

/** p50/p90/p99 (nearest rank), max and mean of `values`, rounded to 0.1. */
export function summarize(values: number[]): Summary {
  const r = (x: number) => Math.round(x * 10) / 10;
  if (values.length === 0) return { n: 0, p50: Number.NaN, p90: Number.NaN, p99: Number.NaN, max: Number.NaN, mean: Number.NaN };
  return {
    n: values.length,
    p50: r(percentile(values, 0.5)),
    p90: r(percentile(values, 0.9)),
    p99: r(percentile(values, 0.99)),
    max: r(Math.max(...values)),
    mean: r(values.reduce((a, b) => a + b, 0) / values.length),
  };
}

export type MachineInfo = { cores: number; cpuModel: string; memGiB: number; node: string; loadAverage: number[] };

export function machineInfo(): MachineInfo {
  return {
    cores: os.availableParallelism(),
    cpuModel: os.cpus()[0]?.model.trim() ?? "unknown",
    memGiB: Math.round(os.totalmem() / 2 ** 30),
    node: process.version,
    loadAverage: os.loadavg().map((l) => Math.round(l * 100) / 100),
  };
}

export const loadAverage = () => os.loadavg().map((l) => Math.round(l * 100) / 100);

/** A target: `value` compared with `limit` (`atMost` or `atLeast`). */
export type Target = { name: string; value: number; limit: number; unit: string; kind: "atMost" | "atLeast"; met: boolean };

export function target(name: string, value: number, kind: "atMost" | "atLeast", limit: number, unit: string): Target {
  return { name, value, limit, unit, kind, met: kind === "atMost" ? value <= limit : value >= limit };
}

/** A row of the summary table bench/run.ts prints: one headline figure. */
export type Headline = { label: string; value: string; target?: string; met?: boolean };

/** Writes bench/results/<name>.json: what the benchmark measured, with the machine and its load. */
export async function writeResult(
  name: string,
  data: { startedAt: string; machine: MachineInfo; headlines: Headline[]; targets?: Target[]; [key: string]: unknown },
): Promise<string> {
  // bench/run.ts names each run's file (e.g. e2e-latency-postgres) so that runs on each database are kept.
  const file = path.join(resultsDir, `${process.env.BENCH_RESULT_NAME || name}.json`);
  await mkdir(resultsDir, { recursive: true });
  const body = { benchmark: name, ...data, finishedAt: new Date().toISOString(), loadAverageAtEnd: loadAverage() };
  await writeFile(file, `${JSON.stringify(body, null, 2)}\n`);
  return file;
}

/** CPU seconds (user + system) `pid` has used so far (from /proc/<pid>/stat), or NaN once it is gone. */
export function cpuSecondsOf(pid: number): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return (Number(fields[11]) + Number(fields[12])) / 100;
  } catch {
    return Number.NaN;
  }
}

/** The resident set size of `pid` in MiB (VmRSS of /proc/<pid>/status), or undefined once it is gone. */
export function rssMiB(pid: number): number | undefined {
  try {
    const match = /^VmRSS:\s+(\d+) kB$/m.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
    return match ? Math.round((Number(match[1]) / 1024) * 10) / 10 : undefined;
  } catch {
    return undefined;
  }
}

export type RssWindow = { label: string; samples: number; startMiB: number; peakMiB: number; steadyMiB: number; endMiB: number };

/** Samples a process's RSS every `intervalMs`; `window(label)` starts a labelled window and `end()` closes it.
 * Steady is the median of the window's samples after its first quarter (the load's ramp-up). */
export function sampleRss(pid: number, intervalMs = 100) {
  const samples: Array<{ t: number; mib: number }> = [];
  const windows: Array<{ label: string; from: number; to?: number }> = [];
  const take = () => {
    const mib = rssMiB(pid);
    if (mib !== undefined) samples.push({ t: performance.now(), mib });
  };
  take();
  const timer = setInterval(take, intervalMs);
  timer.unref();
  return {
    now: () => rssMiB(pid),
    begin(label: string) {
      take();
      windows.push({ label, from: performance.now() });
    },
    end() {
      take();
      const open = windows.at(-1);
      if (open && open.to === undefined) open.to = performance.now();
    },
    stop(): RssWindow[] {
      clearInterval(timer);
      return windows.map((w) => {
        const inside = samples.filter((s) => s.t >= w.from && s.t <= (w.to ?? Number.POSITIVE_INFINITY)).map((s) => s.mib);
        const settled = inside.slice(Math.floor(inside.length / 4));
        return {
          label: w.label,
          samples: inside.length,
          startMiB: inside[0] ?? Number.NaN,
          peakMiB: inside.length ? Math.max(...inside) : Number.NaN,
          steadyMiB: settled.length ? percentile(settled, 0.5) : Number.NaN,
          endMiB: inside.at(-1) ?? Number.NaN,
        };
      });
    },
    /** Peak over every sample taken. */
    peak: () => (samples.length ? Math.max(...samples.map((s) => s.mib)) : Number.NaN),
  };
}

const cleanups: Array<() => Promise<unknown>> = [];
let interrupted = false;

/** Registers `fn` to run (last registered first) if the benchmark is interrupted (SIGINT, SIGTERM, SIGHUP)
 * before it unregisters it with the returned function; the process then exits 130. Every benchmark registers
 * the stopping of its children here, so an interrupted run leaves no process behind. */
export function onInterrupt(fn: () => Promise<unknown>): () => void {
  cleanups.push(fn);
  return () => {
    const i = cleanups.indexOf(fn);
    if (i >= 0) cleanups.splice(i, 1);
  };
}

function abort(why: string, code: number) {
  if (interrupted) return;
  interrupted = true;
  console.error(`\n${why}: stopping the benchmark's processes`);
  const force = setTimeout(() => process.exit(code), 20_000);
  void (async () => {
    for (const fn of [...cleanups].reverse()) await fn().catch(() => undefined);
    // Anything a stack was still starting when this happened (not yet registered above).
    await stopDescendants();
    clearTimeout(force);
    process.exit(code);
  })();
}

for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"] as const) process.on(signal, () => abort(signal, 130));
// A crash (an error nobody awaited) would otherwise end the process at once, leaving its children running.
process.on("uncaughtException", (error) => {
  console.error(error);
  abort("uncaught exception", 1);
});
process.on("unhandledRejection", (error) => {
  console.error(error);
  abort("unhandled rejection", 1);
});

/** The PIDs of this process's descendants (from /proc), deepest first. */
export function descendants(root = process.pid): number[] {
  const children = new Map<number, number[]>();
  let entries: string[] = [];
  try {
    entries = readdirSync("/proc").filter((e) => /^\d+$/.test(e));
  } catch {
    return [];
  }
  for (const entry of entries) {
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, "utf8");
      const ppid = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
      children.set(ppid, [...(children.get(ppid) ?? []), Number(entry)]);
    } catch {
      // gone meanwhile
    }
  }
  const out: number[] = [];
  const walk = (pid: number) => {
    for (const child of children.get(pid) ?? []) {
      walk(child);
      out.push(child);
    }
  };
  walk(root);
  return out;
}

/** SIGTERM to every descendant of this process (by PID), SIGKILL to those left after `graceMs`. */
export async function stopDescendants(graceMs = 5_000): Promise<void> {
  const pids = descendants();
  if (pids.length === 0) return;
  for (const pid of pids) {
    try {
      process.kill(pid, "SIGTERM");
    } catch {
      // already gone
    }
  }
  const deadline = Date.now() + graceMs;
  const alive = () => pids.filter((pid) => existsSync(`/proc/${pid}`) && !isZombie(pid));
  while (alive().length > 0 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 100));
  for (const pid of alive()) {
    try {
      process.kill(pid, "SIGKILL");
    } catch {
      // already gone
    }
  }
}

function isZombie(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2).startsWith("Z");
  } catch {
    return true;
  }
}

/** Runs `body` with `resource`, stopping it afterwards and on an interrupt. */
export async function using<T extends { stop(): Promise<unknown> }, R>(resource: T, body: (r: T) => Promise<R>): Promise<R> {
  const stop = () => resource.stop();
  const forget = onInterrupt(stop);
  try {
    return await body(resource);
  } finally {
    forget();
    await resource.stop();
  }
}

export const fmt = (n: number, digits = 0) =>
  Number.isFinite(n) ? n.toLocaleString("en-US", { maximumFractionDigits: digits, minimumFractionDigits: digits }) : "n/a";

/** Runs autocannon with `spec` (its options, plus bench/http-load.ts's own: paths, ownAddresses) in a child
 * process of its own (bench/http-load.ts), and returns its result. */
export async function runHttpLoad(spec: Record<string, unknown>): Promise<Result> {
  let output = "";
  const child = spawn(process.execPath, [path.join(import.meta.dirname, "http-load.ts"), JSON.stringify(spec)], {
    stdio: ["ignore", "pipe", "inherit"],
  });
  const forget = onInterrupt(async () => void child.kill("SIGKILL"));
  child.stdout.on("data", (chunk: Buffer) => (output += chunk.toString("utf8")));
  const code = await new Promise<number | null>((resolve) => child.on("exit", resolve));
  forget();
  if (code !== 0) throw new Error(`the load generator exited with ${code}`);
  return JSON.parse(output.trim().split("\n").at(-1)!) as Result;
}
