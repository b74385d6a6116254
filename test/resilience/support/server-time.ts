// How long the relayer itself took over a request, and whether its event loop kept answering, measured so
// that a loaded machine (two cores shared with other test runs) does not pass for a slow service:
//   - server time: the `durationMs` of the relayer's access log line for the request (relayer/src/http/
//     middleware.ts logs one line a request, from the first middleware to the response, with its request
//     id); the test stack appends the relayer's output to a log file, which this reads as it grows.
//   - CPU time: what the relayer process (every thread) has spent on a core, from /proc/<pid>/stat (Linux;
//     undefined elsewhere). Load elsewhere on the machine stretches a request's wall time but adds no CPU
//     time to the relayer, so a request measured alone that was slow in wall time AND in CPU time was slow
//     because of what it asked the relayer to do.
//   - a watchdog: GET /v1/health in a loop, answered within a bound while other requests run (a regular
//     expression that backtracks, or any other long computation, blocks the event loop and every request
//     waits, including requests the access log would never attribute it to).
import { closeSync, openSync, readFileSync, readSync, statSync } from "node:fs";
import type { HttpClient } from "./http.ts";

/** The relayer's access log lines, read as the file grows: request id -> durationMs. */
export function accessLog(file: string) {
  let offset = safeSize(file);
  let partial = "";
  const durations = new Map<string, number>();

  function readNew() {
    const size = safeSize(file);
    if (size < offset) offset = 0; // a new file
    if (size === offset) return;
    const fd = openSync(file, "r");
    try {
      const buffer = Buffer.alloc(size - offset);
      const read = readSync(fd, buffer, 0, buffer.length, offset);
      offset += read;
      const text = partial + buffer.subarray(0, read).toString("utf8");
      const lines = text.split("\n");
      partial = lines.pop() ?? "";
      for (const line of lines) {
        if (!line.includes('"msg":"request"')) continue;
        try {
          const entry = JSON.parse(line);
          if (typeof entry.requestId === "string" && typeof entry.durationMs === "number") durations.set(entry.requestId, entry.durationMs);
        } catch {
          // not a log line of ours
        }
      }
    } finally {
      closeSync(fd);
    }
  }

  return {
    /** The durations of these request ids, waiting up to `waitMs` for their lines to reach the file (the
     * relayer writes a line once its response is out; the output reaches the file a moment later). */
    async durations(ids: string[], waitMs = 10_000): Promise<Map<string, number>> {
      const deadline = Date.now() + waitMs;
      for (;;) {
        readNew();
        if (ids.every((id) => durations.has(id)) || Date.now() > deadline) break;
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      return new Map(ids.filter((id) => durations.has(id)).map((id) => [id, durations.get(id)!]));
    },
  };
}

function safeSize(file: string): number {
  try {
    return statSync(file).size;
  } catch {
    return 0;
  }
}

/** Milliseconds of CPU time (user and system, every thread) that process `pid` has used, or undefined where
 * /proc is not available. Linux counts it in clock ticks of 10 ms (USER_HZ is 100). */
export function processCpuMs(pid: number | undefined): number | undefined {
  if (pid === undefined) return undefined;
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    // The fields after the command name (which is in parentheses and may hold spaces): state is field 3,
    // utime and stime are fields 14 and 15.
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    const ticks = Number(fields[11]) + Number(fields[12]);
    return Number.isFinite(ticks) ? ticks * 10 : undefined;
  } catch {
    return undefined;
  }
}

export type WatchResult = { probes: number; maxMs: number; p50Ms: number; failures: string[] };

/** GET `path` every `everyMs` (one at a time) until stopped; what each took, and what went wrong. */
export function watchHealth(client: HttpClient, path: string, opts: { everyMs: number; timeoutMs: number }) {
  const times: number[] = [];
  const failures: string[] = [];
  let stopped = false;
  const loop = (async () => {
    while (!stopped) {
      const started = performance.now();
      try {
        const res = await client.send({ method: "GET", path, timeoutMs: opts.timeoutMs });
        times.push(performance.now() - started);
        if (res.status !== 200) failures.push(`GET ${path} answered ${res.status}: ${res.text.slice(0, 200)}`);
      } catch (error) {
        times.push(performance.now() - started);
        failures.push((error as Error).message);
      }
      if (!stopped) await new Promise((resolve) => setTimeout(resolve, opts.everyMs));
    }
  })();
  return {
    async stop(): Promise<WatchResult> {
      stopped = true;
      await loop;
      const sorted = [...times].sort((a, b) => a - b);
      return {
        probes: times.length,
        maxMs: sorted[sorted.length - 1] ?? 0,
        p50Ms: sorted[Math.floor(sorted.length / 2)] ?? 0,
        failures,
      };
    },
  };
}
