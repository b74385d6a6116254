// The whole repository type-checks (tsconfig.json): contracts' generated types, relayer, indexer, scripts,
// tests and benchmarks.
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import path from "node:path";
import { test } from "node:test";

test("tsc --noEmit finds no type error", () => {
  const root = path.resolve(import.meta.dirname, "..");
  const tsc = path.join(root, "node_modules", "typescript", "bin", "tsc");
  const result = spawnSync(process.execPath, [tsc, "--noEmit", "-p", root], { cwd: root, encoding: "utf8" });
  assert.equal(result.status, 0, `${result.stdout}${result.stderr}`);
});
