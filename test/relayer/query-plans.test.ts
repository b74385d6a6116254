// The relayer's reads of tables that grow with history stay flat: on a PostgreSQL database seeded with
// enough rows that the planner prefers indexes (200,000 orders over 2,000 devices, 100,000 webhook
// deliveries with their events and attempts: test/support/history-seed.ts), every statement of the revenue
// lists and overview (whose ranges of days read the per-day revenue rollups, checked to answer what the
// window's orders do, and whose upserts record a payment), the delivery log and its counts, impact and public
// stats, the split provisioner and the device-status poller is run with EXPLAIN (ANALYZE, FORMAT JSON), and its plan
// must not read a history table with a sequential scan, sort its rows, or discard more than a page's worth
// of them through a filter. The statements are the relayer's own, taken with drizzle's toSQL() (or, for the
// poller, rendered by PgDialect) from the functions that run them. The poller's update locks only
// the rows it changes: a device row another transaction holds does not hold the poll up. PostgreSQL only
// (PGlite has no planner statistics worth asserting on); the poller's statements also run on PGlite.
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { eq, type SQL, sql } from "drizzle-orm";
import { PgDialect } from "drizzle-orm/pg-core";
import pg from "pg";
import { type Database, type Db, openDatabase } from "../../relayer/src/db/client.ts";
import { migrate } from "../../relayer/src/db/migrate.ts";
import { orders, webhookEvents } from "../../relayer/src/db/schema.ts";
import { ulid } from "../../relayer/src/ids.ts";
import { createLogger } from "../../relayer/src/logger.ts";
import { splitsDue, splitsWatched } from "../../relayer/src/payments/payout-parties.ts";
import { closedOrdersPage, pendingOrdersPage } from "../../relayer/src/payments/deposit-watch.ts";
import { revenueDayUpserts } from "../../relayer/src/payments/revenue-days.ts";
import { revenueOverviewQueries } from "../../relayer/src/payments/revenue-overview.ts";
import { paidOrdersPage } from "../../relayer/src/payments/revenue-splits.ts";
import { activeDevicesQuery, regionUsageQuery, usageTotalsQuery } from "../../relayer/src/payments/stats.ts";
import { applyDeviceStates, insertFirstObservations, updateChangedStates } from "../../relayer/src/webhooks/device-status.ts";
import { deleteExpiredEvents, listEvents } from "../../relayer/src/webhooks/event-log.ts";
import { attemptsQuery, deliveryCounts, deliveryCountsQuery, listDeliveries } from "../../relayer/src/webhooks/subscriptions-store.ts";
import { pgliteDatabase, postgresDatabase, selectedDatabaseKinds } from "../support/databases.ts";
import { seedHistory, seededDeviceId } from "../support/history-seed.ts";
import { explain, planProblems, walk } from "../support/query-plan.ts";

const logger = createLogger("error");
const dialect = new PgDialect();

/** Tables whose rows grow with history (every payment, event, delivery and attempt adds some). */
const HISTORY_TABLES = new Set([
  "orders",
  "quotes",
  "order_events",
  "webhook_events",
  "webhook_deliveries",
  "webhook_attempts",
  "tenant_revenue_days",
  "device_revenue_days",
]);

const ORDERS = 200_000;
const DEVICES = 2_000;
const DELIVERIES = 100_000;
const deviceId = seededDeviceId;

const render = (statement: SQL) => dialect.sqlToQuery(statement);

