// Marks unpaid orders expired. An order is expired once its voucher's expiry has passed (plus a grace for
// clock skew) and the indexer has caught up with the chain head without seeing it paid: from then on the
// router rejects it, so no later payment can arrive.
import { and, eq, inArray, lt } from "drizzle-orm";
import { orders } from "../db/schema.ts";
import { recordOrderEvent, recordWebhookEvent } from "../events/record.ts";
import type { Services } from "../services.ts";
import { usd } from "./pricing.ts";

const INTERVAL_MS = 1_000;

export function createExpiry(services: Services) {
  const { db, indexer, chain } = services;
  const logger = services.logger.child({ worker: "expiry" });
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<void> | undefined;
  let stopped = true;

  async function sweep(): Promise<number> {
    const cutoff = new Date(Date.now() - services.config.EXPIRY_GRACE_SECONDS * 1000);
    const due = await db
      .select()
      .from(orders)
      .where(and(eq(orders.status, "pending"), lt(orders.expiresAt, cutoff)))
      .limit(200);
    if (due.length === 0) return 0;
    const [head, indexed] = await Promise.all([chain.publicClient.getBlockNumber(), indexer.indexedBlock()]);
    if (BigInt(indexed) < head) return 0; // the indexer is behind: a payment may still show up
    const paid = new Set((await indexer.ordersByIds(due.map((o) => o.onchainId))).map((p) => p.orderId));
    const expire = due.filter((o) => !paid.has(o.onchainId));
    if (expire.length === 0) return 0;
    await db.transaction(async (tx) => {
      const updated = await tx
        .update(orders)
        .set({ status: "expired", updatedAt: new Date() })
        .where(and(inArray(orders.id, expire.map((o) => o.id)), eq(orders.status, "pending")))
        .returning();
      for (const order of updated) {
        const data = {
          orderId: order.id,
          deviceId: order.deviceId,
          amountUsd: usd(order.amountUsdMicros),
          expiredAt: order.expiresAt.toISOString(),
        };
        await recordOrderEvent(tx, order.id, "order.expired", data);
        await recordWebhookEvent(tx, order.tenantId, "payment.expired", data);
      }
    });
    logger.info("orders expired", { count: expire.length });
    return expire.length;
  }

  function schedule() {
    if (stopped) return;
    timer = setTimeout(() => {
      running = sweep()
        .then(() => undefined)
        .catch((error) => logger.warn("expiry sweep failed", { error: (error as Error).message }))
        .finally(() => {
          running = undefined;
          schedule();
        });
    }, INTERVAL_MS);
  }

  return {
    name: "expiry",
    start: async () => {
      stopped = false;
      schedule();
    },
    stop: async () => {
      stopped = true;
      clearTimeout(timer);
      await running;
    },
    sweep,
  };
}
