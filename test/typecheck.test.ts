// The whole repository type-checks (tsconfig.json): contracts' generated types, relayer, indexer, scripts,
// tests and benchmarks. With TypeScript 7, the compiler `npm run typecheck` runs (package.json: `typescript-7`;
// the `typescript` 5.9 package stays for the tools that load TypeScript's JavaScript API, typescript-eslint
// among them). One checker thread: the other test files keep both cores busy.
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import path from "node:path";
import { test } from "node:test";

test("tsc --noEmit finds no type error", () => {
  const root = path.resolve(import.meta.dirname, "..");
  const tsc = path.join(root, "node_modules", "typescript-7", "bin", "tsc");
  const result = spawnSync(process.execPath, [tsc, "--noEmit", "--checkers", "1", "-p", root], { cwd: root, encoding: "utf8" });
  assert.equal(result.status, 0, `${result.stdout}${result.stderr}`);
});
