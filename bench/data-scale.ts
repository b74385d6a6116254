// Database time of each list and statistics route and of each periodic worker as history grows: a PostgreSQL
// schema is seeded set-based (test/support/history-seed.ts: 2,000 devices, N orders and their quotes, N/2
// webhook events with a delivery and an attempt each, the running totals as the migration backfills them)
// at 10k, 100k and 1M orders, all seeded first, each in a schema of its own; every statement the route or
// worker issues (the relayer's own, from the functions that run them, as test/relayer/query-plans.test.ts
// takes them) then runs `--runs` times on each size in turn after two warm-up runs. A statement's database
// time is PostgreSQL's planning plus execution time (EXPLAIN (ANALYZE, TIMING OFF)), its median over the runs;
// a route's time is the sum of its statements'. Printed as a table with the growth from the smallest to the
// largest size. The revenue overview's 24-hour range aggregates the orders paid in its window (the same
// orders at every size here); its ranges of days read the per-day revenue rollups (a row per day, and per
// device and day), whatever the window's orders.
//
//   npm run bench -- --only data-scale              10k, 100k and 1M orders (seeding 1M takes minutes)
//   npm run bench -- --only data-scale --quick      10k and 100k
//   node bench/data-scale.ts --sizes 10000,50000 --runs 15
//
// Targets (at the largest size): no route's database time grows more than 1.5x from the smallest size,
// and each is within 20 ms. Writes bench/results/data-scale.json (like every benchmark; bench/results/ is not
// tracked).
import { performance } from "node:perf_hooks";
import { PgDialect } from "drizzle-orm/pg-core";
import type { SQL } from "drizzle-orm";
import pg from "pg";
import { type Db, openDatabase } from "../relayer/src/db/client.ts";
import { migrate } from "../relayer/src/db/migrate.ts";
import { createLogger } from "../relayer/src/logger.ts";
import { splitsDue } from "../relayer/src/payments/payout-parties.ts";
import { revenueOverviewQueries } from "../relayer/src/payments/revenue-overview.ts";
import { paidOrdersPage } from "../relayer/src/payments/revenue-splits.ts";
import { activeDevicesQuery, onlineDevicesQuery, regionUsageQuery, usageTotalsQuery } from "../relayer/src/payments/stats.ts";
import { applyDeviceStates, insertFirstObservations, updateChangedStates } from "../relayer/src/webhooks/device-status.ts";
import { attemptsQuery, deliveryCountsQuery, listDeliveries } from "../relayer/src/webhooks/subscriptions-store.ts";
import { postgresDatabase } from "../test/support/databases.ts";
import { seedHistory, seededDeviceId } from "../test/support/history-seed.ts";
import { type Headline, type Target, flag, machine, machineInfo, onInterrupt, option, percentile, target, writeResult } from "./common.ts";

const quick = flag("quick");
const sizes = option("sizes", quick ? "10000,100000" : "10000,100000,1000000")
  .split(",")
  .map((s) => Number(s.trim()))
  .filter((n) => Number.isInteger(n) && n > 0);
const runs = Number(option("runs", "25"));
const DEVICES = Number(option("devices", "2000"));
const MAX_GROWTH = 1.5;
const MAX_MS = 20;
if (sizes.length < 2) throw new Error("--sizes needs at least two sizes, e.g. 10000,100000");

const logger = createLogger("error");
const dialect = new PgDialect();
type Statement = { sql: string; params: unknown[] };
const rendered = (statement: SQL): Statement => dialect.sqlToQuery(statement);

