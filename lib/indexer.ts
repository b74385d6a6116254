// The indexer as a child process: `ponder start` on the indexer/ app, bound to 127.0.0.1, for the local
// stack, the tests and the benchmarks; and how any Ponder process of the app is run (ponderNodeArgs,
// PONDER_ENV, PONDER_STOP_SIGNAL), shared with `npm run indexer` (scripts/indexer.ts).
import path from "node:path";
import pg from "pg";
import { LOCAL_CHAIN_IDS } from "../indexer/env.ts";
import { loadDeploymentRecord, repoRoot } from "../ignition/deployment-records.ts";
import { type PgliteBuild, createPgliteDirectory, createPgliteTemplate, pgliteOf } from "./pglite.ts";
import { packageBin } from "./package-bin.ts";
import { type Service, freePort, startService, waitUntil } from "./processes.ts";

const ponderPackage = path.join(repoRoot, "node_modules", "ponder");
const ponderCli = packageBin("ponder");
export const indexerRoot = path.join(repoRoot, "indexer");

/** Where the indexer keeps its tables. PGlite is embedded (a directory, no server); with PostgreSQL each
 * deployment gets its own schema, and `viewsSchema` (optional) is the stable schema of views readers use. */
export type IndexerDatabase =
  { kind: "pglite"; directory: string } | { kind: "postgres"; url: string; schema: string; viewsSchema?: string };

export type StartIndexerOptions = {
  /** Ignition deployment id (generated/deployments/<id>.json gives the chain and the addresses). */
  deploymentId: string;
  /** The chain's JSON-RPC URL. */
  rpcUrl: string;
  /** HTTP port on 127.0.0.1 (default: a free one). */
  port?: number;
  database: IndexerDatabase;
  /** How many times to list rpcUrl (Ponder rate-limits each entry; default: indexer/env.ts's). */
  rpcBuckets?: number;
  /** Realtime polling interval in ms (default: 100 on a local chain), used only without the chain's WebSocket
   * (derived from rpcUrl: see indexer/env.ts PONDER_WS_URL) or once Ponder gave it up. */
  pollingIntervalMs?: number;
  /** Ponder's log level (default "info"). */
  logLevel?: "error" | "warn" | "info" | "debug" | "trace";
  /** With PostgreSQL and a local chain (31337), first delete that chain's rows from Ponder's shared RPC data
   * schema `ponder_sync` (default true; see resetLocalChainSyncData). */
  resetLocalChainSyncData?: boolean;
  /** The deployment is under way and its record (generated/deployments/<id>.json) does not exist yet: Ponder
   * loads itself meanwhile and waits for the record (DEPLOYMENT_WAIT_SECONDS, as long as readyTimeoutMs).
   * Not with resetLocalChainSyncData, which needs the record's chain id first. */
  awaitDeployment?: boolean;
  /** On a local chain, mine a block and wait until it is indexed (default true; see catchUpLocalChain). False
   * returns at /ready: an indexer restarted on its kept data then shows the blocks above its safe checkpoint
   * only once the next block comes or the new-heads relay announces the chain's head to its subscription
   * (indexer/new-heads-relay.ts, two to four seconds after it is made): tests of that window. */
  catchUp?: boolean;
  /** How long to wait for /ready (historical indexing complete). Default 240 s (a slow machine starting several
   * indexers at once); an indexer that exits meanwhile fails the wait at once. */
  readyTimeoutMs?: number;
  logFile?: string;
  echo?: boolean;
  onLine?: (line: string) => void;
};

/** Starts `ponder start` for indexer/ and waits until it answers 200 on /ready (backfill complete).
 * Returns the service and the base URL (http://127.0.0.1:<port>); the read path is `${url}/sql`. */
export async function startIndexer(opts: StartIndexerOptions): Promise<{ service: Service; url: string }> {
  const db = opts.database;
  // PGlite has a single database of its own; Ponder still wants a schema name.
  const schema = db.kind === "postgres" ? db.schema : "public";
  const viewsSchema = db.kind === "postgres" ? db.viewsSchema : undefined;
  const resetSyncData = db.kind === "postgres" && opts.resetLocalChainSyncData !== false;
  if (opts.awaitDeployment && resetSyncData) throw new Error("startIndexer: awaitDeployment needs resetLocalChainSyncData: false");
  const recordAtStart = opts.awaitDeployment ? undefined : await loadDeploymentRecord(opts.deploymentId);
  if (resetSyncData && recordAtStart && LOCAL_CHAIN_IDS.includes(recordAtStart.chainId))
    await resetLocalChainSyncData(db.url, recordAtStart.chainId);
  const started = await runPonder("indexer", { command: "start", schema, viewsSchema }, opts);
  // Ready, Ponder has read the record: it exists now.
  const { chainId } = recordAtStart ?? (await loadDeploymentRecord(opts.deploymentId));
  if (LOCAL_CHAIN_IDS.includes(chainId) && opts.catchUp !== false) {
    try {
      await catchUpLocalChain(started.url, opts.rpcUrl, started.service);
    } catch (error) {
      await started.service.stop();
      throw error;
    }
  }
  return started;
}

