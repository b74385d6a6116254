// End to end: an RPC outage. The indexer reaches the chain through a TCP proxy; the proxy refuses
// connections for several seconds while payments go on, then lets them through again. Indexing resumes and
// nothing is missed or doubled. On one database (oneDatabaseKind): the subject is the chain's RPC, not the
// database, whose rows the other indexer suites test on both.
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { START_CURSOR, type PaidOrder } from "../../indexer/client.ts";
import { oneDatabaseKind, testDatabases } from "../support/databases.ts";
import { LOCAL_ACCOUNT_INDEX, localAccount } from "../support/local-chain.ts";
import { type Rail, deviceId, usdc } from "../support/payments.ts";
import { type Stack, assertTotalsMatchChain, startStack } from "./harness.ts";

const OUTAGE_MS = 6_000;
const recipients = [LOCAL_ACCOUNT_INDEX.assetOwner, LOCAL_ACCOUNT_INDEX.operator, LOCAL_ACCOUNT_INDEX.protocol].map(
  (index) => localAccount(index).address,
);

for (const variant of testDatabases("outage", [oneDatabaseKind()])) {
  describe(`indexer through an RPC outage (${variant.name})`, { timeout: 180_000 }, () => {
    let stack: Stack;

    before(async () => {
      stack = await startStack(variant, { label: "outage", proxy: true });
    });
    after(async () => {
      await stack?.stop();
    });

    test("indexing resumes after the RPC refused connections, with nothing missed", async (t) => {
      const { client, payments, proxy, indexer } = stack;
      const device = deviceId(`outage-${variant.name}`);
      const first = await payments.pay("cash", { device, amount: usdc(1) });
      await client.waitForBlock(first.receipt.blockNumber);
      const connectionsBefore = proxy!.connections;
      assert.ok(connectionsBefore > 0, "the indexer reaches the chain through the proxy");

      await proxy!.refuse();
      const indexedAtOutage = await client.indexedBlock();
      const paidDuringOutage: bigint[] = [];
      const rails: Rail[] = ["permit", "approval", "cash"];
      const start = Date.now();
      let lastBlock = first.receipt.blockNumber;
      for (let i = 0; Date.now() - start < OUTAGE_MS; i++) {
        const { order, receipt } = await payments.pay(rails[i % 3]!, { device, amount: usdc(0.1) + BigInt(i) });
        paidDuringOutage.push(order.orderId);
        lastBlock = receipt.blockNumber;
        await new Promise((resolve) => setTimeout(resolve, 300));
      }
      assert.ok(paidDuringOutage.length >= 5, `paid ${paidDuringOutage.length} orders during the outage`);
      // Nothing new could be indexed, the indexer is still up and still serves reads.
      assert.equal(await client.indexedBlock(), indexedAtOutage);
      assert.equal(await client.orderById(paidDuringOutage[0]!), null);
      assert.equal(indexer.process.exitCode, null);

      await proxy!.accept();
      const resumedAt = Date.now();
      await client.waitForBlock(lastBlock, { timeoutMs: 90_000 });
      const recoveryMs = Date.now() - resumedAt;
      const after = await payments.pay("cash", { device, amount: usdc(2) });
      await client.waitForBlock(after.receipt.blockNumber);
      assert.ok(proxy!.connections > connectionsBefore);

      for (const orderId of paidDuringOutage) assert.ok(await client.orderById(orderId), `order ${orderId} indexed`);
      const all: PaidOrder[] = [];
      let cursor = START_CURSOR;
      for (;;) {
        const page = await client.paidOrdersAfter(cursor, 4);
        assert.equal(page.reorg, null);
        all.push(...page.orders);
        cursor = page.cursor;
        if (page.orders.length < 4) break;
      }
      const onChain = await payments.orderPaidLogs();
      assert.deepEqual(
        all.map((order) => order.transactionHash),
        onChain.map((log) => log.transactionHash),
        "every order once, in chain order",
      );
      assert.equal(onChain.length, paidDuringOutage.length + 2);
      await assertTotalsMatchChain(stack, recipients);
      t.diagnostic(`recovered ${recoveryMs} ms after the RPC came back`);
    });
  });
}
