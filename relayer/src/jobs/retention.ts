// Retention: deletes what the relayer keeps for a while only. Webhook events older than
// WEBHOOK_EVENT_RETENTION_DAYS go with their deliveries and the deliveries' attempts (webhooks/event-log.ts;
// an event not yet delivered to the end is kept until it is), and Idempotency-Key records after 24 hours
// (idempotency/store.ts). Every relayer process runs it (the deletes are batched and safe to run at once),
// every RETENTION_EVERY_MS, or again at once while a pass found a full batch.
import type { Db } from "../db/client.ts";
import { expireIdempotencyKeys } from "../idempotency/store.ts";
import type { Logger } from "../logger.ts";
import { deleteExpiredEvents } from "../webhooks/event-log.ts";
import { createWorker } from "./worker.ts";

const RETENTION_EVERY_MS = 10 * 60_000;
/** Batches one pass deletes at most, of each kind, before it yields to the next pass. */
const BATCHES_PER_PASS = 20;
const RETRY_MS = 60_000;

export function createRetentionWorker(deps: { db: Db; logger: Logger; eventRetentionDays: number }) {
  const { db } = deps;
  const logger = deps.logger.child({ worker: "retention" });

  /** One pass: deletes what is due; returns whether more may be due. */
  async function pass(now = Date.now()): Promise<{ events: number; idempotencyKeys: number; more: boolean }> {
    const cutoff = new Date(now - deps.eventRetentionDays * 86_400_000);
    let events = 0;
    let keys = 0;
    let more = false;
    for (let i = 0; i < BATCHES_PER_PASS; i++) {
      const n = await deleteExpiredEvents(db, cutoff);
      events += n;
      if (n === 0) break;
      if (i === BATCHES_PER_PASS - 1) more = true;
    }
    for (let i = 0; i < BATCHES_PER_PASS; i++) {
      const n = await expireIdempotencyKeys(db, now);
      keys += n;
      if (n === 0) break;
      if (i === BATCHES_PER_PASS - 1) more = true;
    }
    if (events > 0 || keys > 0) logger.info("expired records deleted", { events, idempotencyKeys: keys });
    return { events, idempotencyKeys: keys, more };
  }

  const worker = createWorker({
    name: "retention",
    async tick() {
      const { more } = await pass();
      return more ? 0 : RETENTION_EVERY_MS;
    },
    onError(error) {
      logger.warn("retention pass failed", { error: (error as Error).message });
      return RETRY_MS;
    },
  });

  return {
    ...worker,
    /** One pass now (tests); `now` moves the clock the cutoffs are computed from. */
    pass,
  };
}
