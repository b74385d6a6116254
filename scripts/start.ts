// `npm start`: the whole system on loopback. A local chain with the contracts deployed, the device-cloud
// simulator, the indexer (embedded PGlite), the relayer (both interfaces, the portal, the checkout), the
// two sample tenants; then a table of what runs where, and `.local/stack.json` for scripts and tests. Ctrl-C
// stops everything.
//
// A chain already answering on the chain port is reused: when it is the chain of the last deployment,
// the indexed and relayer data are kept; otherwise (a new chain) everything starts clean, because rows
// indexed from another chain must never be served.
//
// Databases: the embedded PGlite (directories in LOCAL_STACK_DIR) by default. With DATABASE_URL
// (postgresql://…) the indexer and the relayer run on that PostgreSQL database instead, each in a schema of
// its own named after the deployment: payg_<deployment> and relayer_<deployment> (payg_chain_31337 and
// relayer_chain_31337 by default). A new chain drops both schemas and the chain's cached RPC data in
// ponder_sync; so does a start on another database than the last start's.
//
// Start-up runs its steps side by side where one does not need another (the chain, the compile, the
// databases, the device cloud, the seed; Ignition, then the indexer and the relayer), and shows each with
// the seconds it took. Repeated work is skipped: the ABIs are generated only when they changed, new
// databases are copies of empty ones kept in the stack's directory (database-templates/), and on the same
// chain the sample tenant the last start seeded is kept as it is. The indexer starts beside Ignition: on the
// same chain on the last deployment's record; on a new chain, like the relayer, waiting for this deployment's
// (DEPLOYMENT_WAIT_SECONDS), so that their own start-up overlaps the deployment.
//
// Environment: CHAIN_PORT (8545), DEVICE_CLOUD_PORT (8789), INDEXER_PORT (42069), RELAYER_PORT (8787),
// DEMO_WEBHOOK_PORT (8790), DEVICE_TIME_SCALE (60), LOG_LEVEL (info); LOCAL_STACK_DIR (.local: data, logs and
// stack.json) and LOCAL_DEPLOYMENT_ID (chain-31337: the Ignition deployment's name) let a second stack run
// beside the first.
//
// Webhooks: the relayer may call back to loopback only at 127.0.0.1:DEMO_WEBHOOK_PORT (and localhost on that
// port), where `npm run demo` runs its receiver (stack.json names it) and where a developer may run one of
// their own; every other local port, the stack's own above all, stays out of reach of a portal user.
import { createHash, randomBytes } from "node:crypto";
import { existsSync } from "node:fs";
import { mkdir, readdir, readFile, rm, writeFile } from "node:fs/promises";
import path from "node:path";
import { isDeepStrictEqual } from "node:util";
import pg from "pg";
import { type DeploymentRecord, deploymentRecordPath, loadDeploymentRecord, repoRoot } from "../ignition/deployment-records.ts";
import { deployWithIgnition, isSameChain, rpc, startChain } from "../lib/chain.ts";
import { abisUpToDate, compileContracts, generateAbis } from "../lib/contracts.ts";
import { type IndexerDatabase, createIndexerDatabase, resetLocalChainSyncData, startIndexer } from "../lib/indexer.ts";
import { isListening, type Service, stopAllServices } from "../lib/processes.ts";
import { step } from "../lib/progress.ts";
import {
  createRelayerDatabase,
  type RelayerDatabase,
  type RelayerOptions,
  registerSimulatedDevices,
  type SeedOutput,
  seedRelayer,
  startDeviceCloud,
  startRelayer,
} from "../lib/relayer.ts";
import {
  OTHER_SAMPLE_DEVICES,
  SAMPLE_DEVICES,
  localAccount,
  localPrivateKey,
  otherSampleSeedSpec,
  sampleSeedSpec,
} from "../lib/sample-data.ts";

