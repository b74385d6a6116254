// Benchmark: the energy sandbox's telemetry ingest, on PGlite and on PostgreSQL. The whole relayer runs as
// in production (a child process, all workers on, anchoring included) against a local chain.
//
//   1. Latency to anchored: one batch of 1,000 readings at a time on an idle relayer; the time from the
//      200 of POST /telemetry:batch until the project's evidence shows the batch's root anchored.
//   2. Ingest throughput: batches of 1,000 readings from one client per device (six sample devices, each
//      client sending its next batch when the previous one is answered), for --seconds after a warm-up;
//      accepted readings per second, and the latency of each request.
//   3. Anchoring while catching up: batches anchored per second on chain (BatchesAnchored) in the --drain seconds after
//      the ingest load stops (the Merkle trees are built on a low-priority thread, so under full ingest
//      load anchoring falls behind and catches up afterwards).
//
// Readings carry fresh timestamps (no drift flags) and increasing sequence numbers (no gaps).
//
// The machine may be shared: the CPU time the ingest itself used in the measured window (the relayer's
// threads but its low-priority Merkle thread, and its PostgreSQL backends) is reported too, per 1,000
// readings, with the throughput that CPU cost allows on this machine's cores when nothing else runs.
//
//   node bench/energy-ingest.ts [--db pglite|postgres|both] [--seconds 20] [--warmup 5] [--latency-samples 15]
//                               [--drain 20] [--batch 1000]
import { readdirSync, readFileSync, readlinkSync } from "node:fs";
import os from "node:os";
import { setTimeout as sleep } from "node:timers/promises";
import pg from "pg";
import { createPublicClient, http, parseAbiItem } from "viem";
import { startStack, type Stack } from "../test/support/stack.ts";
import { type Headline, type Target, machineInfo, onInterrupt, sampleRss, target, writeResult } from "./common.ts";
import { benchDatabases, machine, option, percentile } from "./indexer-common.ts";

const seconds = Number(option("seconds", "20"));
const warmupSeconds = Number(option("warmup", "5"));
const latencySamples = Number(option("latency-samples", "15"));
const drainSeconds = Number(option("drain", "20"));
const batchSize = Number(option("batch", "1000"));

const DEVICES = [
  { id: "mtr-kibera-001", sequence: 4320, cumulative: 18_544_000, epoch: 1 },
  { id: "mtr-kibera-002", sequence: 4320, cumulative: 17_980_250, epoch: 1 },
  { id: "mtr-kibera-004", sequence: 980, cumulative: 2_402_000, epoch: 2 },
  { id: "mtr-yaba-001", sequence: 2016, cumulative: 6_210_000, epoch: 1 },
  { id: "mtr-yaba-003", sequence: 1440, cumulative: 3_980_000, epoch: 1 },
  { id: "mtr-kariakoo-001", sequence: 672, cumulative: 1_612_800, epoch: 1 },
];

type Meter = { id: string; sequence: number; cumulative: number; epoch: number };

/** The JSON body of the meter's next batch: readings 1 ms apart ending now, 1 Wh each. */
function nextBody(meter: Meter, count: number): string {
  const end = Date.now();
  const readings = new Array(count);
  for (let i = 0; i < count; i++) {
    meter.sequence += 1;
    meter.cumulative += 1;
    readings[i] = {
      device_ts: new Date(end - count + i).toISOString(),
      energy_wh_cumulative: meter.cumulative,
      meter_epoch: meter.epoch,
      sequence_number: meter.sequence,
      reading_id: `${meter.id}-${meter.sequence}`,
      measurement_quality: "good",
      active_power_w: 3600,
    };
  }
  return JSON.stringify({ device_id: meter.id, readings });
}

async function token(stack: Stack): Promise<string> {
  const { clientId, clientSecret } = stack.sample.energyClient;
  const response = await fetch(`${stack.relayerUrl}/energy/v1/auth/token`, {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams({ grant_type: "client_credentials", client_id: clientId, client_secret: clientSecret }),
  });
  return ((await response.json()) as { access_token: string }).access_token;
}

async function post(stack: Stack, accessToken: string, body: string) {
  const response = await fetch(`${stack.relayerUrl}/energy/v1/telemetry:batch`, {
    method: "POST",
    headers: { authorization: `Bearer ${accessToken}`, "content-type": "application/json" },
    body,
  });
  const result = (await response.json()) as { accepted?: number; rejected?: number; error?: { svc_code: string } };
  if (response.status !== 200 || result.rejected !== 0) {
    throw new Error(`POST /telemetry:batch answered ${response.status}: ${JSON.stringify(result).slice(0, 300)}`);
  }
  return result.accepted ?? 0;
}

