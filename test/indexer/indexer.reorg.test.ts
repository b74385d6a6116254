// End to end: a chain reorganisation on the local chain (evm_snapshot, payments, evm_revert, different
// payments on a longer fork). The abandoned fork's rows disappear, the new fork's appear, totals stay exact,
// and a reader whose cursor was on the abandoned fork is told and rewound.
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { createPublicClient, http } from "viem";
import { START_CURSOR, createIndexerClient, orderRef, type IndexerClient, type OrderCursor, type PaidOrder } from "../../indexer/client.ts";
import { testDatabases } from "../support/databases.ts";
import { LOCAL_ACCOUNT_INDEX, localAccount } from "../support/local-chain.ts";
import { deviceId, usdc } from "../support/payments.ts";
import { type Stack, assertTotalsMatchChain, eventually, startStack } from "./harness.ts";

const recipients = [LOCAL_ACCOUNT_INDEX.assetOwner, LOCAL_ACCOUNT_INDEX.operator, LOCAL_ACCOUNT_INDEX.protocol].map(
  (index) => localAccount(index).address,
);

/** Reads every page after `cursor`; returns the orders, the final cursor and the first page's reorg. */
async function readAll(client: Pick<IndexerClient, "paidOrdersAfter">, cursor: OrderCursor, limit = 3) {
  const orders: PaidOrder[] = [];
  let reorg: { fromBlock: bigint } | null = null;
  for (let first = true; ; first = false) {
    const page = await client.paidOrdersAfter(cursor, limit);
    if (first) reorg = page.reorg;
    else assert.equal(page.reorg, null, "a reorg is reported once");
    orders.push(...page.orders);
    cursor = page.cursor;
    if (page.orders.length < limit) return { orders, cursor, reorg };
  }
}

