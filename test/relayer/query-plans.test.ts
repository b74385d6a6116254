// The relayer's reads of tables that grow with history stay flat: on a PostgreSQL database seeded with
// enough rows that the planner prefers indexes (200,000 orders over 2,000 devices, 100,000 webhook
// deliveries with their events and attempts), every statement of the revenue lists, the delivery log, the
// split provisioner and the device-status poller is run with EXPLAIN (ANALYZE, FORMAT JSON), and its plan
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
import { events, orders } from "../../relayer/src/db/schema.ts";
import { createLogger } from "../../relayer/src/logger.ts";
import { splitsDue, splitsWatched } from "../../relayer/src/payments/payout-parties.ts";
import { revenueOverviewQueries } from "../../relayer/src/payments/revenue-overview.ts";
import { paidOrdersPage } from "../../relayer/src/payments/revenue-splits.ts";
import { applyDeviceStates, insertFirstObservations, updateChangedStates } from "../../relayer/src/webhooks/device-status.ts";
import { attemptsQuery, deliveryCountsQuery, listDeliveries } from "../../relayer/src/webhooks/subscriptions-store.ts";
import { pgliteDatabase, postgresDatabase, selectedDatabaseKinds } from "../support/databases.ts";

const logger = createLogger("error");
const dialect = new PgDialect();

/** Tables whose rows grow with history (every payment, event, delivery and attempt adds some). */
const HISTORY_TABLES = new Set(["orders", "quotes", "order_events", "events", "webhook_deliveries", "webhook_attempts"]);
/** More rows than this removed by a filter of a scan means the index does not match the statement. */
const MAX_ROWS_FILTERED = 1_000;

const ORDERS = 200_000;
const DEVICES = 2_000;
const DELIVERIES = 100_000;

type PlanNode = {
  "Node Type": string;
  "Relation Name"?: string;
  "Index Name"?: string;
  "Rows Removed by Filter"?: number;
  "Actual Loops"?: number;
  Plans?: PlanNode[];
};

/** Every node of the plan, depth first, each with the nodes above it. */
function* walk(node: PlanNode, above: PlanNode[] = []): Generator<{ node: PlanNode; above: PlanNode[] }> {
  yield { node, above };
  for (const child of node.Plans ?? []) yield* walk(child, [...above, node]);
}

const isSort = (node: PlanNode) => node["Node Type"] === "Sort" || node["Node Type"] === "Incremental Sort";

/** What is wrong with the plan: a sequential scan of a table of `tables`, a sort of its rows (not of
 * aggregated groups), a filter discarding more than MAX_ROWS_FILTERED of them, or rows locked by a SELECT
 * (LockRows). */
function planProblems(plan: PlanNode, tables: Set<string>): string[] {
  const problems: string[] = [];
  for (const { node, above } of walk(plan)) {
    const table = node["Relation Name"];
    if (node["Node Type"] === "LockRows") problems.push("LockRows: a SELECT ... FOR UPDATE locking the rows it reads");
    if (table === undefined || !tables.has(table)) continue;
    if (node["Node Type"] === "Seq Scan") problems.push(`Seq Scan on ${table}`);
    const removed = (node["Rows Removed by Filter"] ?? 0) * (node["Actual Loops"] ?? 1);
    if (removed > MAX_ROWS_FILTERED)
      problems.push(`${node["Node Type"]} on ${table} (${node["Index Name"] ?? "-"}) discards ${removed} rows`);
    // The nearest sort above the scan, unless an aggregate lies between them (a sort of groups, not of rows).
    for (let i = above.length - 1; i >= 0; i--) {
      if (above[i]["Node Type"] === "Aggregate") break;
      if (isSort(above[i])) {
        problems.push(`${above[i]["Node Type"]} of the rows of ${table}`);
        break;
      }
    }
  }
  return problems;
}

/** The plan of `query` as PostgreSQL runs it (EXPLAIN ANALYZE, in a transaction rolled back after). */
async function explain(client: pg.Client, query: { sql: string; params: unknown[] }): Promise<PlanNode> {
  await client.query("begin");
  try {
    const { rows } = await client.query<{ "QUERY PLAN": Array<{ Plan: PlanNode }> }>(
      `explain (analyze, buffers, format json) ${query.sql}`,
      query.params,
    );
    return rows[0]["QUERY PLAN"][0].Plan;
  } finally {
    await client.query("rollback");
  }
}

const render = (statement: SQL) => dialect.sqlToQuery(statement);

/** GET /v1/revenue/splits' query, built as its route (v1/revenue.ts) builds it. */

const deviceId = (i: number) => `dev_${String(i).padStart(5, "0")}`;

/** The seed: tenants ten_a (devices 1..1900) and ten_b (the rest); 200k orders, paid every 5 minutes back
 * from now (one in 20 expired, one in 50 pending); a webhook subscription with almost every delivery
 * (whs_big: a few failed, among the oldest) and three small ones; one attempt per delivery. */