describe("query plans on a database grown with history (PostgreSQL)", { skip: !selectedDatabaseKinds().includes("postgres") }, () => {
  let variant: ReturnType<typeof postgresDatabase>;
  let database: Database;
  let client: pg.Client;
  let db: Db;

  before(async () => {
    variant = postgresDatabase("query-plans");
    const { url, schema } = variant.database;
    database = await openDatabase({ kind: "postgres", url, schema }, logger);
    db = database.db;
    await migrate(database);
    client = new pg.Client({ connectionString: url, options: `-c search_path=${schema}` });
    await client.connect();
    await seedHistory(client, { orders: ORDERS, devices: DEVICES, deliveries: DELIVERIES });
  });
  after(async () => {
    await client?.end();
    await database?.close();
    await variant?.cleanup();
  });

  /** Asserts the plan of `query` has none of planProblems' faults over `tables` (default: the history tables). */
  async function assertFlat(name: string, query: { sql: string; params: unknown[] }, tables = HISTORY_TABLES) {
    const plan = await explain(client, query);
    assert.deepEqual(planProblems(plan, tables), [], `${name}:\n${query.sql}\n${JSON.stringify(plan, null, 1)}`);
    return plan;
  }

  it("the seed is what the test says", async () => {
    const { rows } = await client.query<{ orders: string; paid: string; deliveries: string; failed: string }>(`
      select (select count(*) from orders) as orders, (select count(*) from orders where status = 'success') as paid,
        (select count(*) from webhook_deliveries) as deliveries,
        (select count(*) from webhook_deliveries where subscription_id = 'whs_big' and status = 'failed') as failed`);
    assert.deepEqual(rows[0], { orders: String(ORDERS), paid: "186000", deliveries: String(DELIVERIES), failed: "10" });
  });

  it("GET /v1/revenue/splits: first page, next page, one device's, and a device's next page", async () => {
    const first = paidOrdersPage(db, "ten_a", { limit: 50 });
    await assertFlat("splits", first.toSQL());
    const page = await first;
    assert.equal(page.length, 51);
    assert.ok(page.every((o, i) => i === 0 || o.paidAt!.getTime() <= page[i - 1].paidAt!.getTime()));
    const last = page[49];
    await assertFlat("splits, cursor", paidOrdersPage(db, "ten_a", { limit: 50, cursor: { id: last.id, paidAt: last.paidAt! } }).toSQL());
    const device = paidOrdersPage(db, "ten_a", { limit: 1, deviceId: deviceId(7) });
    await assertFlat("splits, deviceId", device.toSQL());
    const [newest] = await device;
    assert.equal(newest.deviceId, deviceId(7));
    await assertFlat(
      "splits, deviceId and cursor",
      paidOrdersPage(db, "ten_a", { limit: 1, deviceId: deviceId(7), cursor: { id: newest.id, paidAt: newest.paidAt! } }).toSQL(),
    );
  });

  it("GET /v1/revenue/splits: a page 10,000 orders deep", async () => {
    const [at] = await db.select().from(orders).where(eq(orders.id, "ord_0190003"));
    assert.ok(at?.paidAt);
    await assertFlat("splits, deep cursor", paidOrdersPage(db, "ten_a", { limit: 50, cursor: { id: at.id, paidAt: at.paidAt } }).toSQL());
  });

  for (const range of ["24h", "7d", "30d"] as const) {
    it(`GET /v1/revenue/overview?range=${range}: per bucket, per device, latest splits`, async () => {
      const days = { "24h": 1, "7d": 7, "30d": 30 }[range];
      const queries = revenueOverviewQueries(db, "ten_a", range, new Date(Date.now() - days * 86_400_000));
      await assertFlat("per bucket", queries.perBucket.toSQL());
      await assertFlat("per device", queries.perDevice.toSQL());
      await assertFlat("latest", queries.latest.toSQL());
      assert.equal((await queries.latest).length, 10);
    });
  }

  it("GET /v1/revenue/overview: a range of days reads the rollups, which answer what the window's orders do", async () => {
    for (const days of [7, 30]) {
      const day = 86_400_000;
      const from = new Date(Math.floor(Date.now() / day) * day - (days - 1) * day);
      const queries = revenueOverviewQueries(db, "ten_a", days === 7 ? "7d" : "30d", from);
      const perBucket = await queries.perBucket;
      const { rows: buckets } = await client.query<{ bucket: string; orders: string; micros: string }>(
        `select (floor(extract(epoch from paid_at) / 86400) * 86400)::bigint as bucket, count(*) as orders,
           sum(amount_usd_micros) as micros
         from orders where tenant_id = 'ten_a' and status = 'success' and paid_at >= $1 group by 1 order by 1`,
        [from],
      );
      // ten_a's devices take 95 orders in 100 in turn, ten_b's the rest: a gap of hours each week, a day at most.
      assert.ok(buckets.length >= days - 1, `${days}d: ${buckets.length} days with orders`);
      const byBucket = (rows: Array<{ bucket: string; orders: string; micros: string }>) =>
        rows.map((r) => [Number(r.bucket), Number(r.orders), Number(r.micros)]).sort(([a], [b]) => a - b);
      assert.deepEqual(byBucket(perBucket), byBucket(buckets), `${days}d per bucket`);
      const { rows: devices } = await client.query<{ device_id: string; orders: string; micros: string }>(
        `select device_id, count(*) as orders, sum(amount_usd_micros) as micros
         from orders where tenant_id = 'ten_a' and status = 'success' and paid_at >= $1
         group by device_id order by sum(amount_usd_micros) desc, device_id limit 10`,
        [from],
      );
      assert.deepEqual(
        (await queries.perDevice).map((d) => [d.deviceId, Number(d.orders), Number(d.micros)]),
        devices.map((d) => [d.device_id, Number(d.orders), Number(d.micros)]),
        `${days}d per device`,
      );
    }
  });

  it("a payment recorded or taken back out changes a row of each rollup", async () => {
    const order = { tenantId: "ten_a", deviceId: deviceId(7), amountUsdMicros: 500_000 };
    for (const sign of [1, -1] as const) {
      for (const statement of revenueDayUpserts(order, new Date(), sign)) {
        await assertFlat("revenue day upsert", render(statement), new Set([...HISTORY_TABLES, "devices", "tenants"]));
      }
    }
  });

  it("GET /v1/webhooks/subscriptions/{id}/deliveries: all, ?status=failed, and their next pages; the page's attempts", async () => {
    const all = listDeliveries(db, "whs_big", { limit: 50 });
    await assertFlat("deliveries", all.toSQL());
    const page = await all;
    await assertFlat("deliveries, cursor", listDeliveries(db, "whs_big", { limit: 50, cursor: page[49].id }).toSQL());
    const failed = listDeliveries(db, "whs_big", { limit: 5, status: "failed" });
    await assertFlat("deliveries, failed", failed.toSQL());
    const failedPage = await failed;
    assert.equal(failedPage.length, 6);
    assert.ok(failedPage.every((d) => d.status === "failed"));
    await assertFlat(
      "deliveries, failed, cursor",
      listDeliveries(db, "whs_big", { limit: 5, status: "failed", cursor: failedPage[4].id }).toSQL(),
    );
    await assertFlat(
      "attempts of a page",
      attemptsQuery(
        db,
        page.map((d) => d.id),
      ).toSQL(),
    );
  });

  it("GET /v1/webhooks/subscriptions[/{id}]: the delivery counts are the subscriptions' counters, equal to a count of the log", async () => {
    await assertFlat("delivery counts", deliveryCountsQuery(db, ["whs_big", "whs_small0"]).toSQL());
    const counts = await deliveryCounts(db, ["whs_big", "whs_small0", "whs_none"]);
    const { rows } = await client.query<{ subscription_id: string; pending: number; succeeded: number; failed: number; last: Date }>(`
      select subscription_id, count(*) filter (where status = 'pending')::int as pending,
        count(*) filter (where status = 'succeeded')::int as succeeded, count(*) filter (where status = 'failed')::int as failed,
        max(updated_at) as last
      from webhook_deliveries where subscription_id in ('whs_big', 'whs_small0') group by subscription_id order by subscription_id`);
    assert.deepEqual(
      [...counts].sort(([a], [b]) => (a < b ? -1 : 1)),
      rows.map((r) => [
        r.subscription_id,
        { pending: r.pending, succeeded: r.succeeded, failed: r.failed, lastActivityAt: r.last.toISOString() },
      ]),
    );

    // The events' retention takes the deliveries it deletes out of the counts (in a transaction rolled back
    // after: the later tests read the seed as it was).
    class Rollback extends Error {}
    await assert.rejects(
      db.transaction(async (tx) => {
        const recount = async () =>
          (
            (await tx.execute(sql`
              select subscription_id, count(*) filter (where status = 'succeeded')::int as succeeded,
                count(*) filter (where status = 'failed')::int as failed
              from webhook_deliveries group by subscription_id order by subscription_id`)) as unknown as {
              rows: Array<{ subscription_id: string; succeeded: number; failed: number }>;
            }
          ).rows.map((r) => ({ ...r }));
        const before = await recount();
        assert.ok((await deleteExpiredEvents(tx as unknown as Db, new Date(Date.now() - 30 * 86_400_000))) > 0);
        const after = await recount();
        assert.notDeepEqual(after, before);
        const kept = await deliveryCounts(
          tx as unknown as Db,
          after.map((r) => r.subscription_id),
        );
        for (const r of after) {
          const counted = kept.get(r.subscription_id);
          assert.deepEqual([counted?.succeeded, counted?.failed], [r.succeeded, r.failed], r.subscription_id);
        }
        throw new Rollback();
      }),
      Rollback,
    );
  });

  it("GET /v1/events: all, one type, one family, a time range, and a page deep in the list", async () => {
    // Tenant ten_b's events as events/record.ts writes them (ULID ids whose time is created_at), one a minute
    // over two weeks, of four types; ten_a's 100k events of the seed lie beside them.
    const n = 20_000;
    const types = ["ticket.created", "device.online", "payment.succeeded", "payment.expired"];
    const start = Date.now() - n * 60_000;
    const rows = Array.from({ length: n }, (_, i) => ({
      id: `evt_${ulid(start + i * 60_000)}`,
      type: types[i % 4],
      at: new Date(start + i * 60_000),
    }));
    await client.query(
      `insert into webhook_events (id, tenant_id, type, data, created_at, dispatched_at)
       select id, 'ten_b', type, '{}'::json, at, at from unnest($1::text[], $2::text[], $3::timestamptz[]) as r(id, type, at)`,
      [rows.map((r) => r.id), rows.map((r) => r.type), rows.map((r) => r.at)],
    );
    await client.query("analyze webhook_events");
    const first = listEvents(db, "ten_b", { limit: 50 });
    await assertFlat("events", first.toSQL());
    const page = await first;
    assert.deepEqual(
      page.map((e) => e.id),
      rows
        .slice(-51)
        .map((r) => r.id)
        .reverse(),
    );
    await assertFlat("events, cursor", listEvents(db, "ten_b", { limit: 50, cursor: page[49].id }).toSQL());
    await assertFlat("events, deep cursor", listEvents(db, "ten_b", { limit: 50, cursor: rows[5_000].id }).toSQL());
    const online = listEvents(db, "ten_b", { limit: 50, type: "device.online" });
    await assertFlat("events, type", online.toSQL());
    assert.ok((await online).every((e) => e.type === "device.online"));
    const payments = listEvents(db, "ten_b", { limit: 50, family: "payment" });
    await assertFlat("events, family", payments.toSQL());
    assert.equal((await payments).length, 51);
    const from = rows[10_000].at;
    const to = rows[11_440].at;
    const range = listEvents(db, "ten_b", { limit: 50, from, to, family: "payment" });
    await assertFlat("events, time range and family", range.toSQL());
    const inRange = await range;
    assert.ok(inRange.every((e) => e.createdAt >= from && e.createdAt < to && e.type.startsWith("payment.")));
    // The newest in the range: 11,439 (a payment.expired: i % 4 = 3), the last before `to`.
    assert.equal(inRange[0].id, rows[11_439].id);
    await assertFlat("events, time range", listEvents(db, "ten_b", { limit: 50, from, to, cursor: inRange[10].id }).toSQL());
    // ten_a's events are none of ten_b's.
    assert.ok((await listEvents(db, "ten_a", { limit: 5, type: "device.online" })).length === 0);
  });

  it("GET /v1/impact and GET /v1/public/stats read the running totals, equal to the orders' aggregates", async () => {
    const since = new Date(Date.now() - 30 * 86_400_000);
    // A row per region: region_usage is read whole (a sequential scan of a few rows); nothing else is.
    const everything = new Set([...HISTORY_TABLES, "devices", "device_usage"]);
    for (const [name, query] of [
      ["public stats totals", usageTotalsQuery(db).toSQL()],
      ["impact regions", regionUsageQuery(db).toSQL()],
    ] as const) {
      const plan = await assertFlat(name, query, everything);
      assert.ok(
        [...walk(plan)].every(({ node }) => node["Relation Name"] === undefined || node["Relation Name"] === "region_usage"),
        `${name} reads region_usage only`,
      );
    }
    // A row per device active in the window (its last power-on), never their orders: device_usage grows with the
    // fleet, not with history (here every device is active, and the planner reads the table whole).
    const active = await assertFlat("impact active devices", activeDevicesQuery(db, since).toSQL());
    assert.ok(
      [...walk(active)].every(({ node }) => node["Relation Name"] === undefined || node["Relation Name"] === "device_usage"),
      "impact's active devices read device_usage only",
    );
    const { rows } = await client.query<{
      region: string;
      devices: number;
      sessions: number;
      energy: string;
      volume: string;
      active: number;
    }>(
      `select d.region, count(distinct d.id)::int as devices, count(o.powered_on_at)::int as sessions,
        coalesce(sum(o.energy_wh), 0)::text as energy,
        coalesce(sum(o.amount_usd_micros) filter (where o.status = 'success'), 0)::text as volume,
        count(distinct o.device_id) filter (where o.powered_on_at >= $1)::int as active
      from devices d left join orders o on o.device_id = d.id group by d.region order by d.region`,
      [since],
    );
    const regions = await regionUsageQuery(db);
    const activeIn = new Map((await activeDevicesQuery(db, since)).map((a) => [a.region, a.n]));
    assert.deepEqual(
      regions.map((r) => ({
        region: r.region,
        devices: r.devices,
        sessions: r.powerSessions,
        energy: String(r.energyWh),
        volume: String(r.volumeUsdMicros),
        active: activeIn.get(r.region) ?? 0,
      })),
      rows,
    );
  });

  it("the split provisioner reads the devices that need a split through a partial index", async () => {
    const plan = await assertFlat("split provisioner", splitsDue(db).toSQL(), new Set([...HISTORY_TABLES, "devices"]));
    assert.ok(
      [...walk(plan)].some(({ node }) => node["Index Name"] === "devices_split_due_idx"),
      JSON.stringify(plan, null, 1),
    );
    const due = await splitsDue(db);
    // i % 250 = 0 (no split yet: 8) or i % 333 = 0 and not i % 250 (failed: 6); pending and created ones are not due.
    assert.deepEqual(due.map((d) => d.splitStatus ?? "none").sort(), [...Array(8).fill("none"), ...Array(6).fill("failed")].sort());
  });

  it("the split provisioner reads the devices whose split's recipients it watches through a partial index", async () => {
    const plan = await assertFlat("split watch", splitsWatched(db).toSQL(), new Set([...HISTORY_TABLES, "devices"]));
    assert.ok(
      [...walk(plan)].some(({ node }) => node["Index Name"] === "devices_split_watch_idx"),
      JSON.stringify(plan, null, 1),
    );
  });

  it("the deposit watcher reads its pages of pending and of recently closed orders through partial indexes", async () => {
    const now = new Date();
    const usesIndex = (plan: Awaited<ReturnType<typeof explain>>, index: string) =>
      assert.ok(
        [...walk(plan)].some(({ node }) => node["Index Name"] === index),
        `${index}:\n${JSON.stringify(plan, null, 1)}`,
      );
    // Pending orders long expired that the expiry worker has not closed (the seed has 4,000) are never read.
    usesIndex(await assertFlat("deposit watch, pending", pendingOrdersPage(db, now, undefined).toSQL()), "orders_pending_expiry_id_idx");
    const pending = await pendingOrdersPage(db, now, undefined);
    assert.ok(pending.every((o) => o.status === "pending" && o.expiresAt > now));
    const at = { at: new Date(now.getTime() + 60_000).toISOString(), id: "ord_0000000" };
    await assertFlat("deposit watch, pending, next page", pendingOrdersPage(db, now, at).toSQL());
    const since = new Date(now.getTime() - 72 * 3_600_000);
    usesIndex(await assertFlat("deposit watch, closed", closedOrdersPage(db, since, undefined).toSQL()), "orders_closed_updated_idx");
    const closed = await closedOrdersPage(db, since, undefined);
    assert.equal(closed.length, 200);
    const last = closed.at(-1)!;
    await assertFlat("deposit watch, closed, next page", closedOrdersPage(db, since, { at: last.at, id: last.id }).toSQL());
    const next = await closedOrdersPage(db, since, { at: last.at, id: last.id });
    assert.ok(next.length > 0 && next.every((o) => o.status !== "pending" && !closed.some((c) => c.id === o.id)));
  });

  it("the device-status poller: no SELECT ... FOR UPDATE of every device, and a device row held elsewhere does not hold it up", async () => {
    const live = new Map<string, boolean>(Array.from({ length: DEVICES }, (_, i) => [deviceId(i + 1), true]));
    const first = new Date(Date.now() - 60_000);
    await assertFlat("first observations", render(insertFirstObservations(live, first)));
    assert.deepEqual(await db.transaction((tx) => applyDeviceStates(tx, live, first)), []);
    live.set(deviceId(3), false);
    await assertFlat("changed states", render(updateChangedStates(live, new Date())));

    // Another transaction holds the row of device 5, whose state does not change.
    const holder = new pg.Client({ connectionString: variant.database.url, options: `-c search_path=${variant.database.schema}` });
    await holder.connect();
    try {
      await holder.query("begin");
      await holder.query("select * from device_status where device_id = $1 for update", [deviceId(5)]);
      // Locking every device's row (what the poller did) waits for it:
      await assert.rejects(
        db.transaction(async (tx) => {
          await tx.execute(sql`set local lock_timeout = '500ms'`);
          await tx.execute(sql`select * from device_status for update`);
        }),
        (error: Error & { cause?: { code?: string } }) => (error.cause?.code ?? (error as { code?: string }).code) === "55P03",
      );
      // The poll does not: it locks device 3's row only (a minute's lock_timeout: it fails rather than hangs).
      const observedAt = new Date();
      const changes = await db.transaction(async (tx) => {
        await tx.execute(sql`set local lock_timeout = '60s'`);
        return applyDeviceStates(tx, live, observedAt);
      });
      assert.deepEqual(changes, [{ deviceId: deviceId(3), tenantId: "ten_a", online: false, previousChangeAt: first }]);
    } finally {
      await holder.query("rollback");
      await holder.end();
    }
    const recorded = await db.select().from(webhookEvents).where(eq(webhookEvents.type, "device.offline"));
    assert.equal(recorded.length, 1);
    assert.equal((recorded[0].data as { deviceId: string }).deviceId, deviceId(3));
  });
});

