// device.online / device.offline: polls the device cloud's GET /devices every DEVICE_STATUS_POLL_MS and
// compares each registered device's state with the last one stored (table device_status). A change is
// stored and its event written to the outbox in one transaction. One relayer process polls at a time (a
// lease in sync_state, taken over when its holder stops renewing it), so answers of concurrent polls can
// never be applied out of order and a change is recorded once; a state read before a newer stored one is
// ignored. Each poll is set-based: one statement stores the first observation of new devices (without an
// event), one updates only the devices whose state changed (locking those rows only, never every device's)
// and returns them for their events. A device the device cloud no longer lists counts as offline. When the
// device cloud cannot be reached nothing changes.
import { type SQL, sql } from "drizzle-orm";
import type { DbOrTx } from "../db/client.ts";
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
    const changed = await db.transaction((tx) => applyDeviceStates(tx, live, observedAt));
    for (const change of changed) logger.info(change.online ? "device online" : "device offline", { deviceId: change.deviceId });
    return changed.length;
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

/** A device whose state changed in a poll. */
export type DeviceStateChange = { deviceId: string; tenantId: string; online: boolean; previousChangeAt: Date };

/** The registered devices with the state the device cloud reported (absent: offline), as a relation
 * `observed(device_id, tenant_id, online)` for the statements below. */
function observedDevices(live: Map<string, boolean>): SQL {
  const reported = JSON.stringify([...live].map(([id, online]) => ({ id, online })));
  return sql`select d.id as device_id, d.tenant_id, coalesce(l.online, false) as online
    from devices d left join json_to_recordset(${reported}::json) as l(id text, online boolean) on l.id = d.id`;
}

/** Stores the first observation of registered devices that have none (no event). */
export function insertFirstObservations(live: Map<string, boolean>, observedAt: Date): SQL {
  const at = observedAt.toISOString();
  return sql`insert into device_status (device_id, online, observed_at, changed_at)
    select o.device_id, o.online, ${at}::timestamptz, ${at}::timestamptz
    from (${observedDevices(live)}) o
    where not exists (select 1 from device_status s where s.device_id = o.device_id)
    on conflict (device_id) do nothing`;
}

/** Stores the new state of the devices whose state differs from the stored one (unless the stored one was
 * observed later), and returns them with when their state had last changed. Only those rows are locked. */
export function updateChangedStates(live: Map<string, boolean>, observedAt: Date): SQL {
  const at = observedAt.toISOString();
  return sql`update device_status s
    set online = o.online, observed_at = ${at}::timestamptz, changed_at = ${at}::timestamptz
    from (${observedDevices(live)}) o, device_status previous
    where s.device_id = o.device_id and previous.device_id = s.device_id
      and s.online <> o.online and s.observed_at <= ${at}::timestamptz
    returning s.device_id, o.tenant_id, o.online,
      (extract(epoch from previous.changed_at) * 1000)::float8 as previous_changed_ms`;
}

/** Applies one poll's answer (`live`: device id → online) in `tx`: first observations stored, changes stored
 * with their device.online / device.offline events. Returns the changes. */
export async function applyDeviceStates(tx: DbOrTx, live: Map<string, boolean>, observedAt: Date): Promise<DeviceStateChange[]> {
  await tx.execute(insertFirstObservations(live, observedAt));
  const result = await tx.execute(updateChangedStates(live, observedAt));
  const rows = (
    result as unknown as { rows: Array<{ device_id: string; tenant_id: string; online: boolean; previous_changed_ms: number | string }> }
  ).rows;
  const changes = rows
    .map((r) => ({
      deviceId: r.device_id,
      tenantId: r.tenant_id,
      online: r.online,
      previousChangeAt: new Date(Number(r.previous_changed_ms)),
    }))
    .sort((a, b) => (a.deviceId < b.deviceId ? -1 : a.deviceId > b.deviceId ? 1 : 0));
  for (const change of changes) {
    await recordWebhookEvent(tx, change.tenantId, change.online ? "device.online" : "device.offline", {
      deviceId: change.deviceId,
      online: change.online,
      observedAt: observedAt.toISOString(),
      previousChangeAt: change.previousChangeAt.toISOString(),
    });
  }
  return changes;
}
