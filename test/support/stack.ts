// The whole system for end-to-end suites, on loopback: a local chain with the LocalStack deployment, the
// device-cloud simulator with the sample devices, the indexer, and the relayer seeded with the sample
// tenant, on the embedded PGlite or on PostgreSQL (fresh directories or schemas, removed by stop()).
import path from "node:path";
import { type Service, freePort } from "../../lib/processes.ts";
import { type IndexerDatabase, createIndexerDatabase, startIndexer } from "../../lib/indexer.ts";
import {
  type RelayerOptions,
  type SeedOutput,
  createRelayerDatabase,
  seedRelayer,
  startDeviceCloud,
  startRelayer,
} from "../../lib/relayer.ts";
import { SAMPLE_DEVICES, localPrivateKey, sampleSeedSpec } from "../../lib/sample-data.ts";
import { type DatabaseKind, PGLITE_TEMPLATES, pgliteDatabase, postgresDatabase } from "./databases.ts";
import { type LocalChain, startLocalChain, testLogDir } from "./local-chain.ts";
import { type TcpProxy, startTcpProxy } from "./tcp-proxy.ts";
import type { UncheckedJson } from "./unchecked-json.ts";
import { unchecksummedAddresses } from "./checksummed-addresses.ts";

/** Relayer environment of the suites that kill a relayer (SIGKILL, its lease not released) and send while one
 * relayer process runs: the transaction sender's lease lasts 3 s instead of 15, so the next process sends
 * again 3 s later. (A queued transaction is claimed by one conditional update whoever holds the lease, so it
 * is sent once; suites where several processes send at once keep the default, as production would.) */
export const QUICK_TAKEOVER_ENV = { TX_SENDER_LEASE_SECONDS: "3" } as const;

export type StackOptions = {
  label: string;
  database: DatabaseKind;
  /** Start the indexer (default true). */
  indexer?: boolean;
  /** Simulated seconds per real second in the device cloud (default 3600: an hour-long session lasts 1 s). */
  timeScale?: number;
  /** Extra relayer environment. */
  relayerEnv?: NodeJS.ProcessEnv;
  /** More tenants (seed specs) to seed after the sample tenant, by the same seed process before the relayer
   * starts (`stack.seed` afterwards costs a seed process, and on PGlite a restart of the relayer): their
   * results are `stack.tenants`, in this order. */
  tenants?: unknown[];
  /** The indexer and the relayer reach the chain's JSON-RPC through a TCP proxy (`stack.chainProxy`), so a
   * test can cut the chain off from them. */
  chainProxy?: boolean;
  /** PostgreSQL only: the relayer reaches the database through a TCP proxy (`stack.databaseProxy`), so a test
   * can cut the database off without touching the shared server. */
  databaseProxy?: boolean;
  echo?: boolean;
};

export type ApiResponse<T = UncheckedJson> = { status: number; headers: Headers; body: T; text: string };

export type Stack = {
  database: DatabaseKind;
  chain: LocalChain;
  indexerUrl: string;
  indexer?: Service;
  /** Where the indexer keeps its tables (its PostgreSQL schema and views schema, or its PGlite directory), for
   * a suite that reads them another way (e.g. a `ponder serve` replica of the same schema). */
  indexerDatabase: IndexerDatabase;
  deviceCloudUrl: string;
  relayerUrl: string;
  relayer: Service;
  relayerOptions: RelayerOptions;
  /** What seeding StackOptions.tenants returned, in their order. */
  tenants: SeedOutput[];
  /** With `chainProxy`: the proxy between the indexer and relayer and the chain. */
  chainProxy?: TcpProxy;
  /** With `databaseProxy`: the proxy between the relayer and PostgreSQL. */
  databaseProxy?: TcpProxy;
  sample: {
    tenantId: string;
    email: string;
    password: string;
    developerKey: string;
    agentKey: string;
    devices: typeof SAMPLE_DEVICES;
    participants: SeedOutput["participants"];
    /** The energy sandbox's OAuth client (POST /energy/v1/auth/token). */
    energyClient: { clientId: string; clientSecret: string };
  };
  /** A JSON request to the relayer. */
  api<T = UncheckedJson>(
    method: string,
    path: string,
    opts?: { body?: unknown; token?: string; headers?: Record<string, string> },
  ): Promise<ApiResponse<T>>;
  /** Seeds another tenant (stops and restarts the relayer on PGlite, which allows one process). */
  seed(spec: unknown): Promise<SeedOutput>;
  /** Stops the relayer (SIGTERM, or SIGKILL with `kill`) and starts it again on the same data; `whileStopped`
   * runs in between (e.g. to open the relayer's PGlite directory, which one process at a time may hold). */
  restartRelayer(opts?: { kill?: boolean; env?: NodeJS.ProcessEnv; whileStopped?: () => Promise<void> }): Promise<void>;
  /** Stops the indexer cleanly and starts it again on its kept data, on the same port. With `catchUp: false`
   * no block is mined for it: the rows Ponder reverted at start (those above its safe checkpoint) stay away
   * until the next block, or until the new-heads relay announces the chain's head (two to four seconds after
   * Ponder subscribes; indexer/new-heads-relay.ts). */
  restartIndexer(opts?: { catchUp?: boolean }): Promise<void>;
  /** Starts one more relayer process on the same database (PostgreSQL only: PGlite allows one process),
   * with its own port and log file; stop() stops it too. */
  startExtraRelayer(opts?: { env?: NodeJS.ProcessEnv }): Promise<{ url: string; service: Service }>;
  stop(): Promise<void>;
};

