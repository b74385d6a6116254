// The relayer's modules form layers without circles: the domain (payments, webhooks, chain, devices, events,
// jobs, the sandbox's telemetry and anchoring, the database) knows nothing of HTTP (no import of hono, of the
// HTTP layer `http/`, of the interfaces' routes and schemas `v1/`, `energy/routes/`, or of the pages); the routes
// map the domain's types and errors (so no folder of the domain and folder of an interface import each other
// either). No module imports itself through others (`import type` included: a circle
// of types is still a circle a reader has to untangle). ESLint's import rule keeps the domain off HTTP as code is
// written (eslint.config.js); this test reads the whole graph.
import assert from "node:assert/strict";
import { readFileSync, readdirSync } from "node:fs";
import path from "node:path";
import { describe, it } from "node:test";

const root = path.resolve(import.meta.dirname, "../..");
const src = path.join(root, "relayer", "src");

/** The relayer's source files, repository-relative. */
function sourceFiles(dir = src): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(full);
    return entry.name.endsWith(".ts") ? [path.relative(root, full)] : [];
  });
}

/** Every module specifier a file imports or re-exports (static imports, `import type` included). */
function specifiers(file: string): string[] {
  const text = readFileSync(path.join(root, file), "utf8");
  const found: string[] = [];
  for (const match of text.matchAll(/^\s*(?:import|export)\s[^;]*?\sfrom\s+"([^"]+)"/gms)) found.push(match[1]!);
  for (const match of text.matchAll(/^\s*import\s+"([^"]+)"/gm)) found.push(match[1]!);
  return found;
}

/** The repository-relative file a relative specifier names, or the package name of a bare one. */
function target(file: string, specifier: string): { file?: string; pkg?: string } {
  if (specifier.startsWith(".")) return { file: path.relative(root, path.resolve(root, path.dirname(file), specifier)) };
  if (specifier.startsWith("node:")) return { pkg: specifier };
  const parts = specifier.split("/");
  return { pkg: specifier.startsWith("@") ? parts.slice(0, 2).join("/") : parts[0] };
}

const files = sourceFiles();
const graph = new Map(files.map((file) => [file, specifiers(file).map((s) => ({ specifier: s, ...target(file, s) }))]));

const DOMAIN = ["payments", "webhooks", "chain", "devices", "events", "jobs", "db", "energy/telemetry", "energy/anchoring"].map(
  (dir) => `relayer/src/${dir}/`,
);
const HTTP = ["http", "v1", "energy/routes", "portal", "checkout"].map((dir) => `relayer/src/${dir}/`);
const HTTP_PACKAGES = new Set(["hono", "@hono/node-server"]);

describe("the relayer's import graph", () => {
  it("reads the relayer's modules and their imports", () => {
    assert.ok(files.length > 100, `${files.length} files`);
    const orders = graph.get("relayer/src/payments/orders.ts");
    assert.ok(orders && orders.some((i) => i.file === "relayer/src/db/schema.ts"), "payments/orders.ts imports the schema");
  });

  it("keeps the domain off HTTP: no domain module imports hono, the HTTP layer, the routes or the pages", () => {
    const offences: string[] = [];
    for (const [file, imports] of graph) {
      if (!DOMAIN.some((dir) => file.startsWith(dir))) continue;
      for (const i of imports) {
        if ((i.file && HTTP.some((dir) => i.file!.startsWith(dir))) || (i.pkg && HTTP_PACKAGES.has(i.pkg))) {
          offences.push(`${file} imports ${i.specifier}`);
        }
      }
    }
    assert.deepEqual(offences, []);
  });

  it("has no circle of imports between modules", () => {
    const circles: string[] = [];
    const state = new Map<string, "open" | "done">();
    const stack: string[] = [];
    const visit = (file: string) => {
      state.set(file, "open");
      stack.push(file);
      for (const next of graph.get(file) ?? []) {
        if (!next.file || !graph.has(next.file)) continue;
        const seen = state.get(next.file);
        if (seen === "open") circles.push([...stack.slice(stack.indexOf(next.file)), next.file].join(" -> "));
        else if (seen === undefined) visit(next.file);
      }
      stack.pop();
      state.set(file, "done");
    };
    for (const file of files) if (!state.has(file)) visit(file);
    assert.deepEqual(circles, []);
  });
});
