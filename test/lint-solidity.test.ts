// The contracts pass solhint as `npm run lint` runs it (solhint:recommended and the adjustments of
// .solhint.json, listed with their reasons below), and the rules are really in force: a contract with known
// problems is reported.
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { readFile, readdir } from "node:fs/promises";
import { createRequire } from "node:module";
import path from "node:path";
import { test } from "node:test";

const root = path.resolve(import.meta.dirname, "..");
const solhint = path.join(root, "node_modules", "solhint", "solhint.js");
const require = createRequire(import.meta.url);
const { processStr } = require("solhint") as {
  processStr: (source: string, config: object) => { reports: Array<{ ruleId: string; message: string }> };
};
const { loadConfigForFile } = require("solhint/lib/config/config-file.js") as {
  loadConfigForFile: (file: string, rootDir: string) => object;
};

/** Every rule a config file changes from solhint:recommended, with the reason. A JSON config cannot carry
 * comments: this is where they are, and the test below fails when the config and this list disagree. */
const ADJUSTMENTS: Record<string, Record<string, string>> = {
  ".solhint.json": {
    "use-natspec": "no @author tags: authorship is the repository's history. Title, notice, param and return are required.",
    "func-visibility": "constructors have no visibility since Solidity 0.7 (ignoreConstructors, as the rule advises)",
    "immutable-vars-naming":
      "a private immutable is named like other private state (`_asset`, OpenZeppelin's convention), not like a constant",
    "gas-indexed-events":
      "off: it asks for indexed amounts, which would cost more gas (a topic is 375 gas, a data word 256), change " +
      "the events' ABI the indexer decodes, and amounts are not filter keys (like ERC-20 Transfer's value)",
    "gas-small-strings":
      "off: the only long strings are EIP-712 type strings, fixed by the standard and hashed at compile time " +
      "(constant keccak256); revert strings are ruled out by gas-custom-errors",
    "private-vars-leading-underscore": "added: private and internal names start with an underscore (OpenZeppelin)",
    "no-unused-private-funcs": "added",
    "gas-length-in-loops": "added",
    "max-line-length": "added: 120 columns, the contracts' width",
    "code-complexity": "added: 7, above every function's today",
  },
  "contracts/test/.solhint.json": {
    "use-natspec": "off for the test doubles: never deployed; each says what it simulates in its contract comment",
  },
};

function run(args: string[], input?: string): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [solhint, ...args], { cwd: root, stdio: ["pipe", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (chunk) => (stdout += chunk));
    child.stderr.on("data", (chunk) => (stderr += chunk));
    child.on("error", reject);
    child.on("close", (code) => resolve({ code, stdout, stderr }));
    child.stdin.end(input ?? "");
  });
}

type Message = { line?: number; column?: number; ruleId?: string; message?: string; filePath?: string; conclusion?: string };

/** solhint's JSON report, one line per problem. */
function problems(stdout: string): string[] {
  return (JSON.parse(stdout) as Message[])
    .filter((m) => m.conclusion === undefined)
    .map((m) => `${m.filePath}:${m.line}:${m.column} ${m.ruleId} ${m.message}`);
}

test("`npm run lint` runs solhint over every contract, failing on any warning", async () => {
  const { scripts } = JSON.parse(await readFile(path.join(root, "package.json"), "utf8")) as { scripts: Record<string, string> };
  assert.match(scripts.lint!, /npm run lint:sol/);
  assert.equal(scripts["lint:sol"], "solhint --disc --noPoster --max-warnings 0 'contracts/**/*.sol'");
});

test("solhint finds no problem in the contracts", async () => {
  const { code, stdout, stderr } = await run(["--disc", "--noPoster", "-f", "json", "contracts/**/*.sol"]);
  assert.deepEqual(problems(stdout), []);
  assert.equal(code, 0, stderr);
  assert.equal(stderr, "", "solhint warned about its configuration");
});

test("a contract with known problems is reported", async () => {
  const probe = `// SPDX-License-Identifier: MIT
pragma solidity ^0.8.28;

/// @title Probe
/// @notice A contract with two known problems.
contract Probe {
    /// @notice Reverts with a string instead of a custom error.
    /// @param amount Any amount.
    function check(uint256 amount) external pure {
        require(amount > 0, "amount must be positive");
    }

    function undocumented() external pure returns (uint256) {
        return 1;
    }
}
`;
  // In process, with the configuration a file in contracts/ gets.
  const config = loadConfigForFile(path.join(root, "contracts", "Probe.sol"), root);
  const ruleIds = (source: string) => processStr(source, config).reports.map((r) => r.ruleId);
  assert.deepEqual(ruleIds(probe), ["gas-custom-errors", "use-natspec"]);
  const clean = probe
    .replace('require(amount > 0, "amount must be positive");', "if (amount == 0) revert ZeroAmount();")
    .replace("contract Probe {", "contract Probe {\n    /// @notice An amount of zero.\n    error ZeroAmount();\n")
    .replace("    function undocumented()", "    /// @notice Always one.\n    function undocumented()");
  assert.deepEqual(ruleIds(clean), []);

  // The command line, with the script's --max-warnings 0: a warning fails the run.
  const strict = await run(["stdin", "--max-warnings", "0", "-f", "unix"], probe);
  assert.equal(strict.code, 1, strict.stdout);
  assert.match(strict.stdout, /\[Warning\/gas-custom-errors\]/);
});

test("every rule the configs change is listed here with its reason, and no directive disables all rules", async () => {
  const recommended = (require("solhint/conf/rulesets/solhint-recommended.js") as { rules: Record<string, unknown> }).rules;
  for (const [file, reasons] of Object.entries(ADJUSTMENTS)) {
    const config = JSON.parse(await readFile(path.join(root, file), "utf8")) as { rules: Record<string, unknown> };
    const changed = Object.keys(config.rules).filter(
      (rule) => !Object.hasOwn(recommended, rule) || JSON.stringify(recommended[rule]) !== JSON.stringify(config.rules[rule]),
    );
    assert.deepEqual(changed.sort(), Object.keys(reasons).sort(), `${file}: every changed rule needs its reason here`);
  }

  // A directive names the rules it disables, for one line (`solhint-disable-next-line <rule>`).
  const sources = (await readdir(path.join(root, "contracts"), { recursive: true })).filter((f) => f.endsWith(".sol"));
  assert.ok(sources.length > 0);
  for (const file of sources) {
    const text = await readFile(path.join(root, "contracts", file), "utf8");
    for (const [, kind, rules] of text.matchAll(/solhint-(disable(?:-next-line|-line|-previous-line)?|enable)\b([^\n]*)/g)) {
      assert.ok(kind !== "disable" && kind !== "enable", `${file}: solhint-${kind} (a file-wide directive)`);
      assert.match(rules!.replace("*/", "").trim(), /^[a-z0-9-]+(?:\s*,\s*[a-z0-9-]+)*$/, `${file}: solhint-${kind} without a rule`);
    }
  }
});
