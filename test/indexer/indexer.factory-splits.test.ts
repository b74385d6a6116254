// End to end: the split factory's splits (one per asset) on a local chain with LocalStack, the indexer on
// PGlite and on PostgreSQL. A split created before the indexer starts is backfilled, splits created while it
// runs are indexed without a restart; each device's payments credit its own split's recipients; earnings per
// participant, across splits and per split, add up to the legs and equal the splits' `claimable`; a recipient
// change mid-stream credits earlier and later payments to their own recipients; a reorg that removes a
// split's creation removes its rows. Read through the read path (indexer/client.ts).
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import type { Address, Hex } from "viem";
import type { Participant, SplitSettlement } from "../../indexer/client.ts";
import { testDatabases } from "../support/databases.ts";
import { LOCAL_ACCOUNT_INDEX, localAccount } from "../support/local-chain.ts";
import { deviceId, usdc } from "../support/payments.ts";
import { type Stack, assertTotalsMatchChain, eventually, expectedLegs, startStack } from "./harness.ts";

const lower = (address: Address) => address.toLowerCase() as Hex;
const account = (index: number) => lower(localAccount(index).address);
const assetOwner = account(LOCAL_ACCOUNT_INDEX.assetOwner);
const operator = account(LOCAL_ACCOUNT_INDEX.operator);
const protocol = account(LOCAL_ACCOUNT_INDEX.protocol);
const spare = account(LOCAL_ACCOUNT_INDEX.spare);
const testWallet = account(LOCAL_ACCOUNT_INDEX.testWallet);
const recipients = [assetOwner, operator, protocol, spare, testWallet];
const BPS = [5000, 4000, 1000] as const;
const sum = (values: bigint[]) => values.reduce((a, b) => a + b, 0n);

