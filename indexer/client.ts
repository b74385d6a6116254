// The indexer's read path, for the relayer: typed queries over Ponder's SQL over HTTP (`@ponder/client`
// against `${indexerUrl}/sql`, read-only, the same with PGlite and PostgreSQL), Ponder's /status, and a live
// query that says when paid orders change. See indexer/README.md. (Reads only tests need are in
// test/support/indexer-reads.ts.)
//
// Consistency. Queries go through `client.db` (GET /sql/db): Ponder's `client` middleware caches each
// query's result and drops it when a table the query reads is written, by the same database notification
// that drives live queries (`client.live`, SSE at /sql/live), sent when an indexed block commits. A reorg's
// revert sends none (Ponder drops those triggers while it reverts), so a table that only loses rows would
// keep its cached results. Every read here therefore also selects the indexer's latest checkpoint
// (`_ponder_checkpoint`, written by every indexed block; joined: Ponder allows no subquery in expressions): its
// result is as of that checkpoint, and dropped at the next block, the one after a reorg included. A read
// made after a live push sees that push's block. On PostgreSQL the notification reaches the indexer a moment
// after the commit, so the cache may still hold a result from before a commit that /status already shows.
// Every read here therefore joins the checkpoint only if it is at least the newest checkpoint this client has
// seen indexed (`latest_checkpoint >= $seen`; seen by /status, or in an earlier read's result): a read asks
// for data as of that checkpoint or later, and the cache keeps results per query and parameters, so a result
// it holds for this read was computed once the checkpoint was committed. A client's reads are never older
// than what it has seen (`read` below). A result whose `indexed` is null says the indexer is behind that
// checkpoint (a reorganisation, or a restart on fresh data); the client then starts over from what the
// indexer shows. (The one gap: in the moment between a reorganisation's commit and its notification, a read
// can still be answered with a result of the abandoned fork that the cache holds for the same checkpoint.)
//
// New payments: `paidOrdersAfter(cursor, limit)` returns the paid orders after a cursor, in chain order.
// Rows become visible in chain order (Ponder commits whole blocks, or whole batches during the backfill, each
// with its checkpoint), so a reader that only moves its cursor forward over what it read misses none and
// sees none twice. A chain reorganisation that removes the cursor's own order is detected (the order, or
// its block hash, is gone) and answered by a rewind: see `OrdersPage.reorg`. `watchPaidOrders` says when to
// read: it calls back whenever the newest paid order changes.
//
// Splits. One split per asset, created by the split factory (`Split.assetKey`). A participant's earnings
// restricted to a set of splits (`participantEarningsInSplits` per split, `participantSettlements` per settlement,
// each with its split and asset) let a reader show a tenant its own splits only. Every list is one `tableRows`
// read (or a join of its own through `read`). The settlement lists are pages for display,
// newest first by settlement id (Ponder's event id, chain order): pass the last id read as `before` for the
// next page. (They are not a stream: a reorg between two pages is not reported. Follow payments with
// `paidOrdersAfter`.) Lists of splits are queried in chunks, so any number may be passed.
import { alias, and, asc, createClient, desc, eq, gt, gte, inArray, lt, lte, unionAll, type Client, type SQL } from "@ponder/client";
import { pgTable, text } from "drizzle-orm/pg-core";
import { pad, toHex, type Hex } from "viem";
import { emptyNetworkStats } from "./network-stats.ts";
import * as schema from "./ponder.schema.ts";

export { schema };
export type PaidOrder = typeof schema.orders.$inferSelect;
export type Settlement = typeof schema.settlements.$inferSelect;
export type Participant = typeof schema.participants.$inferSelect;
export type Split = typeof schema.splits.$inferSelect;
export type SplitParticipant = typeof schema.splitParticipants.$inferSelect;
/** A settlement with its asset: the split's asset key, or, for a split whose creation was not indexed (created
 * before the start block), the paid order's device id (null for a batch deposit into such a split). */
