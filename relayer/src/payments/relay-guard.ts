// What keeps the hot wallet from paying gas for relayer transactions certain to revert (the route checks in
// relay.ts and cancellation.ts, and the transaction sender's last check before it signs):
// - chain time: an order whose voucher expires before the block RELAY_EXPIRY_MARGIN_BLOCKS blocks after the
//   next one is not relayed (the router compares the voucher's expiry with the block's timestamp, not with
//   anyone's clock). The block time is CHAIN_BLOCK_SECONDS, or measured: the median gap between the
//   timestamps of the chain's last blocks (1 s to MAX_BLOCK_SECONDS);
// - one relay in flight per payer: a wallet's permits all use its one current permit nonce, and its
//   authorizations draw on one balance, so a second relay for the same wallet, simulated alone against the
//   chain's latest state, would pass and then revert once the first is mined;
// - a budget of reverted relays per payer and per tenant in a window (RELAY_REVERT_WINDOW_SECONDS): past it,
//   the payer's (the tenant's) relays are refused with 429 `too_many_reverts` until the oldest revert leaves
//   the window.
import { and, count, eq, gt, inArray, isNull, min, ne, or, sql } from "drizzle-orm";
import { type Address, type Hex, type PublicClient, decodeFunctionData } from "viem";
import { paymentRouterAbi } from "../../../generated/abis.ts";
import type { Config } from "../config.ts";
import type { DbOrTx } from "../db/client.ts";
import { chainTransactions, orders } from "../db/schema.ts";
import { type ServiceError, errors } from "../errors.ts";

/** The relayer transaction kinds that pay an order for a wallet (the payer signed a permit or an
 * authorization). */
export const PAYER_RELAY_KINDS = ["pay_with_permit", "pay_with_authorization", "pay_with_permit2"] as const;
const SAMPLE_BLOCKS = 10;
export const MAX_BLOCK_SECONDS = 60;
const BLOCK_TIME_TTL_MS = 60_000;

export type ChainClock = { latestTimestamp: bigint; blockSeconds: number };

const measured = new WeakMap<PublicClient, { blockSeconds: number; at: number }>();

/** The median of the gaps between consecutive timestamps (seconds), clamped to 1..MAX_BLOCK_SECONDS; 1 when
 * there is no gap to measure. */
export function medianBlockSeconds(timestamps: readonly bigint[]): number {
  const sorted = [...timestamps].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  const gaps = sorted.slice(1).map((t, i) => Number(t - sorted[i]!));
  if (gaps.length === 0) return 1;
  gaps.sort((a, b) => a - b);
  const median = gaps[Math.floor(gaps.length / 2)]!;
  return Math.min(MAX_BLOCK_SECONDS, Math.max(1, Math.ceil(median)));
}

/** The chain's latest block timestamp and its block time (configured, or measured and kept a minute). */
export async function chainClock(client: PublicClient, config: Pick<Config, "CHAIN_BLOCK_SECONDS">): Promise<ChainClock> {
  const latest = await client.getBlock({ blockTag: "latest" });
  if (config.CHAIN_BLOCK_SECONDS !== undefined) return { latestTimestamp: latest.timestamp, blockSeconds: config.CHAIN_BLOCK_SECONDS };
  let known = measured.get(client);
  if (!known || Date.now() - known.at > BLOCK_TIME_TTL_MS) {
    const back = Math.min(SAMPLE_BLOCKS, Number(latest.number));
    const earlier = await Promise.all(
      Array.from({ length: back }, (_, i) => client.getBlock({ blockNumber: latest.number - BigInt(i + 1) }).then((b) => b.timestamp)),
    );
    known = { blockSeconds: medianBlockSeconds([latest.timestamp, ...earlier]), at: Date.now() };
    measured.set(client, known);
  }
  return { latestTimestamp: latest.timestamp, blockSeconds: known.blockSeconds };
}

/** The timestamp of the block `marginBlocks` blocks after the next one: a transaction sent now is expected
 * to be mined by then. */
export function relayHorizon(clock: ChainClock, marginBlocks: number): bigint {
  return clock.latestTimestamp + BigInt(clock.blockSeconds * (1 + marginBlocks));
}

/** Whether a voucher expiring at `expiry` (the router refuses it in a block whose timestamp is past it)
 * could be mined too late. */
export function expiresTooSoon(expiry: bigint, clock: ChainClock, marginBlocks: number): boolean {
  return expiry < relayHorizon(clock, marginBlocks);
}

export function orderExpiring(orderId: string, expiry: bigint, clock: ChainClock, marginBlocks: number): ServiceError {
  return errors.conflict(
    "order_expiring",
    `order ${orderId} expires at chain time ${expiry}, before the chain's block ${marginBlocks} after the next ` +
      `(about ${relayHorizon(clock, marginBlocks)}, ${clock.blockSeconds} s blocks): a relayed payment could be mined too late`,
  );
}

/** The voucher's expiry carried by a router call that pays an order (payWithPermit, payWithAuthorization,
 * payWithPermit2, payCash, pay, payFromDeposit); undefined for any other call. */
export function voucherExpiryOf(calldata: Hex): bigint | undefined {
  try {
    const call = decodeFunctionData({ abi: paymentRouterAbi, data: calldata });
    if (!["payWithPermit", "payWithAuthorization", "payWithPermit2", "payCash", "pay", "payFromDeposit"].includes(call.functionName))
      return undefined;
    const voucher = (call.args as readonly unknown[])[0] as { expiry?: bigint } | undefined;
    return typeof voucher?.expiry === "bigint" ? voucher.expiry : undefined;
  } catch {
    return undefined;
  }
}

