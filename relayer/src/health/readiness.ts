// Readiness (GET /v1/health/ready): whether this process can serve, from a quick look at each dependency:
// the database (`select 1`), the chain's JSON-RPC (eth_blockNumber), the indexer (its latest indexed block,
// and its lag behind the chain head) and the device cloud (GET /health). Each check has CHECK_TIMEOUT_MS, and
// they run together, so the answer comes within about that time even when a dependency hangs.
//
// A check is `ok`, `degraded` (answers, but not as it should: the indexer lags more than
// READY_INDEXER_MAX_LAG_BLOCKS) or `down` (no answer in time, or an error). The process is ready unless a
// check is down. Answers are shared for READY_CACHE_MS (and concurrent requests share one round of checks),
// so that a public route cannot be used to flood the dependencies. Details name no address and quote no
// error message (the route is public); a check going down or coming back is logged with the error.
import { sql } from "drizzle-orm";
import type { Services } from "../services.ts";
import { TimeLimitExceeded, withTimeLimit } from "../time-limit.ts";

export const CHECK_TIMEOUT_MS = 1_000;
const READY_CACHE_MS = 1_000;

export type CheckState = "ok" | "degraded" | "down";
export type Check = { state: CheckState; latencyMs: number; detail?: string };
export type Readiness = {
  status: "ready" | "degraded" | "not_ready";
  checkedAt: string;
  checks: {
    database: Check;
    rpc: Check & { blockNumber?: number };
    indexer: Check & { indexedBlock?: number; lagBlocks?: number };
    deviceCloud: Check;
  };
};

function down(error: unknown, started: number): Check {
  const detail = error instanceof TimeLimitExceeded ? `no answer within ${CHECK_TIMEOUT_MS} ms` : "unreachable or failing";
  return { state: "down", latencyMs: elapsed(started), detail };
}

function elapsed(started: number): number {
  return Math.round(performance.now() - started);
}

export function createReadiness(services: Services) {
  const { database, chain, indexer, deviceCloud, config } = services;
  const logger = services.logger.child({ component: "readiness" });
  const lastStates = new Map<string, CheckState>();
  let cached: { at: number; value: Promise<Readiness> } | undefined;

  /** Runs `probe` within the time limit; a throw is `down`. Logs the check's changes of state. */
  async function run<T extends Check>(name: string, probe: (started: number) => Promise<T>): Promise<T | Check> {
    const started = performance.now();
    let check: T | Check;
    let error: unknown;
    try {
      check = await withTimeLimit(probe(started), CHECK_TIMEOUT_MS, name);
    } catch (caught) {
      error = caught;
      check = down(caught, started);
    }
    const previous = lastStates.get(name);
    if (previous !== check.state) {
      lastStates.set(name, check.state);
      const fields = { check: name, state: check.state, detail: check.detail, error: (error as Error | undefined)?.message };
      if (check.state === "ok") {
        if (previous !== undefined) logger.info("readiness check ok again", fields);
      } else logger.warn("readiness check not ok", fields);
    }
    return check;
  }

  async function checkAll(): Promise<Readiness> {
    // The chain head is read once: the rpc check reports it, the indexer check measures the lag with it.
    const headStarted = performance.now();
    const head = withTimeLimit(
      chain.publicClient.request({ method: "eth_blockNumber" }).then((hex) => Number(BigInt(hex))),
      CHECK_TIMEOUT_MS,
      "rpc",
    );
    head.catch(() => undefined); // reported by the rpc check
    const [db, rpc, idx, cloud] = await Promise.all([
      run("database", async (started) => {
        await database.db.execute(sql`select 1`);
        return { state: "ok" as const, latencyMs: elapsed(started) };
      }),
      run("rpc", async () => {
        const blockNumber = await head;
        return { state: "ok" as const, latencyMs: elapsed(headStarted), blockNumber };
      }),
      run("indexer", async (started) => {
        const indexedBlock = await indexer.indexedBlock();
        const latencyMs = elapsed(started);
        const chainHead = await head.catch(() => undefined);
        if (chainHead === undefined) {
          return { state: "ok" as const, latencyMs, indexedBlock, detail: "lag unknown: the chain's RPC did not answer" };
        }
        const lagBlocks = Math.max(0, chainHead - indexedBlock);
        const max = config.READY_INDEXER_MAX_LAG_BLOCKS;
        return lagBlocks > max
          ? {
              state: "degraded" as const,
              latencyMs,
              indexedBlock,
              lagBlocks,
              detail: `${lagBlocks} blocks behind the chain head (more than ${max})`,
            }
          : { state: "ok" as const, latencyMs, indexedBlock, lagBlocks };
      }),
      run("deviceCloud", async (started) => {
        const status = await deviceCloud.health(CHECK_TIMEOUT_MS);
        const latencyMs = elapsed(started);
        return status >= 500
          ? { state: "down" as const, latencyMs, detail: `answered HTTP ${status}` }
          : { state: "ok" as const, latencyMs };
      }),
    ]);
    const checks = { database: db, rpc, indexer: idx, deviceCloud: cloud };
    const states = Object.values(checks).map((c) => c.state);
    const status = states.includes("down") ? "not_ready" : states.includes("degraded") ? "degraded" : "ready";
    return { status, checkedAt: new Date().toISOString(), checks };
  }

  return {
    /** The readiness now, or as checked less than READY_CACHE_MS ago. */
    check(): Promise<Readiness> {
      if (cached && performance.now() - cached.at < READY_CACHE_MS) return cached.value;
      const value = checkAll();
      cached = { at: performance.now(), value };
      return value;
    },
  };
}
