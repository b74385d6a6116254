// The indexer's read path, for the relayer and the tests: typed queries over Ponder's SQL over HTTP
// (`@ponder/client` against `${indexerUrl}/sql`, read-only, the same with PGlite and PostgreSQL), plus
// Ponder's /status and /ready. See indexer/README.md.
//
// Consistency: every query here is made unique (a throw-away parameter), so Ponder's result cache never
// answers it from before the latest indexed block; after `waitForBlock(n)`, every read sees block n.
//
// New payments: `paidOrdersAfter(cursor, limit)` returns the paid orders after a cursor, in chain order.
// Rows become visible in chain order (Ponder commits whole blocks, or whole batches during the backfill, each
// with its checkpoint), so a reader that only moves its cursor forward over what it read misses none and
// sees none twice. A chain reorganisation that removes the cursor's own order is detected (the order, or
// its block hash, is gone) and answered by a rewind: see `OrdersPage.reorg`.
import { and, asc, createClient, desc, eq, gt, gte, inArray, lte, sql, type Client } from "@ponder/client";
import { pgTable, text } from "drizzle-orm/pg-core";
import { pad, toHex, type Hex } from "viem";
import { emptyNetworkStats } from "./network-stats.ts";
import * as schema from "./ponder.schema.ts";

export { schema };
export type PaidOrder = typeof schema.orders.$inferSelect;
export type Settlement = typeof schema.settlements.$inferSelect;
export type Participant = typeof schema.participants.$inferSelect;
export type SplitLegs = typeof schema.splits.$inferSelect;
export type Withdrawal = typeof schema.withdrawals.$inferSelect;
export type TokenStats = typeof schema.tokenStats.$inferSelect;
export type DeviceStats = typeof schema.deviceStats.$inferSelect;
export type DailyStats = typeof schema.dailyStats.$inferSelect;
export type NetworkStats = typeof schema.networkStats.$inferSelect;

/** The cursor before the first order. */
export const START_CURSOR = "";

/** A position in the order stream: `<checkpoint>:<blockHash>` of the last order read, where checkpoint is
 * Ponder's event id (75 digits: block timestamp 10, chain id 16, block number 16, transaction index 16,
 * event type 1, log index 16), which sorts in chain order; the block hash detects a reorganised block. */
export type OrderCursor = string;

export type DecodedCursor = {
  checkpoint: string;
  blockHash: Hex;
  blockTimestamp: number;
  chainId: number;
  blockNumber: bigint;
  transactionIndex: number;
  logIndex: number;
};

/** The cursor just after `order`. */
export function cursorOf(order: Pick<PaidOrder, "cursor" | "blockHash">): OrderCursor {
  return `${order.cursor}:${order.blockHash}`;
}

/** Splits a cursor into its parts; throws on a malformed one. */
export function decodeCursor(cursor: OrderCursor): DecodedCursor {
  const match = /^(\d{75}):(0x[0-9a-f]{64})$/.exec(cursor);
  if (!match) throw new Error(`malformed order cursor "${cursor}"`);
  const checkpoint = match[1]!;
  return {
    checkpoint,
    blockHash: match[2] as Hex,
    blockTimestamp: Number(checkpoint.slice(0, 10)),
    chainId: Number(checkpoint.slice(10, 26)),
    blockNumber: BigInt(checkpoint.slice(26, 42)),
    transactionIndex: Number(checkpoint.slice(42, 58)),
    logIndex: Number(checkpoint.slice(59, 75)),
  };
}

export type OrdersPage = {
  /** Paid orders after the cursor, in chain order (at most `limit`). */
  orders: PaidOrder[];
  /** The cursor to pass next time (unchanged when there is nothing new). */
  cursor: OrderCursor;
  /** Set when the order at the given cursor was removed by a chain reorganisation. The page then restarts at
   * block `fromBlock`, far enough back (the `reorgDepth` option) to be below the fork: orders from
   * `fromBlock` on are delivered again, in this and the following pages. An order the reader holds as paid
   * at a block >= fromBlock is still paid if it comes again (same order id; its transaction may differ) and
   * was abandoned with its fork otherwise; `orderById` answers it directly. */
  reorg: { fromBlock: bigint } | null;
};

