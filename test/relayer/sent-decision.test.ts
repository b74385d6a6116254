// relayer/src/chain/sent-decision.ts: what the transaction sender does with a sent transaction, case by case,
// without a chain (test/relayer/tx-sender.test.ts runs the same decisions against a real one).
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import {
  type ChainView,
  NONCE_USED_BLOCKS,
  REBROADCAST_AFTER_MS,
  type SentDecision,
  type SentRow,
  decideSent,
} from "../../relayer/src/chain/sent-decision.ts";

const NOW = 1_000_000_000;
const settings = { confirmations: 0n, replaceAfterBlocks: 3n };
/** Nonce 7, signed, sent 1 s ago at block 100; the chain at block 101 has used nonces below 7 and holds 7 in its pool. */
const row = (over: Partial<SentRow> = {}): SentRow => ({ nonce: 7, signed: true, sentAtMs: NOW - 1_000, sentBlock: 100, ...over });
const chain = (over: Partial<ChainView> = {}): ChainView => ({
  head: 101n,
  confirmedNonce: 7,
  pendingNonce: 8,
  gap: undefined,
  nonceUsedSince: undefined,
  inPool: "unknown",
  nowMs: NOW,
  ...over,
});
const stale = NOW - REBROADCAST_AFTER_MS - 1;

const cases: Array<[string, SentRow, ChainView, typeof settings, SentDecision]> = [
  [
    "mined and final at once",
    row(),
    chain({ receipt: { blockNumber: 101n, success: true } }),
    settings,
    { action: "final", status: "mined" },
  ],
  [
    "reverted and final",
    row(),
    chain({ receipt: { blockNumber: 101n, success: false } }),
    settings,
    { action: "final", status: "reverted" },
  ],
  [
    "mined but not CONFIRMATIONS deep",
    row(),
    chain({ head: 102n, receipt: { blockNumber: 101n, success: true } }),
    { ...settings, confirmations: 2n },
    { action: "wait", reason: "confirming" },
  ],
  [
    "mined CONFIRMATIONS deep",
    row(),
    chain({ head: 103n, receipt: { blockNumber: 101n, success: true } }),
    { ...settings, confirmations: 2n },
    { action: "final", status: "mined" },
  ],
  ["not signed", row({ signed: false }), chain(), settings, { action: "wait", reason: "unsigned" }],
  ["no nonce", row({ nonce: null }), chain(), settings, { action: "wait", reason: "unsigned" }],
  ["its nonce used elsewhere, first seen", row(), chain({ confirmedNonce: 8 }), settings, { action: "nonce_used", since: 101n }],
  [
    "its nonce used elsewhere, not stale yet",
    row(),
    chain({ confirmedNonce: 8, head: 110n, nonceUsedSince: 101n }),
    settings,
    { action: "nonce_used", since: 101n },
  ],
  [
    "its nonce used elsewhere, stale but not for NONCE_USED_BLOCKS",
    row({ sentAtMs: stale }),
    chain({ confirmedNonce: 8, head: 101n + NONCE_USED_BLOCKS - 1n, nonceUsedSince: 101n }),
    settings,
    { action: "nonce_used", since: 101n },
  ],
  [
    "its nonce used elsewhere, stale for NONCE_USED_BLOCKS: requeued",
    row({ sentAtMs: stale }),
    chain({ confirmedNonce: 8, head: 101n + NONCE_USED_BLOCKS, nonceUsedSince: 101n }),
    settings,
    { action: "nonce_spent" },
  ],
  ["sent before blocks were counted", row({ sentBlock: null }), chain(), settings, { action: "count_from_head" }],
  ["in the pool, not due, not stale", row(), chain(), settings, { action: "wait", reason: "pending" }],
  [
    "in the pool (pending count) and due: replaced",
    row(),
    chain({ head: 103n, confirmedNonce: 6 }),
    settings,
    { action: "resend", replace: true, rebroadcast: false, keepsCount: true },
  ],
  [
    "the chain's next nonce, due, no pool shown (a sequencer's node): replaced",
    row(),
    chain({ head: 103n, pendingNonce: 7, inPool: false }),
    settings,
    { action: "resend", replace: true, rebroadcast: false, keepsCount: true },
  ],
  [
    "not the next nonce, not in the pending count, due: the node is asked",
    row(),
    chain({ head: 103n, confirmedNonce: 5, pendingNonce: 6 }),
    settings,
    { action: "ask_pool" },
  ],
  [
    "held in the pool by hash (under the base fee), due: replaced",
    row(),
    chain({ head: 103n, confirmedNonce: 5, pendingNonce: 6, inPool: true }),
    settings,
    { action: "resend", replace: true, rebroadcast: false, keepsCount: true },
  ],
  [
    "dropped by the node, stale: broadcast again, counted from now",
    row({ sentAtMs: stale }),
    chain({ confirmedNonce: 5, pendingNonce: 6, inPool: false }),
    settings,
    { action: "resend", replace: false, rebroadcast: true, keepsCount: false },
  ],
  [
    "in the pool and stale, not due: broadcast again, keeps its count",
    row({ sentAtMs: stale }),
    chain(),
    settings,
    { action: "resend", replace: false, rebroadcast: true, keepsCount: true },
  ],
  [
    "stuck above a nonce gap, stale: broadcast again without asking the node",
    row({ sentAtMs: stale }),
    chain({ confirmedNonce: 5, pendingNonce: 5, gap: 5 }),
    settings,
    { action: "resend", replace: false, rebroadcast: true, keepsCount: false },
  ],
  [
    "dropped, due and stale: broadcast again, not replaced",
    row({ sentAtMs: stale }),
    chain({ head: 110n, confirmedNonce: 5, pendingNonce: 6, inPool: false }),
    settings,
    { action: "resend", replace: false, rebroadcast: true, keepsCount: false },
  ],
  [
    "the next nonce, due and stale: replaced and broadcast again",
    row({ sentAtMs: stale }),
    chain({ head: 110n }),
    settings,
    { action: "resend", replace: true, rebroadcast: true, keepsCount: true },
  ],
];

describe("the transaction sender's decision for a sent transaction", () => {
  for (const [name, stored, view, config, expected] of cases) {
    it(name, () => assert.deepEqual(decideSent(stored, view, config), expected));
  }

  it("asks the node only when the answer decides something", () => {
    // Not due and not stale: whatever the pool holds, it waits.
    assert.deepEqual(decideSent(row(), chain({ confirmedNonce: 5, pendingNonce: 6 }), settings), { action: "wait", reason: "pending" });
    // The pending count already says it is in the pool.
    assert.notEqual(decideSent(row({ sentAtMs: stale }), chain({ head: 110n }), settings).action, "ask_pool");
  });
});
