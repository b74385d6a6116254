// Runs the Solidity (fuzz) tests of test/solidity with `hardhat test solidity` in a child process, so that
// a plain `node --test` run covers them too, and checks that they all ran and passed.
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { readdir, readFile } from "node:fs/promises";
import path from "node:path";
import { describe, it } from "node:test";

const root = path.resolve(import.meta.dirname, "..", "..");
const hardhatBin = path.join(root, "node_modules", ".bin", "hardhat");
const solidityTestsDir = path.join(root, "test", "solidity");

function run(args: string[]): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [hardhatBin, ...args], {
      cwd: root,
      env: { ...process.env, HARDHAT_DISABLE_TELEMETRY: "true", FORCE_COLOR: "0", NO_COLOR: "1" },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let output = "";
    child.stdout.on("data", (chunk) => (output += chunk));
    child.stderr.on("data", (chunk) => (output += chunk));
    child.on("error", reject);
    child.on("close", (code) => resolve({ code, output }));
  });
}

/** Test functions declared in the Solidity test files: every `function test...(` and the fuzzed ones among them. */
async function declaredTests() {
  let all = 0;
  let fuzz = 0;
  for (const name of await readdir(solidityTestsDir)) {
    if (!name.endsWith(".t.sol")) continue;
    const source = await readFile(path.join(solidityTestsDir, name), "utf8");
    for (const match of source.matchAll(/function\s+(test\w*)\s*\(([^)]*)\)/g)) {
      all++;
      if (match[2].trim() !== "") fuzz++;
    }
  }
  return { all, fuzz };
}

describe("Solidity tests (hardhat test solidity)", () => {
  it("all run and pass, and the fuzz tests fuzz", { timeout: 600_000 }, async (t) => {
    const expected = await declaredTests();
    assert.ok(expected.all > 0, "no Solidity test functions found in test/solidity");
    assert.ok(expected.fuzz > 0, "no fuzz test (test function with parameters) found in test/solidity");

    const { code, output } = await run(["test", "solidity"]);
    // eslint-disable-next-line no-control-regex
    const text = output.replace(/\x1b\[[0-9;]*m/g, "");
    assert.equal(code, 0, `hardhat test solidity exited with ${code}:\n${text}`);

    const passing = Number(/^\s*(\d+) passing/m.exec(text)?.[1] ?? 0);
    const failing = Number(/^\s*(\d+) failing/m.exec(text)?.[1] ?? 0);
    assert.ok(passing > 0, `no passing Solidity test reported:\n${text}`);
    assert.equal(failing, 0, text);
    assert.equal(passing, expected.all, `expected ${expected.all} passing Solidity tests:\n${text}`);

    const runs = [...text.matchAll(/✔ test\w*\([^)]+\) \(runs: (\d+)\)/g)].map((m) => Number(m[1]));
    assert.equal(runs.length, expected.fuzz, `expected ${expected.fuzz} fuzz tests with runs:\n${text}`);
    for (const n of runs) assert.ok(n >= 100, `a fuzz test ran only ${n} times`);
    t.diagnostic(`${passing} Solidity tests passed; fuzz runs: ${runs.join(", ")}`);
  });
});
