// The repository passes ESLint (eslint.config.js): typescript-eslint's recommended rules are in force on
// every TypeScript file, the rule that guards request-facing code against regular expressions with
// super-linear backtracking is really in force there, and every rule the config sets otherwise than the
// recommended set is listed in its `ruleSettings` with the reason.
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import path from "node:path";
import { test } from "node:test";
import { pathToFileURL } from "node:url";
import { isDeepStrictEqual } from "node:util";
import { ESLint, type Linter } from "eslint";
import tseslint from "typescript-eslint";

const root = path.resolve(import.meta.dirname, "..");

type RuleSetting = { files: string[]; rules: Linter.RulesRecord; reason: string };
const { default: config, ruleSettings } = (await import(pathToFileURL(path.join(root, "eslint.config.js")).href)) as {
  default: Linter.Config[];
  ruleSettings: RuleSetting[];
};

test("eslint finds no problem in the repository", () => {
  // ESLint's command line with the cache of `npm run lint` (package.json: same location and strategy): a file
  // whose content and config did not change since a lint found no problem in it is not linted again (no rule
  // here reads type information, so a file's problems depend on its own text and the config only). The
  // command line, not the ESLint class: the two key their caches differently.
  const result = spawnSync(
    process.execPath,
    [path.join(root, "node_modules", "eslint", "bin", "eslint.js"), ...eslintCacheArgs(), "--format", "json", "."],
    {
      cwd: root,
      encoding: "utf8",
      maxBuffer: 64 * 1024 * 1024,
    },
  );
  const results = JSON.parse(result.stdout || "[]") as ESLint.LintResult[];
  const problems = results.flatMap((r) =>
    r.messages.map((m) => `${path.relative(root, r.filePath)}:${m.line}:${m.column} ${m.ruleId ?? ""} ${m.message}`),
  );
  assert.deepEqual(problems, []);
  assert.equal(result.status, 0, result.stderr);
});

/** The cache options of package.json's `lint` script. */
function eslintCacheArgs(): string[] {
  const { scripts } = JSON.parse(readFileSync(path.join(root, "package.json"), "utf8")) as { scripts: Record<string, string> };
  const args = scripts.lint?.match(/^eslint (--cache .*?) \. &&/)?.[1]?.split(" ");
  assert.ok(args, `package.json's lint script does not start with "eslint --cache ... . &&": ${scripts.lint}`);
  return args;
}

test("every rule set otherwise than typescript-eslint's recommended set is listed with its reason", () => {
  const recommended: Linter.RulesRecord = Object.assign({}, ...tseslint.configs.recommended.map((c) => c.rules ?? {}));
  const unlisted: string[] = [];
  for (const block of config) {
    for (const [rule, setting] of Object.entries(block.rules ?? {})) {
      if (isDeepStrictEqual(setting, recommended[rule])) continue;
      const listed = ruleSettings.some((s) => isDeepStrictEqual(s.files, block.files) && isDeepStrictEqual(s.rules[rule], setting));
      if (!listed) unlisted.push(`${rule} ${JSON.stringify(setting)} on ${JSON.stringify(block.files ?? "every file")}`);
    }
  }
  assert.deepEqual(unlisted, [], "rules set in eslint.config.js outside its ruleSettings");
  for (const s of ruleSettings) {
    const rules = Object.keys(s.rules).join(", ");
    assert.ok(rules !== "" && s.files.length > 0, `a ruleSettings entry without rules or files: ${rules}`);
    assert.ok(typeof s.reason === "string" && s.reason.trim().length >= 80, `${rules}: the reason is missing or too short to be one`);
  }
});