/** Creates the embedded database directory of an indexer (`database` of startIndexer, kind pglite) ahead of
 * its start, for Ponder's own PGlite, from a template kept in `templates` (see lib/pglite.ts); nothing if it
 * exists. */
export function createIndexerDatabase(directory: string, templates: string, run: { background?: boolean } = {}): Promise<void> {
  return createPgliteDirectory(directory, indexerPglite(), templates, run);
}

/** Makes the template of createIndexerDatabase in `templates` unless it exists; returns its path. */
export async function createIndexerDatabaseTemplate(templates: string): Promise<string> {
  return createPgliteTemplate(indexerPglite(), templates);
}

/** The indexer's PGlite (Ponder's own build, which may differ from the relayer's): its templates are plain
 * databases, `ponder-<PGlite's version>`; Ponder migrates its sync store on each new one at its first start. */
function indexerPglite(): PgliteBuild {
  return { module: pgliteOf(path.join(ponderPackage, "package.json")), family: "ponder" };
}

/** Ponder's backfill stops 30 blocks below the chain head (what it takes for final on a chain it does not
 * know), and the live indexing hears of blocks over the chain's WebSocket (indexer/env.ts), which tells of
 * new blocks only: the last 30 are indexed when the next block arrives, or when the new-heads relay
 * announces the chain's head to the new subscription (indexer/new-heads-relay.ts, two to four seconds after it
 * is made). An automining local node makes none until a transaction comes, so on a local chain this mines an
 * empty block once the indexer is ready (again while the indexer had not subscribed yet) and waits until the
 * indexer has reached it: ready without waiting for the relay's checks.
 * Also when /status already shows the head: an indexer restarted on its kept database reports the block it
 * had reached, but it reverted what it had indexed above the last final block (crash recovery), and indexes
 * those blocks again only when a new block arrives. */
async function catchUpLocalChain(url: string, rpcUrl: string, service: Service): Promise<void> {
  const rpc = async (method: string): Promise<string> => {
    const response = await fetch(rpcUrl, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method, params: [] }),
      signal: AbortSignal.timeout(5_000),
    });
    const body = (await response.json()) as { result?: string; error?: { message: string } };
    if (body.error) throw new Error(`${method}: ${body.error.message}`);
    return body.result as string;
  };
  const indexed = async () => {
    const response = await fetch(`${url}/status`, { signal: AbortSignal.timeout(5_000) });
    const chains = Object.values((await response.json()) as Record<string, { block: { number: number } }>);
    return chains.length === 0 ? 0 : Math.min(...chains.map((chain) => chain.block.number));
  };
  // The first blocks are mined a quarter of a second apart (the subscription is usually made within one), then
  // a second apart, for a minute at most: an idle machine is done within the first second or two, a loaded one
  // (an indexer re-indexing its blocks at a second each) may take tens of seconds.
  const deadline = Date.now() + 60_000;
  for (let attempt = 1; ; attempt++) {
    await rpc("evm_mine");
    const head = Number(await rpc("eth_blockNumber"));
    try {
      await waitUntil("the indexer to reach the chain head", async () => (await indexed()) >= head, {
        service,
        timeoutMs: attempt <= 4 ? 250 : 1_000,
        intervalMs: 25,
      });
      return;
    } catch (error) {
      if (Date.now() > deadline) throw error;
    }
  }
}

/** Deletes chain `chainId`'s blocks, logs, transactions, ... from `ponder_sync`, the schema where Ponder keeps
 * the RPC data it fetched during backfills, shared by every Ponder app of a PostgreSQL database and keyed by
 * (chain id, block number, index) with "on conflict do nothing". A restarted local node is a new chain with
 * the same id, and LocalStack deploys to the same addresses: without this, a backfill on PostgreSQL would
 * read an earlier local chain's logs wherever the new chain has none at the same position (and keep the
 * earlier rows where both have one). `disableCache` does not prevent it: it only skips Ponder's record of
 * which ranges are cached. PGlite keeps ponder_sync in its own directory, fresh per run. Run it only while no
 * other indexer of that local chain is backfilling into the same database. */
export async function resetLocalChainSyncData(url: string, chainId: number): Promise<void> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 15_000 });
  await client.connect();
  try {
    const { rows } = await client.query<{ table_name: string }>(
      `select table_name from information_schema.columns
       where table_schema = 'ponder_sync' and column_name = 'chain_id'`,
    );
    for (const { table_name } of rows) {
      await client.query(`delete from ponder_sync."${table_name.replaceAll('"', '""')}" where chain_id = $1`, [chainId]);
    }
  } finally {
    await client.end();
  }
}

