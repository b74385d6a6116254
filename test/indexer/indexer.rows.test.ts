// End to end: a local chain with LocalStack, the indexer on PGlite and on PostgreSQL, payments through every
// rail, and the rows read back through the read path (indexer/client.ts): orders, settlements and their
// legs, earnings after withdrawals and after a recipient change, statistics per device and per day, and the order
// cursor over many payments.
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { decodeEventLog, keccak256, toHex } from "viem";
import { START_CURSOR, cursorOf, decodeCursor, orderRef, type OrderCursor, type PaidOrder } from "../../indexer/client.ts";
import { paymentRouterAbi } from "../../generated/abis.ts";
import { serveIndexer } from "../../lib/indexer.ts";
import { testDatabases, withPostgres } from "../support/databases.ts";
import { createTestIndexerClient } from "../support/indexer-reads.ts";
import { LOCAL_ACCOUNT_INDEX, localAccount } from "../support/local-chain.ts";
import { deviceId, usdc } from "../support/payments.ts";
import { type Stack, assertTotalsMatchChain, expectedLegs, startStack } from "./harness.ts";

const address = (index: number) => localAccount(index).address.toLowerCase() as `0x${string}`;
const assetOwner = address(LOCAL_ACCOUNT_INDEX.assetOwner);
const operator = address(LOCAL_ACCOUNT_INDEX.operator);
const protocol = address(LOCAL_ACCOUNT_INDEX.protocol);
const spare = address(LOCAL_ACCOUNT_INDEX.spare);
const testWallet = address(LOCAL_ACCOUNT_INDEX.testWallet);
const agent = address(LOCAL_ACCOUNT_INDEX.agent);
const recipients = [assetOwner, operator, protocol, spare] as const;