test("the recommended rules are in force on the TypeScript of every part of the repository", async () => {
  const eslint = new ESLint({ cwd: root });
  const places = [
    "relayer/src/lint-probe.ts",
    "indexer/src/lint-probe.ts",
    "sdk/lint-probe.ts",
    "device-cloud/src/lint-probe.ts",
    "lib/lint-probe.ts",
    "scripts/lint-probe.ts",
    "bench/lint-probe.ts",
    "test/lint-probe.ts",
    "test/support/lint-probe.ts",
    "ignition/modules/lint-probe.ts",
    "hardhat.config.ts",
  ];
  // An `any`, an unused name, and a name left out of a copy beside a rest element (allowed, ruleSettings).
  const source =
    "export const f = (x: any) => x;\nconst unused = 1;\nexport const g = ({ a: _a, ...rest }: { a: number; b: number }) => rest;\n";
  for (const place of places) {
    const [result] = await eslint.lintText(source, { filePath: path.join(root, place) });
    const found = result.messages.map((m) => `${m.line}:${m.ruleId}`);
    assert.deepEqual(found, ["1:@typescript-eslint/no-explicit-any", "2:@typescript-eslint/no-unused-vars"], place);
  }
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

test("a patch of a dependency is an error anywhere: private files, module hooks, run-time V8 flags, prototypes", async () => {
  const eslint = new ESLint({ cwd: root });
  const cases: Array<[source: string, rule: string]> = [
    ['import { x } from "ponder/dist/esm/bin/ponder.js";\nexport { x };\n', "no-restricted-imports"],
    ['import { y } from "@scope/pkg/internal/logger.js";\nexport { y };\n', "no-restricted-imports"],
    ['import { registerHooks } from "node:module";\nregisterHooks({});\n', "no-restricted-imports"],
    ['import v8 from "node:v8";\nv8.setFlagsFromString("--liftoff-only");\n', "no-restricted-properties"],
    ['import module from "node:module";\nmodule.registerHooks({});\n', "no-restricted-properties"],
    ['import { Server } from "some-package/server";\nServer.prototype.listen = () => undefined;\n', "no-restricted-syntax"],
  ];
  for (const place of ["lib/lint-probe.ts", "indexer/lint-probe.ts", "relayer/src/lint-probe.ts", "test/lint-probe.ts"]) {
    for (const [source, rule] of cases) {
      const [result] = await eslint.lintText(source, { filePath: path.join(root, place) });
      assert.ok(
        result.messages.some((m) => m.ruleId === rule),
        `${place}: ${JSON.stringify(source)} -> ${JSON.stringify(result.messages)}`,
      );
    }
  }
  // A package's documented entry points stay allowed.
  const [allowed] = await eslint.lintText('import { serve } from "@hono/node-server";\nimport { z } from "zod";\nexport { serve, z };\n', {
    filePath: path.join(root, "lib/lint-probe.ts"),
  });
  assert.deepEqual(allowed.messages, []);
});

test("the domain importing HTTP is an error; the routes importing the domain is not", async () => {
  const eslint = new ESLint({ cwd: root });
  const domainImports = [
    'import { errorBody } from "../http/errors.ts";\nexport { errorBody };\n',
    'import { QuoteRequest } from "../v1/quote.schemas.ts";\nexport { QuoteRequest };\n',
    'import type { Context } from "hono";\nexport type C = Context;\n',
    'import { HTTPException } from "hono/http-exception";\nexport { HTTPException };\n',
  ];
  for (const place of ["relayer/src/payments/lint-probe.ts", "relayer/src/webhooks/lint-probe.ts", "relayer/src/chain/lint-probe.ts"]) {
    for (const source of domainImports) {
      const [result] = await eslint.lintText(source, { filePath: path.join(root, place) });
      assert.ok(
        result.messages.some((m) => m.ruleId === "no-restricted-imports"),
        `${place}: ${JSON.stringify(source)} -> ${JSON.stringify(result.messages)}`,
      );
    }
  }
  const [route] = await eslint.lintText(
    'import { errors } from "../errors.ts";\nimport { createOrder } from "../payments/orders.ts";\nexport { errors, createOrder };\n',
    {
      filePath: path.join(root, "relayer/src/v1/lint-probe.ts"),
    },
  );
  assert.deepEqual(route.messages, []);
  // The patch rules still hold in the domain.
  const [patch] = await eslint.lintText('import { x } from "ponder/dist/esm/index.js";\nexport { x };\n', {
    filePath: path.join(root, "relayer/src/payments/lint-probe.ts"),
  });
  assert.ok(patch.messages.some((m) => m.ruleId === "no-restricted-imports"));
});

test("the sandbox's domain importing its HTTP side is an error; its routes importing the domain are not", async () => {
  const eslint = new ESLint({ cwd: root });
  const refused = (result: ESLint.LintResult) => result.messages.some((m) => m.ruleId === "no-restricted-imports");
  // The envelope, the routers and hono, from the sandbox's domain files (each by its own path).
  const cases: Array<[string, string]> = [
    ["relayer/src/energy/errors.ts", 'import { sandboxErrorBody } from "./routes/envelope.ts";\nexport { sandboxErrorBody };\n'],
    ["relayer/src/energy/devices.ts", 'import { createSandboxApi } from "./sandbox-api.ts";\nexport { createSandboxApi };\n'],
    ["relayer/src/energy/evidence.ts", 'import { energyApi } from "./api.ts";\nexport { energyApi };\n'],
    ["relayer/src/energy/auth/tokens.ts", 'import type { Context } from "hono";\nexport type C = Context;\n'],
    [
      "relayer/src/energy/telemetry/lint-probe.ts",
      'import { toSandboxResponse } from "../routes/envelope.ts";\nexport { toSandboxResponse };\n',
    ],
    ["relayer/src/energy/anchoring/lint-probe.ts", 'import { createSandboxApi } from "../sandbox-api.ts";\nexport { createSandboxApi };\n'],
  ];
  for (const [place, source] of cases) {
    const [result] = await eslint.lintText(source, { filePath: path.join(root, place) });
    assert.ok(refused(result), `${place}: ${JSON.stringify(source)} -> ${JSON.stringify(result.messages)}`);
  }
  // The routes map the domain's errors: importing them is the point.
  const [route] = await eslint.lintText(
    'import { sandboxErrors } from "../errors.ts";\nimport { ingestTelemetry } from "../telemetry/ingest.ts";\nexport { sandboxErrors, ingestTelemetry };\n',
    { filePath: path.join(root, "relayer/src/energy/routes/lint-probe.ts") },
  );
  assert.deepEqual(route.messages, []);
  // And the domain's own errors (the relayer's ServiceError) stay allowed in the domain.
  const [domain] = await eslint.lintText('import { ServiceError } from "../errors.ts";\nexport { ServiceError };\n', {
    filePath: path.join(root, "relayer/src/energy/devices.ts"),
  });
  assert.deepEqual(domain.messages, []);
});