/** Each route or worker and its statements, built against a database seeded with `orders` orders. */
async function routes(db: Db, client: pg.Client, orders: number): Promise<Array<{ name: string; statements: Statement[] }>> {
  // A paid order in the middle of the history (i % 20 <> 0 and i % 50 <> 1: paid), as a deep page's cursor.
  let middle = Math.floor(orders / 2);
  while (middle % 20 === 0 || middle % 50 === 1) middle++;
  const { rows } = await client.query<{ id: string; paid_at: Date }>("select id, paid_at from orders where id = $1", [
    `ord_${String(middle).padStart(7, "0")}`,
  ]);
  const deep = { id: rows[0]!.id, paidAt: rows[0]!.paid_at };
  const failedPage = await listDeliveries(db, "whs_big", { limit: 5, status: "failed" });
  const page = await listDeliveries(db, "whs_big", { limit: 50 });
  const online = Array.from({ length: DEVICES }, (_, i) => seededDeviceId(i + 1));
  const live = new Map(online.map((id) => [id, true]));
  // The poller's steady state: every device observed once, nothing changed since.
  await db.transaction((tx) => applyDeviceStates(tx, live, new Date(Date.now() - 60_000)));
  return [
    { name: "GET /v1/revenue/splits", statements: [paidOrdersPage(db, "ten_a", { limit: 50 }).toSQL()] },
    { name: "GET /v1/revenue/splits (deep cursor)", statements: [paidOrdersPage(db, "ten_a", { limit: 50, cursor: deep }).toSQL()] },
    // A page of 4: a device has 5 orders at 10k, so every size answers a full page.
    {
      name: "GET /v1/revenue/splits?deviceId&limit=4",
      statements: [paidOrdersPage(db, "ten_a", { limit: 4, deviceId: seededDeviceId(7) }).toSQL()],
    },
    ...(["24h", "30d"] as const).map((range) => {
      const days = range === "24h" ? 1 : 30;
      const overview = revenueOverviewQueries(db, "ten_a", range, new Date(Date.now() - days * 86_400_000));
      return {
        name: `GET /v1/revenue/overview?range=${range}`,
        statements: [overview.perBucket.toSQL(), overview.perDevice.toSQL(), overview.latest.toSQL()],
      };
    }),
    {
      name: "GET /v1/webhooks/subscriptions",
      statements: [deliveryCountsQuery(db, ["whs_big", "whs_small0", "whs_small1", "whs_small2"]).toSQL()],
    },
    {
      name: "GET .../deliveries",
      statements: [
        listDeliveries(db, "whs_big", { limit: 50 }).toSQL(),
        attemptsQuery(
          db,
          page.map((d) => d.id),
        ).toSQL(),
      ],
    },
    {
      name: "GET .../deliveries?status=failed (+cursor)",
      statements: [
        listDeliveries(db, "whs_big", { limit: 5, status: "failed" }).toSQL(),
        listDeliveries(db, "whs_big", { limit: 5, status: "failed", cursor: failedPage[4]!.id }).toSQL(),
      ],
    },
    {
      name: "GET /v1/impact",
      statements: [regionUsageQuery(db).toSQL(), activeDevicesQuery(db, new Date(Date.now() - 30 * 86_400_000)).toSQL()],
    },
    { name: "GET /v1/public/stats", statements: [usageTotalsQuery(db).toSQL(), onlineDevicesQuery(db, online).toSQL()] },
    { name: "worker: split provisioner", statements: [splitsDue(db).toSQL()] },
    {
      name: "worker: device-status poll",
      statements: [rendered(insertFirstObservations(live, new Date())), rendered(updateChangedStates(live, new Date()))],
    },
  ];
}

/** The database's own time for `statement` in milliseconds: planning plus execution, as EXPLAIN (ANALYZE,
 * TIMING OFF) reports them (no per-node clock reads; the rows are produced but not sent). */
async function databaseTime(client: pg.Client, statement: Statement): Promise<number> {
  const { rows } = await client.query<{ "QUERY PLAN": Array<{ "Planning Time": number; "Execution Time": number }> }>(
    `explain (analyze, timing off, summary on, format json) ${statement.sql}`,
    statement.params,
  );
  const [plan] = rows[0]!["QUERY PLAN"];
  return plan!["Planning Time"] + plan!["Execution Time"];
}

type Seeded = {
  orders: number;
  seedSeconds: number;
  client: pg.Client;
  routes: Array<{ name: string; statements: Statement[] }>;
  close: () => Promise<void>;
};
const seeded: Seeded[] = [];
type Measured = { orders: number; seedSeconds: number; routes: Record<string, number> };
const measured: Measured[] = [];
const startedAt = new Date().toISOString();
console.log(`data-scale: ${machine()}`);
console.log(`sizes ${sizes.join(", ")} orders, ${DEVICES} devices, ${runs} runs per statement and size (median)`);

