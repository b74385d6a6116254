// Benchmark: HTTP throughput of the relayer's public routes, as a ratio to a bare Hono route measured on the
// same machine in the same run. The whole system runs on loopback (startStack: chain, device cloud, indexer,
// relayer with all its workers at LOG_LEVEL=info, as in production); the bare route is @hono/node-server
// serving one fixed JSON body (the stats route's own body) from a separate child process (bench/bare-server.ts).
// autocannon (programmatic API, in a child process of its own: bench/http-load.ts) drives each route with 50
// connections for --seconds after a warm-up (--warmup before a route's first run, 1 s later), one route at a
// time, in --rounds rounds:
//
//   bare                  GET /bare on the bare server, measured at the start of each round and after each
//                         route: a route's ratio in a round is to the mean of the bare runs just before and
//                         after it, and its figure is the median of its rounds (the round with the median
//                         ratio gives its rate, latency and CPU figures; every round's ratio is reported)
//   stats                 GET /v1/public/stats (cached for STATS_CACHE_MS)
//   order-pending         GET /v1/orders/{id} of unpaid orders (with their paymentDetails): --orders of them
//                         (100), each request asking for the next, as many wallets polling their own order
//   order-paid            GET /v1/orders/{id} of paid orders (--orders of them, paid in cash), the same way
//   quote                 POST /v1/quote (a database insert per request). The route is rate-limited per client
//                         address (20/s, burst 60), so each connection comes from a loopback address of its
//                         own (127.0.1.1 ...) and is replaced by a new one (new address) after 50 requests:
//                         many clients, each within its limit. Answers other than 201 are counted.
//
// Reported per route: requests/s (2xx answers only), latency p50/p99, non-2xx and errors, the ratio to the
// bare route, the cores used during the run (the server, the load generator, this process, the whole
// machine: it is shared), and the relayer's resident size (VmRSS sampled every 100 ms: peak and steady, the
// median after the first quarter of the run).
//
//   node bench/http-throughput.ts [--db postgres|pglite|both] [--seconds 5] [--rounds 3] [--warmup 3]
//                                 [--connections 50] [--routes stats,order-pending,order-paid,quote] [--orders 100]
import { readFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import type { Result } from "autocannon";
import { repoRoot } from "../ignition/deployment-records.ts";
import { startService, waitUntil } from "../lib/processes.ts";
import { waitForOrder } from "../test/support/pay.ts";
import { type Stack, startStack } from "../test/support/stack.ts";
import {
  type Headline,
  type RssWindow,
  type Target,
  benchDatabases,
  cpuSecondsOf,
  fmt,
  machine,
  machineInfo,
  onInterrupt,
  runHttpLoad,
  option,
  sampleRss,
  target,
  writeResult,
} from "./common.ts";

const seconds = Number(option("seconds", "5"));
const warmupSeconds = Number(option("warmup", "3"));
const connections = Number(option("connections", "50"));
const orderCount = Number(option("orders", "100"));
const rounds = Number(option("rounds", "3"));
if (!Number.isInteger(rounds) || rounds < 1) throw new Error(`--rounds must be a positive integer (got ${rounds})`);
const routeNames = option("routes", "stats,order-pending,order-paid,quote")
  .split(",")
  .map((r) => r.trim());

type Route = {
  name: string;
  url: string;
  method?: string;
  body?: string;
  /** Paths to request in turn (the url's path when absent). */
  paths?: string[];
  /** Each connection from its own loopback address (rate-limited routes). */
  ownAddresses?: boolean;
  ratioTarget?: number;
};

/** Runs autocannon against `route` for `duration` seconds in a child process (bench/http-load.ts). */
async function load(route: Route, duration: number): Promise<Result> {
  const spec = {
    url: route.url,
    connections,
    duration,
    method: route.method ?? "GET",
    headers: route.body ? { "content-type": "application/json" } : {},
    body: route.body,
    timeout: 10,
    ownAddresses: route.ownAddresses ?? false,
    // A client (address) makes at most QUOTES_PER_CLIENT requests: within the limit's burst of 60.
    ...(route.ownAddresses ? { reconnectRate: QUOTES_PER_CLIENT } : {}),
    paths: route.paths,
  };
  return runHttpLoad(spec);
}

type RouteResult = {
  route: string;
  url: string;
  requestsPerSecond: number;
  latencyMs: { p50: number; p90: number; p99: number; max: number };
  ok: number;
  non2xx: number;
  errors: number;
  timeouts: number;
  statusCodes: Record<string, number>;
  ratioToBare?: number;
  /** The ratio in each round (ratioToBare is their median). */
  roundRatios?: number[];
  /** The bare route's rate in the runs just before and after this one (mean). */
  bareRequestsPerSecond?: number;
  /** Cores used during the measured run: the server measured (relayer or bare), the load generator, this
   * process (the stack's parent, reading the services' logs), and the whole machine (other users included). */
  cpu?: { serverCores: number; loadGeneratorCores: number; benchCores: number; machineBusyCores: number };
  relayerRss?: RssWindow;
};

const QUOTES_PER_CLIENT = 50;
const round2 = (n: number) => Math.round(n * 100) / 100;

/** Busy and total jiffies of all CPUs (/proc/stat). */
function machineCpu(): { busy: number; total: number } {
  const line = readFileSync("/proc/stat", "utf8").split("\n")[0]!;
  const v = line.trim().split(/\s+/).slice(1).map(Number);
  const idle = (v[3] ?? 0) + (v[4] ?? 0);
  const total = v.reduce((a, b) => a + b, 0);
  return { busy: total - idle, total };
}

function summarise(route: Route, result: Result): RouteResult {
  return {
    route: route.name,
    url: route.url,
    requestsPerSecond: Math.round(result["2xx"] / result.duration),
    latencyMs: { p50: result.latency.p50, p90: result.latency.p90, p99: result.latency.p99, max: result.latency.max },
    ok: result["2xx"],
    non2xx: result.non2xx,
    errors: result.errors,
    timeouts: result.timeouts,
    statusCodes: Object.fromEntries(Object.entries(result.statusCodeStats).map(([code, s]) => [code, s.count])),
  };
}

async function startBare(body: string) {
  let port = 0;
  const service = startService("bare-hono", process.execPath, [path.join(import.meta.dirname, "bare-server.ts")], {
    cwd: repoRoot,
    env: { BARE_BODY: body },
    onLine: (line) => {
      if (line.startsWith('{"port"')) port = (JSON.parse(line) as { port: number }).port;
    },
  });
  await waitUntil("the bare Hono server", async () => port > 0 && (await fetch(`http://127.0.0.1:${port}/bare`)).ok, {
    service,
    timeoutMs: 20_000,
    intervalMs: 50,
  });
  return { service, url: `http://127.0.0.1:${port}/bare` };
}

/** POSTs `body` as JSON, waiting out the per-address rate limits (429 with retry-after). */
async function post(stack: Stack, route: string, body: unknown, token?: string) {
  for (;;) {
    const response = await stack.api("POST", route, { body, token });
    if (response.status !== 429) return response;
    await sleep(Number(response.headers.get("retry-after") ?? "1") * 1000);
  }
}

/** `count` new orders (quote, then order) on the sample devices, round robin. */
async function newOrders(stack: Stack, count: number): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < count; i++) {
    const deviceId = stack.sample.devices[i % stack.sample.devices.length].id;
    const quote = await post(stack, "/v1/quote", { deviceId, chain: "local", token: "USDC", tier: "1h" });
    if (quote.status !== 201) throw new Error(`quote: ${quote.status} ${quote.text}`);
    const order = await post(stack, "/v1/orders", {
      deviceId,
      chain: "local",
      token: "USDC",
      amountUsd: quote.body.amountUsd,
      quoteId: quote.body.quoteId,
    });
    if (order.status !== 201) throw new Error(`order: ${order.status} ${order.text}`);
    ids.push(order.body.id);
  }
  return ids;
}

