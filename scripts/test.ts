// `npm test`: builds the contracts, the generated ABIs and deployment records,
// checks the services the end-to-end suites need, then runs every test of the repository with Node's test
// runner, six files at a time, each file in a process of its own but the contract suites, which share one
// (test/support/contract-suites-process.ts), reporting TAP (the run ends with its `# pass N` / `# fail N` summary).
//   npm test                       every suite (on PGlite and PostgreSQL where the database matters)
//   npm test -- test/relayer       only the files under a path (or a glob)
// Environment: TEST_DATABASES=pglite|postgres|pglite,postgres; TEST_DATABASE_URL (default
// postgresql://postgres@127.0.0.1:5432/test); TEST_REPORTER (default tap); TEST_CONCURRENCY (files at a time,
// default 6: the end-to-end suites spend much of their time waiting (blocks, leases, retry and expiry windows), so
// a run is bound by how many files are open at once more than by two cores; where a run is bound by the CPU
// instead, more files at once cost more CPU for the same work: set 4 on a machine whose cores stay busy through
// a run. Each test file
// has a PostgreSQL database of its own, so files never share Ponder's sync tables; the suites that start whole
// stacks go first, see LONGEST_FIRST);
// TEST_DEPLOY=ignition (deploy every test chain with Ignition instead of replaying the first deployment:
// test/support/deployment-replay.ts);
// NODE_COMPILE_CACHE (default node_modules/.cache/node-compile-cache, see below); TEST_TIMELINE (a file to
// which each test file's process appends a JSON line when it exits: the file, when its process started and
// ended in seconds from the start of the run, and its CPU seconds with its children's (scripts/test-timeline.ts):
// what LONGEST_FIRST is made from).
import { spawnSync } from "node:child_process";
import { existsSync, globSync, statSync, writeFileSync } from "node:fs";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { run as runTests } from "node:test";
import * as reporters from "node:test/reporters";
import pg from "pg";
import { hardhatCli } from "../lib/contracts.ts";
import { createIndexerDatabaseTemplate } from "../lib/indexer.ts";
import { processAlive } from "../lib/processes.ts";
import { createRelayerDatabaseTemplate } from "../lib/relayer.ts";
import { PGLITE_TEMPLATES } from "../test/support/pglite-templates.ts";
import { SHARED_PROCESS_ENTRY, SHARED_PROCESS_FILES_ENV, runsInSharedProcess } from "../test/support/contract-suites.ts";

const root = path.resolve(import.meta.dirname, "..");
const node = process.execPath;
const env: NodeJS.ProcessEnv = {
  ...process.env,
  HARDHAT_DISABLE_TELEMETRY: "true",
  PONDER_TELEMETRY_DISABLED: "1",
  // Every Node process of the run (test files, and the chains, indexers and relayers they start) keeps the
  // code V8 compiled for a module on disk and reuses it: a stack starts a dozen processes that load the same
  // large module graphs (Ponder, viem, Hardhat), about a tenth of their start-up CPU.
  NODE_COMPILE_CACHE: process.env.NODE_COMPILE_CACHE ?? path.join(root, "node_modules", ".cache", "node-compile-cache"),
};

const reporter = env.TEST_REPORTER ?? "tap";
/** Node's built-in reporters by their `--test-reporter` names. */
function reporterFor(name: string) {
  if (name === "tap") return reporters.tap;
  if (name === "dot") return reporters.dot;
  if (name === "junit") return reporters.junit;
  if (name === "spec") return new reporters.spec();
  console.error(`# TEST_REPORTER must be tap, spec, dot or junit (got ${name})`);
  process.exit(1);
}
const reporterStream = reporterFor(reporter);
const concurrency = Number(env.TEST_CONCURRENCY ?? "6");
if (!Number.isInteger(concurrency) || concurrency < 1) {
  console.error(`# TEST_CONCURRENCY must be a positive integer (got ${env.TEST_CONCURRENCY})`);
  process.exit(1);
}

function run(label: string, args: string[]) {
  console.error(`# ${label}`);
  const result = spawnSync(node, args, { cwd: root, env, stdio: ["ignore", "inherit", "inherit"] });
  if (result.status !== 0) {
    console.error(`# ${label} failed (exit ${result.status})`);
    process.exit(result.status ?? 1);
  }
}

const wanted = (env.TEST_DATABASES ?? "pglite,postgres").split(",").map((s) => s.trim());
// The PGlite templates (test/support/pglite-templates.ts), one per PGlite version, made beside the build and
// awaited before the test files start: otherwise the first files to start make them at the same time, each
// its own.
const templates = wanted.includes("pglite")
  ? Promise.all([createRelayerDatabaseTemplate(PGLITE_TEMPLATES), createIndexerDatabaseTemplate(PGLITE_TEMPLATES)])
  : undefined;
templates?.catch(() => undefined);

