// lib/package-imports-hook.ts: a relative import inside an installed package resolves, through the hook, to the
// same URL and format as through Node's own resolution (compared over every relative import of a set of
// packages, ES modules and CommonJS), and every other import is left to Node; a Node child a service start
// makes loads the hook.
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { readFileSync, readdirSync } from "node:fs";
import path from "node:path";
import { describe, it } from "node:test";
import { pathToFileURL } from "node:url";
import { resolveInPackage } from "../../lib/package-imports-hook.ts";
import { PACKAGE_IMPORTS_HOOK, startService } from "../../lib/processes.ts";

const root = path.resolve(import.meta.dirname, "..", "..");
const modules = path.join(root, "node_modules");

/** The relative `import ... from "./x.js"` specifiers of the package files under `folder` (up to `limit`
 * files), and each file's import of itself by its own name (so CommonJS files, which require their siblings,
 * count too). */
function relativeImports(folder: string, limit: number): Array<{ specifier: string; parentURL: string }> {
  const found: Array<{ specifier: string; parentURL: string }> = [];
  const files = readdirSync(folder, { recursive: true, encoding: "utf8" })
    .filter((file) => /\.[cm]?js$/.test(file))
    .sort()
    .slice(0, limit);
  for (const file of files) {
    found.push({ specifier: `./${path.basename(file)}`, parentURL: pathToFileURL(path.join(folder, file)).href });
    const text = readFileSync(path.join(folder, file), "utf8");
    for (const match of text.matchAll(/\bfrom\s*["'](\.\.?\/[^"']+)["']/g))
      found.push({ specifier: match[1], parentURL: pathToFileURL(path.join(folder, file)).href });
  }
  return found;
}

/** What Node's own resolution gives for each import, with its format, in a process without the hook
 * (`import.meta.resolve` with a parent URL needs --experimental-import-meta-resolve on Node 22). */
function nodeResolutions(imports: Array<{ specifier: string; parentURL: string }>): Array<{ url: string; format: string } | null> {
  const script = `
    import { registerHooks } from "node:module";
    let seen;
    registerHooks({ resolve(specifier, context, next) { const r = next(specifier, context); seen = { url: r.url, format: r.format }; return r; } });
    const imports = JSON.parse(process.argv[1]);
    const out = [];
    for (const { specifier, parentURL } of imports) {
      seen = null;
      try { import.meta.resolve(specifier, parentURL); } catch { seen = null; }
      out.push(seen);
    }
    console.log(JSON.stringify(out));`;
  const result = spawnSync(
    process.execPath,
    ["--experimental-import-meta-resolve", "--input-type=module", "-e", script, JSON.stringify(imports)],
    {
      encoding: "utf8",
      maxBuffer: 64 * 1024 * 1024,
    },
  );
  assert.equal(result.status, 0, result.stderr);
  return JSON.parse(result.stdout) as Array<{ url: string; format: string } | null>;
}

describe("the package imports hook", () => {
  it("resolves the relative imports of installed packages as Node does, URL and format", () => {
    const imports = [
      // ES modules ("type": "module"), the package the hook is for.
      ...relativeImports(path.join(modules, "drizzle-orm", "pg-core"), 150),
      // ES modules under a folder whose own package.json says so (viem's _esm), and CommonJS beside them.
      ...relativeImports(path.join(modules, "viem", "_esm", "utils"), 60),
      ...relativeImports(path.join(modules, "viem", "_cjs", "utils"), 60),
      // .mjs files.
      ...relativeImports(path.join(modules, "@electric-sql", "pglite", "dist"), 20),
    ];
    const ours = imports.map(({ specifier, parentURL }) => resolveInPackage(specifier, parentURL) ?? null);
    assert.ok(
      ours.filter((r) => r !== null).length > 300,
      `the hook answers most of these imports (${ours.filter((r) => r !== null).length} of ${imports.length})`,
    );
    assert.ok(ours.some((r) => r?.format === "commonjs") && ours.some((r) => r?.format === "module"), "both formats are among them");
    const node = nodeResolutions(imports);
    imports.forEach((entry, i) => {
      if (ours[i] !== null) assert.deepEqual(ours[i], node[i], `${entry.specifier} from ${entry.parentURL}`);
    });
  });

  it("leaves to Node what is not a relative import of a script inside node_modules", () => {
    const inside = pathToFileURL(path.join(modules, "drizzle-orm", "pg-core", "index.js")).href;
    const outside = pathToFileURL(path.join(root, "relayer", "src", "app.ts")).href;
    assert.equal(resolveInPackage("drizzle-orm/pg-core", inside), undefined, "a bare specifier");
    assert.equal(resolveInPackage("node:fs", inside), undefined, "a builtin");
    assert.equal(resolveInPackage("./columns", inside), undefined, "no extension");
    assert.equal(resolveInPackage("./data.json", inside), undefined, "not a script");
    assert.equal(resolveInPackage("./db/client.ts", outside), undefined, "an importer outside node_modules");
    assert.equal(resolveInPackage("./x.js", undefined), undefined, "no importer");
    assert.deepEqual(resolveInPackage("./columns/index.js", inside), {
      url: pathToFileURL(path.join(modules, "drizzle-orm", "pg-core", "columns", "index.js")).href,
      format: "module",
    });
  });

  it("is loaded by a Node child that a service start makes", async () => {
    const child = startService("child", process.execPath, ["-e", "console.log(JSON.stringify(process.execArgv))"]);
    assert.equal(await child.exited, 0);
    const execArgv = JSON.parse(child.recentOutput()) as string[];
    const at = execArgv.indexOf(PACKAGE_IMPORTS_HOOK[0]);
    assert.deepEqual(execArgv.slice(at, at + 2), [...PACKAGE_IMPORTS_HOOK]);
  });
});
