// The sandbox's devices as the interface shows them: the record their accepted readings leave behind.
import { eq } from "drizzle-orm";
import type { Db } from "../db/client.ts";
import { energyDevices } from "../db/schema.ts";

type DeviceRow = typeof energyDevices.$inferSelect;

export function sandboxDeviceView(row: DeviceRow) {
  return {
    device_id: row.deviceId,
    project_id: row.projectId,
    meter_epoch: row.meterEpoch,
    last_sequence_number: row.lastSequenceNumber ?? 0,
    last_energy_wh_cumulative: row.lastEnergyWhCumulative ?? 0,
    baseline_complete: row.baselineReadings >= row.baselineReadingsRequired,
  };
}

/** A registered device (undefined: unknown or deregistered). */
export async function findDevice(db: Db, deviceId: string): Promise<DeviceRow | undefined> {
  const [row] = await db.select().from(energyDevices).where(eq(energyDevices.deviceId, deviceId));
  return row && !row.deregisteredAt ? row : undefined;
}
