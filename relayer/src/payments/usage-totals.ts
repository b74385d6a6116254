// The running totals behind GET /v1/impact and GET /v1/public/stats (db/schema/usage.ts), changed in the
// caller's transaction together with the change they count, so that they always equal what the orders and
// devices say: a device registered, a session started (orders.powered_on_at set), a session metered
// (orders.energy_wh set), a payment recorded (an order becoming status success) or removed by a chain
// reorganisation (back to pending: its volume is taken back out; a session it started did happen and stays
// counted, as the device delivered the energy). Each is a statement or two on primary keys: nothing here reads
// a number of rows that grows with history. The callers make each change at most once (a conditional update
// of the order), so a retried job or a page handled again never counts twice.
import { type SQL, sql } from "drizzle-orm";
import type { DbOrTx } from "../db/client.ts";

/** A device was registered: one more device in `region`. */
export async function countDevice(tx: DbOrTx, region: string): Promise<void> {
  await tx.execute(sql`
    insert into region_usage (region, devices) values (${region}, 1)
    on conflict (region) do update set devices = region_usage.devices + 1`);
}

/** A session started on the device at `poweredOnAt`. */
export async function countPowerOn(tx: DbOrTx, deviceId: string, poweredOnAt: Date): Promise<void> {
  await tx.execute(sql`
    insert into device_usage (device_id, region, power_sessions, last_powered_on_at)
    select id, region, 1, ${poweredOnAt.toISOString()}::timestamptz from devices where id = ${deviceId}
    on conflict (device_id) do update set
      power_sessions = device_usage.power_sessions + 1,
      last_powered_on_at = greatest(device_usage.last_powered_on_at, excluded.last_powered_on_at)`);
  await addToRegion(tx, deviceId, sql`power_sessions`, 1);
}

/** A session of the device was metered: `energyWh` delivered. */
export async function countEnergy(tx: DbOrTx, deviceId: string, energyWh: number): Promise<void> {
  if (energyWh === 0) return;
  await tx.execute(sql`
    insert into device_usage (device_id, region, energy_wh)
    select id, region, ${energyWh}::bigint from devices where id = ${deviceId}
    on conflict (device_id) do update set energy_wh = device_usage.energy_wh + excluded.energy_wh`);
  await addToRegion(tx, deviceId, sql`energy_wh`, energyWh);
}

/** An order of the device became paid (`amountUsdMicros` > 0) or a reorganisation removed its payment
 * (negative). */
export async function countPaidVolume(tx: DbOrTx, deviceId: string, amountUsdMicros: number): Promise<void> {
  if (amountUsdMicros === 0) return;
  await addToRegion(tx, deviceId, sql`volume_usd_micros`, amountUsdMicros);
}

/** Adds `amount` to `column` of the device's region (the region's row is made if the device was registered
 * by other means than the seed, which counts it). */
async function addToRegion(tx: DbOrTx, deviceId: string, column: SQL, amount: number): Promise<void> {
  await tx.execute(sql`
    insert into region_usage (region, ${column})
    select region, ${amount}::bigint from devices where id = ${deviceId}
    on conflict (region) do update set ${column} = region_usage.${column} + excluded.${column}`);
}
