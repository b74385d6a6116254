// scripts/test-timeline.ts, which `npm test` loads into each test file's process when TEST_TIMELINE is set:
// the process appends one JSON line when it exits, with the file it ran, when it started and ended in
// seconds from TEST_TIMELINE_ORIGIN, and the CPU seconds it and the children it waited for used; without
// TEST_TIMELINE it writes nothing.
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { after, describe, it } from "node:test";

const root = path.resolve(import.meta.dirname, "..", "..");
const preload = pathToFileURL(path.join(root, "scripts", "test-timeline.ts")).href;
const dir = mkdtempSync(path.join(os.tmpdir(), "test-timeline-"));
after(() => rmSync(dir, { recursive: true, force: true }));

/** Runs a script that sleeps `ms` and exits with `code`, with the preload and `env`; returns the timeline's lines. */
function runScript(name: string, ms: number, code: number, env: NodeJS.ProcessEnv, body = ""): Array<Record<string, unknown>> {
  const script = path.join(dir, name);
  writeFileSync(script, `${body}\nsetTimeout(() => process.exit(${code}), ${ms});\n`);
  const result = spawnSync(process.execPath, ["--import", preload, script], { cwd: root, env: { ...process.env, ...env } });
  assert.equal(result.status, code, String(result.stderr));
  const file = env.TEST_TIMELINE;
  if (!file) return [];
  return readFileSync(file, "utf8")
    .trim()
    .split("\n")
    .filter(Boolean)
    .map((line) => JSON.parse(line) as Record<string, unknown>);
}

describe("the test timeline of npm test", () => {
  it("appends the file, its start and its end in seconds from the run's origin, and its exit code", () => {
    const timeline = path.join(dir, "timeline.jsonl");
    writeFileSync(timeline, "");
    const origin = Date.now() - 2_000;
    const env = { TEST_TIMELINE: timeline, TEST_TIMELINE_ORIGIN: String(origin) };
    runScript("first.mjs", 300, 0, env);
    const lines = runScript("second.mjs", 10, 3, env);
    assert.equal(lines.length, 2);
    const [first, second] = lines as Array<{ file: string; start: number; end: number; code: number }>;
    assert.equal(first.file, path.relative(root, path.join(dir, "first.mjs")));
    assert.equal(second.file, path.relative(root, path.join(dir, "second.mjs")));
    assert.deepEqual([first.code, second.code], [0, 3]);
    // Started about 2 s after the origin; the first slept 0.3 s.
    assert.ok(first.start >= 1.9 && first.start < 10, `start ${first.start}`);
    assert.ok(first.end - first.start >= 0.3, `${first.start} -> ${first.end}`);
    assert.ok(second.start >= first.end, `${second.start} after ${first.end}`);
  });

  it("counts the CPU seconds of the process and of the children it waited for", () => {
    const timeline = path.join(dir, "cpu.jsonl");
    writeFileSync(timeline, "");
    const env = { TEST_TIMELINE: timeline, TEST_TIMELINE_ORIGIN: String(Date.now()) };
    // Sleeps: next to no CPU.
    const [idle] = runScript("idle.mjs", 300, 0, env) as Array<{ cpu: number }>;
    // A child that spins until it has used 600 ms of CPU (not of wall time: a loaded machine may not give it a
    // core), waited for.
    const spin = "while (process.cpuUsage().user < 600000);";
    const body = `import { spawnSync } from "node:child_process"; spawnSync(process.execPath, ["-e", ${JSON.stringify(spin)}]);`;
    const [, busy] = runScript("busy.mjs", 10, 0, env, body) as Array<{ cpu: number }>;
    assert.equal(typeof idle.cpu, "number");
    assert.ok(idle.cpu >= 0 && idle.cpu < 0.5, `idle ${idle.cpu}`);
    assert.ok(busy.cpu >= 0.5, `busy ${busy.cpu}: the child's spin is counted`);
  });

  it("writes nothing without TEST_TIMELINE", () => {
    const timeline = path.join(dir, "untouched.jsonl");
    writeFileSync(timeline, "");
    runScript("third.mjs", 10, 0, { TEST_TIMELINE: undefined, TEST_TIMELINE_ORIGIN: String(Date.now()) });
    assert.equal(readFileSync(timeline, "utf8"), "");
  });
});
