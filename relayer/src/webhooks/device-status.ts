// device.online / device.offline: polls the device cloud's GET /devices every DEVICE_STATUS_POLL_MS and
// compares each registered device's state with the last one stored (table device_status). A change is
// stored and its event written to the outbox in one transaction. One relayer process polls at a time (a
// lease in sync_state, taken over when its holder stops renewing it), so answers of concurrent polls can
// never be applied out of order and a change is recorded once; the rows are also locked, and a state
// read before a newer stored one is ignored. The first observation of a device is stored without an
// event. A device the device cloud no longer lists counts as offline. When the device cloud cannot be
// reached nothing changes.
import { eq } from "drizzle-orm";
import { deviceStatus, devices } from "../db/schema.ts";
import { recordWebhookEvent } from "../events/record.ts";
import { createLease } from "../jobs/lease.ts";
import { createWorker } from "../jobs/worker.ts";
import type { Services } from "../services.ts";

export function createDeviceStatusWatcher(services: Services) {
  const {
    database: { db },
    deviceCloud,
    config,
  } = services;
  const logger = services.logger.child({ worker: "device-status" });
  let failures = 0;
  const lease = createLease(db, "device_status_poller", Math.max(5_000, config.DEVICE_STATUS_POLL_MS * 3));

  /** One poll (by the lease's holder); returns the number of changes recorded. */
  async function poll(): Promise<number> {
    const observedAt = new Date();
    let live: Map<string, boolean>;
    try {
      live = new Map((await deviceCloud.list()).map((d) => [d.deviceId, d.online]));
      if (failures > 0) logger.info("device cloud reachable again", { failures });
      failures = 0;
    } catch (error) {
      failures++;
      if (failures === 1 || failures % 60 === 0)
        logger.warn("device cloud unreachable; device states unchanged", { error: (error as Error).message, failures });
      return 0;
    }
    return db.transaction(async (tx) => {
      const registry = await tx.select({ id: devices.id, tenantId: devices.tenantId }).from(devices);
      const known = new Map((await tx.select().from(deviceStatus).for("update")).map((row) => [row.deviceId, row]));
      let changes = 0;
      for (const device of registry) {
        const online = live.get(device.id) ?? false;
        const previous = known.get(device.id);
        if (!previous) {
          await tx.insert(deviceStatus).values({ deviceId: device.id, online, observedAt, changedAt: observedAt }).onConflictDoNothing();
          continue;
        }
        if (previous.online === online || previous.observedAt.getTime() > observedAt.getTime()) continue;
        await tx.update(deviceStatus).set({ online, observedAt, changedAt: observedAt }).where(eq(deviceStatus.deviceId, device.id));
        await recordWebhookEvent(tx, device.tenantId, online ? "device.online" : "device.offline", {
          deviceId: device.id,
          online,
          observedAt: observedAt.toISOString(),
          previousChangeAt: previous.changedAt.toISOString(),
        });
        changes++;
        logger.info(online ? "device online" : "device offline", { deviceId: device.id });
      }
      return changes;
    });
  }

  return createWorker({
    name: "device-status",
    async tick() {
      await poll();
      return config.DEVICE_STATUS_POLL_MS;
    },
    onError(error) {
      logger.warn("device status poll failed", { error: (error as Error).message });
      return config.DEVICE_STATUS_POLL_MS;
    },
    lease: { lease, retryMs: config.DEVICE_STATUS_POLL_MS },
  });
}
