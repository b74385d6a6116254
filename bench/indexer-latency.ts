// Benchmark: latency from a payment mined to its order row readable through the read path, on PGlite and
// on PostgreSQL. A local chain (automine: the node mines each transaction as it arrives), the indexer at
// its local settings (100 ms polling), cash payments one at a time at random intervals; for each, the time
// from eth_sendRawTransaction returning (the block is mined) until orderById returns the row (polled every
// 5 ms). Prints p50, p90, p99 and max.
//
//   node bench/indexer-latency.ts [--payments 250] [--db pglite|postgres|both] [--poll-ms 5]
import { setTimeout as sleep } from "node:timers/promises";
import { startIndexer } from "../lib/indexer.ts";
import { pgliteDatabase, postgresDatabase } from "../test/support/databases.ts";
import { createTestIndexerClient } from "../test/support/indexer-reads.ts";
import { startLocalChain, testLogDir } from "../test/support/local-chain.ts";
import { type Headline, type Target, machineInfo, onInterrupt, summarize, target, writeResult } from "./common.ts";
import { benchDatabases, createCashPayer, machine, option, percentile } from "./indexer-common.ts";

const payments = Number(option("payments", "250"));
const pollMs = Number(option("poll-ms", "5"));
const warmup = 10;
const logDir = testLogDir("bench");

const startedAt = new Date().toISOString();
const machineAtStart = machineInfo();
console.log(`indexer latency: mined -> order row readable; ${payments} payments; ${machine()}`);
const results: string[] = [];
const figures: Record<string, ReturnType<typeof summarize>> = {};
const headlines: Headline[] = [];
const targets: Target[] = [];
for (const kind of benchDatabases()) {
  const variant = kind === "pglite" ? pgliteDatabase("bench-latency") : postgresDatabase("bench_latency");
  const forgetDb = onInterrupt(() => variant.cleanup());
  const chainStarting = startLocalChain({ label: `latency-${kind}`, logDir });
  const forgetChain = onInterrupt(async () => (await chainStarting).stop());
  const chain = await chainStarting;
  try {
    const { service, url } = await startIndexer({
      deploymentId: chain.deploymentId,
      rpcUrl: chain.rpcUrl,
      database: variant.database,
      logFile: `${logDir}/${chain.deploymentId}.indexer.log`,
      logLevel: "warn",
    });
    const forgetIndexer = onInterrupt(() => service.stop());
    try {
      const client = createTestIndexerClient(url);
      const payer = await createCashPayer(chain);
      const latencies: number[] = [];
      for (let i = 0; i < warmup + payments; i++) {
        const { order, raw } = await payer.prepare();
        await sleep(Math.random() * 100);
        await payer.send(raw);
        const mined = performance.now();
        while ((await client.orderById(order.orderId)) === null) {
          if (performance.now() - mined > 30_000) throw new Error(`order ${order.orderId} not indexed in 30 s`);
          await sleep(pollMs);
        }
        if (i >= warmup) latencies.push(performance.now() - mined);
      }
      const line =
        `${kind.padEnd(8)} n=${latencies.length} p50=${percentile(latencies, 0.5).toFixed(0)} ms ` +
        `p90=${percentile(latencies, 0.9).toFixed(0)} ms p99=${percentile(latencies, 0.99).toFixed(0)} ms ` +
        `max=${Math.max(...latencies).toFixed(0)} ms`;
      console.log(line);
      results.push(line);
      const s = summarize(latencies);
      figures[kind] = s;
      headlines.push({
        label: `${kind} mined -> order row readable`,
        value: `p50 ${s.p50.toFixed(0)} ms, p90 ${s.p90.toFixed(0)} ms, p99 ${s.p99.toFixed(0)} ms, max ${s.max.toFixed(0)} ms (n=${s.n})`,
        target: "p50 <= 150 ms, p99 <= 500 ms",
        met: s.p50 <= 150 && s.p99 <= 500,
      });
      targets.push(
        target(`${kind} indexer latency p50`, s.p50, "atMost", 150, "ms"),
        target(`${kind} indexer latency p99`, s.p99, "atMost", 500, "ms"),
      );
    } finally {
      await service.stop();
      forgetIndexer();
    }
  } finally {
    await chain.stop();
    await variant.cleanup();
    forgetChain();
    forgetDb();
  }
}
console.log(`targets: p50 <= 150 ms, p99 <= 500 ms`);
console.log(
  `wrote ${await writeResult("indexer-latency", { startedAt, machine: machineAtStart, settings: { payments, pollMs, warmup }, results: figures, headlines, targets })}`,
);
process.exit(0);
