// The production entry points as an operator runs them, on PostgreSQL, each suite in a database of its own
// (created here, dropped after):
//   - `npm run indexer` and `npm run relayer`, configured by the environment only, answer (/ready,
//     /v1/health), the relayer serves what it reads from the indexer (a payment's volume in
//     /v1/public/stats), and SIGTERM or SIGINT to the process group (Ctrl-C, a service manager) stops each
//     cleanly: its port free, the relayer's shutdown logged, Ponder stopped by SIGINT only and its schema
//     unlocked (npm itself reports the signal: see assertStoppedBy); INDEXER_COMMAND=serve runs a read
//     replica of the views schema; a bad setting fails in one line;
//   - `DATABASE_URL=… npm start` runs the local stack on that database (the table names it), the printed
//     developer key works, `npm run demo` pays end to end against it, and a restart on the same chain keeps
//     the data.
// Skipped when TEST_DATABASES leaves PostgreSQL out.
import assert from "node:assert/strict";
import { type ChildProcess, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { existsSync } from "node:fs";
import { mkdir, readFile, rm } from "node:fs/promises";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import { deploymentRecordPath, deploymentsDir, repoRoot } from "../../ignition/deployment-records.ts";
import { startChain } from "../../lib/chain.ts";
import { type Service, freePort, isListening, waitUntil } from "../../lib/processes.ts";
import { relayerEnv, startDeviceCloud } from "../../lib/relayer.ts";
import { localPrivateKey } from "../../lib/sample-data.ts";
import { selectedDatabaseKinds, testDatabaseUrl, withPostgres } from "../support/databases.ts";
import { type LocalChain, startLocalChain, testLogDir } from "../support/local-chain.ts";
import { createPayments, deviceId, usdc } from "../support/payments.ts";

const skip = selectedDatabaseKinds().includes("postgres") ? false : "TEST_DATABASES leaves PostgreSQL out";
const logDir = testLogDir("entry-points");

/** A database of its own on the test server (its own `ponder_sync` too); `drop()` removes it. */
async function createDatabase(label: string): Promise<{ url: string; drop(): Promise<void> }> {
  const serverUrl = testDatabaseUrl();
  const name = `payg_${label}_${process.pid}_${randomBytes(3).toString("hex")}`;
  await withPostgres(serverUrl, (client) => client.query(`create database "${name}"`));
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    drop: () => withPostgres(serverUrl, (client) => client.query(`drop database if exists "${name}" with (force)`)).then(() => undefined),
  };
}

type Exit = { code: number | null; signal: NodeJS.Signals | null };
/** `exited`: npm's exit, once every process holding its output ended (npm may end before the script: see
 * assertStoppedBy). */
type Run = { child: ChildProcess; output: () => string; exited: Promise<Exit> };

/** `npm <args>` in the repository, as an operator types it, with `env` over this process's environment. */
function npm(args: string[], env: NodeJS.ProcessEnv): Run {
  const child = spawn("npm", args, {
    cwd: repoRoot,
    env: { ...process.env, HARDHAT_DISABLE_TELEMETRY: "true", PONDER_TELEMETRY_DISABLED: "1", ...env },
    stdio: ["ignore", "pipe", "pipe"],
    // A process group of its own, as a terminal gives a command: signals go to the group (see stop).
    detached: true,
  });
  let output = "";
  child.stdout!.on("data", (chunk: Buffer) => (output += chunk.toString("utf8")));
  child.stderr!.on("data", (chunk: Buffer) => (output += chunk.toString("utf8")));
  const exited = new Promise<Exit>((resolve) => child.on("close", (code, signal) => resolve({ code, signal })));
  return { child, output: () => output, exited };
}

/** Sends `signal` to the run's process group, as Ctrl-C does and a service manager stopping the group does
 * (npm runs the script through sh, which would not pass a signal to npm's process alone on), and resolves
 * with npm's exit once its output closed (SIGKILL to the group after a minute; after 90 s it gives up,
 * reporting SIGKILL). */
async function stop(run: Run, signal: NodeJS.Signals): Promise<Exit> {
  const group = (sig: NodeJS.Signals) => {
    try {
      process.kill(-run.child.pid!, sig);
    } catch {
      // the group has no process left
    }
  };
  group(signal);
  const kill = setTimeout(() => group("SIGKILL"), 60_000);
  let giveUp: NodeJS.Timeout | undefined;
  const exit = await Promise.race([
    run.exited,
    new Promise<Exit>((resolve) => (giveUp = setTimeout(() => resolve({ code: null, signal: "SIGKILL" }), 90_000))),
  ]);
  clearTimeout(kill);
  clearTimeout(giveUp);
  return exit;
}

