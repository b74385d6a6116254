// lib/processes.ts startService: a Node child inherits `--liftoff-only` from the process that starts it (npm
// test runs its test files so, scripts/test.ts says why), and nothing else of its V8 flags; other commands get
// their arguments as given.
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { describe, it } from "node:test";

const processes = pathToFileURL(path.resolve(import.meta.dirname, "..", "..", "lib", "processes.ts")).href;

/** Runs, in a Node process with `flags`, a startService of a Node child and of /bin/echo; returns what each printed. */
function childArguments(flags: string[]): { node: string[]; echo: string } {
  const script = `
    const { startService } = await import(${JSON.stringify(processes)});
    const node = startService("child", process.execPath, ["-e", "console.log(JSON.stringify(process.execArgv.filter((a) => a.startsWith('--'))))"]);
    await node.exited;
    const echo = startService("echo", "/bin/echo", ["plain"]);
    await echo.exited;
    console.log(JSON.stringify({ node: JSON.parse(node.recentOutput()), echo: echo.recentOutput() }));`;
  const result = spawnSync(process.execPath, [...flags, "--input-type=module", "-e", script], { encoding: "utf8" });
  assert.equal(result.status, 0, result.stderr);
  return JSON.parse(result.stdout.trim().split("\n").at(-1)!);
}

describe("V8 flags of the Node processes a service start makes", () => {
  it("passes --liftoff-only on to a Node child, once, and leaves other commands alone", () => {
    assert.deepEqual(childArguments(["--liftoff-only", "--max-old-space-size=512"]), {
      node: ["--liftoff-only"],
      echo: "plain",
    });
  });

  it("adds nothing when the process runs without it", () => {
    assert.deepEqual(childArguments(["--max-old-space-size=512"]), { node: [], echo: "plain" });
  });
});
