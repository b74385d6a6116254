// The indexer as a child process: `ponder start` on the indexer/ app, bound to 127.0.0.1, for the local
// stack, the tests and the benchmarks.
import path from "node:path";
import pg from "pg";
import { LOCAL_CHAIN_IDS } from "../indexer/env.ts";
import { loadDeploymentRecord, repoRoot } from "../ignition/deployment-records.ts";
import { type Service, freePort, startService, waitUntil } from "./processes.ts";

const ponderCli = path.join(repoRoot, "node_modules", "ponder", "dist", "esm", "bin", "ponder.js");
export const indexerRoot = path.join(repoRoot, "indexer");

/** Where the indexer keeps its tables. PGlite is embedded (a directory, no server); with PostgreSQL each
 * deployment gets its own schema, and `viewsSchema` (optional) is the stable schema of views readers use. */
export type IndexerDatabase =
  | { kind: "pglite"; directory: string }
  | { kind: "postgres"; url: string; schema: string; viewsSchema?: string };

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
  /** Realtime polling interval in ms (default: 100 on a local chain). */
  pollingIntervalMs?: number;
  /** Ponder's log level (default "info"). */
  logLevel?: "error" | "warn" | "info" | "debug" | "trace";
  /** With PostgreSQL and a local chain (31337), first delete that chain's rows from Ponder's shared RPC data
   * schema `ponder_sync` (default true; see resetLocalChainSyncData). */
  resetLocalChainSyncData?: boolean;
  /** How long to wait for /ready (historical indexing complete). Default 120 s. */
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
  const args = ["start", "--schema", schema];
  if (db.kind === "postgres" && db.viewsSchema) args.push("--views-schema", db.viewsSchema);
  if (db.kind === "postgres" && opts.resetLocalChainSyncData !== false) {
    const { chainId } = await loadDeploymentRecord(opts.deploymentId);
    if (LOCAL_CHAIN_IDS.includes(chainId)) await resetLocalChainSyncData(db.url, chainId);
  }
  return runPonder("indexer", args, opts);
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
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 5_000 });
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
  return runPonder("indexer-replica", ["serve", "--schema", opts.database.schema], opts);
}

async function runPonder(
  name: string,
  commandArgs: string[],
  opts: StartIndexerOptions | (Omit<StartIndexerOptions, "database"> & { database: { kind: "postgres"; url: string } }),
): Promise<{ service: Service; url: string }> {
  const port = opts.port ?? (await freePort());
  const db = opts.database;
  const args = [ponderCli, ...commandArgs, "--port", String(port), "--hostname", "127.0.0.1"];
  if (opts.logLevel) args.push("--log-level", opts.logLevel);

  const env: NodeJS.ProcessEnv = {
    PONDER_TELEMETRY_DISABLED: "1",
    DEPLOYMENT: opts.deploymentId,
    PONDER_RPC_URL: opts.rpcUrl,
    PONDER_RPC_BUCKETS: opts.rpcBuckets === undefined ? undefined : String(opts.rpcBuckets),
    PONDER_POLLING_MS: opts.pollingIntervalMs === undefined ? undefined : String(opts.pollingIntervalMs),
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
  });
  const url = `http://127.0.0.1:${port}`;
  try {
    await waitUntil(
      `${name} to be ready`,
      async () => (await fetch(`${url}/ready`, { signal: AbortSignal.timeout(2_000) })).status === 200,
      { service, timeoutMs: opts.readyTimeoutMs ?? 120_000, intervalMs: 100 },
    );
  } catch (error) {
    await service.stop();
    throw error;
  }
  return { service, url };
}
