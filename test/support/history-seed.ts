// A relayer database grown with history, seeded set-based (generate_series) for the query-plan test
// (test/relayer/query-plans.test.ts) and the data-scale benchmark (bench/data-scale.ts): tenants ten_a
// (devices 1..95%) and ten_b (the rest), `devices` devices in four regions, `orders` orders and their quotes
// paid every 5 minutes back from now (one in 20 expired, one in 50 pending; the paid ones powered on and
// metered), webhook events with one delivery each (whs_big has almost all, a few failed among the oldest;
// three small subscriptions share the rest) and one attempt per delivery. The running totals (device and
// region usage, delivery counters, revenue per day) are then computed by the relayer's own migration
// backfills, as an upgraded database has them.
import { readFileSync } from "node:fs";
import path from "node:path";
import type pg from "pg";

export type HistorySize = { orders: number; devices: number; deliveries: number };

/** The seed's device id of device `i` (1-based). */
export const seededDeviceId = (i: number) => `dev_${String(i).padStart(5, "0")}`;

/** Seeds `size` into the (migrated, empty) relayer schema `client` is connected to, then ANALYZE. */
export async function seedHistory(client: pg.Client, size: HistorySize): Promise<void> {
  const { orders, devices, deliveries } = size;
  const tenantA = Math.floor(devices * 0.95);
  const device = (i: string) => `'dev_' || lpad((${i})::text, 5, '0')`;
  await client.query(`insert into tenants (id, name) values ('ten_a', 'A'), ('ten_b', 'B')`);
  await client.query(`
    insert into devices (id, tenant_id, name, device_class, region, tiers, chain_device_id, asset_owner, operator, split_address, split_status)
    select ${device("i")}, case when i <= ${tenantA} then 'ten_a' else 'ten_b' end, 'Device ' || i, 'charger',
      (array['KE-30', 'NG-LA', 'TZ-02', 'UG-102'])[1 + i % 4],
      '{"1h": 500000}'::jsonb, '0x' || md5('c' || i) || md5('d' || i), '0x' || repeat('a', 40), '0x' || repeat('b', 40),
      '0x' || substr(md5('s' || i), 1, 40),
      case when i % 250 = 0 then null when i % 333 = 0 then 'failed' when i % 400 = 0 then 'pending' else 'created' end
    from generate_series(1, ${devices}) i`);
  await client.query(`
    insert into quotes (id, device_id, chain, token, tier, duration_seconds, amount_usd_micros, token_amount, expires_at)
    select 'quo_' || lpad(i::text, 7, '0'), ${device(`1 + i % ${devices}`)}, 'local', 'USDC', '1h', 3600, 500000, 500000, now()
    from generate_series(1, ${orders}) i`);
  await client.query(`
    insert into orders (id, tenant_id, device_id, quote_id, chain, chain_id, token, tier, duration_seconds, amount_usd_micros,
      token_address, split_address, router_address, token_amount, onchain_id, chain_device_id, voucher_signature, expires_at,
      status, payer, tx_hash, block_number, paid_at, confirmed_at, powered_on_at, session_ends_at, energy_wh, created_at, updated_at)
    select 'ord_' || lpad(i::text, 7, '0'), case when 1 + i % ${devices} <= ${tenantA} then 'ten_a' else 'ten_b' end,
      ${device(`1 + i % ${devices}`)}, 'quo_' || lpad(i::text, 7, '0'), 'local', 31337, 'USDC', '1h', 3600, 500000,
      '0x' || repeat('1', 40), '0x' || repeat('2', 40), '0x' || repeat('3', 40), 500000, i, '0x' || md5('c' || i), '0x', at + interval '15 minutes',
      status, case when paid then '0x' || repeat('4', 40) end, case when paid then '0x' || md5('t' || i) end,
      case when paid then i end, case when paid then at end, case when paid then at end,
      case when paid then at + interval '1 minute' end, case when paid then at + interval '61 minutes' end,
      case when paid then 100 + i % 50 end, at, at
    from (
      select i, now() - (${orders} - i) * interval '5 minutes' as at, status, status = 'success' as paid
      from (select i, case when i % 20 = 0 then 'expired' when i % 50 = 1 then 'pending' else 'success' end as status
            from generate_series(1, ${orders}) i) g
    ) s`);
  await client.query(`
    insert into webhook_events (id, tenant_id, type, data, created_at, dispatched_at)
    select 'evt_' || lpad(i::text, 7, '0'), 'ten_a', 'payment.succeeded', '{}'::json, at, at
    from (select i, now() - (${deliveries} - i) * interval '1 minute' as at from generate_series(1, ${deliveries}) i) s`);
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
      select i, now() - (${deliveries} - i) * interval '1 minute' as at,
        case when i <= 5000 and i % 500 = 1 then 'failed' when i > ${deliveries} - 10 then 'pending' else 'succeeded' end as status
      from generate_series(1, ${deliveries}) i
    ) s`);
  await client.query(`
    insert into webhook_attempts (delivery_id, attempt, worker, started_at, finished_at, duration_ms, status_code)
    select id, 1, 'seed:1', created_at, created_at, 20, last_status_code from webhook_deliveries`);
  for (const statement of runningTotalsBackfill()) await client.query(statement);
  await client.query("analyze");
}

const MIGRATIONS = path.resolve(import.meta.dirname, "../../relayer/src/db/migrations");
/** The line a backfill of running totals starts at, in each migration that has one. */
export const BACKFILL_MARKER = "-- Running totals of the rows already there";

/** The statements of the migrations' backfills of running totals (from the marker to the end of each
 * migration that has it), in the order the migrations run. */
export function runningTotalsBackfill(): string[] {
  const journal = JSON.parse(readFileSync(path.join(MIGRATIONS, "meta/_journal.json"), "utf8")) as { entries: Array<{ tag: string }> };
  const statements = journal.entries.flatMap(({ tag }) => {
    const text = readFileSync(path.join(MIGRATIONS, `${tag}.sql`), "utf8");
    const at = text.indexOf(BACKFILL_MARKER);
    if (at < 0) return [];
    return text
      .slice(at)
      .split("--> statement-breakpoint")
      .map((s) => s.trim())
      .filter((s) => s.replace(/^--.*$/gm, "").trim() !== "");
  });
  if (statements.length === 0) throw new Error(`no migration has a backfill of running totals (${BACKFILL_MARKER})`);
  return statements;
}
