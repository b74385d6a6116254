// A small durable job queue on the relayer's database: jobs are rows; any relayer process claims due
// ones with FOR UPDATE SKIP LOCKED and a lease, so a job runs in one process at a time, and a crashed
// process's job runs again once its lease ends. The runner is woken by NOTIFY jobs (enqueueJob) and
// otherwise sleeps until the next job is due (a retry, a job queued for later, a dead process's lease),
// at most SAFETY_POLL_MS (worker.ts).
import { and, asc, eq, isNull, lte, min, sql } from "drizzle-orm";
import type { Database, DbOrTx } from "../db/client.ts";
import { jobs } from "../db/schema.ts";
import type { Logger } from "../logger.ts";
import { SAFETY_POLL_MS, type TickContext, createWorker } from "./worker.ts";

export const JOBS_CHANNEL = "jobs";
const LEASE_MS = 60_000;
/** After a failed pass, or when a job is due but another process holds it. */
const RETRY_MS = 500;

export type Job = typeof jobs.$inferSelect;
export type JobResult = { retryInMs?: number } | void;
export type JobHandler = {
  run(job: Job): Promise<JobResult>;
  /** Called once when the job failed `maxAttempts` times. */
  giveUp?(job: Job, error: Error): Promise<void>;
  maxAttempts?: number;
};

/** Queues a job (once per kind and key) to run at `runAt` (now by default). */
export async function enqueueJob(db: DbOrTx, job: { kind: string; key: string; payload: Record<string, unknown>; runAt?: Date }) {
  await db
    .insert(jobs)
    .values({ kind: job.kind, key: job.key, payload: job.payload, runAt: job.runAt ?? new Date() })
    .onConflictDoNothing();
  await db.execute(sql`select pg_notify(${JOBS_CHANNEL}, ${job.kind})`);
}

/** Backoff after the n-th failed attempt: 1 s, 2 s, 4 s ... capped at 5 minutes, with ±20% jitter. */
export function backoffMs(attempt: number): number {
  const base = Math.min(300_000, 1_000 * 2 ** Math.max(0, attempt - 1));
  return Math.round(base * (0.8 + Math.random() * 0.4));
}

export function createJobRunner(deps: { database: Database; logger: Logger; handlers: Record<string, JobHandler> }) {
  const { database, handlers } = deps;
  const db = database.db;
  const logger = deps.logger.child({ worker: "jobs" });
  async function claim(): Promise<Job[]> {
    return db.transaction(async (tx) => {
      const due = await tx
        .select()
        .from(jobs)
        .where(and(isNull(jobs.doneAt), lte(jobs.runAt, new Date())))
        .orderBy(asc(jobs.runAt))
        .limit(20)
        .for("update", { skipLocked: true });
      const claimed: Job[] = [];
      for (const job of due) {
        const [row] = await tx
          .update(jobs)
          .set({ runAt: new Date(Date.now() + LEASE_MS), attempts: job.attempts + 1 })
          .where(eq(jobs.id, job.id))
          .returning();
        claimed.push(row);
      }
      return claimed;
    });
  }

  async function execute(job: Job) {
    const handler = handlers[job.kind];
    if (!handler) {
      await db
        .update(jobs)
        .set({ doneAt: new Date(), lastError: `no handler for ${job.kind}` })
        .where(eq(jobs.id, job.id));
      return;
    }
    try {
      const result = await handler.run(job);
      if (result && result.retryInMs !== undefined) {
        // Not done yet (e.g. a session still running): run again later without counting a failure.
        await db
          .update(jobs)
          .set({ runAt: new Date(Date.now() + result.retryInMs), attempts: job.attempts - 1 })
          .where(eq(jobs.id, job.id));
        return;
      }
      await db.update(jobs).set({ doneAt: new Date(), lastError: null }).where(eq(jobs.id, job.id));
    } catch (error) {
      const max = handler.maxAttempts ?? 10;
      const message = (error as Error).message;
      if (job.attempts >= max) {
        await db.update(jobs).set({ doneAt: new Date(), lastError: message }).where(eq(jobs.id, job.id));
        logger.warn("job gave up", { kind: job.kind, key: job.key, attempts: job.attempts, error: message });
        await handler.giveUp?.(job, error as Error);
        return;
      }
      await db
        .update(jobs)
        .set({ runAt: new Date(Date.now() + backoffMs(job.attempts)), lastError: message })
        .where(eq(jobs.id, job.id));
      logger.info("job failed; will retry", { kind: job.kind, key: job.key, attempts: job.attempts, error: message });
    }
  }

  /** The delay until the next job is due (0: one is due now). */
  async function untilNextDue(): Promise<number> {
    const [next] = await db
      .select({ at: min(jobs.runAt) })
      .from(jobs)
      .where(isNull(jobs.doneAt));
    if (!next?.at) return SAFETY_POLL_MS;
    return Math.max(0, Math.min(new Date(next.at).getTime() - Date.now(), SAFETY_POLL_MS));
  }

  /** Runs every due job; resolves with the delay until the next one is due. */
  async function tick(ctx: TickContext): Promise<number> {
    // A timed pass first looks whether anything is due at all (one cheap query when idle).
    if (ctx.reason === "timer") {
      const wait = await untilNextDue();
      if (wait > 0) return wait;
    }
    for (;;) {
      const claimed = await claim();
      if (claimed.length === 0) break;
      await Promise.all(claimed.map(execute));
    }
    const wait = await untilNextDue();
    // Due but not claimed: another process holds it for a moment.
    return wait === 0 ? RETRY_MS : wait;
  }

  return createWorker({
    name: "jobs",
    tick,
    onError(error) {
      logger.warn("job runner tick failed", { error: (error as Error).message });
      return RETRY_MS;
    },
    wakeOn: { database, channels: [JOBS_CHANNEL] },
  });
}
