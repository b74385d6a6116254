// The sandbox's housekeeping: confirms the anomaly scores of batches older than
// ENERGY_ANOMALY_CONFIRM_SECONDS (re-scored against the device's history at that time, see
// telemetry/anomaly.ts), and deletes Idempotency-Key records past their retention (every EXPIRY_EVERY_MS).
// Each pass sleeps until the oldest provisional batch is due, or the next key expiry, whichever comes
// first, but at least INTERVAL_MS; a batch ingested meanwhile is due no sooner than
// ENERGY_ANOMALY_CONFIRM_SECONDS from now, which also bounds the sleep.
import { sql } from "drizzle-orm";
import { createWorker } from "../jobs/worker.ts";
import type { Services } from "../services.ts";
import { MIN_HISTORY, Z_AT_SCORE_ONE } from "./telemetry/anomaly.ts";
import { expireIdempotencyKeys } from "./telemetry/idempotency.ts";

const INTERVAL_MS = 1_000;
const EXPIRY_EVERY_MS = 60_000;
const CONFIRM_PER_TICK = 500;

export function createEnergyMaintenance(services: Services) {
  const {
    database: { db },
    config,
  } = services;
  const logger = services.logger.child({ worker: "energy-maintenance" });
  const confirmMs = config.ENERGY_ANOMALY_CONFIRM_SECONDS * 1000;
  let lastExpiry = 0;

  /** Confirms due anomaly scores; returns how many batches. */
  async function confirmAnomalies(now = Date.now()): Promise<number> {
    const cutoff = new Date(now - config.ENERGY_ANOMALY_CONFIRM_SECONDS * 1000).toISOString();
    const result = await db.execute(sql`
      with due as (
        select batch_id, device_id, first_sequence_number, last_sequence_number
        from energy_batches
        where anomaly_status = 'provisional' and received_at <= ${cutoff}::timestamptz
        order by received_at
        limit ${CONFIRM_PER_TICK}
        for update skip locked
      ),
      scores as (
        select due.batch_id,
          max(abs(r.interval_power_w - d.power_mean) / greatest(
            case when d.power_samples > 1 then sqrt(d.power_m2 / (d.power_samples - 1)) else 0 end,
            0.05 * abs(d.power_mean), 1)) as z
        from due
        join energy_devices d on d.device_id = due.device_id and d.power_samples >= ${MIN_HISTORY}
        join energy_readings r on r.device_id = due.device_id
          and r.sequence_number between due.first_sequence_number and due.last_sequence_number
          and r.batch_id = due.batch_id and r.interval_power_w is not null
        group by due.batch_id
      )
      update energy_batches b
      set anomaly_status = 'confirmed',
          anomaly_confirmed_at = now(),
          anomaly_score = coalesce(round(least(1, s.z / ${Z_AT_SCORE_ONE})::numeric, 4)::float8, 0)
      from due left join scores s on s.batch_id = due.batch_id
      where b.batch_id = due.batch_id
      returning b.batch_id`);
    return (result as unknown as { rows: unknown[] }).rows.length;
  }

  /** When the oldest provisional batch is due for confirmation (ms since the epoch), if any. */
  async function nextConfirmation(): Promise<number | undefined> {
    const result = await db.execute(sql`
      select round(extract(epoch from min(received_at)) * 1000) as oldest
      from energy_batches where anomaly_status = 'provisional'`);
    const [row] = (result as unknown as { rows: Array<{ oldest: string | number | null }> }).rows;
    return row?.oldest === null || row?.oldest === undefined ? undefined : Number(row.oldest) + confirmMs;
  }

  async function tick(): Promise<number> {
    const confirmed = await confirmAnomalies();
    if (confirmed > 0) logger.debug("anomaly scores confirmed", { batches: confirmed });
    if (Date.now() - lastExpiry >= EXPIRY_EVERY_MS) {
      lastExpiry = Date.now();
      const expired = await expireIdempotencyKeys(db);
      if (expired > 0) logger.info("idempotency keys expired", { count: expired });
    }
    if (confirmed === CONFIRM_PER_TICK) return INTERVAL_MS; // more may be due
    const due = await nextConfirmation();
    const now = Date.now();
    const next = Math.min(lastExpiry + EXPIRY_EVERY_MS, now + confirmMs, due ?? Number.POSITIVE_INFINITY);
    return Math.max(INTERVAL_MS, next - now);
  }

  return createWorker({
    name: "energy-maintenance",
    tick,
    onError(error) {
      logger.warn("energy maintenance failed", { error: (error as Error).message });
      return INTERVAL_MS;
    },
    firstDelayMs: INTERVAL_MS,
  });
}