for (const variant of testDatabases("rows")) {
  describe(`indexer rows (${variant.name})`, { timeout: 180_000 }, () => {
    let stack: Stack;
    const deviceA = deviceId(`device-a-${variant.name}`);
    const deviceB = deviceId(`device-b-${variant.name}`);
    const deviceC = deviceId(`device-c-${variant.name}`);

    before(async () => {
      stack = await startStack(variant, { label: "rows" });
    });
    after(async () => {
      await stack?.stop();
    });

    test("one order row per payment, through every rail", async () => {
      const { payments, client } = stack;
      const paid = [
        { rail: "permit" as const, device: deviceA, amount: usdc(1.5), payer: testWallet },
        { rail: "approval" as const, device: deviceA, amount: usdc(2.25), payer: testWallet },
        { rail: "cash" as const, device: deviceB, amount: usdc(10), payer: agent },
      ];
      const results = [];
      for (const p of paid) results.push({ ...p, ...(await payments.pay(p.rail, p)) });
      await client.waitForBlock(results.at(-1)!.receipt.blockNumber);

      for (const { rail, device, amount, payer, order, receipt } of results) {
        const row = await client.orderById(order.orderId);
        assert.ok(row, `order ${order.orderId} (${rail}) indexed`);
        const log = receipt.logs.find((l) => l.address.toLowerCase() === payments.addresses.router.toLowerCase())!;
        const event = decodeEventLog({ abi: paymentRouterAbi, ...log });
        assert.equal(event.eventName, "OrderPaid");
        const block = await payments.publicClient.getBlock({ blockNumber: receipt.blockNumber });
        assert.deepEqual(
          { ...row, cursor: undefined },
          {
            orderId: order.orderId,
            cursor: undefined,
            deviceId: device,
            payer,
            token: payments.addresses.token.toLowerCase(),
            split: (await payments.deviceSplit(device)).toLowerCase(),
            amount,
            usdMicro: amount,
            rail,
            chainId: 31337,
            blockNumber: receipt.blockNumber,
            blockHash: receipt.blockHash,
            blockTimestamp: block.timestamp,
            transactionHash: receipt.transactionHash,
            transactionIndex: receipt.transactionIndex,
            logIndex: log.logIndex,
          },
        );
        const cursor = decodeCursor(cursorOf(row));
        assert.equal(cursor.blockNumber, receipt.blockNumber);
        assert.equal(cursor.transactionIndex, receipt.transactionIndex);
        assert.equal(cursor.logIndex, log.logIndex);
        assert.equal(cursor.chainId, 31337);
        assert.equal(cursor.blockHash, receipt.blockHash);
      }
      assert.equal(await client.orderById(123n), null);
    });

    test("one settlement per payment, legs summing to the gross, credited to the current recipients", async () => {
      const { client, payments } = stack;
      const logs = await payments.orderPaidLogs();
      const ids = logs.map((log) => log.args.orderId!);
      const rows = await client.settlementsByOrderIds(ids);
      assert.equal(rows.length, ids.length);
      for (const row of rows) {
        const order = (await client.orderById(row.orderId!))!;
        assert.equal(row.ref, orderRef(order.orderId));
        assert.equal(row.gross, order.amount);
        assert.equal(row.assetOwnerAmount + row.operatorAmount + row.protocolAmount, row.gross);
        assert.deepEqual([row.assetOwnerAmount, row.operatorAmount, row.protocolAmount], expectedLegs(row.gross, [5000, 4000, 1000]));
        assert.deepEqual([row.assetOwner, row.operator, row.protocol], [assetOwner, operator, protocol]);
        assert.equal(row.depositor, payments.addresses.router.toLowerCase());
        assert.equal(row.transactionHash, order.transactionHash);
        assert.ok(row.logIndex < order.logIndex, "settled before OrderPaid in the same transaction");
        assert.deepEqual(await client.settlementByRef(row.ref), row);
      }
      const splitA = (await payments.deviceSplit(deviceA)).toLowerCase();
      const split = (await client.splits()).find((row) => row.address === splitA);
      assert.deepEqual(
        {
          token: split!.token,
          assetKey: split!.assetKey,
          factory: split!.factory,
          legs: [split!.assetOwner, split!.operator, split!.protocol],
          bps: [split!.assetOwnerBps, split!.operatorBps, split!.protocolBps],
          legsVersion: split!.legsVersion,
        },
        {
          token: payments.addresses.token.toLowerCase(),
          assetKey: deviceA,
          factory: payments.addresses.factory.toLowerCase(),
          legs: [assetOwner, operator, protocol],
          bps: [5000, 4000, 1000],
          legsVersion: 1,
        },
      );
    });

    test("a batch deposit is a settlement without an order", async () => {
      const { client, payments } = stack;
      const ref = keccak256(toHex(`batch-${variant.name}`));
      const gross = 7_777_777n; // 7.777777 USDC: the legs round down, the asset owner takes the remainder
      const receipt = await payments.batchDeposit(ref, gross, await payments.deviceSplit(deviceA));
      await client.waitForBlock(receipt.blockNumber);
      const row = await client.settlementByRef(ref);
      assert.ok(row);
      assert.equal(row.orderId, null);
      assert.equal(row.depositor, agent);
      assert.equal(row.gross, gross);
      assert.deepEqual([row.assetOwnerAmount, row.operatorAmount, row.protocolAmount], expectedLegs(gross, [5000, 4000, 1000]));
      assert.equal(row.assetOwnerAmount + row.operatorAmount + row.protocolAmount, gross);
      await assertTotalsMatchChain(stack, recipients);
    });

    test("earnings after withdrawals", async () => {
      const { client, payments } = stack;
      // The operator earns in both devices' splits and withdraws from each.
      const splits = [await payments.deviceSplit(deviceA), await payments.deviceSplit(deviceB)];
      const before = (await client.participantEarnings(operator))[0]!;
      assert.ok(before.claimable > 0n);
      const perSplit = [await payments.claimable(operator, splits[0]!), await payments.claimable(operator, splits[1]!)];
      assert.ok(perSplit[0]! > 0n && perSplit[1]! > 0n);
      assert.equal(before.claimable, perSplit[0]! + perSplit[1]!);
      await payments.withdraw(LOCAL_ACCOUNT_INDEX.operator, splits[0]!);
      const receipt = await payments.withdraw(LOCAL_ACCOUNT_INDEX.operator, splits[1]!);
      await client.waitForBlock(receipt.blockNumber);
      const afterWithdrawal = (await client.participantEarnings(operator))[0]!;
      assert.equal(afterWithdrawal.credited, before.credited);
      assert.equal(afterWithdrawal.withdrawn, before.withdrawn + before.claimable);
      assert.equal(afterWithdrawal.claimable, 0n);
      assert.equal(afterWithdrawal.withdrawals, before.withdrawals + 2);
      const withdrawals = await client.withdrawalsOf(operator);
      assert.deepEqual(
        withdrawals.map((w) => [w.split, w.amount, w.to]).sort((a, b) => (String(a[0]) < String(b[0]) ? -1 : 1)),
        [
          [splits[0]!.toLowerCase(), perSplit[0], operator],
          [splits[1]!.toLowerCase(), perSplit[1], operator],
        ].sort((a, b) => (String(a[0]) < String(b[0]) ? -1 : 1)),
      );

      // Earn again, then withdraw again.
      const { receipt: paid } = await payments.pay("cash", { device: deviceB, amount: usdc(3) });
      await client.waitForBlock(paid.blockNumber);
      assert.equal((await client.participantEarnings(operator))[0]!.claimable, (usdc(3) * 4000n) / 10_000n);
      const second = await payments.withdraw(LOCAL_ACCOUNT_INDEX.operator, splits[1]!);
      await client.waitForBlock(second.blockNumber);
      const final = (await client.participantEarnings(operator))[0]!;
      assert.equal(final.claimable, 0n);
      assert.equal(final.withdrawn, final.credited);
      assert.equal(final.withdrawals, 3);
      await assertTotalsMatchChain(stack, recipients);
    });

    test("earnings after a recipient change: each settlement credited to the recipients current at it", async () => {
      const { client, payments } = stack;
      const ownerBefore = (await client.participantEarnings(assetOwner))[0]!;
      const splitA = await payments.deviceSplit(deviceA);
      const legs = await payments.setRecipients(
        deviceA,
        localAccount(LOCAL_ACCOUNT_INDEX.spare).address,
        localAccount(LOCAL_ACCOUNT_INDEX.operator).address,
      );
      await client.waitForBlock(legs.blockNumber);
      const split = (await client.splits()).find((row) => row.address === splitA.toLowerCase());
      assert.deepEqual(
        [
          split!.assetOwner,
          split!.operator,
          split!.protocol,
          split!.assetOwnerBps,
          split!.operatorBps,
          split!.protocolBps,
          split!.legsVersion,
        ],
        [spare, operator, protocol, 5000, 4000, 1000, 2],
      );

      const amount = usdc(4.999999);
      const { order, receipt } = await payments.pay("permit", { device: deviceA, amount });
      await client.waitForBlock(receipt.blockNumber);
      const [settlement] = await client.settlementsByOrderIds([order.orderId]);
      assert.deepEqual([settlement!.assetOwner, settlement!.operator, settlement!.protocol], [spare, operator, protocol]);
      const [owner, op, prot] = expectedLegs(amount, [5000, 4000, 1000]);
      assert.deepEqual([settlement!.assetOwnerAmount, settlement!.operatorAmount, settlement!.protocolAmount], [owner, op, prot]);
      // The former asset owner keeps what it had, the new one earns from now on.
      assert.deepEqual((await client.participantEarnings(assetOwner))[0], ownerBefore);
      const newOwner = (await client.participantEarnings(spare))[0]!;
      assert.equal(newOwner.credited, owner);
      assert.equal(newOwner.creditedAsAssetOwner, owner);
      assert.equal(newOwner.claimable, await payments.claimable(spare, splitA));
      await assertTotalsMatchChain(stack, recipients);
    });

    test("statistics per device and per day", async () => {
      const { client, payments } = stack;
      const earlier = await client.dailyStats();
      await payments.increaseTime(86_400);
      const { receipt } = await payments.pay("cash", { device: deviceC, amount: usdc(0.5) });
      await client.waitForBlock(receipt.blockNumber);
      const day = Number((await payments.publicClient.getBlock({ blockNumber: receipt.blockNumber })).timestamp / 86_400n);
      assert.ok(day > earlier.at(-1)!.day);
      const days = await client.dailyStats();
      assert.deepEqual(days.slice(0, -1), earlier, "earlier days unchanged");
      const last = days.at(-1)!;
      assert.deepEqual(
        { day: last.day, date: last.date, payments: last.payments, volume: last.volumeUsdMicro, newDevices: last.newDevices },
        { day, date: new Date(day * 86_400_000).toISOString().slice(0, 10), payments: 1, volume: usdc(0.5), newDevices: 1 },
      );
      assert.deepEqual(await client.dailyStats({ from: last.date }), [last]);
      assert.deepEqual(await client.dailyStats({ to: earlier.at(-1)!.date }), earlier);
      assert.deepEqual(await client.dailyStats({ from: earlier[0]!.date, to: last.date }), days);

      const [a, c] = [await client.deviceStats([deviceA]), await client.deviceStats([deviceC])];
      assert.deepEqual(
        { payments: a[0]!.payments, volume: a[0]!.volumeUsdMicro },
        { payments: 3, volume: usdc(1.5) + usdc(2.25) + usdc(4.999999) },
      );
      assert.equal(c[0]!.payments, 1);
      assert.equal(c[0]!.firstPaidAt, c[0]!.lastPaidAt);
      assert.deepEqual(await client.deviceStats([]), []);
      const stats = await client.networkStats();
      assert.equal(stats.devices, 3);
      await assertTotalsMatchChain(stack, recipients);
    });

    test("the order cursor pages through many payments in chain order, without gaps or repeats", async () => {
      const { client, payments } = stack;
      const before = await payments.orderPaidLogs();
      const devices = [deviceA, deviceB, deviceC];
      let last;
      for (let i = 0; i < 30; i++) {
        last = await payments.pay(i % 7 === 0 ? "approval" : "cash", { device: devices[i % 3]!, amount: BigInt(1_000 + i) });
      }
      await client.waitForBlock(last!.receipt.blockNumber);
      const onChain = await payments.orderPaidLogs();
      assert.equal(onChain.length, before.length + 30);

      const seen: PaidOrder[] = [];
      let cursor = START_CURSOR;
      let pages = 0;
      for (;;) {
        const page = await client.paidOrdersAfter(cursor, 7);
        assert.equal(page.reorg, null);
        if (page.orders.length === 0) {
          assert.equal(page.cursor, cursor);
          break;
        }
        pages++;
        seen.push(...page.orders);
        assert.notEqual(page.cursor, cursor);
        cursor = page.cursor;
      }
      assert.equal(pages, Math.ceil(onChain.length / 7));
      assert.deepEqual(
        seen.map((order) => order.orderId),
        onChain.map((log) => log.args.orderId),
        "every paid order once, in chain order",
      );
      assert.deepEqual(
        seen.map((order) => [order.blockNumber, order.logIndex]),
        onChain.map((log) => [log.blockNumber, log.logIndex]),
      );
      const cursors = seen.map((order) => order.cursor);
      assert.deepEqual([...cursors].sort(), cursors, "cursors sort in chain order");

      // New payments after the last cursor, and nothing else. A reader woken by the live query of paid orders
      // (watchPaidOrders, as the relayer's payment sync) reads them too, in pages of 2.
      const seenByWatcher: PaidOrder[] = [];
      const pushed: Array<OrderCursor | null | undefined> = [];
      let watcherCursor = cursor;
      let reading = Promise.resolve();
      const watch = client.watchPaidOrders({
        onChange: (latest) => {
          pushed.push(latest);
          reading = reading.then(async () => {
            for (;;) {
              const page = await client.paidOrdersAfter(watcherCursor, 2);
              seenByWatcher.push(...page.orders);
              watcherCursor = page.cursor;
              if (page.orders.length < 2) return;
            }
          });
        },
      });
      const fresh = [];
      let lastBlock = 0n;
      for (let i = 0; i < 5; i++) {
        const { order, receipt } = await payments.pay("cash", { device: deviceB, amount: 77n });
        fresh.push(order.orderId);
        lastBlock = receipt.blockNumber;
      }
      await client.waitForBlock(lastBlock);
      const more = await client.paidOrdersAfter(cursor, 100);
      assert.deepEqual(
        more.orders.map((order) => order.orderId),
        fresh,
      );
      assert.deepEqual((await client.paidOrdersAfter(more.cursor, 100)).orders, []);
      const deadline = Date.now() + 10_000;
      while (seenByWatcher.length < 5 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
      watch.close();
      await reading;
      assert.equal(watcherCursor, more.cursor);
      assert.equal(pushed.at(-1), more.cursor, "the last push names the newest paid order");
      assert.deepEqual(
        seenByWatcher.map((order) => order.orderId),
        fresh,
      );
      assert.throws(() => decodeCursor("nonsense"), /malformed order cursor/);

      // Lookups by many ids (queried in chunks), unknown ids left out, in chain order.
      const all = [...seen, ...more.orders];
      const byIds = await client.ordersByIds([...all.map((order) => order.orderId).reverse(), 1n, 2n]);
      assert.deepEqual(byIds, all);
      assert.equal((await client.settlementsByOrderIds(all.map((order) => order.orderId))).length, all.length);
      assert.equal((await client.settlementsByRefs(all.map((order) => orderRef(order.orderId)))).length, all.length);
    });

    if (variant.database.kind === "postgres") {
      const { url, schema, viewsSchema } = variant.database;
      test("PostgreSQL: the views schema and a `ponder serve` replica serve the same rows", async () => {
        assert.ok(viewsSchema, "testDatabases gives PostgreSQL a views schema");
        const { client, chain } = stack;
        const orders = (await client.paidOrdersAfter(START_CURSOR, 1_000)).orders;
        const stats = await client.networkStats();
        await withPostgres(url, async (pg) => {
          await pg.query("begin transaction read only");
          const viewRows = await pg.query<{ order_id: string; amount: string; cursor: string }>(
            `select order_id, amount, cursor from "${viewsSchema}".orders order by cursor`,
          );
          const viewStats = await pg.query<{ payments: number; volume_usd_micro: string }>(
            `select payments, volume_usd_micro from "${viewsSchema}".network_stats`,
          );
          await pg.query("rollback");
          assert.deepEqual(
            viewRows.rows.map((row) => [BigInt(row.order_id), BigInt(row.amount), row.cursor]),
            orders.map((order) => [order.orderId, order.amount, order.cursor]),
          );
          assert.deepEqual(viewStats.rows, [{ payments: stats.payments, volume_usd_micro: String(stats.volumeUsdMicro) }]);
        });

        const replica = await serveIndexer({
          deploymentId: chain.deploymentId,
          rpcUrl: chain.rpcUrl,
          database: { kind: "postgres", url, schema: viewsSchema },
        });
        try {
          const fromReplica = createTestIndexerClient(replica.url);
          assert.equal(await fromReplica.indexedBlock(), await client.indexedBlock());
          assert.deepEqual((await fromReplica.paidOrdersAfter(START_CURSOR, 1_000)).orders, orders);
          assert.deepEqual(await fromReplica.networkStats(), stats);
          // It follows the indexer: a new payment shows up there too.
          const { order, receipt } = await stack.payments.pay("cash", { device: deviceA, amount: 5n });
          await fromReplica.waitForBlock(receipt.blockNumber);
          assert.equal((await fromReplica.orderById(order.orderId))?.transactionHash, receipt.transactionHash);
        } finally {
          await replica.service.stop();
        }
      });

      test("PostgreSQL: once /status shows a block, reads are as of it, before the cache hears of its commit", async () => {
        const { client, payments } = stack;
        const before = await client.networkStats();
        // Ponder's cache drops results when the commit's notification reaches the indexer's LISTEN connection.
        // Stop that connection's backend: the notification then waits in PostgreSQL's queue, and every result
        // cached before the payment below stays in the cache.
        const listeners = await withPostgres(url, (pg) =>
          pg.query<{ pid: number }>("select pid from pg_stat_activity where datname = current_database() and query = $1", [
            `LISTEN "${schema}_live_query"`,
          ]),
        );
        assert.equal(listeners.rows.length, 1, "the indexer's cache listens on one connection");
        const [{ pid }] = listeners.rows as [{ pid: number }];
        process.kill(pid, "SIGSTOP");
        try {
          const { order, receipt } = await payments.pay("cash", { device: deviceB, amount: usdc(2) });
          await client.waitForBlock(receipt.blockNumber);
          const after = await client.networkStats();
          assert.equal(after.payments, before.payments + 1);
          assert.equal(after.volumeUsdMicro, before.volumeUsdMicro + usdc(2));
          assert.equal((await client.orderById(order.orderId))?.transactionHash, receipt.transactionHash);
        } finally {
          process.kill(pid, "SIGCONT");
        }
      });
    }
  });
}