export type SplitSettlement = Settlement & { assetKey: Hex | null };
/** A settlement as one participant sees it: `credited` is the sum of the legs it received in it (it may hold
 * several). */
export type ParticipantSettlement = SplitSettlement & { credited: bigint };
/** A participant's earnings in one split, with the split's asset key (null: its creation was not indexed). */
export type SplitEarnings = SplitParticipant & { assetKey: Hex | null };
export type Withdrawal = typeof schema.withdrawals.$inferSelect;
export type TokenStats = typeof schema.tokenStats.$inferSelect;
export type DeviceStats = typeof schema.deviceStats.$inferSelect;
export type DailyStats = typeof schema.dailyStats.$inferSelect;
export type NetworkStats = typeof schema.networkStats.$inferSelect;

/** A table of the indexer (ponder.schema.ts). */
type IndexedTable = {
  [K in keyof typeof schema]: (typeof schema)[K] extends { $inferSelect: object; _: { name: string } } ? (typeof schema)[K] : never;
}[keyof typeof schema];

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

/** Ponder's own checkpoint table, readable through /sql: one row per chain, and this indexer indexes one
 * (ponder.config.ts). Every read selects its `latestCheckpoint` alongside its rows (`leftJoin(ponderCheckpoint,
 * onCheckpoint)`, the condition `read` gives), so that Ponder's query cache drops the read's result at the next
 * indexed block (see the consistency note above); the middleware's validator allows joins and subqueries in FROM,
 * not subqueries in expressions. */
export const ponderCheckpoint = pgTable("_ponder_checkpoint", {
  chainName: text().primaryKey(),
  latestCheckpoint: text().notNull(),
});

/** A read as `read` runs it: `onCheckpoint` is the condition to join the checkpoint on. */
export type IndexerRead<R> = (onCheckpoint: SQL) => PromiseLike<R[]>;

/** The lowest checkpoint of a block (laid out as in OrderCursor: every event of the block sorts at or after it). */
function blockCheckpoint(block: { timestamp: number; chainId: number; number: number }): string {
  return (
    String(block.timestamp).padStart(10, "0") +
    String(block.chainId).padStart(16, "0") +
    String(block.number).padStart(16, "0") +
    "0".repeat(33)
  );
}

/** The rows of a read that selected `{ row: <table>, indexed: ponderCheckpoint.latestCheckpoint }`. */
export function rowsOf<R>(rows: ReadonlyArray<{ row: R }>): R[] {
  return rows.map((r) => r.row);
}

export type IndexerClientOptions = {
  /** Blocks to rewind on a reorg of the cursor's order: at least the chain's reorg depth as Ponder assumes it
   * (30 blocks on local and OP-stack chains, 65 on Ethereum, up to 240 on Arbitrum). Default 256. */
  reorgDepth?: number;
  /** Timeout of every request (SQL queries, /status) in ms. Default 10000. */
  requestTimeoutMs?: number;
  /** Whether the block `blockNumber` on the chain is still the one with hash `blockHash` (false when there is no
   * such block). Asked before the cursor's order, missing from an indexer that shows it indexed past it, is
   * taken for a reorganisation: Ponder restarted on its kept data reverts the rows above its safe checkpoint
   * and indexes those blocks again, while its latest checkpoint still shows the progress it had before. While
   * the cursor's block is on the chain the order will come back: the page is empty, nothing is undone.
   * Without it, a missing order past the latest checkpoint is a reorganisation. */
  isCanonicalBlock?: (blockNumber: bigint, blockHash: Hex) => Promise<boolean>;
};

/** A page of settlements: newest first, before settlement id `before` (none: from the newest), at most `limit`
 * (default 100, at most 1000). */
export type SettlementPageOptions = { before?: string; limit?: number };

