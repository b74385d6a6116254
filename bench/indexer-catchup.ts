// Benchmark: catch-up throughput. A local chain gets N cash payments (default 10,000) before any indexer
// runs; then, for each database, a fresh indexer starts and indexes them all. Each payment is two indexed
// events (the split's YieldDeposited and the router's OrderPaid). Reports events per second over
// - the backfill (Ponder's "Started backfill" to "Completed backfill" log lines: RPC fetch + indexing),
// - the whole catch-up (process spawn until every payment is readable, startup included).
//
//   node bench/indexer-catchup.ts [--payments 10000] [--per-block 1] [--buckets 16] [--db pglite|postgres|both]
//
// --per-block 1 mines one block per payment (worst case: one block to fetch per payment); larger values mine
// that many payments per block (automine off, then evm_mine), as on a busy public chain.
import { setTimeout as sleep } from "node:timers/promises";
import { START_CURSOR, createIndexerClient } from "../indexer/client.ts";
import { startIndexer } from "../lib/indexer.ts";
import { pgliteDatabase, postgresDatabase } from "../test/support/databases.ts";
import { startLocalChain, testLogDir } from "../test/support/local-chain.ts";
import { type Headline, type Target, machineInfo, onInterrupt, target, writeResult } from "./common.ts";
import { benchDatabases, createCashPayer, machine, option } from "./indexer-common.ts";

const payments = Number(option("payments", "10000"));
const perBlock = Number(option("per-block", "1"));
const buckets = option("buckets", "");
const logDir = testLogDir("bench");

console.log(`indexer catch-up: ${payments} payments, ${perBlock} per block, ${buckets || "default"} RPC buckets; ${machine()}`);
const startedAt = new Date().toISOString();
const machineAtStart = machineInfo();
const figures: Record<
  string,
  { backfillSeconds: number; backfillEventsPerSecond: number; totalSeconds: number; totalEventsPerSecond: number; readySeconds: number }
> = {};
const headlines: Headline[] = [];
const targets: Target[] = [];
const chainStarting = startLocalChain({ label: "catchup", logDir });
const forgetChain = onInterrupt(async () => (await chainStarting).stop());
const chain = await chainStarting;
try {
  // Fill the chain.
  const payer = await createCashPayer(chain);
  const sentIds = new Set<bigint>();
  const fillStart = performance.now();
  if (perBlock > 1) await chain.rpc("evm_setAutomine", [false]);
  for (let sent = 0; sent < payments;) {
    const batch = Math.min(perBlock, payments - sent);
    const prepared = await Promise.all(Array.from({ length: batch }, () => payer.prepare()));
    for (const { order } of prepared) sentIds.add(order.orderId);
    if (perBlock > 1) {
      for (const { raw } of prepared) await payer.send(raw);
      await chain.rpc("evm_mine");
    } else {
      await payer.send(prepared[0]!.raw);
    }
    sent += batch;
    if (sent % 2_000 === 0) process.stdout.write(`  filled ${sent}/${payments}\r`);
  }
  if (perBlock > 1) await chain.rpc("evm_setAutomine", [true]);
  const head = Number(await chain.rpc<string>("eth_blockNumber"));
  console.log(`chain filled in ${((performance.now() - fillStart) / 1000).toFixed(1)} s: head block ${head}`);

  for (const kind of benchDatabases()) {
    const variant = kind === "pglite" ? pgliteDatabase("bench-catchup") : postgresDatabase("bench_catchup");
    const forgetDb = onInterrupt(() => variant.cleanup());
    let backfillStart: number | undefined;
    let backfillEnd: number | undefined;
    const spawned = performance.now();
    try {
      const { service, url } = await startIndexer({
        deploymentId: chain.deploymentId,
        rpcUrl: chain.rpcUrl,
        database: variant.database,
        rpcBuckets: buckets ? Number(buckets) : undefined,
        logFile: `${logDir}/${chain.deploymentId}.${kind}.indexer.log`,
        readyTimeoutMs: 900_000,
        logLevel: process.env.BENCH_LOG_LEVEL as "trace" | undefined,
        onLine: (line) => {
          if (line.includes("Started backfill indexing")) backfillStart = performance.now();
          if (line.includes("Completed backfill indexing")) backfillEnd = performance.now();
        },
      });
      const forgetIndexer = onInterrupt(() => service.stop());
      try {
        const ready = performance.now();
        const client = createIndexerClient(url);
        while ((await client.networkStats()).payments < payments) {
          if (performance.now() - ready > 300_000) throw new Error("payments not all indexed 5 minutes after ready");
          await sleep(20);
        }
        const done = performance.now();
        const stats = await client.networkStats();
        if (stats.payments !== payments || stats.settlements !== payments) {
          throw new Error(`indexed ${stats.payments} payments and ${stats.settlements} settlements, expected ${payments}`);
        }
        // Exactly the orders sent, each once.
        let cursor = START_CURSOR;
        let rows = 0;
        for (;;) {
          const page = await client.paidOrdersAfter(cursor, 1_000);
          for (const order of page.orders) {
            if (!sentIds.has(order.orderId)) throw new Error(`indexed an order that was not sent: ${order.orderId}`);
          }
          rows += page.orders.length;
          cursor = page.cursor;
          if (page.orders.length < 1_000) break;
        }
        if (rows !== payments) throw new Error(`read ${rows} orders through the cursor, expected ${payments}`);
        const events = 2 * payments;
        const backfillS = backfillStart && backfillEnd ? (backfillEnd - backfillStart) / 1000 : Number.NaN;
        const totalS = (done - spawned) / 1000;
        console.log(
          `${kind.padEnd(8)} backfill ${backfillS.toFixed(1)} s = ${(events / backfillS).toFixed(0)} events/s ` +
            `(${(payments / backfillS).toFixed(0)} payments/s); spawn to all readable ${totalS.toFixed(1)} s = ` +
            `${(events / totalS).toFixed(0)} events/s (ready after ${((ready - spawned) / 1000).toFixed(1)} s)`,
        );
        figures[kind] = {
          backfillSeconds: Math.round(backfillS * 10) / 10,
          backfillEventsPerSecond: Math.round(events / backfillS),
          totalSeconds: Math.round(totalS * 10) / 10,
          totalEventsPerSecond: Math.round(events / totalS),
          readySeconds: Math.round((ready - spawned) / 100) / 10,
        };
        headlines.push({
          label: `${kind} backfill of ${payments} payments (${events} events)`,
          value: `${(events / backfillS).toFixed(0)} events/s (${backfillS.toFixed(1)} s); spawn to all readable ${(events / totalS).toFixed(0)} events/s`,
          ...(kind === "postgres" ? { target: ">= 500 events/s", met: events / backfillS >= 500 } : {}),
        });
        if (kind === "postgres")
          targets.push(target("postgres indexer backfill", Math.round(events / backfillS), "atLeast", 500, "events/s"));
      } finally {
        await service.stop();
        forgetIndexer();
      }
    } finally {
      await variant.cleanup();
      forgetDb();
    }
  }
  console.log(`target: >= 500 events/s on PostgreSQL`);
} finally {
  await chain.stop();
  forgetChain();
}
console.log(
  `wrote ${await writeResult("indexer-catchup", { startedAt, machine: machineAtStart, settings: { payments, perBlock, buckets: buckets || "default" }, results: figures, headlines, targets })}`,
);
process.exit(0);
