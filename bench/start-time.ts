// Benchmark: how long `npm start` (scripts/start.ts) takes until it is ready, that is until it printed its
// table, which it does once everything answers:
//   - fresh: on a fresh clone after `npm install` (nothing compiled or generated, no chain running: the start
//     starts its own);
//   - new chain: started on a chain that was already running (as a developer's own node), with the contracts
//     built by the fresh start: deploys anew and starts clean;
//   - same chain: started again on that chain after Ctrl-C: the data is kept.
// Each run works in a copy of the working tree as a fresh clone has it (the files git tracks and the
// untracked ones it does not ignore; node_modules linked) on free ports, so neither the checkout nor a stack
// running from it is touched. Per start: the seconds to ready, each step's seconds as the start printed them,
// and the CPU seconds the start and every process under it used until then (less sensitive than the wall
// time to other work on a shared machine; its load average is reported too).
//
//   node bench/start-time.ts [--runs 3] [--tree DIR]
//
// --tree copies DIR instead of the working tree (another version of the repository, for comparison).
import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { cp, mkdir, rm, symlink } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { repoRoot } from "../ignition/deployment-records.ts";
import { startChain } from "../lib/chain.ts";
import { freePort } from "../lib/processes.ts";
import {
  type Headline,
  type Target,
  descendants,
  fmt,
  loadAverage,
  machine,
  machineInfo,
  onInterrupt,
  option,
  percentile,
  target,
  writeResult,
} from "./common.ts";

const runs = Number(option("runs", "3"));
const tree = option("tree", "");
if (!Number.isInteger(runs) || runs < 1) throw new Error("--runs must be a positive integer");
/** Seconds to ready, from the issue that set them: a fresh clone, and a second start on the same chain. */
const TARGETS = { fresh: 25, sameChain: 10 };
const READY_TIMEOUT_MS = 600_000;

type Kind = "fresh" | "newChain" | "sameChain";
type Start = { kind: Kind; seconds: number; cpuSeconds: number; steps: Record<string, number>; load: number[] };

/** A copy of the working tree (or of --tree) as a fresh clone after `npm install` has it. */
async function freshTree(dir: string): Promise<void> {
  await rm(dir, { recursive: true, force: true });
  await mkdir(dir, { recursive: true });
  if (tree) {
    await cp(path.resolve(tree), dir, { recursive: true, filter: (source) => path.basename(source) !== "node_modules" });
  } else {
    const listed = execFileSync("git", ["ls-files", "-z", "--cached", "--others", "--exclude-standard"], {
      cwd: repoRoot,
      encoding: "utf8",
    });
    for (const file of listed.split("\0").filter(Boolean)) {
      // A tracked file deleted in the working tree is listed too.
      await cp(path.join(repoRoot, file), path.join(dir, file)).catch((error: NodeJS.ErrnoException) => {
        if (error.code !== "ENOENT") throw error;
      });
    }
  }
  await symlink(path.join(repoRoot, "node_modules"), path.join(dir, "node_modules"));
}

/** CPU seconds (user + system) of `pid` and of every process under it, those that exited included (counted
 * by their parents once reaped). */
function treeCpuSeconds(pid: number): number {
  let total = 0;
  for (const p of [pid, ...descendants(pid)]) {
    try {
      const stat = readFileSync(`/proc/${p}/stat`, "utf8");
      const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      total += fields.slice(11, 15).reduce((sum, field) => sum + Number(field), 0) / 100;
    } catch {
      // gone meanwhile: counted in its parent once reaped
    }
  }
  return total;
}

type Running = { child: ChildProcess; exited: Promise<number | null> };

/** Runs scripts/start.ts in `dir` until it is ready; returns the measured start and the running process. */
async function start(kind: Kind, dir: string, env: NodeJS.ProcessEnv): Promise<{ start: Start; running: Running }> {
  const began = performance.now();
  const child = spawn(process.execPath, [path.join(dir, "scripts", "start.ts")], { cwd: dir, env, stdio: ["ignore", "pipe", "pipe"] });
  const running: Running = { child, exited: new Promise((resolve) => child.on("exit", (code) => resolve(code))) };
  let stdout = "";
  let stderr = "";
  child.stderr!.on("data", (chunk: Buffer) => (stderr += chunk.toString("utf8")));
  const ready = await new Promise<boolean>((resolve) => {
    const timer = setTimeout(() => resolve(false), READY_TIMEOUT_MS);
    child.stdout!.on("data", (chunk: Buffer) => {
      stdout += chunk.toString("utf8");
      if (stdout.includes("Try it: npm run demo")) {
        clearTimeout(timer);
        resolve(true);
      }
    });
    void running.exited.then(() => {
      clearTimeout(timer);
      resolve(false);
    });
  });
  const seconds = (performance.now() - began) / 1000;
  if (!ready) {
    await stop(running);
    throw new Error(`${kind} start: not ready (${child.exitCode === null ? "timed out" : `exit ${child.exitCode}`}):\n${stderr}`);
  }
  const cpuSeconds = treeCpuSeconds(child.pid!);
  const steps = Object.fromEntries([...stderr.matchAll(/^✔ (.+) \((\d+(?:\.\d+)?) s\)$/gm)].map((m) => [m[1]!, Number(m[2])]));
  return { start: { kind, seconds, cpuSeconds, steps, load: loadAverage() }, running };
}