const DEPLOYMENT = process.env.LOCAL_DEPLOYMENT_ID || "chain-31337";
const port = (name: string, fallback: number) => Number(process.env[name] ?? fallback);
const ports = {
  chain: port("CHAIN_PORT", 8545),
  deviceCloud: port("DEVICE_CLOUD_PORT", 8789),
  indexer: port("INDEXER_PORT", 42069),
  relayer: port("RELAYER_PORT", 8787),
};
/** The one loopback port webhooks may be delivered to (not checked at start: a receiver may already listen). */
const demoWebhookPort = port("DEMO_WEBHOOK_PORT", 8790);
const demoWebhookUrl = `http://127.0.0.1:${demoWebhookPort}/hooks`;
const localDir = path.resolve(repoRoot, process.env.LOCAL_STACK_DIR || ".local");
const shown = path.relative(repoRoot, localDir) || ".";
const logDir = path.join(localDir, "logs");
const stackFile = path.join(localDir, "stack.json");
const dirs = {
  indexer: path.join(localDir, "indexer-db"),
  relayer: path.join(localDir, "relayer-db"),
  /** Empty databases, copied for each new chain (lib/pglite.ts). */
  templates: path.join(localDir, "database-templates"),
};

/** The PostgreSQL database of DATABASE_URL, if set; its schemas are named after the deployment. */
const postgres = (() => {
  const url = process.env.DATABASE_URL?.trim();
  if (!url) return undefined;
  // Lower-case SQL identifiers of at most 45 characters (Ponder's limit).
  const schemaOf = (prefix: string) => `${prefix}_${DEPLOYMENT.toLowerCase().replace(/[^a-z0-9]+/g, "_")}`.slice(0, 45);
  return { url, indexerSchema: schemaOf("payg"), relayerSchema: schemaOf("relayer") };
})();

/** Where the data of the indexer and the relayer is: what stack.json records, to tell whether the last start
 * kept its data in the same place (the URL without its password). */
type DatabasePlace = { kind: "pglite" } | { kind: "postgres"; url: string; indexerSchema: string; relayerSchema: string };
const databasePlace: DatabasePlace = postgres ? { kind: "postgres", ...postgres, url: withoutPassword(postgres.url) } : { kind: "pglite" };

function withoutPassword(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password) parsed.password = "***";
    return parsed.toString();
  } catch {
    return "(not a URL)";
  }
}

/** Runs `fn` with a client of the stack's PostgreSQL database. */
async function withPostgres<T>(fn: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: postgres!.url, connectionTimeoutMillis: 15_000 });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}

const quoteIdentifier = (name: string) => `"${name.replaceAll('"', '""')}"`;

let stopping = false;

/** Stops every process this start started (an external chain is not one of them), then exits. */
async function stopAll(code: number) {
  if (stopping) return;
  stopping = true;
  process.stderr.write("\nstopping…\n");
  await stopAllServices().catch(() => undefined);
  process.exit(code);
}
process.on("SIGINT", () => void stopAll(0));
process.on("SIGTERM", () => void stopAll(0));

/** A service of the running stack: its exit, unless the stack is stopping, stops everything. */
function watch(service: Service) {
  void service.exited.then((code) => {
    if (stopping) return;
    process.stderr.write(`\n✖ ${service.name} exited (code ${code}). Its last output:\n${service.recentOutput()}\n`);
    void stopAll(1);
  });
}

/** `work`, run now, beside the other start-up work. Its failure is reported where it is awaited, and never
 * as an unhandled rejection that would end this process before it stopped what it started. */
function begin<T>(work: () => Promise<T>): Promise<T> {
  const promise = work();
  promise.catch(() => undefined);
  return promise;
}

type Previous = {
  deploymentBlockHash?: string;
  /** Absent before PostgreSQL could be chosen: PGlite. */
  database?: DatabasePlace;
  secrets?: { jwt: string; webhook: string };
  sample?: Record<string, unknown> & Partial<Pick<SeedOutput, "tenantId" | "devices" | "participants">> & { seedDigest?: string };
  otherSample?: { tenantId: string; apiKeys: Record<string, string>; devices: string[] };
};