/** A live subscription (watchPaidOrders). */
export type Subscription = { close(): void };

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

  async function getJson<T>(route: string): Promise<T> {
    const response = await fetch(`${baseUrl}${route}`, { signal: AbortSignal.timeout(requestTimeoutMs) });
    if (!response.ok) throw new Error(`GET ${route}: ${response.status} ${await response.text()}`);
    return (await response.json()) as T;
  }

  /** The newest checkpoint this client has seen indexed: the lowest of the block /status showed, or one a read
   * returned ("" before any). */
  let seenCheckpoint = "";

  /** Runs `query` with the request timeout, giving it the condition to join the checkpoint on: the checkpoint is
   * at least `seenCheckpoint`, so that Ponder's cache answers it only with a result computed once that
   * checkpoint was committed (see the consistency note at the top). `query` selects the checkpoint as
   * `indexed`: a newer one moves `seenCheckpoint` on; rows with a null one say the indexer is behind it. */
  async function read<R extends { indexed: string | null }>(query: IndexerRead<R>): Promise<R[]> {
    const rows = await timed(query(gte(ponderCheckpoint.latestCheckpoint, seenCheckpoint)));
    if (rows.length === 0) return rows;
    const indexed = rows[0]!.indexed;
    if (indexed === null) seenCheckpoint = "";
    else if (indexed > seenCheckpoint) seenCheckpoint = indexed;
    return rows;
  }

  /** The rows of `table` matching `where`, in `orderBy` order, at most `limit`: the read every list here makes
   * (through `read`, the checkpoint joined). */
  async function tableRows<T extends IndexedTable>(
    table: T,
    opts: { where?: SQL; orderBy?: SQL[]; limit?: number } = {},
  ): Promise<Array<T["$inferSelect"]>> {
    const rows = await read((onCheckpoint) => {
      const query = db
        // One table type stands for any: the rows' type is T's, restored below.
        .select({ row: table as unknown as typeof schema.orders, indexed: ponderCheckpoint.latestCheckpoint })
        .from(table as unknown as typeof schema.orders)
        .leftJoin(ponderCheckpoint, onCheckpoint)
        .where(opts.where)
        .orderBy(...(opts.orderBy ?? []));
      return opts.limit === undefined ? query : query.limit(opts.limit);
    });
    return rowsOf(rows) as unknown as Array<T["$inferSelect"]>;
  }

  /** The latest indexed checkpoint (all rows up to it are visible), or undefined before the first one. */
  async function latestCheckpoint(): Promise<string | undefined> {
    const query: IndexerRead<{ indexed: string }> = (onCheckpoint) =>
      db.select({ indexed: ponderCheckpoint.latestCheckpoint }).from(ponderCheckpoint).where(onCheckpoint);
    let rows = await read(query);
    if (rows.length === 0 && seenCheckpoint !== "") {
      // Behind what this client has seen (a reorganisation, or a restart on fresh data): what it holds now.
      seenCheckpoint = "";
      rows = await read(query);
    }
    return rows.map((row) => row.indexed).sort()[0];
  }

  async function ordersAfter(checkpoint: string | undefined, limit: number): Promise<PaidOrder[]> {
    return tableRows(schema.orders, {
      where: checkpoint === undefined ? undefined : gt(schema.orders.cursor, checkpoint),
      orderBy: [asc(schema.orders.cursor)],
      limit,
    });
  }

  /** Orders from the cursor's own order (included if still indexed) on. */
  async function ordersFrom(checkpoint: string, limit: number): Promise<PaidOrder[]> {
    return tableRows(schema.orders, {
      where: gte(schema.orders.cursor, checkpoint),
      orderBy: [asc(schema.orders.cursor)],
      limit: limit + 1,
    });
  }

  function page(orders: PaidOrder[], cursor: OrderCursor, reorg: OrdersPage["reorg"] = null): OrdersPage {
    const last = orders.at(-1);
    return { orders, cursor: last ? cursorOf(last) : cursor, reorg };
  }

  /** Settlements matching `where`, newest first, with what gives their asset: the split's asset key, the
   * paid order's device id. */
  async function settlementsWithAsset(where: SQL, limit: number): Promise<SplitSettlement[]> {
    const rows = await read((onCheckpoint) =>
      db
        .select({
          row: schema.settlements,
          splitAssetKey: schema.splits.assetKey,
          deviceId: schema.orders.deviceId,
          indexed: ponderCheckpoint.latestCheckpoint,
        })
        .from(schema.settlements)
        .leftJoin(schema.splits, eq(schema.splits.address, schema.settlements.split))
        .leftJoin(schema.orders, eq(schema.orders.orderId, schema.settlements.orderId))
        .leftJoin(ponderCheckpoint, onCheckpoint)
        .where(where)
        .orderBy(desc(schema.settlements.id))
        .limit(limit),
    );
    return rows.map(({ row, splitAssetKey, deviceId }) => ({ ...row, assetKey: splitAssetKey ?? deviceId }));
  }

  /** The recipient's credits in `splits` before settlement id `before`, newest first, at most `limit`, each
   * with its settlement and asset (see SplitSettlement). One branch per split reads that split's newest
   * credits from the index on (recipient, split, settlement id), `limit` at most; PostgreSQL merges the
   * branches in order (a Merge Append) and stops at `limit`. (A single `split in (...)` condition would read
   * every credit of the recipient in those splits and sort them: the planner takes the recipient and the
   * split for independent, and expects a handful.) */
  async function participantSettlementsQuery(
    who: Hex,
    splits: Hex[],
    before: string | undefined,
    limit: number,
  ): Promise<SplitSettlement[]> {
    // A short alias: the branch is repeated once per split, and the statement must stay under Ponder's limit.
    const credits = alias(schema.settlementCredits, "c");
    const newest = (split: Hex) =>
      db
        .select({ settlementId: credits.settlementId })
        .from(credits)
        .where(
          and(eq(credits.recipient, who), eq(credits.split, split), before === undefined ? undefined : lt(credits.settlementId, before)),
        )
        .orderBy(desc(credits.settlementId))
        .limit(limit);
    const [first, second, ...rest] = splits.map(newest);
    const page = (second === undefined ? first! : unionAll(first!, second, ...rest)).as("page");
    const rows = await read((onCheckpoint) =>
      db
        .select({
          row: schema.settlements,
          splitAssetKey: schema.splits.assetKey,
          deviceId: schema.orders.deviceId,
          indexed: ponderCheckpoint.latestCheckpoint,
        })
        .from(page)
        .innerJoin(schema.settlements, eq(schema.settlements.id, page.settlementId))
        .leftJoin(schema.splits, eq(schema.splits.address, schema.settlements.split))
        .leftJoin(schema.orders, eq(schema.orders.orderId, schema.settlements.orderId))
        .leftJoin(ponderCheckpoint, onCheckpoint)
        .orderBy(desc(page.settlementId))
        .limit(limit),
    );
    return rows.map(({ row, splitAssetKey, deviceId }) => ({ ...row, assetKey: splitAssetKey ?? deviceId }));
  }

  const api = {
    /** The underlying `@ponder/client` client, for queries not covered here (typed by ponder.schema.ts). */
    client,

    /** The latest block indexed (GET /status; with one chain), or 0 before the first one. The client's later
     * reads are as of that block at least. */
    async indexedBlock(): Promise<number> {
      const status = await getJson<Record<string, { id: number; block: { number: number; timestamp: number } }>>("/status");
      const chains = Object.values(status);
      if (chains.length === 0) return 0;
      const [chain] = chains.sort((a, b) => a.block.number - b.block.number) as [(typeof chains)[number]];
      const checkpoint = blockCheckpoint({ ...chain.block, chainId: chain.id });
      if (checkpoint > seenCheckpoint) seenCheckpoint = checkpoint;
      return chain.block.number;
    },

    /** Runs a read of the caller's own (see `IndexerRead`) as this client's reads run: never older than what
     * this client has seen indexed. */
    read,

    tableRows,

    /** The paid orders after `cursor` (START_CURSOR for the first), in chain order, at most `limit`. Call it in
     * a loop with the returned cursor; store the cursor to resume after a restart. */
    async paidOrdersAfter(cursor: OrderCursor, limit = 100): Promise<OrdersPage> {
      if (!Number.isInteger(limit) || limit < 1 || limit > 10_000) throw new Error(`invalid limit ${limit}`);
      if (cursor === START_CURSOR) return page(await ordersAfter(undefined, limit), cursor);
      const at = decodeCursor(cursor);

      const isCursorOrder = (order: Pick<PaidOrder, "cursor" | "blockHash"> | undefined) =>
        order !== undefined && order.cursor === at.checkpoint && order.blockHash === at.blockHash;

      const rows = await ordersFrom(at.checkpoint, limit);
      if (isCursorOrder(rows[0])) return page(rows.slice(1), cursor);

      // The cursor's order is not there: either it is not indexed yet (the indexer is behind or re-indexing
      // into a fresh database), or a reorg removed it.
      const latest = await latestCheckpoint();
      if (latest === undefined || latest < at.checkpoint) return page([], cursor);
      // Indexed past the cursor. The read above may still predate the commit that made the cursor's order
      // visible (a cached result not yet dropped): ask for that order alone. If it is there, nothing is
      // read this time; the next call reads the page again.
      const [own] = await read((onCheckpoint) =>
        db
          .select({ cursor: schema.orders.cursor, blockHash: schema.orders.blockHash, indexed: ponderCheckpoint.latestCheckpoint })
          .from(schema.orders)
          .leftJoin(ponderCheckpoint, onCheckpoint)
          .where(eq(schema.orders.cursor, at.checkpoint)),
      );
      if (isCursorOrder(own)) return page([], cursor);
      // Re-indexed after a restart rather than reorganised: the cursor's block is still on the chain.
      if (options.isCanonicalBlock && (await options.isCanonicalBlock(at.blockNumber, at.blockHash))) {
        return page([], cursor);
      }

      // Reorganised: restart below any possible fork point.
      const fromBlock = at.blockNumber > reorgDepth ? at.blockNumber - reorgDepth : 0n;
      const [before] = await read((onCheckpoint) =>
        db
          .select({ cursor: schema.orders.cursor, blockHash: schema.orders.blockHash, indexed: ponderCheckpoint.latestCheckpoint })
          .from(schema.orders)
          .leftJoin(ponderCheckpoint, onCheckpoint)
          .where(lte(schema.orders.blockNumber, fromBlock - 1n))
          .orderBy(desc(schema.orders.cursor))
          .limit(1),
      );
      const restart = before ? cursorOf(before) : START_CURSOR;
      return page(await ordersAfter(before?.cursor, limit), restart, { fromBlock });
    },

    /** Calls `onChange` whenever the newest paid order changes (a new order indexed, or orders removed by a
     * reorg), with that order's cursor (null: no order at all), through a live query (`client.live` on
     * the orders table: Ponder pushes its result when an indexed block changes it, nothing otherwise).
     * When the live connection fails (the indexer restarts, is not ready yet, or the connection drops) it
     * is reported to `onError` and opened again after `retryMs` (default 1000), and `onChange(undefined)`
     * says that changes may have been missed meanwhile. Callers keep a slow poll of their own as well. */
    watchPaidOrders(opts: {
      onChange: (latest: OrderCursor | null | undefined) => void;
      onError?: (error: Error) => void;
      retryMs?: number;
    }): Subscription {
      let closed = false;
      let live: { unsubscribe(): void } | undefined;
      let retry: NodeJS.Timeout | undefined;
      const open = () => {
        live = client.live(
          (q) =>
            q
              .select({ cursor: schema.orders.cursor, blockHash: schema.orders.blockHash })
              .from(schema.orders)
              .orderBy(desc(schema.orders.cursor))
              .limit(1),
          (rows) => {
            if (!closed) opts.onChange(rows[0] ? cursorOf(rows[0]) : null);
          },
          (error) => {
            live?.unsubscribe();
            live = undefined;
            if (closed || retry) return;
            opts.onError?.(error);
            retry = setTimeout(() => {
              retry = undefined;
              if (closed) return;
              open();
              opts.onChange(undefined);
            }, opts.retryMs ?? 1_000);
          },
        );
      };
      open();
      return {
        close() {
          closed = true;
          clearTimeout(retry);
          live?.unsubscribe();
          live = undefined;
        },
      };
    },

    /** The paid orders among `orderIds` (absent ids are not paid or not indexed yet). */
    async ordersByIds(orderIds: readonly bigint[]): Promise<PaidOrder[]> {
      const rows = await inChunks(orderIds, (ids) => tableRows(schema.orders, { where: inArray(schema.orders.orderId, ids) }));
      return rows.sort((a, b) => (a.cursor < b.cursor ? -1 : 1));
    },

    /** The first settlement with reference `ref` (bytes32), or null. A router payment's reference is its
     * order id (see `orderRef`), which pays once; a batch depositor may reuse a reference. */
    async settlementByRef(ref: Hex): Promise<Settlement | null> {
      const [row] = await tableRows(schema.settlements, {
        where: eq(schema.settlements.ref, ref.toLowerCase() as Hex),
        orderBy: [asc(schema.settlements.id)],
        limit: 1,
      });
      return row ?? null;
    },

    /** The settlement of each paid order among `orderIds`. */
    async settlementsByOrderIds(orderIds: readonly bigint[]): Promise<Settlement[]> {
      const rows = await inChunks(orderIds, (ids) => tableRows(schema.settlements, { where: inArray(schema.settlements.orderId, ids) }));
      return rows.sort((a, b) => (a.id < b.id ? -1 : 1));
    },

    /** What `recipient` earned, per token: credited, withdrawn and claimable, in base units (empty if
     * nothing was ever credited to it). */
    async participantEarnings(recipient: Hex): Promise<Participant[]> {
      return tableRows(schema.participants, {
        where: eq(schema.participants.recipient, recipient.toLowerCase() as Hex),
        orderBy: [asc(schema.participants.token)],
      });
    },

    /** Settlements matching `where`, newest first, each with its asset (see SplitSettlement). */
    settlementsWithAsset,

    /** What `recipient` earned in each of `splits` (those where it was ever credited or withdrew), by split:
     * credited, withdrawn and claimable (the split's `claimable(recipient)`) in the split's token, per leg too,
     * with the split's asset key. Sum them for the recipient's earnings from that set of splits. */
    async participantEarningsInSplits(recipient: Hex, splits: readonly Hex[]): Promise<SplitEarnings[]> {
      const who = checkAddress(recipient);
      const rows = await inChunks(splits.map(checkAddress), (chunk) =>
        read((onCheckpoint) =>
          db
            .select({ row: schema.splitParticipants, assetKey: schema.splits.assetKey, indexed: ponderCheckpoint.latestCheckpoint })
            .from(schema.splitParticipants)
            .leftJoin(schema.splits, eq(schema.splits.address, schema.splitParticipants.split))
            .leftJoin(ponderCheckpoint, onCheckpoint)
            .where(and(eq(schema.splitParticipants.recipient, who), inArray(schema.splitParticipants.split, chunk))),
        ),
      );
      return rows.map(({ row, assetKey }) => ({ ...row, assetKey })).sort((a, b) => (a.split < b.split ? -1 : 1));
    },

    /** The settlements of `splits` that credited `recipient` (on any leg), newest first (see
     * SettlementPageOptions), each with its split, its asset and what it credited the recipient. Read through
     * the recipient's credits (settlement_credits, indexed by recipient, split and settlement id): each split
     * gives its newest `limit` credits at most, merged newest first, not every settlement of the splits. */
    async participantSettlements(
      recipient: Hex,
      splits: readonly Hex[],
      page: SettlementPageOptions = {},
    ): Promise<ParticipantSettlement[]> {
      const who = checkAddress(recipient);
      const { before, limit } = checkPage(page);
      // Each chunk of splits gives its newest `limit`; the newest `limit` of them all are the page.
      const rows = await inChunks(
        splits.map(checkAddress),
        (chunk) => participantSettlementsQuery(who, chunk, before, limit),
        SPLITS_PER_SETTLEMENTS_QUERY,
      );
      return rows
        .sort((a, b) => (a.id < b.id ? 1 : -1))
        .slice(0, limit)
        .map((settlement) => ({ ...settlement, credited: creditedTo(settlement, who) }));
    },

    /** Network totals (payments, micro-USD volume, devices, rails, settlements) with the per-token volumes
     * in base units. All zero before the first payment. */
    async networkStats(): Promise<NetworkStats & { tokens: TokenStats[] }> {
      const [[row], tokens] = await Promise.all([
        tableRows(schema.networkStats, { limit: 1 }),
        tableRows(schema.tokenStats, { orderBy: [asc(schema.tokenStats.token)] }),
      ]);
      const zero = emptyNetworkStats(0);
      return { ...(row ?? zero), tokens };
    },
  };
  return api;
}