for (const variant of testDatabases("reorg")) {
  describe(`indexer across a reorg (${variant.name})`, { timeout: 180_000 }, () => {
    let stack: Stack;

    before(async () => {
      stack = await startStack(variant, { label: "reorg" });
    });
    after(async () => {
      await stack?.stop();
    });

    test("rows of the abandoned fork disappear, the new fork's appear, totals stay exact", async () => {
      const { client, payments, chain } = stack;
      const [x, y, z] = ["x", "y", "z"].map((name) => deviceId(`reorg-${name}-${variant.name}`));

      // Common history.
      await payments.pay("permit", { device: x!, amount: usdc(1) });
      const base = await payments.pay("cash", { device: y!, amount: usdc(2) });
      await client.waitForBlock(base.receipt.blockNumber);
      const common = await readAll(client, START_CURSOR);
      assert.equal(common.orders.length, 2);

      // Fork 1: three payments and a withdrawal, indexed and read.
      const snapshot = await chain.rpc<string>("evm_snapshot");
      const forkBlock = await payments.blockNumber();
      const a1 = await payments.pay("cash", { device: x!, amount: usdc(5) });
      const a2 = await payments.pay("approval", { device: z!, amount: usdc(3) });
      await payments.withdraw(LOCAL_ACCOUNT_INDEX.operator, await payments.deviceSplit(x!));
      const a3 = await payments.pay("cash", { device: x!, amount: usdc(1.25) });
      await client.waitForBlock(a3.receipt.blockNumber);
      const oldHead = await payments.blockNumber();
      for (const { order } of [a1, a2, a3]) assert.ok(await client.orderById(order.orderId));
      assert.equal((await client.withdrawalsOf(recipients[1]!)).length, 1);
      assert.equal((await client.networkStats()).payments, 5);
      const fork1 = await readAll(client, common.cursor);
      assert.deepEqual(
        fork1.orders.map((o) => o.orderId),
        [a1, a2, a3].map(({ order }) => order.orderId),
      );

      // Fork 2, longer: a1's order paid again by another rail, and a different payment.
      assert.equal(await chain.rpc("evm_revert", [snapshot]), true);
      const b1 = await payments.pay("permit", { device: z!, amount: usdc(0.75) });
      const b2receipt = await payments.payCash(a1.order);
      const newHead = await payments.mine(Number(oldHead - (await payments.blockNumber())) + 3);
      assert.ok(newHead > oldHead);

      await eventually("the indexer to follow the new fork", async () => {
        if ((await client.indexedBlock()) < newHead) return false;
        return (await client.orderById(a2.order.orderId)) === null;
      });

      // Abandoned: a2, a3, their settlements and the withdrawal; a1's order is paid by its new transaction.
      assert.equal(await client.orderById(a2.order.orderId), null);
      assert.equal(await client.orderById(a3.order.orderId), null);
      assert.deepEqual(await client.settlementsByRefs([orderRef(a2.order.orderId), orderRef(a3.order.orderId)]), []);
      assert.deepEqual(await client.withdrawalsOf(recipients[1]!), []);
      const repaid = await client.orderById(a1.order.orderId);
      assert.equal(repaid?.transactionHash, b2receipt.transactionHash);
      assert.equal(repaid?.rail, "cash");
      assert.equal(repaid?.blockHash, b2receipt.blockHash);
      const b1row = await client.orderById(b1.order.orderId);
      assert.equal(b1row?.transactionHash, b1.receipt.transactionHash);
      const settlements = await client.settlementsByOrderIds([a1.order.orderId, b1.order.orderId]);
      assert.deepEqual(
        settlements.map((s) => s.transactionHash),
        [b1.receipt.transactionHash, b2receipt.transactionHash],
      );
      const stats = await client.networkStats();
      assert.equal(stats.payments, 4);
      assert.equal(stats.volumeUsdMicro, usdc(1) + usdc(2) + usdc(0.75) + usdc(5));
      await assertTotalsMatchChain(stack, recipients);

      // A reader at the start of the fork continues without noticing; one on the abandoned fork is rewound.
      const fromCommon = await readAll(client, common.cursor);
      assert.equal(fromCommon.reorg, null);
      assert.deepEqual(
        fromCommon.orders.map((o) => o.transactionHash),
        [b1.receipt.transactionHash, b2receipt.transactionHash],
      );
      const rewound = await readAll(client, fork1.cursor);
      assert.ok(rewound.reorg, "reorg reported");
      assert.ok(rewound.reorg.fromBlock <= forkBlock + 1n, "rewound below the fork");
      const onChain = (await payments.orderPaidLogs()).filter((log) => log.blockNumber >= rewound.reorg!.fromBlock);
      assert.deepEqual(
        rewound.orders.map((o) => o.transactionHash),
        onChain.map((log) => log.transactionHash),
        "every order from the rewind point, once, in chain order",
      );
      assert.equal(rewound.cursor, fromCommon.cursor);

      // A reader that asks the chain whether the cursor's block is still there (as the relayer's does, so that
      // an indexer re-indexing its last blocks after a restart is not taken for a reorg) sees the same: the
      // abandoned fork's block is gone.
      const chainClient = createPublicClient({ transport: http(stack.chain.rpcUrl) });
      const asking = createIndexerClient(stack.indexerUrl, {
        isCanonicalBlock: async (blockNumber, blockHash) =>
          (await chainClient.getBlock({ blockNumber }).catch(() => undefined))?.hash === blockHash,
      });
      assert.deepEqual((await readAll(asking, fork1.cursor)).reorg, rewound.reorg);
      assert.equal((await readAll(asking, common.cursor)).reorg, null);

      // With a tighter rewind depth, the re-delivery starts later but still at the fork.
      // (reorgDepth = the depth of this reorg: the rewind starts at the fork's first block)
      const depth = Number(fork1.orders.at(-1)!.blockNumber - forkBlock - 1n);
      const tight = createIndexerClient(stack.indexerUrl, { reorgDepth: depth });
      const tightRead = await readAll(tight, fork1.cursor);
      assert.equal(tightRead.reorg?.fromBlock, forkBlock + 1n);
      assert.deepEqual(
        tightRead.orders.map((o) => o.transactionHash),
        [b1.receipt.transactionHash, b2receipt.transactionHash],
      );
    });

    test("a fork below what a reader has seen: the reader reads the new fork and is rewound", async () => {
      // The new fork is shorter than the abandoned one and its blocks are earlier in time, so the indexer's
      // checkpoint goes back below the one the reader's client has seen (it reads on from where the indexer
      // is, rather than waiting for it to pass what it saw).
      const { client, payments, chain } = stack;
      const device = deviceId(`reorg-back-${variant.name}`);
      const start = await payments.pay("cash", { device, amount: usdc(1) });
      await client.waitForBlock(start.receipt.blockNumber);
      const atStart = await readAll(client, START_CURSOR, 1_000);

      // The abandoned fork: two payments and 20 empty blocks (a block's timestamp is at least its parent's + 1),
      // indexed and read to its head.
      const snapshot = await chain.rpc<string>("evm_snapshot");
      const forkBase = await payments.publicClient.getBlock({ blockTag: "latest" });
      const abandoned = [await payments.pay("cash", { device, amount: usdc(2) }), await payments.pay("cash", { device, amount: usdc(3) })];
      const oldHead = await payments.mine(20);
      const oldTip = await payments.publicClient.getBlock({ blockNumber: oldHead });
      await client.waitForBlock(oldHead);
      const onAbandoned = await readAll(client, atStart.cursor);
      assert.deepEqual(
        onAbandoned.orders.map((o) => o.orderId),
        abandoned.map(({ order }) => order.orderId),
      );

      // The new fork: one payment a second after the fork's base block, then three blocks from a second after the
      // reader's cursor (the last abandoned payment), so well before the abandoned head. (Ponder takes a block that
      // is not above its head for a reorg, reverts to the common ancestor, and indexes on from there when the next
      // block comes.)
      const cursorBlock = await payments.publicClient.getBlock({ blockNumber: abandoned[1]!.receipt.blockNumber });
      assert.equal(await chain.rpc("evm_revert", [snapshot]), true);
      await chain.rpc("evm_setNextBlockTimestamp", [Number(forkBase.timestamp) + 1]);
      const replacement = await payments.pay("cash", { device, amount: usdc(4) });
      await chain.rpc("evm_setNextBlockTimestamp", [Number(cursorBlock.timestamp) + 1]);
      const newHead = await payments.mine(3);
      assert.ok(newHead < oldHead);
      const newTip = await payments.publicClient.getBlock({ blockNumber: newHead });
      assert.ok(newTip.timestamp < oldTip.timestamp, "the new fork's head is earlier in time than the old one's");
      await eventually("the indexer to follow the new fork", async () => {
        if ((await client.indexedBlock()) !== Number(newHead)) return false;
        if ((await client.orderById(replacement.order.orderId)) === null) return false;
        return (await client.orderById(abandoned[0]!.order.orderId)) === null;
      });
      await assertTotalsMatchChain(stack, recipients);

      // The reader on the abandoned fork is told at once, and gets the new fork's payment.
      const rewound = await readAll(client, onAbandoned.cursor);
      assert.ok(rewound.reorg, "reorg reported");
      assert.ok(
        rewound.orders.some((o) => o.orderId === replacement.order.orderId),
        "the new fork's payment is delivered",
      );
      assert.ok(!rewound.orders.some((o) => abandoned.some(({ order }) => order.orderId === o.orderId)));
    });
  });
}
