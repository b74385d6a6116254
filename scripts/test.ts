// `npm test`: builds the contracts, the generated ABIs and deployment records and the relayer's bundles,
// checks the services the end-to-end suites need, then runs every test of the repository with Node's test
// runner, four files at a time, each file in a process of its own but the contract suites, which share one
// (test/support/contract-suites-process.ts), reporting TAP (the run ends with its `# pass N` / `# fail N` summary).
//   npm test                       every suite (on PGlite and PostgreSQL where the database matters)
//   npm test -- test/relayer       only the files under a path (or a glob)
// Environment: TEST_DATABASES=pglite|postgres|pglite,postgres; TEST_DATABASE_URL (default
// postgresql://postgres@127.0.0.1:5432/test); TEST_REPORTER (default tap); TEST_CONCURRENCY (files at a time,
// default 4: the end-to-end suites spend part of their time waiting (leases, timeouts, blocks), so with two
// files at a time the two cores were busy 77% of a run, with three 90%: 449 s against 559 s for the whole
// run in the same working tree on 2026-11-26; on 2026-11-27 a CPU sampler saw the two cores 70% busy with
// three, and four took 407 s against 426-435 s with three (same working tree, 2-core AMD EPYC host; on a
// host 1.6 times slower that day four made the resilience suites' server-time limits and payment waits fail:
// set 3 on such a host; on 2026-11-28, on another 2-core AMD EPYC host, five kept the two cores busy throughout
// instead of about 75%, but took 392 s against 397 s with four, the same code in fresh clones, while the same
// work's CPU varied by up to 30% between runs there; the first run with five failed a test that only that load
// showed, a defect of the test since fixed); each test file has a PostgreSQL database of its own, so files
// never share Ponder's sync tables; the suites that start whole stacks go first, see LONGEST_FIRST);
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
import { createIndexerDatabaseTemplate, createIndexerPostgresTemplate } from "../lib/indexer.ts";
import { PACKAGE_IMPORTS_HOOK, processAlive } from "../lib/processes.ts";
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
const concurrency = Number(env.TEST_CONCURRENCY ?? "4");
if (!Number.isInteger(concurrency) || concurrency < 1) {
  console.error(`# TEST_CONCURRENCY must be a positive integer (got ${env.TEST_CONCURRENCY})`);
  process.exit(1);
}

function run(label: string, args: string[]) {
  console.error(`# ${label}`);
  const result = spawnSync(node, [...PACKAGE_IMPORTS_HOOK, ...args], { cwd: root, env, stdio: ["ignore", "inherit", "inherit"] });
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

run("build the contracts", [path.join(root, "node_modules/hardhat/dist/src/cli.js"), "build", "--quiet"]);
run("generate the ABIs", [path.join(root, "scripts/generate-abis.ts")]);
run("generate the deployment records", [path.join(root, "scripts/generate-deployments.ts")]);
run("bundle the relayer", [path.join(root, "lib/relayer-bundle.ts")]);

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
  // The template of the test files' databases (test/support/databases.ts), with Ponder's sync store migrated.
  console.error("# make the PostgreSQL template");
  await createIndexerPostgresTemplate(url);
}

/** The order in which the long files start (each with its seconds from its process's start to its end, and
 * its CPU seconds, in the fresh-clone run of 2026-11-28 05:03 on a 2-core Intel host, four files at a time,
 * TEST_TIMELINE). Most of these suites wait much of their time (blocks, leases, retry-after windows, expiries),
 * so four at a time leave the cores idle when all four are waiting at once: the order pairs waiting files with
 * busy ones. First the two resilience suites, the payment API's and the three relayers' (busy while the
 * resilience suites generate their bad input, then waiting through their faults); as the three relayers' file
 * ends, `npm start`'s (the busiest) rather than the transaction sender's (a quarter of a core for two minutes:
 * started there it left half a core idle from 80 to 140 s); the webhook and metrics suites (waiting for retries,
 * expiries and rebroadcasts) before the indexer's busy files. The files of 5-20 s are listed too, so that the last
 * seconds of a run are the files of one or two seconds, not one of those alone. Scheduling only: a file missing
 * here runs after them, in path order. (Node's `--test` command line sorts the files it is given by path,
 * whatever their order: the files run through `run()` below, which keeps it.) */
const LONGEST_FIRST = [
  "test/resilience/resilience.pglite.test.ts", // 156 s, 69 CPU s
  "test/resilience/resilience.postgres.test.ts", // 139, 48
  "test/relayer/api.test.ts", // 103, 33
  "test/relayer/scale-out.test.ts", // 84, 45
  "test/stack/start.test.ts", // 74, 55
  "test/relayer/tx-sender.test.ts", // 127, 34
  "test/energy/anchoring.test.ts", // 62, 24
  "test/webhooks/delivery.test.ts", // 60, 20
  "test/indexer/indexer.backfill.test.ts", // 67, 29
  "test/relayer/metrics.test.ts", // 50, 16
  "test/stack/entry-points.test.ts", // 68, 35
  "test/stack/rehearsal.test.ts", // 65 (about 30 CPU s in processes the timeline does not see)
  "test/indexer/indexer.rows.test.ts", // 49, 28
  "test/portal/browser.test.ts", // 40, 21
  "test/indexer/indexer.factory-splits.test.ts", // 56, 27
  "test/webhooks/own-endpoints.test.ts", // 14, 5
  "test/indexer/indexer.outage.test.ts", // 29, 11
  "test/indexer/indexer.reorg.test.ts", // 47, 22
  "test/webhooks/multi-process.test.ts", // 30, 12
  "test/energy/telemetry.test.ts", // 26, 12
  "test/relayer/worker.test.ts", // 20, 4
  SHARED_PROCESS_ENTRY, // 35, 19 (the contract suites in one process)
  "test/typecheck.test.ts", // 16, 11
  "test/relayer/migrations.test.ts", // 18, 7
  "test/stack/hardhat-lock.test.ts", // 20, 8
  "test/relayer/passwords.test.ts", // 14, 7
  "test/energy/sandbox.test.ts", // 14, 7
  "test/stack/hardhat-node.test.ts", // 7, 4
  "test/contracts/gas-snapshot.test.ts", // 5, 3
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
// pay for itself in processes that live seconds to a minute: three PGlite suites (telemetry, indexer rows,
// webhook delivery) took 42-46 CPU s instead of 51-52 (user time, two runs each), and the whole run 935 CPU s
// (user + system) and 572 s instead of 1,034 CPU s and 662 s (one run each, the same working tree, 2-core AMD
// EPYC host, 2026-11-27). It changes no result, only which of V8's compilers runs the same code. The
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
  timeout: 900_000,
  execArgv: ["--liftoff-only", ...PACKAGE_IMPORTS_HOOK, ...timeline],
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