/** Lists are queried in chunks: a query travels in the URL of a GET (and Ponder rejects SQL over 5,000
 * characters). */
const CHUNK = 50;

/** Splits per participant-settlements query: each is a branch of its own (about 200 characters), and with
 * the joins the statement stays near 4,000 characters. */
const SPLITS_PER_SETTLEMENTS_QUERY = 16;

async function inChunks<T, R>(values: readonly T[], query: (chunk: T[]) => Promise<R[]>, size = CHUNK): Promise<R[]> {
  const unique = [...new Set(values)];
  const results: R[] = [];
  for (let i = 0; i < unique.length; i += size) results.push(...(await query(unique.slice(i, i + size))));
  return results;
}

/** The sum of the legs of `settlement` whose recipient was `recipient` (lowercase). */
function creditedTo(settlement: Settlement, recipient: Hex): bigint {
  let credited = 0n;
  if (settlement.assetOwner === recipient) credited += settlement.assetOwnerAmount;
  if (settlement.operator === recipient) credited += settlement.operatorAmount;
  if (settlement.protocol === recipient) credited += settlement.protocolAmount;
  return credited;
}

/** `address` in lowercase (as the tables hold it); throws unless it is a 20-byte hex address. */
function checkAddress(address: Hex): Hex {
  if (typeof address !== "string" || !/^0x[0-9a-fA-F]{40}$/.test(address)) {
    throw new Error(`invalid address "${String(address).slice(0, 64)}"`);
  }
  return address.toLowerCase() as Hex;
}

/** A settlement id: Ponder's event id, 75 digits (see OrderCursor). */
const SETTLEMENT_ID = /^\d{75}$/;

function checkPage(page: SettlementPageOptions): { before: string | undefined; limit: number } {
  const limit = page.limit ?? 100;
  if (!Number.isInteger(limit) || limit < 1 || limit > 1_000) throw new Error(`invalid limit ${limit}`);
  if (page.before !== undefined && (typeof page.before !== "string" || !SETTLEMENT_ID.test(page.before))) {
    throw new Error(`invalid settlement id "${String(page.before).slice(0, 80)}"`);
  }
  return { before: page.before, limit };
}

/** The settlement reference of a router payment: bytes32(orderId). */
export function orderRef(orderId: bigint): Hex {
  return pad(toHex(orderId), { size: 32 });
}
