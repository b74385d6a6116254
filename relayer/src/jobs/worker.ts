// The relayer's one worker abstraction: every background loop (job runner, transaction sender, payment
// sync, order expiry, webhook dispatcher, device status, sandbox anchoring and maintenance) is a tick
// function run by createWorker:
//
// - One tick at a time. The tick resolves with the delay before the next one, so each worker decides its
//   own schedule (at once when more work is waiting, a short poll while something is in flight, when the
//   next scheduled piece of work is due, and otherwise SAFETY_POLL_MS when idle).
// - wake() runs a tick at once, or right after the one in progress (any number of wakes during a tick fold
//   into one more tick, so nothing announced meanwhile waits for the timer). A NOTIFY on one of the
//   worker's channels wakes it, and so does the database listener's return after it lost its connection
//   (notifications may have been missed meanwhile); so may other code (e.g. a live query of the indexer).
// - A tick that throws goes to onError, which logs it and returns the delay before the next try.
// - With a lease (jobs/lease.ts), a tick runs only while this process holds it (taken or renewed before
//   each tick); otherwise the worker tries again after the lease's retryMs.
// - stop() cancels the timer, resolves once the tick in progress has finished, then releases the lease (so
//   another process takes over at once) and runs onStop.
import type { Database } from "../db/client.ts";
import type { Lease } from "./lease.ts";

/** What main.ts starts and stops. */
export type Worker = { name: string; start(): Promise<void>; stop(): Promise<void> };

export type LoopWorker = Worker & {
  /** Runs a tick now, or right after the one in progress. Does nothing before start() or after stop(). */
  wake(): void;
  isStopped(): boolean;
};

export type TickContext = {
  /** What started this tick: its timer (the first tick counts as one), or wake(). */
  reason: "timer" | "wake";
  /** Whether wake() was called during this tick: the next tick then follows at once, whatever delay this
   * one returns. */
  woken(): boolean;
  /** Whether stop() was called: a long tick may end early. */
  stopping(): boolean;
};

export type WorkerOptions = {
  name: string;
  /** One pass; resolves with the delay in ms before the next one. */
  tick(ctx: TickContext): Promise<number>;
  /** Called with what a tick threw; logs it and returns the delay in ms before the next tick. */
  onError(error: unknown): number;
  /** Channels whose notifications wake the worker; `onNotify` sees each one first (`payload` undefined: the
   * listener is back after a lost connection, and notifications on `channel` may have been missed). */
  wakeOn?: {
    database: Pick<Database, "listen">;
    channels: readonly string[];
    onNotify?(channel: string, payload: string | undefined): void;
  };
  /** Delay of the first tick after start() (default 0: at once). */
  firstDelayMs?: number;
  /** Run only in the process holding `lease`; `onLost` is called when a tick finds it held elsewhere. */
  lease?: { lease: Lease; retryMs: number; onLost?(): void };
  /** Runs on stop, after the last tick (and the lease's release). */
  onStop?(): Promise<void>;
};

/** How long an idle worker sleeps when notifications or wake() announce its work: a safety poll, for work
 * nothing announced (written by hand, or by a process configured otherwise). It costs the idle relayer
 * next to nothing, and never delays announced work. */
export const SAFETY_POLL_MS = 60_000;

/** The delay after a tick whose onError failed too, or that returned no usable delay. */
const FALLBACK_DELAY_MS = 1_000;

export function createWorker(opts: WorkerOptions): LoopWorker {
  let stopped = true;
  let running: Promise<void> | undefined;
  let again = false;
  let timer: NodeJS.Timeout | undefined;

  async function pass(ctx: TickContext): Promise<number> {
    try {
      if (opts.lease && !(await opts.lease.lease.hold())) {
        opts.lease.onLost?.();
        return opts.lease.retryMs;
      }
      return await opts.tick(ctx);
    } catch (error) {
      try {
        return opts.onError(error);
      } catch {
        return FALLBACK_DELAY_MS; // a failing onError must not stop the worker
      }
    }
  }

  function run(reason: TickContext["reason"]) {
    if (stopped) return;
    if (running) {
      again = true;
      return;
    }
    clearTimeout(timer);
    timer = undefined;
    again = false;
    running = pass({ reason, woken: () => again, stopping: () => stopped }).then((delay) => {
      running = undefined;
      if (stopped) return;
      const now = again;
      again = false;
      timer = setTimeout(run, now ? 0 : Number.isFinite(delay) ? Math.max(0, delay) : FALLBACK_DELAY_MS, now ? "wake" : "timer");
    });
  }

  const wake = () => run("wake");

  return {
    name: opts.name,
    wake,
    isStopped: () => stopped,
    async start() {
      if (!stopped) return;
      stopped = false;
      const on = opts.wakeOn;
      for (const channel of on?.channels ?? []) {
        await on!.database.listen(channel, (payload) => {
          on!.onNotify?.(channel, payload);
          wake();
        });
      }
      // (A notification during the listens above may have started a tick already.)
      if (running || timer) return;
      const first = opts.firstDelayMs ?? 0;
      if (first === 0) run("timer");
      else timer = setTimeout(run, first, "timer");
    },
    async stop() {
      stopped = true;
      clearTimeout(timer);
      timer = undefined;
      await running;
      await opts.lease?.lease.release();
      await opts.onStop?.();
    },
  };
}