/** `pendingCount` unpaid orders and `paidCount` orders paid in cash (and indexed: status success). */
async function prepareOrders(stack: Stack, pendingCount: number, paidCount: number) {
  const pending = await newOrders(stack, pendingCount);
  const paid = await newOrders(stack, paidCount);
  for (const id of paid) {
    const cash = await post(stack, `/v1/orders/${id}/cash`, undefined, stack.sample.agentKey);
    if (cash.status !== 202) throw new Error(`cash payment refused: ${cash.status} ${cash.text}`);
  }
  for (const id of paid) await waitForOrder(stack, id, (o) => o.status === "success", 60_000);
  return { pending, paid };
}

const startedAt = new Date().toISOString();
const machineAtStart = machineInfo();
console.log(`HTTP throughput: ${connections} connections, ${seconds} s per route after ${warmupSeconds} s warm-up; ${machine()}`);
const results: Record<string, { routes: RouteResult[]; bare: RouteResult[]; relayerRssIdleMiB: number; relayerRssPeakMiB: number }> = {};
const headlines: Headline[] = [];
const targets: Target[] = [];

for (const kind of benchDatabases(["postgres", "pglite"])) {
  // The paid orders are paid in cash by the sample agent key: the cash caps are lifted (not what is measured).
  const stackStarting = startStack({
    label: `bench-http-${kind}`,
    database: kind,
    relayerEnv: { CASH_DAILY_LIMIT_USD_PER_KEY: "1000000", CASH_DAILY_LIMIT_USD_PER_TENANT: "1000000" },
  });
  const forget = onInterrupt(async () => (await stackStarting).stop());
  const stack = await stackStarting;
  let bare: Awaited<ReturnType<typeof startBare>> | undefined;
  try {
    const stats = await fetch(`${stack.relayerUrl}/v1/public/stats`);
    if (!stats.ok) throw new Error(`GET /v1/public/stats answered ${stats.status}`);
    bare = await startBare(await stats.text());
    const orderIds = await prepareOrders(stack, orderCount, orderCount);
    const quoteBody = JSON.stringify({ deviceId: stack.sample.devices[2].id, chain: "local", token: "USDC", tier: "1h" });
    const all: Route[] = [
      { name: "stats", url: `${stack.relayerUrl}/v1/public/stats`, ratioTarget: 0.5 },
      {
        name: "order-pending",
        url: `${stack.relayerUrl}/v1/orders/${orderIds.pending[0]}`,
        paths: orderIds.pending.map((id) => `/v1/orders/${id}`),
        ratioTarget: 0.25,
      },
      {
        name: "order-paid",
        url: `${stack.relayerUrl}/v1/orders/${orderIds.paid[0]}`,
        paths: orderIds.paid.map((id) => `/v1/orders/${id}`),
        ratioTarget: 0.25,
      },
      { name: "quote", url: `${stack.relayerUrl}/v1/quote`, method: "POST", body: quoteBody, ownAddresses: true },
    ];
    const routes = all.filter((r) => routeNames.includes(r.name));
    const bareRoute: Route = { name: "bare", url: bare.url };
    const relayerPid = stack.relayer.process.pid!;
    await sleep(1_000);
    const rss = sampleRss(relayerPid, 100);
    const idle = rss.now() ?? Number.NaN;

    const measure = async (route: Route, serverPid: number, warmup: number) => {
      await load(route, warmup);
      rss.begin(route.name);
      const cpu0 = { server: cpuSecondsOf(serverPid), bench: process.cpuUsage(), machine: machineCpu() };
      const raw = await load(route, seconds);
      const server = cpuSecondsOf(serverPid) - cpu0.server;
      const bench = process.cpuUsage(cpu0.bench);
      const machineUse = machineCpu();
      rss.end();
      const result = summarise(route, raw);
      const wall = raw.duration;
      result.cpu = {
        serverCores: round2(server / wall),
        loadGeneratorCores: round2((raw as Result & { loadGeneratorCpuSeconds: number }).loadGeneratorCpuSeconds / wall),
        benchCores: round2((bench.user + bench.system) / 1e6 / wall),
        machineBusyCores: round2(
          ((machineUse.busy - cpu0.machine.busy) / (machineUse.total - cpu0.machine.total)) * os.availableParallelism(),
        ),
      };
      const errors = result.non2xx + result.errors + result.timeouts;
      console.log(
        `  ${kind.padEnd(8)} ${route.name.padEnd(14)} ${fmt(result.requestsPerSecond).padStart(7)} req/s  ` +
          `p50 ${fmt(result.latencyMs.p50, 1)} ms  p99 ${fmt(result.latencyMs.p99, 1)} ms  ` +
          `CPU: server ${fmt(result.cpu.serverCores, 2)}, load generator ${fmt(result.cpu.loadGeneratorCores, 2)}, ` +
          `this process ${fmt(result.cpu.benchCores, 2)}, whole machine ${fmt(result.cpu.machineBusyCores, 2)} of ${os.availableParallelism()} cores` +
          (errors > 0
            ? `  (non-2xx ${result.non2xx}: ${JSON.stringify(result.statusCodes)}, errors ${result.errors}, timeouts ${result.timeouts})`
            : ""),
      );
      return result;
    };

    // Rounds of: the bare route, then each route with the bare route again after it. Each route's ratio in
    // a round is to the mean of the bare runs just before and just after it; its figure is the median over
    // the rounds (the machine is shared: the bare route's own rate moves by a third from one run to the next,
    // and a single pair of runs can land on either side of a target).
    const barePid = bare.service.process.pid!;
    const bareResults: RouteResult[] = [];
    const perRound: RouteResult[][] = routes.map(() => []);
    for (let round = 0; round < rounds; round++) {
      bareResults.push(await measure(bareRoute, barePid, round === 0 ? warmupSeconds : 1));
      for (const [i, route] of routes.entries()) {
        const result = await measure(route, relayerPid, round === 0 ? warmupSeconds : 1);
        const before = bareResults.at(-1)!;
        const after = await measure(bareRoute, barePid, 1);
        bareResults.push(after);
        result.bareRequestsPerSecond = Math.round((before.requestsPerSecond + after.requestsPerSecond) / 2);
        result.ratioToBare = Math.round((result.requestsPerSecond / result.bareRequestsPerSecond) * 1000) / 1000;
        perRound[i].push(result);
      }
    }
    const bareRps = bareResults.reduce((sum, b) => sum + b.requestsPerSecond, 0) / bareResults.length;
    const windows = rss.stop();
    const routeResults = perRound.map((results): RouteResult => {
      // The round with the median ratio stands for the route (its rate, latency and CPU figures); every
      // round's ratio is kept beside it.
      const median = [...results].sort((a, b) => (a.ratioToBare ?? 0) - (b.ratioToBare ?? 0))[Math.floor((results.length - 1) / 2)];
      const own = windows.filter((w) => w.label === median.route);
      return {
        ...median,
        roundRatios: results.map((r) => r.ratioToBare ?? 0),
        relayerRss: own.length === 0 ? undefined : { ...own[0], peakMiB: Math.max(...own.map((w) => w.peakMiB)) },
      };
    });
    const peak = Math.max(...windows.filter((w) => w.label !== "bare").map((w) => w.peakMiB));
    results[kind] = { routes: routeResults, bare: bareResults, relayerRssIdleMiB: idle, relayerRssPeakMiB: peak };

    console.log(
      `\n  ${kind}: bare Hono route ${fmt(bareRps)} req/s on average (${bareResults.map((b) => fmt(b.requestsPerSecond)).join(", ")})`,
    );
    console.log(`  route            req/s   bare   ratio   p50 ms   p99 ms   relayer RSS steady/peak MiB`);
    for (const r of routeResults) {
      const route = routes.find((x) => x.name === r.route)!;
      console.log(
        `  ${r.route.padEnd(14)} ${fmt(r.requestsPerSecond).padStart(7)} ${fmt(r.bareRequestsPerSecond ?? 0).padStart(7)}  ${fmt((r.ratioToBare ?? 0) * 100).padStart(4)}%  ` +
          `${fmt(r.latencyMs.p50, 1).padStart(7)}  ${fmt(r.latencyMs.p99, 1).padStart(7)}   ${fmt(r.relayerRss?.steadyMiB ?? Number.NaN)} / ${fmt(r.relayerRss?.peakMiB ?? Number.NaN)}` +
          (route.ratioTarget ? `   target >= ${route.ratioTarget * 100}%` : "") +
          (rounds > 1 ? `   rounds: ${(r.roundRatios ?? []).map((x) => `${fmt(x * 100)}%`).join(", ")}` : ""),
      );
      headlines.push({
        label: `${kind} ${r.route}`,
        value: `${fmt(r.requestsPerSecond)} req/s = ${fmt((r.ratioToBare ?? 0) * 100)}% of bare (${fmt(r.bareRequestsPerSecond ?? 0)}; median of ${rounds} rounds: ${(r.roundRatios ?? []).map((x) => `${fmt(x * 100)}%`).join(", ")}); p50 ${fmt(r.latencyMs.p50, 1)} ms, p99 ${fmt(r.latencyMs.p99, 1)} ms${r.non2xx ? `; ${r.non2xx} non-2xx` : ""}`,
        ...(route.ratioTarget ? { target: `>= ${route.ratioTarget * 100}% of bare`, met: (r.ratioToBare ?? 0) >= route.ratioTarget } : {}),
      });
      if (route.ratioTarget) targets.push(target(`${kind} ${r.route} / bare`, r.ratioToBare ?? 0, "atLeast", route.ratioTarget, "ratio"));
    }
    console.log(`  relayer RSS: ${fmt(idle)} MiB idle, ${fmt(peak)} MiB peak under load\n`);
    headlines.push({ label: `${kind} relayer RSS under HTTP load`, value: `idle ${fmt(idle)} MiB, peak ${fmt(peak)} MiB` });
  } finally {
    await bare?.service.stop();
    await stack.stop();
    forget();
  }
}
for (const t of targets) console.log(`  ${t.met ? "met   " : "MISSED"} ${t.name}: ${fmt(t.value * 100)}% (>= ${fmt(t.limit * 100)}%)`);
const file = await writeResult("http-throughput", {
  startedAt,
  machine: machineAtStart,
  settings: { connections, seconds, rounds, warmupSeconds, relayerLogLevel: "info" },
  results,
  headlines,
  targets,
});
console.log(`wrote ${file}`);
process.exit(0);
