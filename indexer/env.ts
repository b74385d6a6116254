// The indexer's configuration, read from the environment only and validated with a clear error. Used by
// ponder.config.ts (inside `ponder start`) and by lib/indexer.ts (which sets these variables for the child).
import path from "node:path";
import { fileURLToPath } from "node:url";
import { NEW_HEADS_CHECK_MS } from "./new-heads-relay.ts";
import { DEFAULT_SQL_LIMITS } from "./src/api/sql-limits.ts";

/** The indexer app's directory (indexer/). */
export const indexerDir = path.dirname(fileURLToPath(import.meta.url));

/** Chain ids of local development chains: fast polling, no RPC cache (a restarted node is a new chain). */
export const LOCAL_CHAIN_IDS: readonly number[] = [31337, 1337];

export type IndexerEnv = {
  /** Ignition deployment id whose generated record (generated/deployments/<id>.json) gives chain and addresses. */
  deploymentId: string;
  /** How long to wait for that record to appear, in milliseconds (0: it must exist at start). */
  deploymentWaitMs: number;
  /** The chain's JSON-RPC URL. */
  rpcUrl: string;
  /** How many times the URL is listed in Ponder's `rpc` array. Ponder rate-limits each entry separately
   * (starting at 20 requests/s), so listing a loopback node several times lifts that limit. */
  rpcBuckets: number;
  /** Realtime polling interval in milliseconds, or undefined for the per-chain default. With `wsUrl`, Ponder
   * polls only if the WebSocket subscription fails for good. */
  pollingIntervalMs: number | undefined;
  /** The chain's WebSocket JSON-RPC URL: Ponder subscribes to new blocks (eth_subscribe newHeads) there
   * instead of polling, or undefined to poll. */
  wsUrl: string | undefined;
  /** How long the newHeads subscription may be silent before the new-heads relay asks the chain for its head,
   * and how often it asks then (new-heads-relay.ts). */
  newHeadsCheckMs: number;
  database: { kind: "postgres"; connectionString: string } | { kind: "pglite"; directory: string };
  /** Limits on a query of the SQL over HTTP (/sql/*), by the planner's estimate (src/api/sql-limits.ts). */
  sqlLimits: { maxCost: number; maxRows: number };
  /** PostgreSQL, `ponder serve` only: statement timeout of the readers' connections (what /sql runs on), in ms;
   * undefined: Ponder's own (30 s). */
  sqlStatementTimeoutMs: number | undefined;
};

export class IndexerConfigError extends Error {
  override name = "IndexerConfigError";
}

/** Reads and validates the indexer's environment:
 * - DEPLOYMENT: deployment id, default `chain-31337`;
 * - DEPLOYMENT_WAIT_SECONDS: how long to wait for the deployment's record to appear, 0-3600, default 0 (it
 *   must exist): an indexer started beside the deployment (`npm start` on a new chain) boots meanwhile;
 * - PONDER_RPC_URL: JSON-RPC URL (http/https/ws/wss), default http://127.0.0.1:8545;
 * - PONDER_RPC_BUCKETS: how many times to list the URL, 1-64; default 16 on loopback, 1 elsewhere;
 * - PONDER_POLLING_MS: realtime polling interval, default 100 ms on a local chain, 1000 ms elsewhere;
 * - PONDER_WS_URL: ws(s):// URL of the chain for new-block subscriptions, or "none" to poll; default: the
 *   RPC URL itself when it is ws(s), the same host and port over ws when it is http on loopback (a local
 *   Hardhat or Anvil node serves both on one port), else none;
 * - PONDER_NEW_HEADS_CHECK_MS: how long the subscription may be silent before the relay asks for the chain's
 *   head (one eth_blockNumber on the WebSocket), and how often it asks then, 100-600000, default 2000;
 * - DATABASE_URL: PostgreSQL connection string; when unset, the embedded PGlite in PONDER_PGLITE_DIR
 *   (default indexer/.ponder/pglite; a relative path is taken from the current directory);
 * - PONDER_SQL_MAX_COST, PONDER_SQL_MAX_ROWS: a query of the SQL over HTTP whose plan the planner estimates
 *   above this total cost (default 20000) or above this many result rows (default 1000000) is refused;
 * - PONDER_SQL_STATEMENT_TIMEOUT_MS: PostgreSQL only, for a `ponder serve` replica (scripts/indexer.ts refuses it
 *   for `start`, where the same pool settings would reach the indexing's own statements): statement timeout of
 *   the connections /sql runs on, 100-600000; default Ponder's 30 s. */