async function seed(client: pg.Client): Promise<void> {
  await client.query(`insert into tenants (id, name) values ('ten_a', 'A'), ('ten_b', 'B')`);
  await client.query(`
    insert into devices (id, tenant_id, name, device_class, region, tiers, chain_device_id, asset_owner, operator, split_address, split_status)
    select 'dev_' || lpad(i::text, 5, '0'), case when i <= 1900 then 'ten_a' else 'ten_b' end, 'Device ' || i, 'charger', 'eu',
      '{"1h": 500000}'::jsonb, '0x' || md5('c' || i) || md5('d' || i), '0x' || repeat('a', 40), '0x' || repeat('b', 40),
      '0x' || substr(md5('s' || i), 1, 40),
      case when i % 250 = 0 then null when i % 333 = 0 then 'failed' when i % 400 = 0 then 'pending' else 'created' end
    from generate_series(1, ${DEVICES}) i`);
  await client.query(`
    insert into quotes (id, device_id, chain, token, tier, duration_seconds, amount_usd_micros, token_amount, expires_at)
    select 'quo_' || lpad(i::text, 7, '0'), 'dev_' || lpad((1 + i % ${DEVICES})::text, 5, '0'), 'local', 'USDC', '1h', 3600, 500000, 500000, now()
    from generate_series(1, ${ORDERS}) i`);
  await client.query(`
    insert into orders (id, tenant_id, device_id, quote_id, chain, chain_id, token, tier, duration_seconds, amount_usd_micros,
      token_address, split_address, router_address, token_amount, onchain_id, chain_device_id, voucher_signature, expires_at,
      status, payer, tx_hash, block_number, paid_at, created_at, updated_at)
    select 'ord_' || lpad(i::text, 7, '0'), case when 1 + i % ${DEVICES} <= 1900 then 'ten_a' else 'ten_b' end,
      'dev_' || lpad((1 + i % ${DEVICES})::text, 5, '0'), 'quo_' || lpad(i::text, 7, '0'), 'local', 31337, 'USDC', '1h', 3600, 500000,
      '0x' || repeat('1', 40), '0x' || repeat('2', 40), '0x' || repeat('3', 40), 500000, i, '0x' || md5('c' || i), '0x', at + interval '15 minutes',
      status, case when status = 'success' then '0x' || repeat('4', 40) end, case when status = 'success' then '0x' || md5('t' || i) end,
      case when status = 'success' then i end, case when status = 'success' then at end, at, at
    from (
      select i, now() - (${ORDERS} - i) * interval '5 minutes' as at,
        case when i % 20 = 0 then 'expired' when i % 50 = 1 then 'pending' else 'success' end as status
      from generate_series(1, ${ORDERS}) i
    ) s`);
  await client.query(`
    insert into events (id, tenant_id, type, data, created_at, dispatched_at)
    select 'evt_' || lpad(i::text, 7, '0'), 'ten_a', 'payment.succeeded', '{}'::json, at, at
    from (select i, now() - (${DELIVERIES} - i) * interval '1 minute' as at from generate_series(1, ${DELIVERIES}) i) s`);
  await client.query(`
    insert into webhook_subscriptions (id, tenant_id, url, event_types, secret_ciphertext, secret_last4)
    select id, 'ten_a', 'https://example.com/hook', array['*'], 'v1.x.y.z', 'abcd'
    from unnest(array['whs_big', 'whs_small0', 'whs_small1', 'whs_small2']) id`);
  await client.query(`
    insert into webhook_deliveries (id, event_id, subscription_id, tenant_id, event_type, status, attempts, next_attempt_at,
      last_status_code, completed_at, created_at, updated_at)
    select 'msg_' || lpad(i::text, 26, '0'), 'evt_' || lpad(i::text, 7, '0'),
      case when i % 25 = 0 then 'whs_small' || (i % 3) else 'whs_big' end, 'ten_a', 'payment.succeeded', status, 1,
      case when status = 'pending' then at end, case when status = 'failed' then 500 else 200 end,
      case when status <> 'pending' then at end, at, at
    from (
      select i, now() - (${DELIVERIES} - i) * interval '1 minute' as at,
        case when i <= 5000 and i % 500 = 1 then 'failed' when i > ${DELIVERIES} - 10 then 'pending' else 'succeeded' end as status
      from generate_series(1, ${DELIVERIES}) i
    ) s`);
  await client.query(`
    insert into webhook_attempts (delivery_id, attempt, worker, started_at, finished_at, duration_ms, status_code)
    select id, 1, 'seed:1', created_at, created_at, 20, last_status_code from webhook_deliveries`);
  await client.query("analyze");
}

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
    await seed(client);
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

  it(
    "delivery counts of subscriptions",
    { todo: "counts are computed from every delivery the subscription ever had (no counters kept yet)" },
    async () => {
      await assertFlat("delivery counts", deliveryCountsQuery(db, ["whs_big", "whs_small0"]).toSQL());
    },
  );

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
    const recorded = await db.select().from(events).where(eq(events.type, "device.offline"));
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
      const recorded = await db.select().from(events).orderBy(events.type);
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