/** The payer a wallet-signed router call pays for (payWithPermit, payWithAuthorization), if it is one. */
export function payerOf(calldata: Hex): Address | undefined {
  try {
    const call = decodeFunctionData({ abi: paymentRouterAbi, data: calldata });
    if (!["payWithPermit", "payWithAuthorization", "payWithPermit2"].includes(call.functionName)) return undefined;
    return (call.args as readonly unknown[])[2] as Address;
  } catch {
    return undefined;
  }
}

/** The ABI word of an address as it appears in calldata (lower-case hex, no 0x): a cheap pre-filter before
 * the calldata is decoded. */
const addressWord = (address: Address) => address.slice(2).toLowerCase().padStart(64, "0");

/** The payer's relay queued or under way (on either wallet rail), other than for `exceptOrderId`, if any.
 * Called in the enqueuing transaction after the payer's lock (lockPayer). */
export async function payerRelayInFlight(db: DbOrTx, payer: Address, exceptOrderId: string): Promise<string | undefined> {
  // A relay whose order the indexer already shows paid is no longer in flight: its transaction was mined, and
  // with it the permit's nonce (the sender marks the row final a little later, or CONFIRMATIONS blocks deeper).
  const rows = await db
    .select({ ref: chainTransactions.ref, calldata: chainTransactions.calldata })
    .from(chainTransactions)
    .leftJoin(orders, eq(orders.id, chainTransactions.ref))
    .where(
      and(
        inArray(chainTransactions.status, ["queued", "sent"]),
        inArray(chainTransactions.kind, [...PAYER_RELAY_KINDS]),
        sql`position(${addressWord(payer)} in lower(${chainTransactions.calldata})) > 0`,
        or(isNull(orders.status), ne(orders.status, "success")),
      ),
    );
  return rows.find((r) => r.ref !== exceptOrderId && payerOf(r.calldata as Hex)?.toLowerCase() === payer.toLowerCase())?.ref;
}

/** Serialises the enqueuing of relays for one payer across requests and processes, until the end of the
 * database transaction. */
export async function lockPayer(tx: DbOrTx, payer: Address) {
  await tx.execute(sql`select pg_advisory_xact_lock(hashtext(${`payg-relay-payer:${payer.toLowerCase()}`}))`);
}

function tooManyReverts(who: string, limit: number, oldest: Date | null, windowSeconds: number): ServiceError {
  const retryAfter = oldest ? Math.max(1, Math.ceil((oldest.getTime() + windowSeconds * 1000 - Date.now()) / 1000)) : windowSeconds;
  return errors.rateLimited(
    retryAfter,
    `${who} had ${limit} or more relayed transactions revert in the last ${windowSeconds} s: relays are refused for now`,
    "too_many_reverts",
  );
}

type RevertBudget = Pick<Config, "RELAY_REVERT_WINDOW_SECONDS" | "RELAY_PAYER_MAX_REVERTS" | "RELAY_TENANT_MAX_REVERTS">;

/** Refuses (429 too_many_reverts) once the tenant's order transactions (payments and cancellations) reverted
 * RELAY_TENANT_MAX_REVERTS times in the window. */
export async function assertTenantRevertBudget(db: DbOrTx, config: RevertBudget, tenantId: string) {
  const since = new Date(Date.now() - config.RELAY_REVERT_WINDOW_SECONDS * 1000);
  const [row] = await db
    .select({ n: count(), oldest: min(chainTransactions.updatedAt) })
    .from(chainTransactions)
    // A payment's ref is its order's id, a cancellation's `cancel:<order id>`: the order is found by its key.
    .innerJoin(
      orders,
      eq(
        orders.id,
        sql`(case when ${chainTransactions.ref} like 'cancel:%' then substr(${chainTransactions.ref}, 8) else ${chainTransactions.ref} end)`,
      ),
    )
    .where(and(eq(chainTransactions.status, "reverted"), gt(chainTransactions.updatedAt, since), eq(orders.tenantId, tenantId)));
  if (row && row.n >= config.RELAY_TENANT_MAX_REVERTS) {
    throw tooManyReverts("this tenant's orders", config.RELAY_TENANT_MAX_REVERTS, row.oldest, config.RELAY_REVERT_WINDOW_SECONDS);
  }
}

/** Refuses (429 too_many_reverts) once the payer's relayed payments reverted RELAY_PAYER_MAX_REVERTS times in
 * the window. */
export async function assertPayerRevertBudget(db: DbOrTx, config: RevertBudget, payer: Address) {
  const since = new Date(Date.now() - config.RELAY_REVERT_WINDOW_SECONDS * 1000);
  const rows = await db
    .select({ calldata: chainTransactions.calldata, updatedAt: chainTransactions.updatedAt })
    .from(chainTransactions)
    .where(
      and(
        eq(chainTransactions.status, "reverted"),
        gt(chainTransactions.updatedAt, since),
        inArray(chainTransactions.kind, [...PAYER_RELAY_KINDS]),
        sql`position(${addressWord(payer)} in lower(${chainTransactions.calldata})) > 0`,
      ),
    );
  const mine = rows.filter((r) => payerOf(r.calldata as Hex)?.toLowerCase() === payer.toLowerCase());
  if (mine.length >= config.RELAY_PAYER_MAX_REVERTS) {
    const oldest = mine.reduce<Date | null>((a, r) => (a === null || r.updatedAt < a ? r.updatedAt : a), null);
    throw tooManyReverts(`wallet ${payer}`, config.RELAY_PAYER_MAX_REVERTS, oldest, config.RELAY_REVERT_WINDOW_SECONDS);
  }
}
