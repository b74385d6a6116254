// What follows a paid order on the device: the device cloud powers it on for the tier's length (retried
// with backoff while the device is offline or the cloud fails), then, when the session ends, the energy it
// delivered is metered. Power-on waits for payment.confirmed (the payment CONFIRMATIONS blocks deep) unless
// CONFIRMATIONS is 0 or the tenant chose to power on at 0 confirmations: a session started on a payment that a
// reorganisation then removes is energy given away.
import { and, eq, isNull } from "drizzle-orm";
import type { Config } from "../config.ts";
import type { DbOrTx } from "../db/client.ts";
import { orders, tenants } from "../db/schema.ts";
import { recordOrderEvent, recordWebhookEvent } from "../events/record.ts";
import { type JobHandler, enqueueJob } from "../jobs/queue.ts";
import { countEnergy, countPowerOn } from "../payments/usage-totals.ts";
import type { Services } from "../services.ts";

/** Whether the tenant's devices power on as soon as a payment is indexed (payment.succeeded) rather than
 * once it is CONFIRMATIONS deep (payment.confirmed): always when CONFIRMATIONS is 0, otherwise the tenant's
 * own choice (tenants.power_on_at_zero_confirmations), by default POWER_ON_AT_ZERO_CONFIRMATIONS. */
export async function powersOnAtPayment(
  db: DbOrTx,
  config: Pick<Config, "CONFIRMATIONS" | "POWER_ON_AT_ZERO_CONFIRMATIONS">,
  tenantId: string,
): Promise<boolean> {
  if (config.CONFIRMATIONS === 0) return true;
  const [tenant] = await db.select({ choice: tenants.powerOnAtZeroConfirmations }).from(tenants).where(eq(tenants.id, tenantId));
  return tenant?.choice ?? config.POWER_ON_AT_ZERO_CONFIRMATIONS;
}

/** Queues the power-on of a paid order's device, when the payment is indexed (`paid`) or confirmed: one job
 * per payment and stage (a payment a reorganisation removed and the one that pays the order anew each get
 * their own; a job that found the payment not yet confirmed does not stand in for the one queued at
 * confirmation). */
export async function enqueuePowerOn(tx: DbOrTx, order: { id: string }, transactionHash: string, stage: "paid" | "confirmed") {
  await enqueueJob(tx, { kind: "device.power_on", key: `${order.id}:${transactionHash}:${stage}`, payload: { orderId: order.id } });
}

async function loadOrder(services: Services, orderId: string) {
  const [order] = await services.database.db.select().from(orders).where(eq(orders.id, orderId));
  if (!order) throw new Error(`order ${orderId} not found`);
  return order;
}

export function deviceJobHandlers(services: Services): Record<string, JobHandler> {
  const {
    database: { db },
    deviceCloud,
  } = services;
  return {
    "device.power_on": {
      maxAttempts: 12,
      async run(job) {
        const order = await loadOrder(services, job.payload.orderId as string);
        if (order.status !== "success" || order.poweredOnAt) return;
        // Not final yet: the job is queued again when the payment is confirmed (payment-sync.ts).
        if (!order.confirmedAt && !(await powersOnAtPayment(db, services.config, order.tenantId))) return;
        const session = await deviceCloud.powerOn(order.deviceId, order.id, order.durationSeconds);
        if (!session) throw new Error(`device ${order.deviceId} is unknown to the device cloud`);
        const poweredOnAt = new Date(session.startedAt);
        const sessionEndsAt = new Date(session.endsAt);
        await db.transaction(async (tx) => {
          // Only the first power-on is recorded (and counted in the usage totals).
          const started = await tx
            .update(orders)
            .set({ poweredOnAt, sessionEndsAt, updatedAt: new Date() })
            .where(and(eq(orders.id, order.id), isNull(orders.poweredOnAt)))
            .returning({ id: orders.id });
          if (started.length === 0) return;
          await countPowerOn(tx, order.deviceId, poweredOnAt);
          const data = {
            orderId: order.id,
            deviceId: order.deviceId,
            sessionId: session.sessionId,
            poweredOnAt: poweredOnAt.toISOString(),
            sessionEndsAt: sessionEndsAt.toISOString(),
            durationSeconds: order.durationSeconds,
          };
          await recordOrderEvent(tx, order.id, "device.powered_on", data);
          await recordWebhookEvent(tx, order.tenantId, "device.powered_on", data);
          await enqueueJob(tx, {
            kind: "device.session_meter",
            key: order.id,
            payload: { orderId: order.id },
            runAt: new Date(sessionEndsAt.getTime() + 1_000),
          });
        });
        services.logger.info("device powered on", { orderId: order.id, deviceId: order.deviceId });
      },
      async giveUp(job, error) {
        const order = await loadOrder(services, job.payload.orderId as string);
        await db.transaction(async (tx) => {
          const data = { orderId: order.id, deviceId: order.deviceId, reason: error.message, attempts: job.attempts };
          await recordOrderEvent(tx, order.id, "device.power_on_failed", data);
          await recordWebhookEvent(tx, order.tenantId, "device.power_on_failed", data);
        });
      },
    },
    "device.session_meter": {
      maxAttempts: 20,
      async run(job) {
        const order = await loadOrder(services, job.payload.orderId as string);
        if (order.energyWh !== null) return;
        const session = await deviceCloud.session(order.deviceId, order.id);
        if (!session) throw new Error(`session ${order.id} is unknown to the device cloud`);
        if (!session.ended) return { retryInMs: Math.max(1_000, new Date(session.endsAt).getTime() - Date.now() + 500) };
        await db.transaction(async (tx) => {
          // Only the first reading is recorded (and counted in the usage totals).
          const metered = await tx
            .update(orders)
            .set({ energyWh: session.energyWh, updatedAt: new Date() })
            .where(and(eq(orders.id, order.id), isNull(orders.energyWh)))
            .returning({ id: orders.id });
          if (metered.length === 0) return;
          await countEnergy(tx, order.deviceId, session.energyWh);
          await recordWebhookEvent(tx, order.tenantId, "device.session_ended", {
            orderId: order.id,
            deviceId: order.deviceId,
            sessionId: session.sessionId,
            energyWh: session.energyWh,
            endedAt: session.endsAt,
          });
        });
      },
    },
  };
}
