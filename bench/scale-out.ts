// Benchmark: scale-out on PostgreSQL, with 1 and with 3 relayer processes on one schema behind the round-robin
// proxy of the scale-out test (test/support/relayer-cluster.ts: every process with the same configuration and
// its workers on; the 1-process run goes through the proxy too, so both pay the same hop). Each run starts a
// fresh system on loopback (chain, device cloud, indexer, relayers at LOG_LEVEL=info) and measures:
//
//   payments   --payments relayed payments from --wallets wallets paying at once (each one order at a time:
//              quote, order, permit, then the order's event stream, through the proxy, until it closes).
//              Payments per second end to end: payments / (the first permit's submission to the last
//              payment.succeeded on the streams); and each payment's latency from its submission to its
//              payment.succeeded (p50, p99).
//   http       autocannon (bench/http-load.ts, --connections for --seconds after --warmup) through the proxy
//              on GET /v1/public/stats and on GET /v1/orders/{id} (the paid orders in turn): requests/s
//              (2xx answers) and latency. The proxy is one Node process on the same cores: on a small
//              machine it, the load generator and the relayers share the CPU, so the figure says what this
//              machine does, not what more processes on more cores would.
//
//   node bench/scale-out.ts [--processes 1,3] [--payments 150] [--wallets 50] [--seconds 5] [--warmup 2]
//                           [--connections 50]
import type { Result } from "autocannon";
import {
  type PreparedPayment,
  type RelayerCluster,
  createPayer,
  fundWallets,
  startRelayerCluster,
  testWallets,
} from "../test/support/relayer-cluster.ts";
import {
  type Headline,
  cpuSecondsOf,
  fmt,
  machine,
  machineInfo,
  onInterrupt,
  runHttpLoad,
  option,
  summarize,
  writeResult,
} from "./common.ts";

const processCounts = option("processes", "1,3")
  .split(",")
  .map((n) => Number(n.trim()));
const paymentCount = Number(option("payments", "150"));
const walletCount = Number(option("wallets", "50"));
const seconds = Number(option("seconds", "5"));
const warmupSeconds = Number(option("warmup", "2"));
const connections = Number(option("connections", "50"));

const startedAt = new Date().toISOString();
const machineAtStart = machineInfo();
const headlines: Headline[] = [];

if (option("db", "postgres") !== "postgres") {
  // Several relayer processes need PostgreSQL (PGlite is single-process).
  console.log("scale-out: PostgreSQL only; nothing to run on the database asked for");
  await writeResult("scale-out", { startedAt, machine: machineAtStart, headlines, results: [] });
  process.exit(0);
}

/** Runs autocannon through `url` for `duration` seconds in a child process (bench/http-load.ts). */
async function load(url: string, duration: number, paths?: string[]): Promise<Result> {
  const spec = { url, connections, duration, method: "GET", timeout: 10, paths };
  return runHttpLoad(spec);
}

type PaymentRun = { payments: number; seconds: number; perSecond: number; latencyMs: ReturnType<typeof summarize> };
type HttpRun = { route: string; requestsPerSecond: number; p50: number; p99: number; non2xx: number; errors: number; relayerCores: number };

/** `paymentCount` payments from `walletCount` wallets at once, each wallet one order at a time. */
async function payments(cluster: RelayerCluster): Promise<{ run: PaymentRun; orderIds: string[] }> {
  const wallets = testWallets(walletCount);
  await fundWallets(cluster.stack, wallets, 1_000_000_000n);
  const payer = createPayer(cluster.stack, cluster.proxy.url);
  const devices = cluster.stack.sample.devices;
  const latencies: number[] = [];
  const orderIds: string[] = [];
  let firstSubmit = Number.POSITIVE_INFINITY;
  let lastSuccess = 0;
  let next = 0;
  await Promise.all(
    wallets.map(async (wallet) => {
      for (let n = next++; n < paymentCount; n = next++) {
        const payment: PreparedPayment = await payer.prepare(wallet, devices[n % devices.length].id);
        let submittedAt = 0;
        let opened: () => void = () => undefined;
        const ready = new Promise<void>((resolve) => (opened = resolve));
        const following = payer.follow(payment.orderId, {
          from: wallet.from,
          timeoutMs: 120_000,
          onEvent(event) {
            opened();
            if (event.event !== "payment.succeeded") return;
            const now = performance.now();
            latencies.push(now - submittedAt);
            lastSuccess = Math.max(lastSuccess, now);
          },
        });
        await Promise.race([ready, following]);
        submittedAt = performance.now();
        firstSubmit = Math.min(firstSubmit, submittedAt);
        await payer.submit(payment);
        await following;
        orderIds.push(payment.orderId);
      }
    }),
  );
  if (latencies.length !== paymentCount) throw new Error(`${latencies.length} of ${paymentCount} payments succeeded`);
  const wall = (lastSuccess - firstSubmit) / 1000;
  return {
    run: {
      payments: paymentCount,
      seconds: Math.round(wall * 10) / 10,
      perSecond: Math.round((paymentCount / wall) * 10) / 10,
      latencyMs: summarize(latencies),
    },
    orderIds,
  };
}