export async function startStack(opts: StackOptions): Promise<Stack> {
  const logDir = testLogDir(opts.label);
  const cleanups: Array<() => Promise<void>> = [];
  const stopAll = async () => {
    for (const fn of cleanups.reverse()) await fn().catch(() => undefined);
  };
  try {
    const chain = await startLocalChain({ label: opts.label, logDir, echo: opts.echo });
    cleanups.push(() => chain.stop());
    let chainProxy: TcpProxy | undefined;
    if (opts.chainProxy) {
      const proxy = await startTcpProxy(chain.rpcUrl);
      chainProxy = proxy;
      cleanups.push(() => proxy.close());
    }
    const rpcUrl = chainProxy?.url ?? chain.rpcUrl;

    const deviceCloud = await startDeviceCloud({
      timeScale: opts.timeScale ?? 3600,
      logFile: path.join(logDir, `${chain.deploymentId}.device-cloud.log`),
    });
    cleanups.push(() => deviceCloud.service.stop());
    for (const device of SAMPLE_DEVICES) {
      await fetch(`${deviceCloud.url}/sim/devices/${device.id}`, {
        method: "PUT",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ powerW: device.powerW }),
      });
    }

    const indexerDb = opts.database === "pglite" ? pgliteDatabase(`${opts.label}-idx`) : postgresDatabase(opts.label);
    cleanups.push(() => indexerDb.cleanup());
    // The indexer starts while the relayer's database is seeded (they share nothing until the relayer runs).
    const indexerPort = opts.indexer === false ? undefined : await freePort();
    const indexerUrl = indexerPort === undefined ? "http://127.0.0.1:9" : `http://127.0.0.1:${indexerPort}`;
    const indexerOptions = {
      port: indexerPort,
      deploymentId: chain.deploymentId,
      rpcUrl,
      database: indexerDb.database,
      logFile: path.join(logDir, `${chain.deploymentId}.indexer.log`),
      echo: opts.echo,
    };
    const indexerStarting =
      indexerPort === undefined
        ? undefined
        : (async () => {
            if (indexerDb.database.kind === "pglite") await createIndexerDatabase(indexerDb.database.directory, PGLITE_TEMPLATES);
            return startIndexer(indexerOptions);
          })();
    // However the start ends, stop what it started (and what restartIndexer started since).
    let restartedIndexer: Service | undefined;
    cleanups.push(async () => {
      const started = await indexerStarting?.catch(() => undefined);
      await (restartedIndexer ?? started?.service)?.stop();
    });
    indexerStarting?.catch(() => undefined);

    const relayerDb = opts.database === "pglite" ? pgliteDatabase(`${opts.label}-rel`) : postgresDatabase(`${opts.label}r`);
    cleanups.push(() => relayerDb.cleanup());
    let databaseProxy: TcpProxy | undefined;
    let relayerDbUrl = relayerDb.database.kind === "postgres" ? relayerDb.database.url : "";
    if (opts.databaseProxy) {
      if (relayerDb.database.kind !== "postgres") throw new Error("databaseProxy needs PostgreSQL");
      const url = new URL(relayerDb.database.url);
      const proxy = await startTcpProxy({ host: url.hostname, port: Number(url.port || 5432) });
      databaseProxy = proxy;
      cleanups.push(() => proxy.close());
      url.hostname = "127.0.0.1";
      url.port = String(proxy.port);
      relayerDbUrl = url.toString();
    }
    const relayerOptions: RelayerOptions = {
      deploymentId: chain.deploymentId,
      rpcUrl,
      indexerUrl,
      deviceCloudUrl: deviceCloud.url,
      database:
        relayerDb.database.kind === "pglite"
          ? relayerDb.database
          : { kind: "postgres", url: relayerDbUrl, schema: relayerDb.database.schema },
      quoteSignerPrivateKey: localPrivateKey(1),
      relayerPrivateKey: localPrivateKey(2),
      jwtSecret: `test-secret-${chain.deploymentId}-0123456789abcdef`,
      env: {
        LOG_LEVEL: "info",
        WEBHOOK_SECRET_KEY: `test-webhook-key-${chain.deploymentId}-0123456789abcdef`,
        // Password hashes with scrypt N=2^14 instead of the default 2^17 (the relayer's PASSWORD_SCRYPT_N): the
        // suites sign in some 130 times and seed a user in every stack, and each hash at 2^17 takes about half
        // a second of a core. test/relayer/passwords.test.ts tests the default parameters.
        PASSWORD_SCRYPT_N: "16384",
        ...opts.relayerEnv,
      },
      logFile: path.join(logDir, `${chain.deploymentId}.relayer.log`),
      echo: opts.echo,
    };
    const spec = sampleSeedSpec();
    if (relayerDb.database.kind === "pglite") await createRelayerDatabase(relayerDb.database.directory, PGLITE_TEMPLATES);
    const [seeded, ...tenants] = await seedRelayer(relayerOptions, [spec, ...(opts.tenants ?? [])]);
    const startedIndexer = await indexerStarting;
    const indexer = startedIndexer?.service;
    let relayer = await startRelayer(relayerOptions);
    cleanups.push(() => relayer.service.stop());

    const byRole = (role: string) => seeded.createdKeys.find((k) => k.role === role)?.key ?? "";
    const stack: Stack = {
      database: opts.database,
      chain,
      indexerUrl,
      indexer,
      indexerDatabase: indexerDb.database,
      deviceCloudUrl: deviceCloud.url,
      get relayerUrl() {
        return relayer.url;
      },
      get relayer() {
        return relayer.service;
      },
      relayerOptions,
      tenants,
      chainProxy,
      databaseProxy,
      sample: {
        tenantId: seeded.tenantId,
        email: spec.user.email,
        password: spec.user.password,
        developerKey: byRole("developer"),
        agentKey: byRole("agent"),
        devices: SAMPLE_DEVICES,
        participants: seeded.participants,
        energyClient: { clientId: spec.energyClient.clientId, clientSecret: spec.energyClient.clientSecret },
      },
      async api(method, route, req = {}) {
        const headers: Record<string, string> = { ...req.headers };
        if (req.body !== undefined) headers["content-type"] ??= "application/json";
        if (req.token) headers.authorization = `Bearer ${req.token}`;
        const response = await fetch(`${relayer.url}${route}`, {
          method,
          headers,
          body: req.body === undefined ? undefined : typeof req.body === "string" ? req.body : JSON.stringify(req.body),
        });
        const text = await response.text();
        let body: unknown = text;
        try {
          body = JSON.parse(text);
        } catch {
          // not JSON
        }
        // Every /v1 answer carries its addresses EIP-55 checksummed (one representation per concept).
        const unchecked = route.startsWith("/v1/") ? unchecksummedAddresses(body) : [];
        if (unchecked.length > 0) throw new Error(`${method} ${route}: addresses not EIP-55 checksummed: ${unchecked.join(", ")}`);
        return { status: response.status, headers: response.headers, body: body as UncheckedJson, text };
      },
      async seed(more) {
        if (opts.database === "pglite") await relayer.service.stop();
        const [output] = await seedRelayer(relayerOptions, [more]);
        if (opts.database === "pglite") relayer = await startRelayer({ ...relayerOptions, port: relayer.port });
        return output;
      },
      async restartRelayer(restart = {}) {
        if (restart.kill) await relayer.service.kill();
        else await relayer.service.stop();
        await restart.whileStopped?.();
        relayer = await startRelayer({
          ...relayerOptions,
          port: relayer.port,
          env: { ...relayerOptions.env, ...restart.env },
        });
      },
      async restartIndexer(restart = {}) {
        if (!stack.indexer) throw new Error("this stack runs no indexer");
        await stack.indexer.stop();
        const started = await startIndexer({ ...indexerOptions, resetLocalChainSyncData: false, catchUp: restart.catchUp });
        restartedIndexer = started.service;
        stack.indexer = started.service;
      },
      async startExtraRelayer(extra = {}) {
        if (opts.database !== "postgres") throw new Error("several relayer processes need PostgreSQL");
        const n = cleanups.length;
        const started = await startRelayer({
          ...relayerOptions,
          env: { ...relayerOptions.env, ...extra.env },
          logFile: path.join(logDir, `${chain.deploymentId}.relayer-${n}.log`),
        });
        cleanups.push(() => started.service.stop());
        return { url: started.url, service: started.service };
      },
      stop: stopAll,
    };
    return stack;
  } catch (error) {
    await stopAll();
    throw error;
  }
}
