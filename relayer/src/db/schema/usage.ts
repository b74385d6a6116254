// Running totals of what the devices did, kept in the transaction that records each change (a device
// registered, a session started or metered, a payment recorded or removed by a reorganisation), so that
// GET /v1/impact and GET /v1/public/stats read a row per region instead of every order ever made
// (payments/usage-totals.ts writes them, payments/stats.ts reads them).
import { bigint, index, integer, pgTable, text, timestamp } from "drizzle-orm/pg-core";
import { foreignKeyTo } from "./constraints.ts";
import { devices } from "./payments.ts";

/** One device's sessions: how many started, the energy metered and when the latest one started. A device
 * gets its row at its first power-on. */
export const deviceUsage = pgTable(
  "device_usage",
  {
    deviceId: text("device_id").primaryKey(),
    /** The device's region (devices.region, which never changes): the active devices per region are read
     * from this table's index alone. */
    region: text("region").notNull(),
    /** Orders whose session started (orders.powered_on_at set). */
    powerSessions: integer("power_sessions").notNull().default(0),
    /** Energy the device cloud metered over those sessions (sum of orders.energy_wh). */
    energyWh: bigint("energy_wh", { mode: "number" }).notNull().default(0),
    /** The latest orders.powered_on_at of the device. */
    lastPoweredOnAt: timestamp("last_powered_on_at", { withTimezone: true }),
  },
  (t) => [
    foreignKeyTo("device_usage", t.deviceId, devices.id),
    // The devices active in a window (last power-on after a time), with their region: an index-only range.
    index("device_usage_last_powered_on_idx").on(t.lastPoweredOnAt, t.region),
  ],
);

/** Per region (devices.region): the devices registered, the sessions started and energy metered on them,
 * and the volume of the orders paid for them (status success; a payment a reorganisation removes is taken
 * back out). */
export const regionUsage = pgTable("region_usage", {
  region: text("region").primaryKey(),
  devices: integer("devices").notNull().default(0),
  powerSessions: bigint("power_sessions", { mode: "number" }).notNull().default(0),
  energyWh: bigint("energy_wh", { mode: "number" }).notNull().default(0),
  volumeUsdMicros: bigint("volume_usd_micros", { mode: "number" }).notNull().default(0),
});
