// Preloaded into the indexer process (`node --import ./event-loop-sampling.ts ponder.js ...`, as
// lib/indexer.ts starts it). Ponder's metrics (prom-client's default metrics, with
// eventLoopMonitoringPrecision 1) sample the event loop's delay every millisecond: a thousand wake-ups a
// second, which keep an otherwise idle indexer at 1.5-2% of a core (20 a second still cost it about 0.3%).
// This raises the sampling interval of node:perf_hooks' monitorEventLoopDelay to at least
// MIN_RESOLUTION_MS; the only difference is the resolution of /metrics' nodejs_eventloop_lag_* figures
// (one sample a second: a stall shows when it holds up a sample, so a short one may go unseen).
import perfHooks from "node:perf_hooks";

const MIN_RESOLUTION_MS = 1_000;

const monitor = perfHooks.monitorEventLoopDelay;
perfHooks.monitorEventLoopDelay = (options = {}) =>
  monitor({ ...options, resolution: Math.max(options.resolution ?? MIN_RESOLUTION_MS, MIN_RESOLUTION_MS) });