/** Starts `ponder serve`: a read replica answering the same HTTP API (/sql, /status, /ready) from a
 * PostgreSQL schema that a `ponder start` elsewhere fills, without indexing. `schema` is the indexer's
 * schema or, better, its stable views schema. Waits for /ready. */
export async function serveIndexer(
  opts: Omit<StartIndexerOptions, "database"> & { database: { kind: "postgres"; url: string; schema: string } },
): Promise<{ service: Service; url: string }> {
  return runPonder("indexer-replica", { command: "serve", schema: opts.database.schema }, opts);
}

/** What a Ponder process of the indexer app runs: `ponder start` (index, and serve the HTTP API) or `ponder
 * serve` (a read replica of a schema filled elsewhere, PostgreSQL only). */
export type PonderCommand = {
  command: "start" | "serve";
  /** Ponder's schema (PGlite: "public"); for serve, the indexer's schema or its views schema. */
  schema: string;
  /** start only: the stable schema of views over `schema` that Ponder (re)points once the backfill is done. */
  viewsSchema?: string;
  port: number;
  hostname: string;
  logLevel?: StartIndexerOptions["logLevel"];
};

/** Node's arguments for a Ponder process of the indexer app, to be run with the indexer/ directory
 * (indexerRoot) as its working directory and PONDER_ENV in its environment. Shared by runPonder and
 * `npm run indexer` (scripts/indexer.ts). */
export function ponderNodeArgs(c: PonderCommand): string[] {
  const args = [ponderCli, c.command, "--schema", c.schema];
  if (c.viewsSchema) args.push("--views-schema", c.viewsSchema);
  args.push("--port", String(c.port), "--hostname", c.hostname);
  if (c.logLevel) args.push("--log-level", c.logLevel);
  return args;
}

/** Environment every Ponder process of the indexer app gets. */
export const PONDER_ENV = { PONDER_TELEMETRY_DISABLED: "1" } as const;

/** The signal that stops a Ponder process cleanly. Not SIGTERM: Vite, which Ponder builds the app with, ends
 * the process on SIGTERM in the middle of Ponder's shutdown, before it releases its lock on the schema (the
 * next start on that database then waits up to 25 s for the lock to expire) and before it closes PGlite. */
export const PONDER_STOP_SIGNAL = "SIGINT" satisfies NodeJS.Signals;

async function runPonder(
  name: string,
  command: Pick<PonderCommand, "command" | "schema" | "viewsSchema">,
  opts: StartIndexerOptions | (Omit<StartIndexerOptions, "database"> & { database: { kind: "postgres"; url: string } }),
): Promise<{ service: Service; url: string }> {
  const port = opts.port ?? (await freePort());
  const db = opts.database;
  const args = ponderNodeArgs({ ...command, port, hostname: "127.0.0.1", logLevel: opts.logLevel });

  const env: NodeJS.ProcessEnv = {
    ...PONDER_ENV,
    DEPLOYMENT: opts.deploymentId,
    DEPLOYMENT_WAIT_SECONDS:
      "awaitDeployment" in opts && opts.awaitDeployment ? String(Math.ceil((opts.readyTimeoutMs ?? 240_000) / 1000)) : undefined,
    PONDER_RPC_URL: opts.rpcUrl,
    PONDER_RPC_BUCKETS: opts.rpcBuckets === undefined ? undefined : String(opts.rpcBuckets),
    PONDER_POLLING_MS: opts.pollingIntervalMs === undefined ? undefined : String(opts.pollingIntervalMs),
    // New blocks come over the chain's WebSocket, derived from rpcUrl (indexer/env.ts).
    PONDER_WS_URL: undefined,
    DATABASE_URL: db.kind === "postgres" ? db.url : undefined,
    PONDER_PGLITE_DIR: db.kind === "pglite" ? db.directory : undefined,
    // Settings of the calling environment that would override the ones above. startService merges this
    // over process.env, and spawn leaves out variables whose value is undefined.
    DATABASE_PRIVATE_URL: undefined,
    DATABASE_SCHEMA: undefined,
    DATABASE_VIEWS_SCHEMA: undefined,
    PORT: undefined,
    PONDER_LOG_LEVEL: undefined,
    NODE_OPTIONS: undefined,
  };
  const service = startService(name, process.execPath, args, {
    cwd: indexerRoot,
    env,
    logFile: opts.logFile,
    echo: opts.echo,
    onLine: opts.onLine,
    stopSignal: PONDER_STOP_SIGNAL,
  });
  const url = `http://127.0.0.1:${port}`;
  try {
    await waitUntil(
      `${name} to be ready`,
      async () => (await fetch(`${url}/ready`, { signal: AbortSignal.timeout(2_000) })).status === 200,
      { service, timeoutMs: opts.readyTimeoutMs ?? 240_000, intervalMs: 100 },
    );
  } catch (error) {
    await service.stop();
    throw error;
  }
  return { service, url };
}