/** A clean stop by `signal`: npm exits 0, or, as a shell reports a command its signal stopped (exit status
 * 128 + n), by that signal: the shell npm runs the script in ends by the signal it received as well once the
 * script has exited, and npm then ends itself the same way. Not SIGKILL (stop's last resort). What the
 * service did on its way out is checked by its effects (its port, its database). */
function assertStoppedBy(exit: Exit, signal: NodeJS.Signals, output: string): void {
  assert.ok(exit.code === 0 || (exit.code === null && exit.signal === signal), `exit ${JSON.stringify(exit)}\n${output}`);
}

/** The end of a run's output first (where a failed step says what went wrong), then the whole of it: a report
 * that shortens a long message keeps its start. */
function lastLines(output: string, count = 30): string {
  return `last ${count} lines:\n${output.trimEnd().split("\n").slice(-count).join("\n")}\n\nwhole output:\n${output}`;
}

/** Waits until `url` answers 200, failing early (with its output) if `run` exits. */
async function answers(run: Run, url: string, timeoutMs = 180_000): Promise<void> {
  await waitUntil(
    `${url} to answer`,
    async () => {
      if (run.child.exitCode !== null) throw new Error(`exited with ${run.child.exitCode}:\n${run.output()}`);
      return (await fetch(url, { signal: AbortSignal.timeout(2_000) })).status === 200;
    },
    { timeoutMs, intervalMs: 200 },
  ).catch((error: Error) => {
    throw new Error(`${error.message}\n${run.output()}`);
  });
}

