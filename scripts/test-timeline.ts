// Loaded into each test file's process by scripts/test.ts when TEST_TIMELINE is set: when the process exits,
// appends a line to that file with the test file, when its process started and when it exited, in seconds
// from the start of the run (TEST_TIMELINE_ORIGIN, epoch milliseconds), and the CPU seconds (user + system)
// of the process and of the children it waited for (the chains, indexers and relayers it started): on
// Linux from /proc/self/stat, elsewhere the process's own. Node's test runner reports a file's events only
// once the files before it have reported, so the timeline comes from the processes themselves.
import { appendFileSync, readFileSync } from "node:fs";
import path from "node:path";

/** CPU seconds of this process and of its waited-for children (Linux), or of this process alone. */
function cpuSeconds(): number {
  try {
    const stat = readFileSync("/proc/self/stat", "utf8");
    // Fields after the command name (which may hold spaces): state is field 3; utime, stime, cutime, cstime
    // are fields 14-17, in clock ticks (100 a second on Linux).
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    const ticks = fields.slice(11, 15).reduce((sum, field) => sum + Number(field), 0);
    if (Number.isFinite(ticks)) return ticks / 100;
  } catch {
    // Not Linux.
  }
  const { user, system } = process.cpuUsage();
  return (user + system) / 1e6;
}

const file = process.env.TEST_TIMELINE;
const origin = Number(process.env.TEST_TIMELINE_ORIGIN);
if (file && Number.isFinite(origin)) {
  const seconds = (at: number) => Math.round(at - origin) / 1000;
  const start = seconds(performance.timeOrigin);
  const testFile = path.relative(process.cwd(), process.argv[1] ?? "");
  process.on("exit", (code) => {
    const cpu = Math.round(cpuSeconds() * 100) / 100;
    appendFileSync(file, `${JSON.stringify({ file: testFile, start, end: seconds(Date.now()), cpu, code })}\n`);
  });
}
