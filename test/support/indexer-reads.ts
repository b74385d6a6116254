// The indexer's read path as the tests and benchmarks use it: the relayer's client (indexer/client.ts) plus
// reads that only they need, over the same SQL over HTTP (`client.db`) and, like the client's, run through the
// client's `read` (the checkpoint joined, so that Ponder's cache drops them at the next block, on a condition
// that carries the newest block the client has seen, so that none is older than that): waiting for a block,
// single orders, settlements by reference, participants (across splits and per split), withdrawals, splits,
// per-device and per-day totals.
import { and, asc, desc, eq, gte, inArray, lt, lte, type SQL } from "@ponder/client";
import type { Hex } from "viem";
import {
  type DailyStats,
  type DeviceStats,
  type IndexerClientOptions,
  type PaidOrder,
  type Participant,
  type Settlement,
  type Split,
  type SplitParticipant,
  type SplitSettlement,
  type Withdrawal,
  createIndexerClient,
  ponderCheckpoint,
  rowsOf,
  schema,
} from "../../indexer/client.ts";

export type TestIndexerClient = ReturnType<typeof createTestIndexerClient>;

/** Lists are queried in chunks: a query travels in the URL of a GET (Ponder rejects SQL over 5,000 characters). */
const CHUNK = 50;

export function createTestIndexerClient(indexerUrl: string, options: IndexerClientOptions = {}) {
  const base = createIndexerClient(indexerUrl, options);
  const db = base.client.db;
  const read = base.read;

  async function inChunks<T, R>(values: readonly T[], query: (chunk: T[]) => PromiseLike<R[]>): Promise<R[]> {
    const unique = [...new Set(values)];
    const results: R[] = [];
    for (let i = 0; i < unique.length; i += CHUNK) results.push(...(await query(unique.slice(i, i + CHUNK))));
    return results;
  }

  const reads = {
    ...base,

    /** Waits until block `blockNumber` is indexed (every row up to it is readable); returns the indexed block.
     * Throws after `timeoutMs` (default 30 s). Transient errors (indexer restarting) are retried. */
    async waitForBlock(blockNumber: number | bigint, opts: { timeoutMs?: number; intervalMs?: number } = {}): Promise<number> {
      const target = Number(blockNumber);
      const deadline = Date.now() + (opts.timeoutMs ?? 30_000);
      let last: number | undefined;
      let lastError: unknown;
      for (;;) {
        try {
          last = await base.indexedBlock();
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

    /** The indexed splits among `addresses` (absent: not a split, or not indexed yet), by address. */
    async splitsByAddresses(addresses: readonly Hex[]): Promise<Split[]> {
      const rows = await inChunks(addresses.map(checkAddress), (chunk) =>
        base.tableRows(schema.splits, { where: inArray(schema.splits.address, chunk) }),
      );
      return rows.sort((a, b) => (a.address < b.address ? -1 : 1));
    },

    /** The settlements of `split`, newest first, before settlement id `before` (none: from the newest), at most
     * `limit` (default 100), each with its asset. */
    async settlementsBySplit(split: Hex, page: { before?: string; limit?: number } = {}): Promise<SplitSettlement[]> {
      const conditions = [eq(schema.settlements.split, checkAddress(split))];
      if (page.before !== undefined) conditions.push(lt(schema.settlements.id, page.before));
      return base.settlementsWithAsset(and(...conditions)!, page.limit ?? 100);
    },

    /** The paid order with on-chain key `orderId`, or null (not paid, not indexed yet, or reorganised away). */
    async orderById(orderId: bigint): Promise<PaidOrder | null> {
      const [row] = rowsOf(
        await read((onCheckpoint) =>
          db
            .select({ row: schema.orders, indexed: ponderCheckpoint.latestCheckpoint })
            .from(schema.orders)
            .leftJoin(ponderCheckpoint, onCheckpoint)
            .where(eq(schema.orders.orderId, orderId)),
        ),
      );
      return row ?? null;
    },

    /** The settlements with these on-chain references (bytes32), in chain order. */
    async settlementsByRefs(refs: readonly Hex[]): Promise<Settlement[]> {
      const rows = await inChunks(
        refs.map((ref) => ref.toLowerCase() as Hex),
        async (chunk) =>
          rowsOf(
            await read((onCheckpoint) =>
              db
                .select({ row: schema.settlements, indexed: ponderCheckpoint.latestCheckpoint })
                .from(schema.settlements)
                .leftJoin(ponderCheckpoint, onCheckpoint)
                .where(inArray(schema.settlements.ref, chunk)),
            ),
          ),
      );
      return rows.sort((a, b) => (a.id < b.id ? -1 : 1));
    },

    /** Every participant (all recipients and tokens). */
    async participants(): Promise<Participant[]> {
      return rowsOf(
        await read((onCheckpoint) =>
          db
            .select({ row: schema.participants, indexed: ponderCheckpoint.latestCheckpoint })
            .from(schema.participants)
            .leftJoin(ponderCheckpoint, onCheckpoint)
            .orderBy(asc(schema.participants.recipient), asc(schema.participants.token)),
        ),
      );
    },

    /** Every recipient's earnings in `split` (recipient order). */
    async splitParticipantsOf(split: Hex): Promise<SplitParticipant[]> {
      return rowsOf(
        await read((onCheckpoint) =>
          db
            .select({ row: schema.splitParticipants, indexed: ponderCheckpoint.latestCheckpoint })
            .from(schema.splitParticipants)
            .leftJoin(ponderCheckpoint, onCheckpoint)
            .where(eq(schema.splitParticipants.split, split.toLowerCase() as Hex))
            .orderBy(asc(schema.splitParticipants.recipient)),
        ),
      );
    },

    /** `recipient`'s withdrawals, in chain order. */
    async withdrawalsOf(recipient: Hex): Promise<Withdrawal[]> {
      return rowsOf(
        await read((onCheckpoint) =>
          db
            .select({ row: schema.withdrawals, indexed: ponderCheckpoint.latestCheckpoint })
            .from(schema.withdrawals)
            .leftJoin(ponderCheckpoint, onCheckpoint)
            .where(eq(schema.withdrawals.recipient, recipient.toLowerCase() as Hex))
            .orderBy(asc(schema.withdrawals.id)),
        ),
      );
    },

    /** Every split seen, with its token, registration and current legs (recipients and bps). */
    async splits(): Promise<Split[]> {
      return rowsOf(
        await read((onCheckpoint) =>
          db
            .select({ row: schema.splits, indexed: ponderCheckpoint.latestCheckpoint })
            .from(schema.splits)
            .leftJoin(ponderCheckpoint, onCheckpoint)
            .orderBy(asc(schema.splits.address)),
        ),
      );
    },

    /** Totals per device: the given devices (bytes32 ids) or all, most paid-for first. */
    async deviceStats(deviceIds?: readonly Hex[]): Promise<DeviceStats[]> {
      if (deviceIds === undefined) {
        return rowsOf(
          await read((onCheckpoint) =>
            db
              .select({ row: schema.deviceStats, indexed: ponderCheckpoint.latestCheckpoint })
              .from(schema.deviceStats)
              .leftJoin(ponderCheckpoint, onCheckpoint)
              .orderBy(desc(schema.deviceStats.volumeUsdMicro), asc(schema.deviceStats.deviceId)),
          ),
        );
      }
      const rows = await inChunks(
        deviceIds.map((id) => id.toLowerCase() as Hex),
        async (ids) =>
          rowsOf(
            await read((onCheckpoint) =>
              db
                .select({ row: schema.deviceStats, indexed: ponderCheckpoint.latestCheckpoint })
                .from(schema.deviceStats)
                .leftJoin(ponderCheckpoint, onCheckpoint)
                .where(inArray(schema.deviceStats.deviceId, ids)),
            ),
          ),
      );
      return rows.sort((a, b) =>
        a.volumeUsdMicro !== b.volumeUsdMicro ? (a.volumeUsdMicro > b.volumeUsdMicro ? -1 : 1) : a.deviceId < b.deviceId ? -1 : 1,
      );
    },

    /** Totals per UTC day, oldest first, for days `from` to `to` (YYYY-MM-DD, inclusive, both optional). */
    async dailyStats(range: { from?: string; to?: string } = {}): Promise<DailyStats[]> {
      const conditions: SQL[] = [];
      if (range.from !== undefined) conditions.push(gte(schema.dailyStats.day, dayNumber(range.from)));
      if (range.to !== undefined) conditions.push(lte(schema.dailyStats.day, dayNumber(range.to)));
      return rowsOf(
        await read((onCheckpoint) =>
          db
            .select({ row: schema.dailyStats, indexed: ponderCheckpoint.latestCheckpoint })
            .from(schema.dailyStats)
            .leftJoin(ponderCheckpoint, onCheckpoint)
            .where(conditions.length === 0 ? undefined : and(...conditions))
            .orderBy(asc(schema.dailyStats.day)),
        ),
      );
    },
  };
  return reads;
}

/** `address` in lowercase (as the tables hold it); throws unless it is a 20-byte hex address. */
function checkAddress(address: Hex): Hex {
  if (typeof address !== "string" || !/^0x[0-9a-fA-F]{40}$/.test(address))
    throw new Error(`invalid address "${String(address).slice(0, 64)}"`);
  return address.toLowerCase() as Hex;
}

/** YYYY-MM-DD to the UTC day number used by daily_stats.day. */
function dayNumber(date: string): number {
  const ms = Date.parse(`${date}T00:00:00Z`);
  if (!/^\d{4}-\d{2}-\d{2}$/.test(date) || Number.isNaN(ms)) throw new Error(`invalid date "${date}"`);
  return ms / 86_400_000;
}