/** A digest of what seeding `spec` and `other` writes to the relayer's database: the samples less the
 * secrets generated for them (an existing login or client keeps its own), and the relayer's code (its
 * seeding and its schema). */
async function seedDigest(spec: ReturnType<typeof sampleSeedSpec>, other: ReturnType<typeof otherSampleSeedSpec>): Promise<string> {
  const hash = createHash("sha256");
  hash.update(
    JSON.stringify({ ...spec, user: { ...spec.user, password: null }, energyClient: { ...spec.energyClient, clientSecret: null } }),
  );
  hash.update(JSON.stringify(other));
  const relayerSource = path.join(repoRoot, "relayer", "src");
  const files = (await readdir(relayerSource, { recursive: true, withFileTypes: true })).filter((entry) => entry.isFile());
  for (const file of files.map((entry) => path.join(entry.parentPath, entry.name)).sort()) {
    hash.update(path.relative(relayerSource, file));
    hash.update(await readFile(file));
  }
  return hash.digest("hex");
}

async function main() {
  const began = performance.now();
  await mkdir(logDir, { recursive: true });
  const previous: Previous = existsSync(stackFile) ? JSON.parse(await readFile(stackFile, "utf8")) : {};
  const log = (name: string) => path.join(logDir, `${name}.log`);

  await step("checking ports", async () => {
    if (
      !Number.isInteger(demoWebhookPort) ||
      demoWebhookPort < 1 ||
      demoWebhookPort > 65_535 ||
      Object.values(ports).includes(demoWebhookPort)
    ) {
      throw new Error(`DEMO_WEBHOOK_PORT ${process.env.DEMO_WEBHOOK_PORT} must be a port of its own (1-65535), not one of the stack's`);
    }
    for (const [name, value] of Object.entries(ports)) {
      if (name !== "chain" && (await isListening(value))) {
        throw new Error(
          `port ${value} (${name}) is taken: stop what listens there, or set ${name.replace(/[A-Z]/g, (c) => `_${c}`).toUpperCase()}_PORT`,
        );
      }
    }
  });
  if (postgres) {
    await step(`checking the PostgreSQL database (${databasePlace.kind === "postgres" ? databasePlace.url : ""})`, async () => {
      if (!/^postgres(ql)?:\/\//.test(postgres.url))
        throw new Error("DATABASE_URL must be a postgres:// or postgresql:// connection string");
      await withPostgres((client) => client.query("select 1")).catch((error: Error) => {
        throw new Error(`cannot reach the PostgreSQL of DATABASE_URL: ${error.message}`);
      });
    });
  }

  const rpcUrl = `http://127.0.0.1:${ports.chain}`;
  let sameChain = false;
  let lastRecord: DeploymentRecord | undefined;
  let chainReady: Promise<void> = Promise.resolve();
  if (await isListening(ports.chain)) {
    await step(`using the chain already running on port ${ports.chain}`, async () => {
      const chainId = Number(await rpc<string>(rpcUrl, "eth_chainId"));
      if (chainId !== 31337) throw new Error(`port ${ports.chain} answers chain ${chainId}, not a local chain (31337)`);
      lastRecord = await loadDeploymentRecord(DEPLOYMENT).catch(() => undefined);
      sameChain = lastRecord !== undefined && (await isSameChain(rpcUrl, lastRecord));
    });
  } else {
    chainReady = begin(() =>
      step(`starting the local chain on port ${ports.chain}`, async () => {
        const chain = await startChain({ port: ports.chain, logFile: log("chain") });
        watch(chain.service);
      }),
    );
  }
  // The data is kept on the same chain in the same place only: a database the last start did not use may
  // hold rows of an earlier chain.
  const reuse = sameChain && isDeepStrictEqual(previous.database ?? { kind: "pglite" }, databasePlace);
  if (!reuse) {
    await step(
      sameChain
        ? "another database than the last start's: clearing its indexed and relayer data"
        : "new chain: clearing indexed and relayer data",
      async () => {
        if (postgres) {
          await withPostgres(async (client) => {
            for (const schema of [postgres.indexerSchema, postgres.relayerSchema])
              await client.query(`drop schema if exists ${quoteIdentifier(schema)} cascade`);
          });
          await resetLocalChainSyncData(postgres.url, 31337);
        } else {
          await rm(dirs.indexer, { recursive: true, force: true });
          await rm(dirs.relayer, { recursive: true, force: true });
        }
      },
    );
  }
  const indexerDatabase: IndexerDatabase = postgres
    ? { kind: "postgres", url: postgres.url, schema: postgres.indexerSchema }
    : { kind: "pglite", directory: dirs.indexer };
  const relayerDatabase: RelayerDatabase = postgres
    ? { kind: "postgres", url: postgres.url, schema: postgres.relayerSchema }
    : { kind: "pglite", directory: dirs.relayer };

  const secrets =
    reuse && previous.secrets
      ? previous.secrets
      : { jwt: randomBytes(32).toString("base64url"), webhook: randomBytes(32).toString("base64url") };
  const relayerOptions: RelayerOptions = {
    port: ports.relayer,
    deploymentId: DEPLOYMENT,
    rpcUrl,
    indexerUrl: `http://127.0.0.1:${ports.indexer}`,
    deviceCloudUrl: `http://127.0.0.1:${ports.deviceCloud}`,
    database: relayerDatabase,
    quoteSignerPrivateKey: localPrivateKey(1),
    relayerPrivateKey: localPrivateKey(2),
    jwtSecret: secrets.jwt,
    env: {
      WEBHOOK_SECRET_KEY: secrets.webhook,
      LOG_LEVEL: process.env.LOG_LEVEL ?? "info",
      // Only the demo's receiver port, not loopback at large (lib/relayer.ts's default for the tests).
      WEBHOOK_ALLOWED_PRIVATE_HOSTS: `127.0.0.1:${demoWebhookPort},localhost:${demoWebhookPort}`,
    },
    logFile: log("relayer"),
  };
  // Two sample tenants: the first with the portal login, the sandbox client and five devices of three asset
  // owners; the second with devices and payout parties of its own (what the first never sees).
  const spec = sampleSeedSpec();
  const otherSpec = otherSampleSeedSpec();
  const digest = await seedDigest(spec, otherSpec);
  // On the same chain the relayer's database keeps the sample tenants the last start seeded: seeding them
  // again, with the same samples and the same relayer, would change nothing.
  const { tenantId, devices, participants } = previous.sample ?? {};
  const relayerDataKept = async () =>
    postgres
      ? withPostgres(
          async (client) => (await client.query("select 1 from pg_namespace where nspname = $1", [postgres.relayerSchema])).rowCount === 1,
        )
      : existsSync(path.join(dirs.relayer, "PG_VERSION"));
  const seededBefore: SeedOutput[] | undefined =
    reuse &&
    previous.sample?.seedDigest === digest &&
    tenantId &&
    devices &&
    participants &&
    previous.otherSample &&
    (await relayerDataKept())
      ? [
          { tenantId, devices, participants, createdKeys: [] },
          { tenantId: previous.otherSample.tenantId, devices: previous.otherSample.devices, participants: [], createdKeys: [] },
        ]
      : undefined;

  // From here each piece starts as soon as what it needs is there, beside the others:
  //   relayer database -> seed -> relayer
  //   chain [+ contracts built] -> Ignition -> indexer, relayer
  // (on a new chain the indexer and the relayer start with Ignition and wait for its record: below).
  // generated/abis.ts is read by the indexer and the relayer (not by the seed). When it is up to date,
  // Ignition's own compile (nothing to do unless a contract changed) is the only one; otherwise the contracts
  // are built first, while the chain starts and the seed runs.
  const abisCurrent = await abisUpToDate();
  const contracts = abisCurrent
    ? Promise.resolve()
    : begin(() =>
        step("building contracts and generated code", async () => {
          await compileContracts({ logFile: log("build") });
          await generateAbis({ logFile: log("build") });
        }),
      );

  const deviceCloudUp = begin(() =>
    step(`starting the device-cloud simulator on port ${ports.deviceCloud}`, async () => {
      const started = await startDeviceCloud({
        port: ports.deviceCloud,
        timeScale: Number(process.env.DEVICE_TIME_SCALE ?? 60),
        logFile: log("device-cloud"),
      });
      watch(started.service);
      await registerSimulatedDevices(started.url, [...SAMPLE_DEVICES, ...OTHER_SAMPLE_DEVICES]);
      return started;
    }),
  );

  // New embedded databases: copies of empty ones kept in the stack's directory (PostgreSQL's initdb costs
  // seconds of CPU; the first start makes them, beside the contracts' compile). On PostgreSQL the indexer and
  // the relayer create their schemas themselves. While the contracts compile (what the deployment, then
  // everything, waits for), the relayer's database and the seed are made at a lower CPU priority. The
  // indexer's is not: the indexer starts as soon as the contracts are built and its database is there, and
  // it is the last piece to be ready (at a lower priority its database came some 4 s after the compile).
  const newEmbedded = !reuse && !postgres;
  const indexerDatabaseCreated = newEmbedded
    ? begin(() => step("creating the indexer's database", () => createIndexerDatabase(dirs.indexer, dirs.templates)))
    : Promise.resolve();
  const relayerDatabaseCreated = newEmbedded
    ? begin(() =>
        step("creating the relayer's database", () => createRelayerDatabase(dirs.relayer, dirs.templates, { background: !abisCurrent })),
      )
    : Promise.resolve();

  const seeding = begin(async () => {
    if (seededBefore) return step("keeping the sample tenants of the last start", async () => seededBefore);
    await relayerDatabaseCreated;
    return step("seeding the sample tenants", () => seedRelayer(relayerOptions, [spec, otherSpec], { background: !abisCurrent }));
  });

  const startIndexerNow = (awaitDeployment = false) =>
    startIndexer({
      deploymentId: DEPLOYMENT,
      rpcUrl,
      port: ports.indexer,
      database: indexerDatabase,
      // Cleared above for a new chain; on the same chain the cached RPC data is that chain's.
      resetLocalChainSyncData: false,
      awaitDeployment,
      logFile: log("indexer"),
    });
  // The indexer starts beside Ignition (it only reads the chain), so that Ponder's own start-up (seconds of
  // CPU) is done by the time the deployment is:
  //   - on the same chain at once, on the last deployment's record (most likely this one's): kept unless
  //     Ignition changed something;
  //   - on a new chain once the contracts are built, waiting for this deployment's record (the last one's is
  //     removed first): kept unless Ignition rebuilt changed contracts.
  const earlyOn: "last deployment" | "this deployment" | undefined =
    reuse && abisCurrent ? "last deployment" : !sameChain ? "this deployment" : undefined;
  if (earlyOn === "this deployment") await rm(deploymentRecordPath(DEPLOYMENT), { force: true });
  const early =
    earlyOn === "last deployment"
      ? begin(() => startIndexerNow())
      : earlyOn === "this deployment"
        ? begin(async () => {
            await Promise.all([contracts, indexerDatabaseCreated]);
            return startIndexerNow(true);
          })
        : undefined;
  const stopEarly = () =>
    early?.then(
      (started) => started.service.stop(),
      () => undefined,
    );

  const deployment = begin(async () => {
    await Promise.all([contracts, chainReady]);
    // On the same chain Ignition only deploys what the deployment lacks (contracts added since).
    const record = await step(
      sameChain ? "bringing the deployment up to date with Ignition" : "deploying the contracts with Ignition",
      () => deployWithIgnition({ rpcUrl, deploymentId: DEPLOYMENT, fresh: !sameChain, logFile: log("deploy") }),
    );
    // Ignition compiled contracts changed since generated/abis.ts was written: write it again once nothing
    // reads it (an indexer started early), before the indexer and the relayer start.
    let abisChanged = false;
    if (!(await abisUpToDate())) {
      await stopEarly();
      await step("generating the changed contracts' ABIs", () => generateAbis({ logFile: log("build") }));
      abisChanged = true;
    }
    return { record, abisChanged, recordChanged: !isDeepStrictEqual(record, lastRecord) };
  });

  const indexerUp = begin(async () => {
    if (!early) await Promise.all([deployment, indexerDatabaseCreated]);
    else if (earlyOn === "this deployment") await Promise.all([contracts, indexerDatabaseCreated]);
    return step(`starting the indexer on port ${ports.indexer} (catching up with the chain)`, async () => {
      let starting = early;
      const { abisChanged, recordChanged } = await deployment;
      if (early && (abisChanged || (earlyOn === "last deployment" && recordChanged))) {
        await stopEarly();
        starting = undefined;
      }
      let started;
      try {
        started = await (starting ?? startIndexerNow());
      } catch (error) {
        if (!reuse || stopping) throw error;
        // Ponder refuses data written by a different version of the indexer: index the chain again.
        process.stderr.write(`\n  the kept index could not be reused (${(error as Error).message.split("\n")[0]}); re-indexing\n`);
        if (postgres)
          await withPostgres((client) => client.query(`drop schema if exists ${quoteIdentifier(postgres.indexerSchema)} cascade`));
        else await rm(dirs.indexer, { recursive: true, force: true });
        started = await startIndexerNow();
      }
      watch(started.service);
      return started;
    });
  });

  // On a new chain the relayer too starts beside Ignition, waiting for the deployment's record; it is started
  // again if Ignition rebuilt changed contracts (it would have loaded the ABIs of the last build).
  const relayerEarly = earlyOn === "this deployment";
  const relayerUp = begin(async () => {
    await Promise.all([relayerEarly ? contracts : deployment, seeding, deviceCloudUp]);
    return step(`starting the relayer on port ${ports.relayer}`, async () => {
      let started = await startRelayer(
        relayerEarly ? { ...relayerOptions, env: { ...relayerOptions.env, DEPLOYMENT_WAIT_SECONDS: "120" } } : relayerOptions,
      );
      if (relayerEarly && (await deployment).abisChanged) {
        await started.service.stop();
        started = await startRelayer(relayerOptions);
      }
      watch(started.service);
      return started;
    });
  });

  const [{ record }, [seeded, otherSeeded], deviceCloud, indexer, relayer] = await Promise.all([
    deployment,
    seeding,
    deviceCloudUp,
    indexerUp,
    relayerUp,
  ]);
  process.stderr.write(`✔ ready in ${((performance.now() - began) / 1000).toFixed(1)} s\n`);

  const keyOf = (role: string) =>
    seeded.createdKeys.find((k) => k.role === role)?.key ??
    (previous.sample?.apiKeys as Record<string, string> | undefined)?.[role] ??
    "(created earlier; see the portal)";
  const otherKeyOf = (role: string) =>
    otherSeeded.createdKeys.find((k) => k.role === role)?.key ?? previous.otherSample?.apiKeys[role] ?? "(created earlier)";
  const password = seeded.createdKeys.length > 0 ? spec.user.password : String(previous.sample?.password ?? spec.user.password);
  const wallet = localAccount(7);
  const stack = {
    chainId: record.chainId,
    deploymentBlockHash: Object.values(record.contracts)[0]?.blockHash,
    database: databasePlace,
    endpoints: {
      rpc: rpcUrl,
      paymentApi: `${relayer.url}/v1`,
      paymentApiDocs: `${relayer.url}/v1/docs`,
      sandboxApi: `${relayer.url}/energy/v1`,
      sandboxApiDocs: `${relayer.url}/energy/docs`,
      portal: `${relayer.url}/portal`,
      indexer: indexer.url,
      deviceCloud: deviceCloud.url,
      demoWebhookReceiver: demoWebhookUrl,
    },
    contracts: Object.fromEntries(Object.entries(record.contracts).map(([name, c]) => [name, c.address])),
    sample: {
      tenantId: seeded.tenantId,
      email: spec.user.email,
      password,
      apiKeys: { developer: keyOf("developer"), agent: keyOf("agent") },
      devices: seeded.devices,
      participants: seeded.participants,
      ...("energyClient" in spec ? { energyClient: (spec as { energyClient: unknown }).energyClient } : {}),
      seedDigest: digest,
    },
    otherSample: {
      tenantId: otherSeeded.tenantId,
      apiKeys: { developer: otherKeyOf("developer"), agent: otherKeyOf("agent") },
      devices: otherSeeded.devices,
    },
    testWallet: { address: wallet.address, privateKey: localPrivateKey(7) },
    secrets,
  };
  // The sandbox client's secret is only known when it was created now; keep the earlier one otherwise.
  if (reuse && previous.sample && "energyClient" in previous.sample) {
    (stack.sample as Record<string, unknown>).energyClient = previous.sample.energyClient;
  }
  await writeFile(stackFile, `${JSON.stringify(stack, null, 2)}\n`, { mode: 0o600 });

  const rows: Array<[string, string]> = [
    ["Payment API", stack.endpoints.paymentApi],
    ["  reference", stack.endpoints.paymentApiDocs],
    ["Sandbox API", stack.endpoints.sandboxApi],
    ["  reference", stack.endpoints.sandboxApiDocs],
    ["Developer portal", stack.endpoints.portal],
    ["Indexer", `${indexer.url} (SQL over HTTP at /sql)`],
    [
      "Database",
      databasePlace.kind === "postgres"
        ? `PostgreSQL ${databasePlace.url}: schemas ${databasePlace.indexerSchema} (indexer), ${databasePlace.relayerSchema} (relayer)`
        : `PGlite (embedded) in ${shown}/indexer-db and ${shown}/relayer-db`,
    ],
    ["Chain (JSON-RPC)", `${rpcUrl}, chain id ${record.chainId}`],
    ["Device cloud", deviceCloud.url],
    ["Webhook receiver", `${demoWebhookUrl} (npm run demo's; the only local callback the relayer allows)`],
    ["Portal login", `${stack.sample.email} / ${password}`],
    ["Developer API key", stack.sample.apiKeys.developer],
    ["Agent API key", stack.sample.apiKeys.agent],
    [
      "Second tenant",
      `${stack.otherSample.tenantId}: developer key ${stack.otherSample.apiKeys.developer}, devices ${stack.otherSample.devices.join(", ")}`,
    ],
    ["Test wallet", `${wallet.address} (10,000 USDC; key in ${shown}/stack.json)`],
  ];
  const energy = (stack.sample as { energyClient?: { clientId: string; clientSecret: string } }).energyClient;
  if (energy) rows.push(["Sandbox client", `${energy.clientId} / ${energy.clientSecret}`]);
  const width = Math.max(...rows.map(([k]) => k.length));
  process.stdout.write(`\nReady${reuse ? " (data kept: same chain)" : ""}. Everything listens on 127.0.0.1; logs in ${shown}/logs/.\n\n`);
  for (const [k, v] of rows) process.stdout.write(`  ${k.padEnd(width)}  ${v}\n`);
  process.stdout.write("\nTry it: npm run demo        Stop: Ctrl-C\n");
}

main().catch(async (error) => {
  process.stderr.write(`\n${(error as Error).message}\n`);
  await stopAll(1);
});