/** Ponder's own checkpoint table, readable through /sql. */
const ponderCheckpoint = pgTable("_ponder_checkpoint", {
  chainName: text().primaryKey(),
  latestCheckpoint: text().notNull(),
});

export type IndexerClientOptions = {
  /** Blocks to rewind on a reorg of the cursor's order: at least the chain's reorg depth as Ponder assumes it
   * (30 blocks on local and OP-stack chains, 65 on Ethereum, up to 240 on Arbitrum). Default 256. */
  reorgDepth?: number;
  /** Timeout of every request (SQL queries, /status, /ready) in ms. Default 10000. */
  requestTimeoutMs?: number;
};

export type IndexerClient = ReturnType<typeof createIndexerClient>;

/** A client of the indexer at `indexerUrl` (e.g. http://127.0.0.1:42069). */
export function createIndexerClient(indexerUrl: string, options: IndexerClientOptions = {}) {
  let end = indexerUrl.length;
  while (end > 0 && indexerUrl[end - 1] === "/") end--;
  const baseUrl = indexerUrl.slice(0, end);
  const reorgDepth = BigInt(options.reorgDepth ?? 256);
  const requestTimeoutMs = options.requestTimeoutMs ?? 10_000;
  const client: Client<typeof schema> = createClient(`${baseUrl}/sql`, { schema });
  const db = client.db;

  /** Runs a query with the request timeout (`@ponder/client` has none of its own). */
  function timed<T>(query: PromiseLike<T>): Promise<T> {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`indexer query timed out after ${requestTimeoutMs} ms`)), requestTimeoutMs);
    });
    return Promise.race([Promise.resolve(query), timeout]).finally(() => clearTimeout(timer));
  }

  let nonce = 0;
  /** A condition that is always true but unique per query: bypasses Ponder's query result cache. */
  const fresh = () => sql`${`${process.pid}.${Date.now()}.${nonce++}`}::text <> ''`;

  async function getJson<T>(route: string): Promise<T> {
    const response = await fetch(`${baseUrl}${route}`, { signal: AbortSignal.timeout(requestTimeoutMs) });
    if (!response.ok) throw new Error(`GET ${route}: ${response.status} ${await response.text()}`);
    return (await response.json()) as T;
  }

  /** The latest indexed checkpoint (all rows up to it are visible), or undefined before the first one. */
  async function latestCheckpoint(): Promise<string | undefined> {
    const rows = await timed(
      db.select({ latest: ponderCheckpoint.latestCheckpoint }).from(ponderCheckpoint).where(fresh()),
    );
    return rows.length === 0 ? undefined : rows.map((row) => row.latest).sort()[0];
  }

  async function ordersAfter(checkpoint: string | undefined, limit: number): Promise<PaidOrder[]> {
    return timed(db
      .select()
      .from(schema.orders)
      .where(checkpoint === undefined ? fresh() : and(gt(schema.orders.cursor, checkpoint), fresh()))
      .orderBy(asc(schema.orders.cursor))
      .limit(limit));
  }

  /** Orders from the cursor's own order (included if still indexed) on. */
  async function ordersFrom(checkpoint: string, limit: number): Promise<PaidOrder[]> {
    return timed(db
      .select()
      .from(schema.orders)
      .where(and(gte(schema.orders.cursor, checkpoint), fresh()))
      .orderBy(asc(schema.orders.cursor))
      .limit(limit + 1));
  }

  function page(orders: PaidOrder[], cursor: OrderCursor, reorg: OrdersPage["reorg"] = null): OrdersPage {
    const last = orders.at(-1);
    return { orders, cursor: last ? cursorOf(last) : cursor, reorg };
  }

  const api = {
    /** The underlying `@ponder/client` client, for queries not covered here (typed by ponder.schema.ts). */
    client,

    /** The latest block indexed (GET /status; with one chain), or 0 before the first one. */
    async indexedBlock(): Promise<number> {
      const status = await getJson<Record<string, { id: number; block: { number: number } }>>("/status");
      const chains = Object.values(status);
      return chains.length === 0 ? 0 : Math.min(...chains.map((chain) => chain.block.number));
    },

    /** Whether the backfill is complete (GET /ready is 200): the indexer then follows the chain head. */
    async isReady(): Promise<boolean> {
      try {
        const response = await fetch(`${baseUrl}/ready`, { signal: AbortSignal.timeout(requestTimeoutMs) });
        return response.status === 200;
      } catch {
        return false;
      }
    },

    /** Waits until block `blockNumber` is indexed (every row up to it is readable); returns the indexed block.
     * Throws after `timeoutMs` (default 30 s). Transient errors (indexer restarting) are retried. */
    async waitForBlock(
      blockNumber: number | bigint,
      opts: { timeoutMs?: number; intervalMs?: number } = {},
    ): Promise<number> {
      const target = Number(blockNumber);
      const deadline = Date.now() + (opts.timeoutMs ?? 30_000);
      let last: number | undefined;
      let lastError: unknown;
      for (;;) {
        try {
          last = await api.indexedBlock();
          if (last >= target) return last;
        } catch (error) {
          lastError = error;
        }
        if (Date.now() >= deadline) {
          const detail = lastError ? `; last error: ${(lastError as Error).message}` : "";
          throw new Error(`block ${target} not indexed in time (indexed: ${last ?? "unknown"}${detail})`);
        }
        await new Promise((resolve) => setTimeout(resolve, opts.intervalMs ?? 25));
      }
    },

    /** The paid orders after `cursor` (START_CURSOR for the first), in chain order, at most `limit`. Call it in
     * a loop with the returned cursor; store the cursor to resume after a restart. */
    async paidOrdersAfter(cursor: OrderCursor, limit = 100): Promise<OrdersPage> {
      if (!Number.isInteger(limit) || limit < 1 || limit > 10_000) throw new Error(`invalid limit ${limit}`);
      if (cursor === START_CURSOR) return page(await ordersAfter(undefined, limit), cursor);
      const at = decodeCursor(cursor);

      const isCursorOrder = (order: PaidOrder | undefined) =>
        order !== undefined && order.cursor === at.checkpoint && order.blockHash === at.blockHash;

      let rows = await ordersFrom(at.checkpoint, limit);
      if (isCursorOrder(rows[0])) return page(rows.slice(1), cursor);

      // The cursor's order is not there: either it is not indexed yet (the indexer is behind or re-indexing
      // into a fresh database), or a reorg removed it.
      const latest = await latestCheckpoint();
      if (latest === undefined || latest < at.checkpoint) return page([], cursor);
      // Indexed up to the cursor now; it may have become so just after the first read, so read again.
      rows = await ordersFrom(at.checkpoint, limit);
      if (isCursorOrder(rows[0])) return page(rows.slice(1), cursor);

      // Reorganised: restart below any possible fork point.
      const fromBlock = at.blockNumber > reorgDepth ? at.blockNumber - reorgDepth : 0n;
      const [before] = await timed(db
        .select({ cursor: schema.orders.cursor, blockHash: schema.orders.blockHash })
        .from(schema.orders)
        .where(and(lte(schema.orders.blockNumber, fromBlock - 1n), fresh()))
        .orderBy(desc(schema.orders.cursor))
        .limit(1));
      const restart = before ? cursorOf(before) : START_CURSOR;
      return page(await ordersAfter(before?.cursor, limit), restart, { fromBlock });
    },

    /** The paid order with on-chain key `orderId`, or null (not paid, not indexed yet, or reorganised away). */
    async orderById(orderId: bigint): Promise<PaidOrder | null> {
      const [row] = await timed(db
        .select()
        .from(schema.orders)
        .where(and(eq(schema.orders.orderId, orderId), fresh())));
      return row ?? null;
    },

    /** The paid orders among `orderIds` (absent ids are not paid or not indexed yet). */
    async ordersByIds(orderIds: readonly bigint[]): Promise<PaidOrder[]> {
      const rows = await inChunks(orderIds, (ids) =>
        db
          .select()
          .from(schema.orders)
          .where(and(inArray(schema.orders.orderId, ids), fresh())),
        timed,
      );
      return rows.sort((a, b) => (a.cursor < b.cursor ? -1 : 1));
    },

    /** The settlements with these on-chain references (bytes32), in chain order. */
    async settlementsByRefs(refs: readonly Hex[]): Promise<Settlement[]> {
      const rows = await inChunks(refs.map((ref) => ref.toLowerCase() as Hex), (chunk) =>
        db
          .select()
          .from(schema.settlements)
          .where(and(inArray(schema.settlements.ref, chunk), fresh())),
        timed,
      );
      return rows.sort((a, b) => (a.id < b.id ? -1 : 1));
    },

    /** The first settlement with reference `ref`, or null. A router payment's reference is its order id
     * (see `orderRef`), which pays once; a batch depositor may reuse a reference (use settlementsByRefs). */
    async settlementByRef(ref: Hex): Promise<Settlement | null> {
      const [row] = await api.settlementsByRefs([ref]);
      return row ?? null;
    },

    /** The settlement of each paid order among `orderIds`. */
    async settlementsByOrderIds(orderIds: readonly bigint[]): Promise<Settlement[]> {
      const rows = await inChunks(orderIds, (ids) =>
        db
          .select()
          .from(schema.settlements)
          .where(and(inArray(schema.settlements.orderId, ids), fresh())),
        timed,
      );
      return rows.sort((a, b) => (a.id < b.id ? -1 : 1));
    },

    /** What `recipient` earned, per token: credited, withdrawn and claimable, in base units (empty if
     * nothing was ever credited to it). */
    async participantEarnings(recipient: Hex): Promise<Participant[]> {
      return timed(db
        .select()
        .from(schema.participants)
        .where(and(eq(schema.participants.recipient, recipient.toLowerCase() as Hex), fresh()))
        .orderBy(asc(schema.participants.token)));
    },

    /** Every participant (all recipients and tokens). */
    async participants(): Promise<Participant[]> {
      return timed(db
        .select()
        .from(schema.participants)
        .where(fresh())
        .orderBy(asc(schema.participants.recipient), asc(schema.participants.token)));
    },

    /** `recipient`'s withdrawals, in chain order. */
    async withdrawalsOf(recipient: Hex): Promise<Withdrawal[]> {
      return timed(db
        .select()
        .from(schema.withdrawals)
        .where(and(eq(schema.withdrawals.recipient, recipient.toLowerCase() as Hex), fresh()))
        .orderBy(asc(schema.withdrawals.id)));
    },

    /** Every split seen, with its token, registration and current legs (recipients and bps). */
    async splits(): Promise<SplitLegs[]> {
      return timed(db.select().from(schema.splits).where(fresh()).orderBy(asc(schema.splits.address)));
    },

    /** Network totals (payments, micro-USD volume, devices, rails, settlements) with the per-token volumes
     * in base units. All zero before the first payment. */
    async networkStats(): Promise<NetworkStats & { tokens: TokenStats[] }> {
      const [[row], tokens] = await Promise.all([
        timed(db.select().from(schema.networkStats).where(fresh()).limit(1)),
        timed(db.select().from(schema.tokenStats).where(fresh()).orderBy(asc(schema.tokenStats.token))),
      ]);
      const zero = emptyNetworkStats(0);
      return { ...(row ?? zero), tokens };
    },

    /** Totals per device: the given devices (bytes32 ids) or all, most paid-for first. */
    async deviceStats(deviceIds?: readonly Hex[]): Promise<DeviceStats[]> {
      const order = [desc(schema.deviceStats.volumeUsdMicro), asc(schema.deviceStats.deviceId)] as const;
      if (deviceIds === undefined) {
        return timed(db.select().from(schema.deviceStats).where(fresh()).orderBy(...order));
      }
      const rows = await inChunks(deviceIds.map((id) => id.toLowerCase() as Hex), (ids) =>
        db
          .select()
          .from(schema.deviceStats)
          .where(and(inArray(schema.deviceStats.deviceId, ids), fresh())),
        timed,
      );
      return rows.sort((a, b) =>
        a.volumeUsdMicro !== b.volumeUsdMicro ? (a.volumeUsdMicro > b.volumeUsdMicro ? -1 : 1) : a.deviceId < b.deviceId ? -1 : 1,
      );
    },

    /** Totals per UTC day, oldest first, for days `from` to `to` (YYYY-MM-DD, inclusive, both optional). */
    async dailyStats(range: { from?: string; to?: string } = {}): Promise<DailyStats[]> {
      const conditions = [fresh()];
      if (range.from !== undefined) conditions.push(gte(schema.dailyStats.day, dayNumber(range.from)));
      if (range.to !== undefined) conditions.push(lte(schema.dailyStats.day, dayNumber(range.to)));
      return timed(db
        .select()
        .from(schema.dailyStats)
        .where(and(...conditions))
        .orderBy(asc(schema.dailyStats.day)));
    },

    /** Calls `onPage` with every page of new paid orders from `after` on (and on every reorg), polling every
     * `intervalMs` (default 100) when caught up, until `signal` aborts. Resolves with the last cursor.
     * A failing read (indexer down) is reported to `onError` and retried; `onPage` errors propagate. */
    async watchPaidOrders(opts: {
      after: OrderCursor;
      onPage: (page: OrdersPage) => void | Promise<void>;
      limit?: number;
      intervalMs?: number;
      signal?: AbortSignal;
      onError?: (error: Error) => void;
    }): Promise<OrderCursor> {
      const limit = opts.limit ?? 100;
      let cursor = opts.after;
      while (!opts.signal?.aborted) {
        let result: OrdersPage;
        try {
          result = await api.paidOrdersAfter(cursor, limit);
        } catch (error) {
          opts.onError?.(error as Error);
          await sleep(Math.max(opts.intervalMs ?? 100, 500), opts.signal);
          continue;
        }
        if (result.orders.length > 0 || result.reorg) await opts.onPage(result);
        cursor = result.cursor;
        if (result.orders.length < limit) await sleep(opts.intervalMs ?? 100, opts.signal);
      }
      return cursor;
    },
  };
  return api;
}

