// End to end: the backfill. Payments, withdrawals, a recipient change and a day change happen before the indexer
// starts; it indexes them from history (then follows the chain), and every row and total matches the chain.
// Then a second local chain - a restarted node: same chain id, same addresses, different history - indexed
// into the same database must show only its own history (on PostgreSQL, Ponder's RPC data schema
// `ponder_sync` is shared by the whole database; see lib/indexer.ts resetLocalChainSyncData).
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { START_CURSOR, type PaidOrder } from "../../indexer/client.ts";
import { pgliteDatabase, postgresDatabase, selectedDatabaseKinds } from "../support/databases.ts";
import { LOCAL_ACCOUNT_INDEX, localAccount } from "../support/local-chain.ts";
import { type Rail, deviceId, usdc } from "../support/payments.ts";
import { type Stack, assertTotalsMatchChain, startStack } from "./harness.ts";

const recipients = [
  LOCAL_ACCOUNT_INDEX.assetOwner,
  LOCAL_ACCOUNT_INDEX.operator,
  LOCAL_ACCOUNT_INDEX.protocol,
  LOCAL_ACCOUNT_INDEX.spare,
].map((index) => localAccount(index).address);

async function allOrders(stack: Stack): Promise<PaidOrder[]> {
  const orders: PaidOrder[] = [];
  let cursor = START_CURSOR;
  for (;;) {
    const page = await stack.client.paidOrdersAfter(cursor, 25);
    orders.push(...page.orders);
    cursor = page.cursor;
    if (page.orders.length < 25) return orders;
  }
}

async function assertMatchesChain(stack: Stack) {
  const onChain = await stack.payments.orderPaidLogs();
  const indexed = await allOrders(stack);
  assert.deepEqual(
    indexed.map((order) => [order.orderId, order.transactionHash, order.blockHash, order.amount]),
    onChain.map((log) => [log.args.orderId, log.transactionHash, log.blockHash, log.args.amount]),
    "the orders of this chain, each once, in chain order",
  );
  await assertTotalsMatchChain(stack, recipients);
}

for (const kind of selectedDatabaseKinds()) {
  describe(`indexer backfill (${kind})`, { timeout: 600_000 }, () => {
    test("history before the indexer started is indexed exactly, then live blocks", async () => {
      // The indexer starts on an empty database and a chain with history: record the history first.
      const variant = kind === "pglite" ? pgliteDatabase("backfill") : postgresDatabase("backfill");
      const stack = await startStack(variant, {
        label: "backfill",
        history: async (payments) => {
          const rails: Rail[] = ["cash", "permit", "approval", "cash"];
          for (let i = 0; i < 24; i++) {
            await payments.pay(rails[i % 4]!, { device: deviceId(`backfill-${i % 5}`), amount: usdc(1) + BigInt(i * 1_001) });
            if (i === 8) await payments.withdraw(LOCAL_ACCOUNT_INDEX.operator, await payments.deviceSplit(deviceId("backfill-0")));
            if (i === 12) {
              await payments.setRecipients(
                deviceId("backfill-0"),
                localAccount(LOCAL_ACCOUNT_INDEX.spare).address,
                localAccount(LOCAL_ACCOUNT_INDEX.operator).address,
              );
            }
            if (i === 16) await payments.increaseTime(86_400);
          }
          await payments.mine(40); // past Ponder's finality depth (30): all of it is backfilled
        },
      });
      try {
        await assertMatchesChain(stack);
        assert.equal((await stack.client.networkStats()).payments, 24);
        // Then live.
        const { receipt } = await stack.payments.pay("cash", { device: deviceId("backfill-live"), amount: usdc(9) });
        await stack.client.waitForBlock(receipt.blockNumber);
        await assertMatchesChain(stack);
      } finally {
        await stack.stop();
      }
    });

    // PGlite keeps ponder_sync in its own directory (fresh per indexer); PostgreSQL shares it database-wide.
    if (kind === "postgres")
      test("a restarted local chain, indexed into the same database, shows only its own history", async () => {
        const first = postgresDatabase("restart");
        const second = postgresDatabase("restart");
        const one = await startStack(first, {
          label: "restart1",
          history: async (payments) => {
            for (let i = 0; i < 12; i++) await payments.pay("cash", { device: deviceId(`one-${i}`), amount: usdc(3) });
            await payments.mine(35);
          },
        });
        try {
          await assertMatchesChain(one);
        } finally {
          await one.stop();
        }
        // Same chain id and addresses; payments at other blocks and of other amounts.
        const two = await startStack(second, {
          label: "restart2",
          history: async (payments) => {
            await payments.mine(5);
            for (let i = 0; i < 4; i++) await payments.pay("permit", { device: deviceId(`two-${i}`), amount: usdc(0.25) });
            await payments.mine(35);
          },
        });
        try {
          await assertMatchesChain(two);
          assert.equal((await two.client.networkStats()).payments, 4);
        } finally {
          await two.stop();
        }
      });
  });
}
