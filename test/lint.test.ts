// The repository passes ESLint (eslint.config.js), and the rule that guards request-facing code against
// regular expressions with super-linear backtracking is really in force there.
import assert from "node:assert/strict";
import path from "node:path";
import { test } from "node:test";
import { ESLint } from "eslint";

const root = path.resolve(import.meta.dirname, "..");

test("eslint finds no problem in the repository", async () => {
  const eslint = new ESLint({ cwd: root });
  const results = await eslint.lintFiles(["."]);
  const problems = results.flatMap((r) =>
    r.messages.map((m) => `${path.relative(root, r.filePath)}:${m.line}:${m.column} ${m.ruleId ?? ""} ${m.message}`),
  );
  assert.deepEqual(problems, []);
});

test("a quadratic regular expression in relayer code is an error", async () => {
  const eslint = new ESLint({ cwd: root });
  // The shape of the text guard's former escape scanner: a run of backslashes, unanchored.
  const source = "export const escape = (text: string) => /(\\\\+)u([0-9a-f]{4})/g.exec(text);\n";
  const [result] = await eslint.lintText(source, { filePath: path.join(root, "relayer/src/lint-probe.ts") });
  assert.ok(
    result.messages.some((m) => m.ruleId === "regexp/no-super-linear-move"),
    JSON.stringify(result.messages),
  );
  const [linear] = await eslint.lintText("export const id = (text: string) => /^[a-z]{1,8}$/.test(text);\n", {
    filePath: path.join(root, "relayer/src/lint-probe.ts"),
  });
  assert.deepEqual(linear.messages, []);
});