async function http(cluster: RelayerCluster, orderIds: string[]): Promise<HttpRun[]> {
  const routes = [
    { route: "GET /v1/public/stats", url: `${cluster.proxy.url}/v1/public/stats` },
    { route: "GET /v1/orders/{id}", url: `${cluster.proxy.url}/v1/orders/${orderIds[0]}`, paths: orderIds.map((id) => `/v1/orders/${id}`) },
  ];
  const runs: HttpRun[] = [];
  for (const r of routes) {
    await load(r.url, warmupSeconds, r.paths);
    const pids = cluster.members.map((m) => m.service.process.pid!);
    const cpu0 = pids.map(cpuSecondsOf);
    const result = await load(r.url, seconds, r.paths);
    const cpu = pids.reduce((sum, pid, i) => sum + (cpuSecondsOf(pid) - cpu0[i]), 0);
    runs.push({
      route: r.route,
      requestsPerSecond: Math.round(result["2xx"] / result.duration),
      p50: result.latency.p50,
      p99: result.latency.p99,
      non2xx: result.non2xx,
      errors: result.errors + result.timeouts,
      relayerCores: Math.round((cpu / result.duration) * 100) / 100,
    });
  }
  return runs;
}

console.log(
  `scale-out: ${paymentCount} relayed payments from ${walletCount} wallets, then HTTP (${connections} connections, ${seconds} s after ${warmupSeconds} s), ` +
    `with ${processCounts.join(" and ")} relayer process(es) on PostgreSQL; ${machine()}`,
);
const results: Array<{ processes: number; payments: PaymentRun; http: HttpRun[] }> = [];
for (const processes of processCounts) {
  const starting = startRelayerCluster({ label: `bench-scale-${processes}`, processes });
  const forget = onInterrupt(async () => (await starting).stop());
  const cluster = await starting;
  try {
    const { run, orderIds } = await payments(cluster);
    console.log(
      `  ${processes} process(es): ${fmt(run.perSecond, 1)} payments/s end to end (${run.payments} in ${fmt(run.seconds, 1)} s); ` +
        `submitted -> success p50 ${fmt(run.latencyMs.p50)} ms, p99 ${fmt(run.latencyMs.p99)} ms`,
    );
    const httpRuns = await http(cluster, orderIds);
    for (const h of httpRuns) {
      console.log(
        `  ${processes} process(es): ${h.route.padEnd(22)} ${fmt(h.requestsPerSecond).padStart(6)} req/s  p50 ${fmt(h.p50, 1)} ms  p99 ${fmt(h.p99, 1)} ms  ` +
          `relayers ${fmt(h.relayerCores, 2)} cores${h.non2xx + h.errors > 0 ? `  (non-2xx ${h.non2xx}, errors ${h.errors})` : ""}`,
      );
    }
    results.push({ processes, payments: run, http: httpRuns });
    headlines.push({
      label: `postgres ${processes} relayer(s) payments`,
      value: `${fmt(run.perSecond, 1)} payments/s; submitted -> success p50 ${fmt(run.latencyMs.p50)} ms, p99 ${fmt(run.latencyMs.p99)} ms`,
    });
    for (const h of httpRuns) {
      headlines.push({
        label: `postgres ${processes} relayer(s) ${h.route}`,
        value: `${fmt(h.requestsPerSecond)} req/s; p50 ${fmt(h.p50, 1)} ms, p99 ${fmt(h.p99, 1)} ms`,
      });
    }
  } finally {
    await cluster.stop();
    forget();
  }
}
const file = await writeResult("scale-out", {
  startedAt,
  machine: machineAtStart,
  settings: { paymentCount, walletCount, connections, seconds, warmupSeconds, relayerLogLevel: "info" },
  results,
  headlines,
});
console.log(`wrote ${file}`);
process.exit(0);