run("build the contracts", [hardhatCli, "build", "--quiet"]);
run("generate the ABIs", [path.join(root, "scripts/generate-abis.ts")]);
run("generate the deployment records", [path.join(root, "scripts/generate-deployments.ts")]);

/** Each test process makes a PostgreSQL database of its own, `<test database>_p<pid>`, and drops it when it
 * exits (test/support/databases.ts); a process that was killed leaves its database behind: drop those whose
 * process is gone. */
async function dropAbandonedTestDatabases(client: pg.Client, url: string) {
  const prefix = `${new URL(url).pathname.slice(1) || "test"}_p`;
  const { rows } = await client.query<{ datname: string }>("select datname from pg_database where starts_with(datname, $1)", [prefix]);
  for (const { datname } of rows) {
    const pid = Number(datname.slice(prefix.length));
    if (!Number.isSafeInteger(pid) || pid <= 0 || processAlive(pid)) continue;
    await client.query(`DROP DATABASE IF EXISTS "${datname.replaceAll('"', '""')}" WITH (FORCE)`);
  }
}

if (templates) {
  console.error("# make the PGlite templates");
  await templates;
}
if (wanted.includes("postgres")) {
  const url = env.TEST_DATABASE_URL ?? "postgresql://postgres@127.0.0.1:5432/test";
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 3_000 });
  try {
    await client.connect();
    await dropAbandonedTestDatabases(client, url);
    await client.end();
  } catch (error) {
    console.error(
      `# PostgreSQL is not reachable at ${url} (${(error as Error).message}).\n` +
        "# Start it, set TEST_DATABASE_URL, or run only the embedded database: TEST_DATABASES=pglite npm test",
    );
    process.exit(1);
  }
}

/** The order in which the long files start, the longest first (each with its seconds from its process's start
 * to its end, and its CPU seconds, from a TEST_TIMELINE run on a loaded 2-core host, six files at a time): the two
 * resilience suites, then by duration. Most of these suites wait much of their time (blocks, leases, retry-after
 * windows, expiries). The files of 5-20 s are listed too, so that the last seconds of a run are the files of one
 * or two seconds, not one of those alone. Scheduling only: a file
 * missing here runs after them, in path order. (Node's `--test` command line sorts the files it is given by
 * path, whatever their order: the files run through `run()` below, which keeps it.) */
const LONGEST_FIRST = [
  "test/resilience/resilience.pglite.test.ts", // 250 s, 82 CPU s
  "test/resilience/resilience.postgres.test.ts", // 240 s, 64 CPU s
  "test/relayer/scale-out.test.ts", // 315 s, 54 CPU s
  "test/indexer/indexer.sql-limits.test.ts", // 238 s, 59 CPU s
  "test/relayer/tx-sender.test.ts", // 193 s, 51 CPU s
  "test/relayer/api.test.ts", // 168 s, 45 CPU s
  "test/indexer/indexer.backfill.test.ts", // 159 s, 43 CPU s
  "test/indexer/indexer.rows.test.ts", // 154 s, 43 CPU s
  "test/relayer/cash-rail-caps.test.ts", // 135 s, 41 CPU s
  "test/indexer/indexer.factory-splits.test.ts", // 131 s, 33 CPU s
  "test/relayer/gas-griefing.test.ts", // 125 s, 24 CPU s
  "test/stack/start.test.ts", // 119 s, 62 CPU s
  "test/stack/rehearsal.test.ts", // 116 s, 3 CPU s
  "test/energy/anchoring.test.ts", // 104 s, 33 CPU s
  "test/indexer/indexer.reorg.test.ts", // 102 s, 30 CPU s
  "test/portal/browser.test.ts", // 99 s, 29 CPU s
  "test/sdk/packed-install.test.ts", // 99 s (a stack, npm pack, an offline npm ci, tsc over viem's types)
  "test/stack/entry-points.test.ts", // 96 s, 42 CPU s
  SHARED_PROCESS_ENTRY, // 93 s, 21 CPU s
  "test/relayer/metrics.test.ts", // 91 s, 25 CPU s
  "test/webhooks/delivery.test.ts", // 83 s, 28 CPU s
  "test/relayer/reorg-truth.test.ts", // 68 s, 17 CPU s
  "test/energy/telemetry.test.ts", // 68 s, 17 CPU s
  "test/webhooks/multi-process.test.ts", // 65 s, 19 CPU s
  "test/relayer/login-queue.test.ts", // 63 s, 17 CPU s
  "test/relayer/connection-limits.test.ts", // 63 s, 13 CPU s
  "test/webhooks/tenant-fairness.test.ts", // 56 s, 27 CPU s
  "test/webhooks/subscription-cap.test.ts", // 55 s, 28 CPU s
  "test/webhooks/secret-rotation.test.ts", // 52 s, 8 CPU s
  "test/relayer/device-status-cache.test.ts", // 51 s, 11 CPU s
  "test/relayer/docs-headers.test.ts", // 47 s, 11 CPU s
  "test/indexer/indexer.outage.test.ts", // 47 s, 12 CPU s
  "test/energy/sandbox.test.ts", // 44 s, 10 CPU s
  "test/webhooks/own-endpoints.test.ts", // 43 s, 10 CPU s
  "test/typecheck.test.ts", // 39 s, 12 CPU s
  "test/portal/webhook-secret-rotation.test.ts", // 38 s, 10 CPU s
  "test/relayer/client-identity.test.ts", // 31 s, 8 CPU s
  "test/relayer/passwords.test.ts", // 28 s, 7 CPU s
  "test/relayer/worker.test.ts", // 28 s, 3 CPU s
  "test/stack/hardhat-lock.test.ts", // 25 s, 7 CPU s
  "test/indexer/new-heads-relay.test.ts", // 23 s, 2 CPU s
  "test/lint.test.ts", // 21 s, 7 CPU s
  "test/relayer/pglite-settings.test.ts", // 18 s, 4 CPU s
  "test/relayer/migrations.test.ts", // 15 s, 4 CPU s
  "test/stack/contract-suites-process.test.ts", // 15 s, 4 CPU s
  "test/stack/pglite-template-versions.test.ts", // 14 s, 4 CPU s
  "test/stack/test-timeline.test.ts", // 14 s, 4 CPU s
  "test/stack/parallel-build.test.ts", // 13 s, 4 CPU s
  "test/lint-solidity.test.ts", // 12 s, 4 CPU s
  "test/stack/hardhat-node.test.ts", // 12 s, 4 CPU s
  "test/contracts/gas-snapshot.test.ts", // 9 s, 2 CPU s
  "test/stack/abis-up-to-date.test.ts", // 8 s, 2 CPU s
  "test/relayer/json-shape.test.ts", // 5 s, 1 CPU s
];