async function energyEvidence(stack: Stack, accessToken: string, ref: string) {
  const response = await fetch(`${stack.relayerUrl}/energy/v1/evidence/${ref}`, { headers: { authorization: `Bearer ${accessToken}` } });
  const body = (await response.json()) as { clusters: { energy_evidence: { merkle_root: string; anchor: { status: string } } } };
  return body.clusters.energy_evidence;
}

const fmt = (n: number) => Math.round(n).toLocaleString("en-US");
const TICKS_PER_SECOND = 100;

/** CPU seconds (user + system) of a process's threads, optionally leaving out those at a nice value of 19. */
function cpuSeconds(pid: number, opts: { skipLowPriority?: boolean } = {}): number {
  let ticks = 0;
  let tids: string[];
  try {
    tids = readdirSync(`/proc/${pid}/task`);
  } catch {
    return 0;
  }
  for (const tid of tids) {
    try {
      const stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, "utf8");
      const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      if (opts.skipLowPriority && Number(fields[16]) === 19) continue;
      ticks += Number(fields[11]) + Number(fields[12]);
    } catch {
      // the thread ended
    }
  }
  return ticks / TICKS_PER_SECOND;
}

/** The local TCP ports of `pid`'s connections to port 5432 (from /proc: its socket inodes, then /proc/net). */
function postgresClientPorts(pid: number): number[] {
  const inodes = new Set<string>();
  for (const fd of readdirSync(`/proc/${pid}/fd`)) {
    try {
      const match = /^socket:\[(\d+)\]$/.exec(readlinkSync(`/proc/${pid}/fd/${fd}`));
      if (match) inodes.add(match[1]);
    } catch {
      // closed meanwhile
    }
  }
  const ports: number[] = [];
  for (const table of ["tcp", "tcp6"]) {
    let text = "";
    try {
      text = readFileSync(`/proc/${pid}/net/${table}`, "utf8");
    } catch {
      continue;
    }
    for (const line of text.split("\n").slice(1)) {
      const cols = line.trim().split(/\s+/);
      if (cols.length < 10 || !inodes.has(cols[9])) continue;
      const local = Number.parseInt(cols[1].split(":")[1], 16);
      const remote = Number.parseInt(cols[2].split(":")[1], 16);
      if (remote === 5432) ports.push(local);
    }
  }
  return ports;
}

/** The PostgreSQL backends serving the relayer process (PostgreSQL on this machine only). */
async function relayerBackends(stack: Stack): Promise<number[]> {
  const db = stack.relayerOptions.database;
  if (db.kind !== "postgres") return [];
  const ports = postgresClientPorts(stack.relayer.process.pid!);
  const client = new pg.Client({ connectionString: db.url });
  await client.connect();
  try {
    const { rows } = await client.query<{ pid: number }>("select pid from pg_stat_activity where client_port = any($1::int[])", [ports]);
    return rows.map((r) => r.pid);
  } finally {
    await client.end();
  }
}