/** Ctrl-C, as a developer stops it. */
async function stop(running: Running): Promise<void> {
  if (running.child.exitCode !== null || running.child.signalCode !== null) return;
  running.child.kill("SIGINT");
  const killer = setTimeout(() => running.child.kill("SIGKILL"), 60_000);
  await running.exited;
  clearTimeout(killer);
}

function report(s: Start) {
  console.log(
    `  ${s.kind.padEnd(9)} ready in ${fmt(s.seconds, 1).padStart(5)} s, ${fmt(s.cpuSeconds, 1).padStart(5)} CPU s, load ${s.load.join(" ")}`,
  );
  for (const [title, seconds] of Object.entries(s.steps)) console.log(`              ${fmt(seconds, 1).padStart(5)} s  ${title}`);
}

const startedAt = new Date().toISOString();
const machineAtStart = machineInfo();
console.log(`npm start until ready, ${runs} run(s) of: fresh clone, new chain, same chain; ${machine()}`);
const starts: Start[] = [];
for (let run = 1; run <= runs; run++) {
  const dir = path.join(os.tmpdir(), `payg-start-time-${process.pid}-${run}`);
  await freshTree(dir);
  const ports = {
    CHAIN_PORT: await freePort(),
    DEVICE_CLOUD_PORT: await freePort(),
    INDEXER_PORT: await freePort(),
    RELAYER_PORT: await freePort(),
  };
  const env = {
    ...process.env,
    ...Object.fromEntries(Object.entries(ports).map(([k, v]) => [k, String(v)])),
    DEMO_WEBHOOK_PORT: String(await freePort()),
    HARDHAT_DISABLE_TELEMETRY: "true",
    PONDER_TELEMETRY_DISABLED: "1",
    LOCAL_STACK_DIR: undefined,
    LOCAL_DEPLOYMENT_ID: undefined,
  };
  let running: Running | undefined;
  let chain: Awaited<ReturnType<typeof startChain>> | undefined;
  const forget = onInterrupt(async () => {
    if (running) await stop(running);
    await chain?.service.stop();
    await rm(dir, { recursive: true, force: true });
  });
  try {
    console.log(`\nrun ${run} (${dir})`);
    for (const kind of ["fresh", "newChain", "sameChain"] as const) {
      // The chain the later starts share: started after the fresh start, which runs a chain of its own.
      if (kind === "newChain")
        chain = await startChain({ port: ports.CHAIN_PORT, logFile: path.join(dir, ".local", "external-chain.log") });
      const result = await start(kind, dir, env);
      running = result.running;
      starts.push(result.start);
      report(result.start);
      await stop(running);
      running = undefined;
    }
  } finally {
    await chain?.service.stop();
    await rm(dir, { recursive: true, force: true });
    forget();
  }
}

const median = (kind: Kind, key: "seconds" | "cpuSeconds") =>
  percentile(
    starts.filter((s) => s.kind === kind).map((s) => s[key]),
    0.5,
  );
const label = { fresh: "fresh clone", newChain: "new chain (contracts built)", sameChain: "same chain (data kept)" };
const headlines: Headline[] = [];
const targets: Target[] = [];
console.log(`\nmedian of ${runs} run(s)`);
for (const kind of ["fresh", "newChain", "sameChain"] as const) {
  const seconds = median(kind, "seconds");
  const cpu = median(kind, "cpuSeconds");
  const limit = kind === "newChain" ? undefined : TARGETS[kind];
  console.log(
    `  ${label[kind].padEnd(28)} ${fmt(seconds, 1).padStart(5)} s  (${fmt(cpu, 1)} CPU s)${limit ? `  target <= ${limit} s` : ""}`,
  );
  headlines.push({
    label: `npm start ready, ${label[kind]}`,
    value: `${fmt(seconds, 1)} s (${fmt(cpu, 1)} CPU s; median of ${runs})`,
    ...(limit ? { target: `<= ${limit} s`, met: seconds <= limit } : {}),
  });
  if (limit) targets.push(target(`npm start ready, ${label[kind]}`, Math.round(seconds * 10) / 10, "atMost", limit, "s"));
}
const file = await writeResult("start-time", {
  startedAt,
  machine: machineAtStart,
  settings: { runs, tree: tree || null },
  starts,
  headlines,
  targets,
});
console.log(`wrote ${file}`);
process.exit(0);