describe("npm run indexer and npm run relayer on PostgreSQL", { skip, concurrency: false, timeout: 600_000 }, () => {
  let database: Awaited<ReturnType<typeof createDatabase>> | undefined;
  let chain: LocalChain | undefined;
  let deviceCloud: { service: Service; url: string } | undefined;
  let indexer: Run | undefined;
  let relayer: Run | undefined;
  const schema = "payg_entry_points";

  before(async () => {
    database = await createDatabase("entry");
    chain = await startLocalChain({ label: "entry-points", logDir });
    deviceCloud = await startDeviceCloud();
  });
  after(async () => {
    if (relayer) await stop(relayer, "SIGINT");
    if (indexer) await stop(indexer, "SIGINT");
    await deviceCloud?.service.stop();
    await chain?.stop();
    await database?.drop();
  });

  it("run on the environment alone, the relayer reading the indexer, and stop cleanly on SIGTERM and SIGINT", async () => {
    const indexerPort = await freePort();
    const relayerPort = await freePort();
    indexer = npm(["run", "indexer"], {
      DEPLOYMENT: chain!.deploymentId,
      PONDER_RPC_URL: chain!.rpcUrl,
      DATABASE_URL: database!.url,
      DATABASE_SCHEMA: schema,
      INDEXER_VIEWS_SCHEMA: "payg_entry_points_views",
      PORT: String(indexerPort),
      HOSTNAME: "127.0.0.1",
    });
    const indexerUrl = `http://127.0.0.1:${indexerPort}`;
    await answers(indexer, `${indexerUrl}/ready`);

    // A payment on the chain, straight through the router: the relayer can only learn of it from the indexer.
    const payments = createPayments(chain!);
    await payments.pay("permit", { device: deviceId("entry-points-kiosk"), amount: usdc(5) });

    relayer = npm(["run", "relayer"], {
      ...relayerEnv(
        {
          deploymentId: chain!.deploymentId,
          rpcUrl: chain!.rpcUrl,
          indexerUrl,
          deviceCloudUrl: deviceCloud!.url,
          database: { kind: "postgres", url: database!.url, schema: "relayer_entry_points" },
          quoteSignerPrivateKey: localPrivateKey(1),
          relayerPrivateKey: localPrivateKey(2),
          jwtSecret: randomBytes(32).toString("base64url"),
          webhookSecretKey: randomBytes(32).toString("base64url"),
        },
        relayerPort,
      ),
      STATS_CACHE_MS: "0",
    });
    const relayerUrl = `http://127.0.0.1:${relayerPort}`;
    await answers(relayer, `${relayerUrl}/v1/health`, 90_000);
    const volume = await waitUntil(
      "the payment's volume in the relayer's public stats",
      async () => {
        const stats = (await (await fetch(`${relayerUrl}/v1/public/stats`)).json()) as { onchainVolumeUsd: number };
        return stats.onchainVolumeUsd > 0 && stats.onchainVolumeUsd;
      },
      { timeoutMs: 30_000, intervalMs: 200 },
    );
    assert.equal(volume, 5);

    assertStoppedBy(await stop(relayer, "SIGINT"), "SIGINT", relayer.output());
    assert.match(relayer.output(), /"service":"relayer","signal":"SIGINT","msg":"stopping"/);
    assert.equal(await isListening(relayerPort), false, "the relayer's port is free");
    assertStoppedBy(await stop(indexer, "SIGTERM"), "SIGTERM", indexer.output());
    // Ponder heard SIGTERM only as the script's SIGINT (on SIGTERM itself, Vite would end it mid-shutdown).
    assert.match(indexer.output(), /Received SIGINT/);
    assert.doesNotMatch(indexer.output(), /Received SIGTERM|Failed to shutdown/);
    assert.equal(await isListening(indexerPort), false, "the indexer's port is free");
    // Ponder's shutdown ran to its end: it released its lock on the schema (a restart need not wait for it).
    const locked = await withPostgres(database!.url, async (client) => {
      const { rows } = await client.query<{ locked: string }>(
        `select value->>'is_locked' as locked from "${schema}"._ponder_meta where key = 'app'`,
      );
      return rows[0]?.locked;
    });
    assert.equal(locked, "0", "the indexer's schema is unlocked");

    // A read replica of the views schema: the same HTTP API, serving what the indexer wrote.
    const replicaPort = await freePort();
    const replica = npm(["run", "indexer"], {
      DEPLOYMENT: chain!.deploymentId,
      DATABASE_URL: database!.url,
      DATABASE_SCHEMA: "payg_entry_points_views",
      INDEXER_COMMAND: "serve",
      PORT: String(replicaPort),
    });
    try {
      await answers(replica, `http://127.0.0.1:${replicaPort}/ready`, 90_000);
      const status = (await (await fetch(`http://127.0.0.1:${replicaPort}/status`)).json()) as Record<
        string,
        { block: { number: number } }
      >;
      assert.ok((status.local?.block.number ?? 0) > 0, `the replica's status: ${JSON.stringify(status)}`);
    } finally {
      assertStoppedBy(await stop(replica, "SIGINT"), "SIGINT", replica.output());
    }
    assert.equal(await isListening(replicaPort), false, "the replica's port is free");
  });

  it("fail at once with one line naming what is wrong", async () => {
    const run = npm(["run", "--silent", "indexer"], {
      DATABASE_URL: database!.url,
      DATABASE_SCHEMA: "",
      PORT: "http",
      INDEXER_COMMAND: "index",
    });
    assert.deepEqual(await run.exited, { code: 2, signal: null });
    const line = run
      .output()
      .split("\n")
      .find((l) => l.startsWith("npm run indexer: "));
    assert.ok(line, run.output());
    for (const variable of ["DATABASE_SCHEMA", "PORT", "INDEXER_COMMAND"]) assert.ok(line.includes(variable), `${variable} in: ${line}`);
  });
});