try {
  for (const orders of sizes) {
    const variant = postgresDatabase(`bench_scale_${orders}`);
    const stop = onInterrupt(() => variant.cleanup());
    const { url, schema } = variant.database;
    const database = await openDatabase({ kind: "postgres", url, schema }, logger);
    const client = new pg.Client({ connectionString: url, options: `-c search_path=${schema}` });
    const close = async () => {
      await client.end().catch(() => undefined);
      await database.close();
      await variant.cleanup();
      stop();
    };
    try {
      await migrate(database);
      await client.connect();
      const started = performance.now();
      await seedHistory(client, { orders, devices: DEVICES, deliveries: Math.floor(orders / 2) });
      const seedSeconds = Math.round((performance.now() - started) / 100) / 10;
      console.log(`${orders.toLocaleString("en")} orders seeded in ${seedSeconds} s`);
      seeded.push({ orders, seedSeconds, client, routes: await routes(database.db, client, orders), close });
    } catch (error) {
      await close();
      throw error;
    }
  }

  // Every statement runs on every size in turn, run after run: a change of the shared machine's speed during the
  // measurement touches every size alike, and the growth ratio compares like with like.
  const names = seeded[0]!.routes.map((r) => r.name);
  for (const [index, name] of names.entries()) {
    const totals = new Map<number, number>(seeded.map((s) => [s.orders, 0]));
    for (let i = 0; i < seeded[0]!.routes[index]!.statements.length; i++) {
      const times = new Map<number, number[]>(seeded.map((s) => [s.orders, []]));
      for (let run = -2; run < runs; run++) {
        for (const s of seeded) {
          const ms = await databaseTime(s.client, s.routes[index]!.statements[i]!);
          if (run >= 0) times.get(s.orders)!.push(ms); // two warm-up runs
        }
      }
      for (const s of seeded) totals.set(s.orders, totals.get(s.orders)! + percentile(times.get(s.orders)!, 0.5));
    }
    for (const s of seeded) {
      const entry = measured.find((m) => m.orders === s.orders) ?? { orders: s.orders, seedSeconds: s.seedSeconds, routes: {} };
      entry.routes[name] = Math.round(totals.get(s.orders)! * 100) / 100;
      if (!measured.includes(entry)) measured.push(entry);
    }
    console.log(`  ${name.padEnd(44)} ${seeded.map((s) => totals.get(s.orders)!.toFixed(2).padStart(8)).join(" ")} ms`);
  }
} finally {
  for (const s of seeded) await s.close();
}

const first = measured[0]!;
const last = measured[measured.length - 1]!;
const label = (n: number) => (n >= 1_000_000 ? `${n / 1_000_000}M` : n >= 1_000 ? `${n / 1_000}k` : String(n));
const names = Object.keys(first.routes);
const width = Math.max(...names.map((n) => n.length));
const growthLabel = `${label(first.orders)}->${label(last.orders)}`;
console.log(`\ndatabase time per route, median ms (PostgreSQL)`);
console.log(`${"route".padEnd(width)}  ${measured.map((m) => label(m.orders).padStart(8)).join("  ")}  ${growthLabel.padStart(10)}`);
const headlines: Headline[] = [];
const targets: Target[] = [];
for (const name of names) {
  const growth = last.routes[name]! / Math.max(first.routes[name]!, 0.01);
  console.log(
    `${name.padEnd(width)}  ${measured.map((m) => m.routes[name]!.toFixed(2).padStart(8)).join("  ")}  ${`${growth.toFixed(2)}x`.padStart(10)}`,
  );
  const grows = target(`data-scale ${name}: growth ${growthLabel}`, Math.round(growth * 100) / 100, "atMost", MAX_GROWTH, "x");
  const within = target(`data-scale ${name}: ms at ${label(last.orders)}`, last.routes[name]!, "atMost", MAX_MS, "ms");
  targets.push(grows, within);
  headlines.push({
    label: name,
    value: `${last.routes[name]!.toFixed(2)} ms at ${label(last.orders)}, ${growth.toFixed(2)}x from ${label(first.orders)}`,
    target: `<= ${MAX_MS} ms, <= ${MAX_GROWTH}x`,
    met: grows.met && within.met,
  });
}
const missed = targets.filter((t) => !t.met);
console.log(
  `\ntargets: ${targets.length - missed.length} of ${targets.length} met${missed.length ? `; missed: ${missed.map((t) => t.name).join("; ")}` : ""}`,
);
const file = await writeResult("data-scale", {
  startedAt,
  machine: machineInfo(),
  devices: DEVICES,
  runs,
  sizes: measured,
  headlines,
  targets,
});
console.log(`wrote ${file}`);