/** Lists are queried in chunks: a query travels in the URL of a GET (and Ponder rejects SQL over 5,000
 * characters). */
const CHUNK = 50;

async function inChunks<T, R>(
  values: readonly T[],
  query: (chunk: T[]) => PromiseLike<R[]>,
  run: (query: PromiseLike<R[]>) => Promise<R[]>,
): Promise<R[]> {
  const unique = [...new Set(values)];
  const results: R[] = [];
  for (let i = 0; i < unique.length; i += CHUNK) results.push(...(await run(query(unique.slice(i, i + CHUNK)))));
  return results;
}

/** The settlement reference of a router payment: bytes32(orderId). */
export function orderRef(orderId: bigint): Hex {
  return pad(toHex(orderId), { size: 32 });
}

/** Micro-USD to a decimal string of dollars (exact). */
export function formatUsdMicro(usdMicro: bigint): string {
  const sign = usdMicro < 0n ? "-" : "";
  const abs = usdMicro < 0n ? -usdMicro : usdMicro;
  return `${sign}${abs / 1_000_000n}.${(abs % 1_000_000n).toString().padStart(6, "0")}`;
}

/** YYYY-MM-DD to the UTC day number used by daily_stats.day. */
export function dayNumber(date: string): number {
  const ms = Date.parse(`${date}T00:00:00Z`);
  if (!/^\d{4}-\d{2}-\d{2}$/.test(date) || Number.isNaN(ms)) throw new Error(`invalid date "${date}"`);
  return ms / 86_400_000;
}

function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal?.aborted) return resolve();
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      signal?.removeEventListener("abort", done);
      resolve();
    }
    signal?.addEventListener("abort", done, { once: true });
  });
}