describe("DATABASE_URL=… npm start and npm run demo", { skip, concurrency: false, timeout: 1_500_000 }, () => {
  const id = `entry-${process.pid}-${randomBytes(3).toString("hex")}`;
  const stackDir = path.join(logDir, id);
  let database: Awaited<ReturnType<typeof createDatabase>> | undefined;
  let chain: Service | undefined;
  let running: Run | undefined;
  let env: NodeJS.ProcessEnv = {};
  let demoOrderId = "";

  before(async () => {
    database = await createDatabase("start");
    const ports = {
      CHAIN_PORT: await freePort(),
      DEVICE_CLOUD_PORT: await freePort(),
      INDEXER_PORT: await freePort(),
      RELAYER_PORT: await freePort(),
    };
    env = {
      ...Object.fromEntries(Object.entries(ports).map(([k, v]) => [k, String(v)])),
      DEMO_WEBHOOK_PORT: String(await freePort()),
      LOCAL_STACK_DIR: stackDir,
      LOCAL_DEPLOYMENT_ID: id,
      DATABASE_URL: database.url,
    };
    await mkdir(stackDir, { recursive: true });
    // A chain the start does not own, so that a second start finds the same chain.
    chain = (await startChain({ port: ports.CHAIN_PORT, logFile: path.join(stackDir, "external-chain.log") })).service;
  });
  after(async () => {
    if (running) await stop(running, "SIGINT");
    await chain?.stop();
    await rm(path.join(deploymentsDir, id), { recursive: true, force: true });
    await rm(deploymentRecordPath(id), { force: true });
    await database?.drop();
  });

  /** `npm start`; resolves once it printed its table (or exited). */
  async function start(): Promise<Run> {
    const run = npm(["start"], env);
    await waitUntil("the start's table", async () => run.output().includes("Try it: npm run demo") || run.child.exitCode !== null, {
      // A slow machine running other stacks beside this one takes minutes to start a whole stack.
      timeoutMs: 420_000,
      intervalMs: 100,
    });
    return run;
  }
  const stackFile = async () => JSON.parse(await readFile(path.join(stackDir, "stack.json"), "utf8"));
  const schemas = [`payg_${id.replaceAll("-", "_")}`, `relayer_${id.replaceAll("-", "_")}`];

  it("runs the stack on PostgreSQL, and the demo pays against it", async () => {
    running = await start();
    const out = running.output();
    assert.match(out, /^Ready\. Everything listens on 127\.0\.0\.1/m, lastLines(out));
    assert.match(
      out,
      new RegExp(`^  Database +PostgreSQL postgresql://\\S+: schemas ${schemas[0]} \\(indexer\\), ${schemas[1]} \\(relayer\\)$`, "m"),
    );
    const tables = await withPostgres(database!.url, async (client) => {
      const { rows } = await client.query<{ schema: string; n: number }>(
        "select table_schema as schema, count(*)::int as n from information_schema.tables where table_schema = any($1) group by table_schema",
        [schemas],
      );
      return Object.fromEntries(rows.map((r) => [r.schema, r.n]));
    });
    for (const schema of schemas) assert.ok((tables[schema] ?? 0) > 0, `tables in ${schema}: ${JSON.stringify(tables)}`);
    for (const directory of ["indexer-db", "relayer-db"])
      assert.equal(existsSync(path.join(stackDir, directory)), false, `no PGlite ${directory}`);

    const stack = await stackFile();
    const devices = await fetch(`${stack.endpoints.paymentApi}/devices`, {
      headers: { authorization: `Bearer ${stack.sample.apiKeys.developer}` },
    });
    assert.equal(devices.status, 200, "the printed developer key works");

    const demo = npm(["run", "demo"], env);
    const timeout = setTimeout(() => demo.child.kill("SIGKILL"), 180_000);
    const exit = await demo.exited;
    clearTimeout(timeout);
    assert.deepEqual(exit, { code: 0, signal: null }, demo.output());
    demoOrderId = /^ {3}(ord_\w+) is pending/m.exec(demo.output())?.[1] ?? "";
    assert.ok(demoOrderId, "the demo printed its order");
    assert.equal((await (await fetch(`${stack.endpoints.paymentApi}/orders/${demoOrderId}`)).json()).status, "success");

    assertStoppedBy(await stop(running, "SIGINT"), "SIGINT", running.output());
    const locked = await withPostgres(database!.url, async (client) => {
      const { rows } = await client.query<{ locked: string }>(
        `select value->>'is_locked' as locked from "${schemas[0]}"._ponder_meta where key = 'app'`,
      );
      return rows[0]?.locked;
    });
    assert.equal(locked, "0", "the indexer released its schema");
    for (const name of ["DEVICE_CLOUD_PORT", "INDEXER_PORT", "RELAYER_PORT"]) {
      assert.equal(await isListening(Number(env[name])), false, `${name} is free after SIGINT`);
    }
  });

  it("keeps the data when started again on the same chain", async () => {
    assert.ok(demoOrderId, "needs the demo's order");
    running = await start();
    assert.match(running.output(), /^Ready \(data kept: same chain\)\./m, lastLines(running.output()));
    const stack = await stackFile();
    assert.equal((await (await fetch(`${stack.endpoints.paymentApi}/orders/${demoOrderId}`)).json()).status, "success");
    const stats = await (await fetch(`${stack.endpoints.paymentApi}/public/stats`)).json();
    assert.ok(stats.onchainVolumeUsd > 0, `on-chain volume ${stats.onchainVolumeUsd} after the restart (the kept index)`);
    assertStoppedBy(await stop(running, "SIGINT"), "SIGINT", running.output());
  });
});
