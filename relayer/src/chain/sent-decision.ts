// What to do with a sent transaction, from what the chain says of it: the transaction sender's decision
// (tx-sender.ts), as a pure function of the stored row and the chain's answers, so that every case can be tested
// without a chain (test/relayer/sent-decision.test.ts). The sender asks the chain, calls decideSent, and carries
// out what it answers.

/** Blocks during which a sent transaction's nonce is seen used with none of its receipts found before it is
 * taken as spent by another transaction (nodes behind one endpoint may be blocks apart). */
export const NONCE_USED_BLOCKS = 3n;

/** How long a sent transaction may go unmined before it is broadcast again. */
export const REBROADCAST_AFTER_MS = 12_000;

export type SentRow = {
  /** Its nonce and whether it is signed (null / false: not signed yet). */
  nonce: number | null;
  signed: boolean;
  /** When and at which head it was last sent (null: before blocks were counted). */
  sentAtMs: number | null;
  sentBlock: number | null;
};

export type ChainView = {
  head: bigint;
  /** The receipt of whichever signed version was mined, if one was. */
  receipt?: { blockNumber: bigint; success: boolean };
  /** The hot wallet's nonce count at `latest` and at `pending` (the pending count runs on through the node's
   * pool up to its first missing nonce). */
  confirmedNonce: number;
  pendingNonce: number;
  /** The lowest nonce below the stored unmined ones that none of them holds (lowestGap), if any. */
  gap: number | undefined;
  /** The head at which this process first saw the row's nonce used with no receipt of its own (none: not seen). */
  nonceUsedSince: bigint | undefined;
  /** Whether the node holds the row's latest version unmined: "unknown" until asked (decideSent says when it
   * needs to know). */
  inPool: boolean | "unknown";
  nowMs: number;
};

export type SenderSettings = { confirmations: bigint; replaceAfterBlocks: bigint };

export type SentDecision =
  /** Mined, not yet `confirmations` deep; not signed; or waiting in the pool and not due: nothing to do. */
  | { action: "wait"; reason: "confirming" | "unsigned" | "pending" }
  /** Mined and deep enough: final, as mined or reverted. */
  | { action: "final"; status: "mined" | "reverted" }
  /** Its nonce was used by another transaction (none of its versions mined); not long enough to be sure yet:
   * remember since when. */
  | { action: "nonce_used"; since: bigint }
  /** Its nonce was used by another transaction, for long enough: queue it again for a new nonce. */
  | { action: "nonce_spent" }
  /** Sent before blocks were counted: count from this head. */
  | { action: "count_from_head" }
  /** Ask the node whether it holds the transaction in its pool, then decide again. */
  | { action: "ask_pool" }
  /** Replace it with higher fees, and/or broadcast the latest version again. `keepsCount`: it waits in the pool
   * (or holds the chain's next nonce), so its blocks keep counting from when it was sent; else they count again
   * from this head. When the replacement is refused (the fee ceiling), the count restarts at this head. */
  | { action: "resend"; replace: boolean; rebroadcast: boolean; keepsCount: boolean };

export function decideSent(row: SentRow, chain: ChainView, settings: SenderSettings): SentDecision {
  if (chain.receipt) {
    if (settings.confirmations > 0n && chain.receipt.blockNumber > chain.head - settings.confirmations) {
      return { action: "wait", reason: "confirming" };
    }
    return { action: "final", status: chain.receipt.success ? "mined" : "reverted" };
  }
  if (row.nonce === null || !row.signed) return { action: "wait", reason: "unsigned" };
  const stale = row.sentAtMs === null || chain.nowMs - row.sentAtMs > REBROADCAST_AFTER_MS;
  if (chain.confirmedNonce > row.nonce) {
    // The nonce was used and none of this transaction's versions is the one mined: something else spent it.
    // Only once stale and seen so for NONCE_USED_BLOCKS blocks: with several RPC URLs, or behind a
    // load-balanced endpoint, the count and the receipts may come from nodes blocks apart, and a transaction of
    // ours that was mined must not be taken for a failure.
    const since = chain.nonceUsedSince ?? chain.head;
    if (stale && chain.head - since >= NONCE_USED_BLOCKS) return { action: "nonce_spent" };
    return { action: "nonce_used", since };
  }
  if (row.sentBlock === null) return { action: "count_from_head" };
  // Only a transaction waiting in the node's pool is left unmined for its fees; one the node dropped, or stuck
  // above a nonce gap, is broadcast again (or the gap filled) instead. The pending count says so for one ready to
  // be mined; a node may leave out of it one whose max fee is below the next block's base fee (Hardhat counts
  // what its next block would hold), which it still returns by hash. Asked only when it decides something: a
  // replacement now, or whether a broadcast again restarts the count of blocks (it must not for one waiting in
  // the pool, or on blocks slower than REBROADCAST_AFTER_MS / TX_REPLACE_AFTER_BLOCKS it would never be replaced).
  const due = chain.head - BigInt(row.sentBlock) >= settings.replaceAfterBlocks;
  const aboveGap = chain.gap !== undefined && chain.gap < row.nonce && chain.pendingNonce <= chain.gap;
  let inPool = chain.pendingNonce > row.nonce;
  if (!inPool && (due || stale) && !aboveGap) {
    if (chain.inPool === "unknown") return { action: "ask_pool" };
    inPool = chain.inPool;
  }
  // The chain's next nonce is replaced when due whether the node shows it or not: an RPC node that forwards
  // transactions to a sequencer keeps no pool (Base's and OP Stack chains' public nodes), so it never shows one,
  // and one left unmined there may be waiting for its fees all the same.
  const next = row.nonce === chain.confirmedNonce;
  const replace = (inPool || next) && due;
  if (!replace && !stale) return { action: "wait", reason: "pending" };
  return { action: "resend", replace, rebroadcast: stale, keepsCount: inPool || next };
}