console.log(
  `energy sandbox ingest: batches of ${batchSize} readings; ${machine()}; os.availableParallelism() = ${os.availableParallelism()}`,
);
const summary: string[] = [];
const startedAt = new Date().toISOString();
const machineAtStart = machineInfo();
const figures: Record<string, Record<string, unknown>> = {};
const headlines: Headline[] = [];
const targets: Target[] = [];
for (const kind of benchDatabases()) {
  const stackStarting = startStack({
    label: `bench-energy-${kind}`,
    database: kind,
    indexer: false,
    // The benchmark measures ingest, not the per-client rate limit: one client sends every batch.
    relayerEnv: { LOG_LEVEL: "warn", ENERGY_INGEST_BURST: "100000", ENERGY_INGEST_PER_SECOND: "100000" },
  });
  const forget = onInterrupt(async () => (await stackStarting).stop());
  const stack = await stackStarting;
  try {
    const accessToken = await token(stack);
    const meters: Meter[] = DEVICES.map((d) => ({ ...d }));
    const chain = createPublicClient({ transport: http(stack.chain.rpcUrl) });
    const anchorAddress = stack.chain.record.contracts.TelemetryAnchor!.address;
    const batchesAnchored = parseAbiItem("event BatchesAnchored(bytes32 indexed batchesRoot, uint32 batches)");

    // 1. Latency to anchored, one batch at a time (Kariakoo is the only device of its project).
    const kariakoo = meters.find((m) => m.id === "mtr-kariakoo-001")!;
    const toAnchored: number[] = [];
    let previousRoot = (await energyEvidence(stack, accessToken, "ev_kariakoo_2026_02")).merkle_root;
    for (let i = 0; i < latencySamples + 2; i++) {
      await post(stack, accessToken, nextBody(kariakoo, batchSize));
      const answered = performance.now();
      for (;;) {
        const e = await energyEvidence(stack, accessToken, "ev_kariakoo_2026_02");
        if (e.merkle_root !== previousRoot && e.anchor.status === "anchored") {
          previousRoot = e.merkle_root;
          break;
        }
        if (e.merkle_root !== previousRoot && e.anchor.status === "failed") throw new Error("anchoring failed");
        if (performance.now() - answered > 60_000) throw new Error("not anchored within 60 s");
        await sleep(10);
      }
      if (i >= 2) toAnchored.push(performance.now() - answered); // the first two warm the Merkle thread up
      await sleep(200);
    }
    const latencyLine =
      `${kind.padEnd(8)} latency to anchored (idle, ${batchSize} readings): p50 ${fmt(percentile(toAnchored, 0.5))} ms, ` +
      `p90 ${fmt(percentile(toAnchored, 0.9))} ms, max ${fmt(Math.max(...toAnchored))} ms (n=${toAnchored.length})`;
    console.log(latencyLine);

    // 2. Ingest throughput.
    let measuring = false;
    let stop = false;
    let accepted = 0;
    let batches = 0;
    const requestMs: number[] = [];
    const clientCpuStart = process.cpuUsage();
    const clients = meters.map(async (meter) => {
      while (!stop) {
        const body = nextBody(meter, batchSize);
        const started = performance.now();
        const n = await post(stack, accessToken, body);
        if (measuring && !stop) {
          accepted += n;
          batches += 1;
          requestMs.push(performance.now() - started);
        }
      }
    });
    await sleep(warmupSeconds * 1000);
    const relayerPid = stack.relayer.process.pid!;
    const backends = await relayerBackends(stack);
    const cpuAt = () => ({
      relayer: cpuSeconds(relayerPid, { skipLowPriority: true }),
      postgres: backends.reduce((sum, pid) => sum + cpuSeconds(pid), 0),
    });
    measuring = true;
    const rss = sampleRss(relayerPid, 100);
    rss.begin("ingest");
    const startBlock = await chain.getBlockNumber();
    const cpuStart = cpuAt();
    const started = performance.now();
    await sleep(seconds * 1000);
    const elapsed = (performance.now() - started) / 1000;
    const measured = accepted;
    const cpuEnd = cpuAt();
    rss.end();
    const [ingestRss] = rss.stop();
    stop = true;
    await Promise.all(clients);
    const clientCpu = process.cpuUsage(clientCpuStart);
    const perSecond = measured / elapsed;
    const relayerCpu = cpuEnd.relayer - cpuStart.relayer;
    const postgresCpu = cpuEnd.postgres - cpuStart.postgres;
    const perThousand = ((relayerCpu + postgresCpu) / measured) * 1000;
    // With nothing else running: all cores, but the relayer's event loop is one thread.
    const idleCapacity = Math.min(os.availableParallelism() / (perThousand / 1000), 1 / (relayerCpu / measured));
    const throughputLine =
      `${kind.padEnd(8)} ingest: ${fmt(perSecond)} readings/s (${fmt(batches / elapsed)} batches/s, ${meters.length} concurrent clients, ` +
      `${fmt(measured)} readings in ${elapsed.toFixed(1)} s); request p50 ${fmt(percentile(requestMs, 0.5))} ms, ` +
      `p99 ${fmt(percentile(requestMs, 0.99))} ms; bench client CPU ${(((clientCpu.user + clientCpu.system) / 1e6 / (elapsed + warmupSeconds)) * 100).toFixed(0)}% of a core`;
    const cpuLine =
      `${kind.padEnd(8)} ingest CPU: relayer ${((relayerCpu / elapsed) * 100).toFixed(0)}% of a core` +
      (kind === "postgres" ? `, PostgreSQL backends ${((postgresCpu / elapsed) * 100).toFixed(0)}%` : " (PGlite runs inside it)") +
      `; ${(perThousand * 1000).toFixed(1)} ms CPU per 1,000 readings -> about ${fmt(idleCapacity)} readings/s with ${os.availableParallelism()} idle cores`;
    console.log(throughputLine);
    console.log(cpuLine);

    // 3. Anchoring while catching up.
    // Batches, not events: one anchor transaction (one BatchesAnchored) anchors every batch waiting.
    const countAnchored = async (from: bigint) =>
      (await chain.getLogs({ address: anchorAddress, event: batchesAnchored, fromBlock: from, toBlock: "latest" })).reduce(
        (sum, log) => sum + (log.args.batches ?? 0),
        0,
      );
    const anchoredDuringIngest = await countAnchored(startBlock);
    const drainStart = await chain.getBlockNumber();
    await sleep(drainSeconds * 1000);
    const drained = await countAnchored(drainStart + 1n);
    const drainLine =
      `${kind.padEnd(8)} anchoring: ${anchoredDuringIngest} batches anchored during the ${elapsed.toFixed(0)} s of ingest ` +
      `(${fmt(batches)} ingested); ${(drained / drainSeconds).toFixed(1)} batches/s (${fmt((drained * batchSize) / drainSeconds)} readings/s) ` +
      `while catching up`;
    console.log(drainLine);
    const rssLine = `${kind.padEnd(8)} relayer RSS during ingest: steady ${fmt(ingestRss.steadyMiB)} MiB, peak ${fmt(ingestRss.peakMiB)} MiB`;
    console.log(rssLine);
    summary.push(latencyLine, throughputLine, cpuLine, drainLine, rssLine);
    figures[kind] = {
      latencyToAnchoredMs: {
        p50: Math.round(percentile(toAnchored, 0.5)),
        p90: Math.round(percentile(toAnchored, 0.9)),
        max: Math.round(Math.max(...toAnchored)),
        n: toAnchored.length,
      },
      readingsPerSecond: Math.round(perSecond),
      batchesPerSecond: Math.round((batches / elapsed) * 10) / 10,
      requestMs: { p50: Math.round(percentile(requestMs, 0.5)), p99: Math.round(percentile(requestMs, 0.99)) },
      cpu: {
        relayerCores: Math.round((relayerCpu / elapsed) * 100) / 100,
        postgresCores: Math.round((postgresCpu / elapsed) * 100) / 100,
        msPer1000Readings: Math.round(perThousand * 10000) / 10,
        idleCapacityReadingsPerSecond: Math.round(idleCapacity),
      },
      anchoring: { anchoredDuringIngest: anchoredDuringIngest, catchUpBatchesPerSecond: Math.round((drained / drainSeconds) * 10) / 10 },
      relayerRss: ingestRss,
    };
    headlines.push({
      label: `${kind} telemetry ingest (${batchSize}-reading batches)`,
      value: `${fmt(perSecond)} readings/s; request p50 ${fmt(percentile(requestMs, 0.5))} ms, p99 ${fmt(percentile(requestMs, 0.99))} ms; ${(perThousand * 1000).toFixed(1)} ms CPU per 1,000 readings`,
      ...(kind === "postgres" ? { target: ">= 50,000 readings/s", met: perSecond >= 50_000 } : {}),
    });
    headlines.push({
      label: `${kind} batch latency to anchored (idle)`,
      value: `p50 ${fmt(percentile(toAnchored, 0.5))} ms, p90 ${fmt(percentile(toAnchored, 0.9))} ms`,
    });
    headlines.push({
      label: `${kind} relayer RSS during ingest`,
      value: `steady ${fmt(ingestRss.steadyMiB)} MiB, peak ${fmt(ingestRss.peakMiB)} MiB`,
    });
    if (kind === "postgres") targets.push(target("postgres telemetry ingest", Math.round(perSecond), "atLeast", 50_000, "readings/s"));
  } finally {
    await stack.stop();
    forget();
  }
}
console.log("\nsummary");
for (const line of summary) console.log(`  ${line}`);
console.log("target: at least 50,000 readings/s on PostgreSQL");
console.log(
  `wrote ${await writeResult("energy-ingest", { startedAt, machine: machineAtStart, settings: { seconds, warmupSeconds, latencySamples, drainSeconds, batchSize, relayerLogLevel: "warn" }, results: figures, headlines, targets })}`,
);
process.exit(0);
