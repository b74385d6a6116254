// The command-line entry point an installed package declares in its package.json (`bin`), as npm links it into
// node_modules/.bin: the path the scripts run with `node` directly, so that stopping the child's PID stops the
// program itself (no npx or shell in between).
import { readFileSync } from "node:fs";
import path from "node:path";
import { repoRoot } from "../ignition/deployment-records.ts";

/** The file of `name`, a command of the installed package `pkg` (its package.json's `bin`). */
export function packageBin(pkg: string, name = pkg): string {
  const dir = path.join(repoRoot, "node_modules", pkg);
  const { bin } = JSON.parse(readFileSync(path.join(dir, "package.json"), "utf8")) as { bin?: string | Record<string, string> };
  const file = typeof bin === "string" ? bin : bin !== undefined && Object.hasOwn(bin, name) ? bin[name] : undefined;
  if (file === undefined) throw new Error(`the package ${pkg} declares no command ${name}`);
  return path.join(dir, file);
}
