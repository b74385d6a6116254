// The loop of a worker that is woken by notifications and also polls: one tick at a time; a wake() during
// a tick runs another right after it (so nothing announced meanwhile waits for the poll); a tick that
// reports more work waiting is followed at once; otherwise the next tick comes `idleMs` after the last.
export type WakeLoop = {
  /** Starts ticking (the first tick at once). */
  start(): void;
  /** Stops ticking; resolves once the tick in progress, if any, has finished. */
  stop(): Promise<void>;
  /** Runs a tick now, or right after the one in progress. */
  wake(): void;
  isStopped(): boolean;
};

export function createWakeLoop(opts: {
  /** One pass of the worker; resolves true when more work is waiting. */
  tick: () => Promise<boolean | void>;
  idleMs: number;
  onError: (error: unknown) => void;
}): WakeLoop {
  let stopped = true;
  let running: Promise<void> | undefined;
  let again = false;
  let timer: NodeJS.Timeout | undefined;

  function wake() {
    if (stopped) return;
    if (running) {
      again = true;
      return;
    }
    running = opts
      .tick()
      .then((more) => {
        if (more) again = true;
      })
      .catch(opts.onError)
      .finally(() => {
        running = undefined;
        clearTimeout(timer);
        const now = again;
        again = false;
        if (!stopped) timer = setTimeout(wake, now ? 0 : opts.idleMs);
      });
  }

  return {
    start() {
      stopped = false;
      wake();
    },
    async stop() {
      stopped = true;
      clearTimeout(timer);
      await running;
    },
    wake,
    isStopped: () => stopped,
  };
}
