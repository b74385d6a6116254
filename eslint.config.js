// ESLint: every TypeScript file of the repository through typescript-eslint's recommended rules (the set
// that needs no type information: the type-checked set takes minutes on the whole repository), plus the
// rules below, each with the files it covers and the reason it is set. test/lint.test.ts fails on any rule
// set here otherwise than in the recommended set that `ruleSettings` does not list with its reason.
import { defineConfig, globalIgnores } from "eslint/config";
import regexp from "eslint-plugin-regexp";
import tseslint from "typescript-eslint";

/** Imports that patch a dependency or reach into its private files (every file). */
const PATCH_IMPORTS = {
  paths: [
    {
      name: "node:module",
      importNames: ["register", "registerHooks"],
      message: "No process-wide module hooks: they change how every dependency loads.",
    },
  ],
  patterns: [
    {
      regex: "^(@[^/]+/)?[^./@][^/]*/(.+/)?(dist|internal)(/|$)",
      message: "Another package's private files: import what its package.json exports (its documented entry points).",
    },
  ],
};

/** The relayer's domain: what it decides and stores, without HTTP (test/relayer/import-graph.test.ts reads the
 * whole graph too). */
const DOMAIN_FILES = [
  "relayer/src/payments/**/*.ts",
  "relayer/src/webhooks/**/*.ts",
  "relayer/src/chain/**/*.ts",
  "relayer/src/devices/**/*.ts",
  "relayer/src/events/**/*.ts",
  "relayer/src/jobs/**/*.ts",
  "relayer/src/db/**/*.ts",
  "relayer/src/energy/telemetry/**/*.ts",
  "relayer/src/energy/anchoring/**/*.ts",
  // The sandbox's domain; its HTTP side is energy/api.ts, energy/sandbox-api.ts, energy/routes/ (the envelope
  // included) and the two pieces of auth/ that read requests (require-token.ts, client-authentication.ts).
  "relayer/src/energy/errors.ts",
  "relayer/src/energy/capabilities.ts",
  "relayer/src/energy/devices.ts",
  "relayer/src/energy/evidence.ts",
  "relayer/src/energy/maintenance-worker.ts",
  "relayer/src/energy/sample-data.ts",
  "relayer/src/energy/seed.ts",
  "relayer/src/energy/workers.ts",
  "relayer/src/energy/auth/client-credentials.ts",
  "relayer/src/energy/auth/tokens.ts",
];

/** Every rule set beyond (or otherwise than) typescript-eslint's recommended set: where, how and why. */
export const ruleSettings = [
  {
    files: ["relayer/**/*.ts", "relayer/**/*.js", "indexer/**/*.ts", "sdk/**/*.ts", "device-cloud/**/*.ts"],
    plugins: { regexp },
    rules: {
      "regexp/no-super-linear-backtracking": ["error", { report: "potential" }],
      "regexp/no-super-linear-move": ["error", { report: "potential", ignoreSticky: false, ignorePartial: false }],
    },
    reason:
      "Code that sees request data (the relayer, the indexer's API, the SDK, the device-cloud simulator): a regular " +
      "expression with super-linear backtracking lets a single crafted request stall the event loop.",
  },
  {
    files: ["**/*.ts"],
    rules: { "@typescript-eslint/no-unused-vars": ["error", { ignoreRestSiblings: true }] },
    reason:
      "`const { secret: _secret, ...rest } = value` is how a copy without a key is made: the name beside the rest " +
      "element exists to leave that key out, and is unused by design. Every other unused name is still an error.",
  },
  {
    files: ["**/*.ts", "**/*.js"],
    rules: {
      "no-restricted-imports": [
        "error",
        {
          paths: PATCH_IMPORTS.paths,
          patterns: PATCH_IMPORTS.patterns,
        },
      ],
      "no-restricted-properties": [
        "error",
        { property: "setFlagsFromString", message: "No V8 flags changed at run time: pass them on the command line." },
        { property: "registerHooks", message: "No process-wide module hooks: they change how every dependency loads." },
      ],
      "no-restricted-syntax": [
        "error",
        {
          selector: "AssignmentExpression > MemberExpression.left[object.type='MemberExpression'][object.property.name='prototype']",
          message: "No assignment to a prototype's member: a dependency's behaviour is changed through its documented options only.",
        },
      ],
    },
    reason:
      "Dependencies through their documented interfaces only: no import of another package's private files " +
      "(`dist/`, `internal/`), no module resolution hooks, no V8 flags set at run time, no patched prototypes. " +
      "Each of these breaks silently at the dependency's next release.",
  },
  {
    files: DOMAIN_FILES,
    rules: {
      "no-restricted-imports": [
        "error",
        {
          paths: [
            ...PATCH_IMPORTS.paths,
            { name: "hono", message: "The domain knows nothing of HTTP: the routes map its types and errors." },
            { name: "@hono/node-server", message: "The domain knows nothing of HTTP: the routes map its types and errors." },
          ],
          patterns: [
            ...PATCH_IMPORTS.patterns,
            {
              regex: "(^|/)(http|v1|portal|checkout|energy/routes|routes)/",
              message: "The domain knows nothing of HTTP: throw errors.ts's ServiceError and return the domain's own types.",
            },
            {
              // The sandbox's routers, beside its domain files (energy/api.ts, energy/sandbox-api.ts).
              regex: "(^|/)(energy/|\\.\\./|\\./)(sandbox-)?api\\.ts$",
              message: "The domain knows nothing of HTTP: the sandbox's routes map its types and errors.",
            },
            { regex: "^hono/", message: "The domain knows nothing of HTTP: the routes map its types and errors." },
          ],
        },
      ],
    },
    reason:
      "Layers: the domain (payments, webhooks, chain, devices, events, jobs, the database, the sandbox's domain: " +
      "its errors, telemetry, anchoring, devices, evidence, clients and tokens) returns its own types and throws " +
      "its own errors; the routes (v1/, the sandbox's routes, the pages) map them to their interface. An import " +
      "the other way fails here (the patch rules above apply too).",
  },
  {
    files: ["test/support/unchecked-json.ts"],
    rules: { "@typescript-eslint/no-explicit-any": "off" },
    reason:
      "The one `any` of the repository: UncheckedJson, the parsed JSON a test reads (response bodies, documents) and " +
      "whose shape the test's assertions check at run time, where a static type would only repeat what is asserted.",
  },
];

export default defineConfig(
  globalIgnores([
    "node_modules/**",
    "artifacts/**",
    "cache/**",
    "generated/**",
    "sdk/dist/**",
    "sdk/src/generated/**",
    "coverage/**",
    ".local/**",
    "**/.ponder/**",
    "indexer/generated/**",
    "ignition/deployments/**",
    "test-results/**",
    "bench/results/**",
    ".scratch/**",
  ]),
  {
    files: ["**/*.ts", "**/*.js"],
    languageOptions: { parser: tseslint.parser, ecmaVersion: "latest", sourceType: "module" },
    linterOptions: { reportUnusedDisableDirectives: "off" },
  },
  { files: ["**/*.ts"], extends: [tseslint.configs.recommended] },
  ruleSettings.map(({ files, plugins, rules }) => (plugins ? { files, plugins, rules } : { files, rules })),
);