for (const variant of testDatabases("factory-splits")) {
  describe(`indexer and factory splits (${variant.name})`, { timeout: 300_000 }, () => {
    let stack: Stack;
    const early = deviceId(`factory-early-${variant.name}`, { assetOwner: spare });
    const one = deviceId(`factory-one-${variant.name}`);
    const two = deviceId(`factory-two-${variant.name}`, { assetOwner: spare, operator: testWallet });
    const forked = deviceId(`factory-forked-${variant.name}`, { assetOwner: testWallet });
    let earlySplit: { split: Address; block: bigint; orderId: bigint };
    let split1: Hex;
    let split2: Hex;
    let split1CreatedBlock: bigint;

    before(async () => {
      stack = await startStack(variant, {
        label: "factory-splits",
        // Before the indexer starts: the backfill must find this split through the factory's event.
        history: async (payments) => {
          const { split, receipt } = await payments.createSplit(early);
          const { order } = await payments.pay("cash", { device: early, amount: usdc(2.5), split });
          earlySplit = { split, block: receipt.blockNumber, orderId: order.orderId };
          // Deeper than Ponder's finality depth on a local chain (30 blocks): indexed by the backfill, not live.
          await payments.mine(40);
        },
      });
    });
    after(async () => {
      await stack?.stop();
    });

    test("a split created before the indexer started is backfilled, found through the factory's event", async () => {
      const { client, payments } = stack;
      const [early1] = await client.splitsByAddresses([earlySplit.split]);
      assert.deepEqual(
        { ...early1, legsUpdatedAt: undefined, createdAt: undefined },
        {
          address: lower(earlySplit.split),
          token: lower(payments.addresses.token),
          assetKey: early,
          factory: lower(payments.addresses.factory),
          createdBlock: earlySplit.block,
          createdAt: undefined,
          assetOwner: spare,
          operator,
          protocol,
          assetOwnerBps: BPS[0],
          operatorBps: BPS[1],
          protocolBps: BPS[2],
          legsVersion: 1,
          legsUpdatedAt: undefined,
        },
      );
      const block = await payments.publicClient.getBlock({ blockNumber: earlySplit.block });
      assert.equal(early1!.createdAt, block.timestamp);
      const [settlement] = await client.settlementsBySplit(earlySplit.split);
      assert.equal(settlement?.orderId, earlySplit.orderId);
      assert.equal(settlement?.assetKey, early);
      assert.deepEqual([settlement?.assetOwner, settlement?.operator, settlement?.protocol], [spare, operator, protocol]);
      // Unknown addresses are simply absent; malformed ones are refused before any query.
      assert.deepEqual(await client.splitsByAddresses([`0x${"12".repeat(20)}`]), []);
      await assert.rejects(client.splitsByAddresses(["0x12' or 1=1 --" as Hex]), /invalid address/);
    });

    test("splits created while the indexer runs are indexed, and each device's payments credit its own split", async () => {
      const { client, payments } = stack;
      // Device one: the default recipients. Device two: other asset-owner and operator recipients (bound into its
      // asset key by deviceId()).
      const created1 = await payments.createSplit(one);
      const created2 = await payments.createSplit(two);
      [split1, split2] = [lower(created1.split), lower(created2.split)];
      split1CreatedBlock = created1.receipt.blockNumber;
      await client.waitForBlock(created2.receipt.blockNumber);
      const rows = await client.splitsByAddresses([split2, split1, split1]);
      const factory = lower(payments.addresses.factory);
      const expected = [
        { address: split1, assetKey: one, factory, createdBlock: created1.receipt.blockNumber, legs: [assetOwner, operator, protocol] },
        { address: split2, assetKey: two, factory, createdBlock: created2.receipt.blockNumber, legs: [spare, testWallet, protocol] },
      ];
      assert.deepEqual(
        rows.map((row) => ({
          address: row.address,
          assetKey: row.assetKey,
          factory: row.factory,
          createdBlock: row.createdBlock,
          legs: [row.assetOwner, row.operator, row.protocol],
        })),
        expected.sort((a, b) => (a.address < b.address ? -1 : 1)),
        "one row per split, by address, duplicates asked once",
      );

      const paid = [
        await payments.pay("permit", { device: one, amount: usdc(1.5), split: created1.split }),
        await payments.pay("cash", { device: one, amount: usdc(3.333333), split: created1.split }),
        await payments.pay("approval", { device: two, amount: usdc(7.000001), split: created2.split }),
      ];
      await client.waitForBlock(paid.at(-1)!.receipt.blockNumber);

      // Orders and settlements name their split; a settlement's asset is its split's.
      const orders = await client.ordersByIds(paid.map(({ order }) => order.orderId));
      assert.deepEqual(
        orders.map((order) => order.split),
        [split1, split1, split2],
      );
      const bySplit1 = await client.settlementsBySplit(split1);
      assert.deepEqual(
        bySplit1.map((s) => [s.orderId, s.assetKey, s.gross]),
        [paid[1]!, paid[0]!].map(({ order }) => [order.orderId, one, order.amount]),
        "newest first",
      );
      const [settlement2] = await client.settlementsByOrderIds([paid[2]!.order.orderId]);
      assert.deepEqual((await client.settlementsBySplit(split2))[0], { ...settlement2!, assetKey: two });

      // Each split credited its own recipients, as the contract did.
      for (const [split, owner, op] of [
        [split1, assetOwner, operator],
        [split2, spare, testWallet],
      ] as const) {
        const settlements = await client.settlementsBySplit(split);
        for (const s of settlements) {
          assert.deepEqual([s.assetOwner, s.operator, s.protocol], [owner, op, protocol]);
          assert.deepEqual([s.assetOwnerAmount, s.operatorAmount, s.protocolAmount], expectedLegs(s.gross, BPS));
        }
        await assertSplitEarningsMatchChain(split, settlements);
      }
      const ownerInSplits = await client.participantEarningsInSplits(assetOwner, [split1, split2]);
      assert.deepEqual(
        ownerInSplits.map((row) => [row.split, row.assetKey, row.credited, row.creditedAsAssetOwner]),
        [
          [
            split1,
            one,
            expectedLegs(usdc(1.5), BPS)[0] + expectedLegs(usdc(3.333333), BPS)[0],
            expectedLegs(usdc(1.5), BPS)[0] + expectedLegs(usdc(3.333333), BPS)[0],
          ],
        ],
        "the asset owner of device one earns nothing from device two's split",
      );
      const spareInSplits = await client.participantEarningsInSplits(spare, [split1, split2]);
      assert.deepEqual(
        spareInSplits.map((row) => [row.split, row.assetKey, row.credited]),
        [[split2, two, expectedLegs(usdc(7.000001), BPS)[0]]],
        "restricted to the given splits: the early split's credit is left out",
      );
      assert.deepEqual(await client.participantEarningsInSplits(spare, []), []);

      // The protocol recipient, per settlement across both splits, newest first, paged.
      const all = await client.participantSettlements(protocol, [split1, split2]);
      assert.deepEqual(
        all.map((s) => [s.orderId, s.split, s.assetKey, s.credited]),
        [paid[2]!, paid[1]!, paid[0]!].map(({ order }) => [
          order.orderId,
          lower(order.split),
          order.deviceId,
          expectedLegs(order.amount, BPS)[2],
        ]),
      );
      const first = await client.participantSettlements(protocol, [split1, split2], { limit: 2 });
      const rest = await client.participantSettlements(protocol, [split1, split2], { limit: 2, before: first.at(-1)!.id });
      assert.deepEqual([...first, ...rest], all);
      const spareSettlements = await client.participantSettlements(spare, [split1, split2, lower(earlySplit.split)]);
      assert.deepEqual(
        spareSettlements.map((s) => [s.split, s.assetKey, s.credited]),
        [
          [split2, two, expectedLegs(usdc(7.000001), BPS)[0]],
          [lower(earlySplit.split), early, expectedLegs(usdc(2.5), BPS)[0]],
        ],
      );
      // Long lists of splits are queried in chunks: the same answers among 150 other addresses.
      const others = Array.from({ length: 150 }, (_, i) => `0x${(i + 1).toString(16).padStart(40, "0")}` as Hex);
      const many = [...others.slice(0, 70), split2, ...others.slice(70), split1];
      assert.deepEqual(await client.participantSettlements(protocol, many), all);
      assert.deepEqual(await client.participantSettlements(protocol, many, { limit: 2, before: first.at(-1)!.id }), rest);
      assert.deepEqual(await client.participantEarningsInSplits(assetOwner, many), ownerInSplits);
      assert.deepEqual(
        (await client.splitsByAddresses(many)).map((row) => row.address),
        [split1, split2].sort(),
      );
      await assert.rejects(client.participantSettlements(protocol, [split1], { limit: 0 }), /invalid limit/);
      await assert.rejects(client.participantSettlements(protocol, [split1], { before: "1; drop table" }), /invalid settlement id/);

      // Per asset (device id = asset key): the payments through its split.
      const [stats1] = await client.deviceStats([one]);
      const [stats2] = await client.deviceStats([two]);
      assert.deepEqual([stats1?.payments, stats1?.volumeUsdMicro], [2, usdc(1.5) + usdc(3.333333)]);
      assert.deepEqual([stats2?.payments, stats2?.volumeUsdMicro], [1, usdc(7.000001)]);
      await assertTotalsMatchChain(stack, recipients);
      await assertEarningsAddUp();
    });

    test("a recipient change mid-stream (setRecipients) credits earlier and later payments to their own recipients", async () => {
      const { client, payments } = stack;
      const ownerBefore = await splitEarnings(assetOwner, split1);
      const earlier = await payments.pay("cash", { device: one, amount: usdc(4.000003), split: split1 });
      const change = await payments.setRecipients(
        one,
        localAccount(LOCAL_ACCOUNT_INDEX.spare).address,
        localAccount(LOCAL_ACCOUNT_INDEX.testWallet).address,
      );
      const later = await payments.pay("permit", { device: one, amount: usdc(6.5), split: split1 });
      await client.waitForBlock(later.receipt.blockNumber);

      const [row] = await client.splitsByAddresses([split1]);
      assert.deepEqual(
        [row?.assetOwner, row?.operator, row?.protocol, row?.legsVersion, row?.assetKey, row?.createdBlock],
        [spare, testWallet, protocol, 2, one, split1CreatedBlock],
        "new recipients, same protocol leg, asset and creation block",
      );
      assert.equal(row?.legsUpdatedAt, (await payments.publicClient.getBlock({ blockNumber: change.blockNumber })).timestamp);
      const [s1, s2] = await client.settlementsByOrderIds([earlier.order.orderId, later.order.orderId]);
      assert.deepEqual([s1?.assetOwner, s1?.operator], [assetOwner, operator], "the earlier payment: the old recipients");
      assert.deepEqual([s2?.assetOwner, s2?.operator], [spare, testWallet], "the later payment: the new recipients");

      const [ownerLeg] = expectedLegs(usdc(4.000003), BPS);
      const ownerAfter = await splitEarnings(assetOwner, split1);
      assert.equal(ownerAfter.credited, ownerBefore.credited + ownerLeg);
      const spareInSplit1 = await splitEarnings(spare, split1);
      assert.equal(spareInSplit1.credited, expectedLegs(usdc(6.5), BPS)[0]);
      assert.deepEqual(
        (await client.participantSettlements(spare, [split1])).map((s) => [s.orderId, s.credited]),
        [[later.order.orderId, expectedLegs(usdc(6.5), BPS)[0]]],
      );

      // The old asset owner withdraws from the split what it earned there, the new one's credit stays.
      const withdrawal = await payments.withdraw(LOCAL_ACCOUNT_INDEX.assetOwner, split1);
      await client.waitForBlock(withdrawal.blockNumber);
      const withdrawn = await splitEarnings(assetOwner, split1);
      assert.deepEqual([withdrawn.withdrawn, withdrawn.claimable, withdrawn.withdrawals], [ownerAfter.credited, 0n, 1]);
      const [w] = (await client.withdrawalsOf(assetOwner)).filter((row) => row.split === split1);
      assert.deepEqual([w?.amount, w?.token], [ownerAfter.credited, lower(payments.addresses.token)]);
      await assertSplitEarningsMatchChain(split1, await client.settlementsBySplit(split1, { limit: 1000 }));
      await assertTotalsMatchChain(stack, recipients);
      await assertEarningsAddUp();
    });

    test("a reorg that removes a split's creation removes its rows", async () => {
      const { client, payments, chain } = stack;
      const participantsBefore = await client.participants();
      const networkBefore = await client.networkStats();

      const snapshot = await chain.rpc<string>("evm_snapshot");
      const { split, receipt } = await payments.createSplit(forked);
      const paid = await payments.pay("cash", { device: forked, amount: usdc(9), split });
      await client.waitForBlock(paid.receipt.blockNumber);
      const oldHead = await payments.blockNumber();
      assert.equal((await client.splitsByAddresses([split])).length, 1);
      assert.equal((await client.settlementsBySplit(split)).length, 1);
      assert.equal((await client.participantEarningsInSplits(testWallet, [split])).length, 1);
      assert.equal((await client.deviceStats([forked])).length, 1);

      // The other fork, longer, without the split.
      assert.equal(await chain.rpc("evm_revert", [snapshot]), true);
      const newHead = await payments.mine(Number(oldHead - (await payments.blockNumber())) + 3);
      await eventually("the indexer to drop the abandoned split", async () => {
        if ((await client.indexedBlock()) < newHead) return false;
        return (await client.splitsByAddresses([split])).length === 0;
      });
      assert.deepEqual(await client.settlementsBySplit(split), []);
      assert.deepEqual(await client.splitParticipantsOf(split), []);
      assert.deepEqual(await client.participantEarningsInSplits(testWallet, [split]), []);
      assert.deepEqual(await client.participantSettlements(protocol, [split]), []);
      assert.equal(await client.orderById(paid.order.orderId), null);
      assert.deepEqual(await client.deviceStats([forked]), []);
      assert.deepEqual(await client.participants(), participantsBefore, "earnings back to before the fork");
      assert.deepEqual(await client.networkStats(), networkBefore);

      // Created again on this fork, later: indexed again from its new creation block.
      const again = await payments.createSplit(forked);
      assert.equal(again.split, split, "the same address (CREATE2 of the asset key)");
      assert.ok(again.receipt.blockNumber > receipt.blockNumber);
      const repaid = await payments.pay("approval", { device: forked, amount: usdc(0.5), split });
      await client.waitForBlock(repaid.receipt.blockNumber);
      const [row] = await client.splitsByAddresses([split]);
      assert.deepEqual([row?.createdBlock, row?.assetKey, row?.legsVersion], [again.receipt.blockNumber, forked, 1]);
      assert.deepEqual(
        (await client.settlementsBySplit(split)).map((s) => [s.orderId, s.transactionHash]),
        [[repaid.order.orderId, repaid.receipt.transactionHash]],
      );
      await assertTotalsMatchChain(stack, recipients);
      await assertEarningsAddUp();
    });

    /** `recipient`'s earnings in `split` (zero if none). */
    async function splitEarnings(recipient: Hex, split: Hex) {
      const [row] = await stack.client.participantEarningsInSplits(recipient, [split]);
      return row ?? { credited: 0n, withdrawn: 0n, claimable: 0n, withdrawals: 0 };
    }

    /** The split's per-recipient rows: credits add up to its settlements' legs (each to the recipient of the time)
     * and claimable equals the split's on-chain `claimable`. */
    async function assertSplitEarningsMatchChain(split: Hex, settlements: SplitSettlement[]) {
      const expected = new Map<Hex, bigint>();
      for (const s of settlements) {
        for (const [recipient, amount] of [
          [s.assetOwner, s.assetOwnerAmount],
          [s.operator, s.operatorAmount],
          [s.protocol, s.protocolAmount],
        ] as const) {
          expected.set(recipient, (expected.get(recipient) ?? 0n) + amount);
        }
      }
      const rows = await stack.client.splitParticipantsOf(split);
      assert.deepEqual(new Map(rows.map((row) => [row.recipient, row.credited])), expected, `credits of ${split}`);
      assert.equal(sum(rows.map((row) => row.credited)), sum(settlements.map((s) => s.gross)));
      for (const row of rows) {
        assert.equal(row.claimable, await stack.payments.claimable(row.recipient, split), `claimable of ${row.recipient} at ${split}`);
        assert.equal(row.claimable, row.credited - row.withdrawn);
      }
    }

    /** Each participant's earnings across splits are the sum of its earnings per split, over every split. */
    async function assertEarningsAddUp() {
      const { client, payments } = stack;
      const splits = (await payments.splitAddresses()).map(lower);
      const participants: Participant[] = await client.participants();
      for (const participant of participants) {
        const perSplit = await client.participantEarningsInSplits(participant.recipient, splits);
        for (const column of [
          "credited",
          "withdrawn",
          "claimable",
          "creditedAsAssetOwner",
          "creditedAsOperator",
          "creditedAsProtocol",
        ] as const) {
          assert.equal(sum(perSplit.map((row) => row[column])), participant[column], `${column} of ${participant.recipient}`);
        }
        assert.equal(
          perSplit.reduce((n, row) => n + row.settlements, 0),
          participant.settlements,
        );
      }
    }
  });
}
