// Loaded into each test file's process by scripts/test.ts when TEST_TIMELINE is set: when the process exits,
// appends a line to that file with the test file, when its process started and when it exited, in seconds
// from the start of the run (TEST_TIMELINE_ORIGIN, epoch milliseconds). Node's test runner reports a file's
// events only once the files before it have reported, so the timeline comes from the processes themselves.
import { appendFileSync } from "node:fs";
import path from "node:path";

const file = process.env.TEST_TIMELINE;
const origin = Number(process.env.TEST_TIMELINE_ORIGIN);
if (file && Number.isFinite(origin)) {
  const seconds = (at: number) => Math.round(at - origin) / 1000;
  const start = seconds(performance.timeOrigin);
  const testFile = path.relative(process.cwd(), process.argv[1] ?? "");
  process.on("exit", (code) => {
    appendFileSync(file, `${JSON.stringify({ file: testFile, start, end: seconds(Date.now()), code })}\n`);
  });
}