export function readIndexerEnv(env: NodeJS.ProcessEnv = process.env): IndexerEnv {
  const problems: string[] = [];
  const value = (name: string) => {
    const v = env[name]?.trim();
    return v === undefined || v === "" ? undefined : v;
  };

  const deploymentId = value("DEPLOYMENT") ?? "chain-31337";
  if (!/^[A-Za-z0-9][A-Za-z0-9_.-]*$/.test(deploymentId)) {
    problems.push(`DEPLOYMENT must be an Ignition deployment id (letters, digits, "-", "_", "."), got "${deploymentId}"`);
  }

  const rpcUrl = value("PONDER_RPC_URL") ?? "http://127.0.0.1:8545";
  let loopback = false;
  try {
    const url = new URL(rpcUrl);
    if (!["http:", "https:", "ws:", "wss:"].includes(url.protocol)) {
      problems.push(`PONDER_RPC_URL must be an http(s) or ws(s) URL, got "${rpcUrl}"`);
    }
    loopback = ["127.0.0.1", "localhost", "[::1]"].includes(url.hostname);
  } catch {
    problems.push(`PONDER_RPC_URL is not a URL: "${rpcUrl}"`);
  }

  const integer = (name: string, min: number, max: number): number | undefined => {
    const raw = value(name);
    if (raw === undefined) return undefined;
    const n = Number(raw);
    if (!Number.isInteger(n) || n < min || n > max) {
      problems.push(`${name} must be an integer from ${min} to ${max}, got "${raw}"`);
      return undefined;
    }
    return n;
  };
  const deploymentWaitMs = (integer("DEPLOYMENT_WAIT_SECONDS", 0, 3_600) ?? 0) * 1_000;
  const rpcBuckets = integer("PONDER_RPC_BUCKETS", 1, 64) ?? (loopback ? 16 : 1);
  const pollingIntervalMs = integer("PONDER_POLLING_MS", 10, 60_000);
  const newHeadsCheckMs = integer("PONDER_NEW_HEADS_CHECK_MS", 100, 600_000) ?? NEW_HEADS_CHECK_MS;
  const sqlLimits = {
    maxCost: integer("PONDER_SQL_MAX_COST", 1, 1e30) ?? DEFAULT_SQL_LIMITS.maxCost,
    maxRows: integer("PONDER_SQL_MAX_ROWS", 1, 1e12) ?? DEFAULT_SQL_LIMITS.maxRows,
  };

  let wsUrl: string | undefined;
  const wsSetting = value("PONDER_WS_URL");
  if (wsSetting === undefined) {
    try {
      const url = new URL(rpcUrl);
      if (url.protocol === "ws:" || url.protocol === "wss:") wsUrl = rpcUrl;
      else if (loopback && url.protocol === "http:") {
        url.protocol = "ws:";
        wsUrl = url.toString();
      }
    } catch {
      // reported above
    }
  } else if (wsSetting !== "none") {
    try {
      const url = new URL(wsSetting);
      if (url.protocol !== "ws:" && url.protocol !== "wss:")
        problems.push(`PONDER_WS_URL must be a ws(s) URL or "none", got "${wsSetting}"`);
      wsUrl = wsSetting;
    } catch {
      problems.push(`PONDER_WS_URL is not a URL: "${wsSetting}"`);
    }
  }

  const sqlStatementTimeoutMs = integer("PONDER_SQL_STATEMENT_TIMEOUT_MS", 100, 600_000);

  let database: IndexerEnv["database"];
  const databaseUrl = value("DATABASE_URL");
  if (databaseUrl !== undefined) {
    if (!/^postgres(ql)?:\/\//.test(databaseUrl)) {
      problems.push("DATABASE_URL must be a postgres:// or postgresql:// connection string");
    }
    database = { kind: "postgres", connectionString: databaseUrl };
  } else {
    const dir = value("PONDER_PGLITE_DIR");
    database = { kind: "pglite", directory: dir ? path.resolve(dir) : path.join(indexerDir, ".ponder", "pglite") };
    if (sqlStatementTimeoutMs !== undefined) problems.push("PONDER_SQL_STATEMENT_TIMEOUT_MS needs DATABASE_URL (PostgreSQL)");
  }

  if (problems.length > 0) {
    throw new IndexerConfigError(`invalid indexer configuration:\n  - ${problems.join("\n  - ")}`);
  }
  return {
    deploymentId,
    deploymentWaitMs,
    rpcUrl,
    rpcBuckets,
    pollingIntervalMs,
    wsUrl,
    newHeadsCheckMs,
    database,
    sqlLimits,
    sqlStatementTimeoutMs,
  };
}

/** Ponder's name for a chain (the key of /status and of _ponder_checkpoint). */
export function chainName(chainId: number): string {
  switch (chainId) {
    case 31337:
    case 1337:
      return "local";
    case 84532:
      return "baseSepolia";
    case 8453:
      return "base";
    default:
      return `chain${chainId}`;
  }
}