const args = process.argv.slice(2);
const patterns =
  args.length > 0
    ? args.map((arg) => (existsSync(arg) && statSync(arg).isDirectory() ? `${arg.replace(/\/$/, "")}/**/*.test.ts` : arg))
    : ["test/**/*.test.ts"];
const files = [...new Set(patterns.flatMap((pattern) => globSync(pattern, { cwd: root })))].sort();
if (files.length === 0) {
  console.error(`# no test file matches ${patterns.join(" ")}`);
  process.exit(1);
}
const rank = (file: string) => {
  const i = LONGEST_FIRST.indexOf(file);
  return i === -1 ? LONGEST_FIRST.length : i;
};
// The contract suites selected run in one process (test/support/contract-suites-process.ts), which is told which
// through SHARED_PROCESS_FILES_ENV; a single one runs in a process of its own, as every other file does.
const shared = files.filter(runsInSharedProcess);
const separate = shared.length > 1 ? files.filter((file) => !runsInSharedProcess(file)) : files;
if (shared.length > 1) env[SHARED_PROCESS_FILES_ENV] = shared.join("\n");
else delete env[SHARED_PROCESS_FILES_ENV];
const targets = [...separate, ...(shared.length > 1 ? [SHARED_PROCESS_ENTRY] : [])].sort((a, b) => rank(a) - rank(b) || (a < b ? -1 : 1));
// --liftoff-only: V8 compiles WebAssembly with its baseline compiler only, in the test processes and in the
// Node processes they start through lib/processes.ts (relayers, seeds, indexers). The embedded databases
// (PGlite) are WebAssembly, and the optimised code V8 would compile for them on other threads comes too late to
// pay for itself in processes that live seconds to a minute (the whole run took about a tenth less CPU when this
// was measured). It changes no result, only which of V8's compilers runs the same code. The
// benchmarks and `npm start` run without it.
// Node's test runner, in this process: each file in a child process of its own, `concurrency` at a time, in
// the order of `targets`; TAP (or TEST_REPORTER) on stdout, ending with the `# pass N` / `# fail N` summary.
const timeline = env.TEST_TIMELINE ? ["--import", pathToFileURL(path.join(root, "scripts", "test-timeline.ts")).href] : [];
if (env.TEST_TIMELINE) {
  writeFileSync(env.TEST_TIMELINE, "");
  env.TEST_TIMELINE_ORIGIN = String(Date.now());
}
process.chdir(root);
Object.assign(process.env, env);
const stream = runTests({
  files: targets.map((file) => path.resolve(root, file)),
  concurrency,
  // A file that hangs is ended after half an hour; the longest files take about 8 minutes on a fast machine and
  // two or three times that on a slow one.
  timeout: 1_800_000,
  execArgv: ["--liftoff-only", ...timeline],
});
let success = false;
stream.on("test:summary", (summary) => {
  // One summary a file, then the run's (without `file`).
  if (summary.file === undefined) success = summary.success;
});
stream.on("end", () => {
  process.exitCode = success ? 0 : 1;
});
stream.compose(reporterStream).pipe(process.stdout);