// The poller's statements on both databases: first observations without events, changes with theirs, a
// device the device cloud no longer lists goes offline, and an answer older than the stored state is ignored.
for (const kind of selectedDatabaseKinds()) {
  describe(`device-status poll statements (${kind})`, () => {
    const variant = kind === "pglite" ? pgliteDatabase("device-status-poll") : postgresDatabase("device-status-poll");
    let database: Database;
    before(async () => {
      database =
        variant.database.kind === "pglite"
          ? await openDatabase({ kind: "pglite", directory: variant.database.directory }, logger)
          : await openDatabase({ kind: "postgres", url: variant.database.url, schema: variant.database.schema }, logger);
      await migrate(database);
      await database.db.execute(sql`insert into tenants (id, name) values ('ten_a', 'A'), ('ten_b', 'B')`);
      await database.db.execute(sql`
        insert into devices (id, tenant_id, name, device_class, region, tiers, chain_device_id)
        select 'dev_' || lpad(i::text, 5, '0'), case when i <= 2 then 'ten_a' else 'ten_b' end, 'Device ' || i, 'charger', 'eu',
          '{}'::jsonb, '0x' || md5('c' || i)
        from generate_series(1, 3) i`);
    });
    after(async () => {
      await database?.close();
      await variant.cleanup();
    });

    it("stores first observations silently, then records changes only", async () => {
      const { db } = database;
      const t0 = new Date("2026-01-01T00:00:00.000Z");
      const t1 = new Date("2026-01-01T00:00:10.000Z");
      const t2 = new Date("2026-01-01T00:00:20.000Z");
      // Device 3 is not listed (offline); an unregistered device is ignored.
      const first = new Map([
        [deviceId(1), true],
        [deviceId(2), false],
        ["dev_unknown", true],
      ]);
      assert.deepEqual(await db.transaction((tx) => applyDeviceStates(tx, first, t0)), []);
      const stored = await db.execute(sql`select device_id, online from device_status order by device_id`);
      assert.deepEqual(
        (stored as unknown as { rows: object[] }).rows.map((row) => ({ ...row })),
        [
          { device_id: deviceId(1), online: true },
          { device_id: deviceId(2), online: false },
          { device_id: deviceId(3), online: false },
        ],
      );
      // Device 1 drops out of the list (offline), device 3 comes online; device 2 unchanged.
      const second = new Map([
        [deviceId(2), false],
        [deviceId(3), true],
      ]);
      assert.deepEqual(await db.transaction((tx) => applyDeviceStates(tx, second, t2)), [
        { deviceId: deviceId(1), tenantId: "ten_a", online: false, previousChangeAt: t0 },
        { deviceId: deviceId(3), tenantId: "ten_b", online: true, previousChangeAt: t0 },
      ]);
      // An answer read before the stored state (t1 < t2) changes nothing.
      assert.deepEqual(await db.transaction((tx) => applyDeviceStates(tx, first, t1)), []);
      const recorded = await db.select().from(webhookEvents).orderBy(webhookEvents.type);
      assert.deepEqual(
        recorded.map((e) => [e.tenantId, e.type, e.data]),
        [
          [
            "ten_a",
            "device.offline",
            { deviceId: deviceId(1), online: false, observedAt: t2.toISOString(), previousChangeAt: t0.toISOString() },
          ],
          [
            "ten_b",
            "device.online",
            { deviceId: deviceId(3), online: true, observedAt: t2.toISOString(), previousChangeAt: t0.toISOString() },
          ],
        ],
      );
    });
  });
}
