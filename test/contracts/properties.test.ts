// Property tests: ~200 payments of random amounts on random rails, with random recipient changes, releases, donations
// (tokens sent to the split directly) and surplus recoveries in between, checked after every step against a small
// model of the split's accounting: the split's balance is always exactly what it owes plus the surplus donated. Deterministic: the PRNG is
// seeded (override with PROPERTY_SEED=<integer> to explore other sequences).
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { getAddress, parseEventLogs, toHex, type Address } from "viem";
import {
  FIXTURE_DEVICE,
  LEG_BPS,
  RAILS,
  RAIL_ID,
  assetKey,
  deployPayments,
  expectedLegs,
  factoryAs,
  makeOrder,
  networkHelpers,
  prepareRail,
  publicClient,
  railPayer,
  setFixtureRecipients,
  splitAs,
  viem,
  type RailName,
} from "./fixture.ts";

const KEY = assetKey(FIXTURE_DEVICE);
const SEED = BigInt(process.env.PROPERTY_SEED ?? "20240611");
const PAYMENTS = 200;
const MAX_U64 = (1n << 64n) - 1n;
const MAX_U96 = (1n << 96n) - 1n;
const MAX_U128 = (1n << 128n) - 1n;

/** SplitMix64: tiny, fast, good enough to pick test cases, and fully deterministic. */
function prng(seed: bigint) {
  let state = seed & MAX_U64;
  const next = () => {
    state = (state + 0x9e3779b97f4a7c15n) & MAX_U64;
    let z = state;
    z = ((z ^ (z >> 30n)) * 0xbf58476d1ce4e5b9n) & MAX_U64;
    z = ((z ^ (z >> 27n)) * 0x94d049bb133111ebn) & MAX_U64;
    return z ^ (z >> 31n);
  };
  /** Uniform in [0, n) for n <= 2**256 (the tiny modulo bias is irrelevant here). */
  const below = (n: bigint) => {
    let x = 0n;
    for (let i = 0; i < 4; i++) x = (x << 64n) | next();
    return x % n;
  };
  return {
    below,
    int: (n: number) => Number(below(BigInt(n))),
    chance: (p: number) => Number(next() % 1_000_000n) < p * 1_000_000,
    pick: <T>(items: readonly T[]): T => items[Number(below(BigInt(items.length)))],
  };
}

type Rng = ReturnType<typeof prng>;

function randomAmount(rng: Rng): bigint {
  switch (rng.int(9)) {
    case 0:
      return rng.pick([1n, 2n, 3n, 7n, 9_999n, 10_000n, 10_001n]);
    case 1:
      return 1n + rng.below(10n ** 6n); // up to 1 USDC
    case 2:
      return 1n + rng.below(10n ** 12n); // up to a million USDC
    case 3:
      return 1n + rng.below(1n << 64n);
    case 4: // up to the 2**96 - 1 the split can owe in total
      return 1n + rng.below(MAX_U96);
    case 5: // 2**96-ish edges: a single one fits what the split can owe, two do not; rarely, amounts no split can take
      return rng.pick([
        MAX_U96,
        1n << 95n,
        (1n << 95n) + 1n,
        MAX_U96 - 9_999n,
        (1n << 95n) - 1n,
        MAX_U96 - 1n,
        1n << 94n,
        rng.pick([1n << 96n, MAX_U128, (1n << 128n) + 1n]),
      ]);
    default:
      return 1n + rng.below(10n ** 9n);
  }
}

/** What the split must hold, computed independently of it. */
class SplitModel {
  accrual: [bigint, bigint, bigint] = [0n, 0n, 0n];
  credited = new Map<Address, bigint>();
  /** Tokens sent to the split directly and not recovered: owed to no one. */
  surplus = 0n;
  recipients: [Address, Address, Address];
  readonly bps: [number, number, number];

  constructor(recipients: [Address, Address, Address], bps: [number, number, number]) {
    this.recipients = recipients;
    this.bps = bps;
  }

  claimable(who: Address) {
    let amount = this.credited.get(who) ?? 0n;
    this.recipients.forEach((r, i) => {
      if (r === who) amount += this.accrual[i];
    });
    return amount;
  }

  checkpoint() {
    this.recipients.forEach((r, i) => this.credited.set(r, (this.credited.get(r) ?? 0n) + this.accrual[i]));
    this.accrual = [0n, 0n, 0n];
  }

  /** Everything owed: credits and accruals. */
  held() {
    let sum = this.accrual[0] + this.accrual[1] + this.accrual[2];
    for (const amount of this.credited.values()) sum += amount;
    return sum;
  }

  /** The [bits, value] the split's SafeCast must reject for a settlement of `gross` (the uint96 total owed), or
   * undefined if it fits. A leg's accrual never limits a settlement: one that would not fit the split's slot is
   * credited at once, which changes no claimable amount (the model does not need to tell). */
  overflow(gross: bigint): [number, bigint] | undefined {
    if (this.held() + gross > MAX_U96) return [96, this.held() + gross];
    return undefined;
  }

  settle(gross: bigint) {
    const legs = expectedLegs(gross, this.bps);
    this.accrual = [0, 1, 2].map((i) => this.accrual[i] + legs[i]) as [bigint, bigint, bigint];
    return legs;
  }

  /** A recipient change (the shares stay: they are the factory's). */
  setRecipients(recipients: [Address, Address, Address]) {
    this.checkpoint();
    this.recipients = recipients;
  }

  payOut(who: Address) {
    this.checkpoint();
    const amount = this.credited.get(who) ?? 0n;
    this.credited.set(who, 0n);
    return amount;
  }
}

async function deployForProperties() {
  const p = await deployPayments();
  const wallets = await viem.getWalletClients();
  const pool = [p.accounts.assetOwner, p.accounts.operator, p.accounts.protocol, wallets[10], wallets[11]].map((w) =>
    getAddress(w.account.address),
  );
  // Enough for every amount the generator can produce, on every rail.
  await p.token.write.mint([p.accounts.payer.account.address, 1n << 140n]);
  await p.token.write.mint([p.accounts.agent.account.address, 1n << 140n]);
  return { p, pool };
}

describe("properties of payments and splits", () => {
  it(`${PAYMENTS} random payments on random rails keep every invariant (seed ${SEED})`, { timeout: 600_000 }, async (t) => {
    const { p, pool } = await networkHelpers.loadFixture(deployForProperties);
    const rng = prng(SEED);
    const model = new SplitModel([pool[0], pool[1], pool[2]], [5000, 4000, 1000]);
    const asAnyone = await splitAs(p, p.accounts.stranger);
    const stats = {
      paid: 0,
      rails: { permit: 0, approval: 0, cash: 0 } as Record<RailName, number>,
      recipientChanges: 0,
      releases: 0,
      overflows: 0,
      donations: 0,
      recoveries: 0,
    };
    const paidIds: bigint[] = [];

    const checkBalances = async (step: string) => {
      assert.equal(await p.token.read.balanceOf([p.router.address]), 0n, `${step}: the router holds no token`);
      let sum = 0n;
      for (const who of pool) {
        const onChain = await p.split.read.claimable([who]);
        assert.equal(onChain, model.claimable(who), `${step}: claimable(${who})`);
        sum += onChain;
      }
      assert.equal(sum, model.held(), `${step}: the pool holds every credit`);
      assert.equal(await p.split.read.surplus(), model.surplus, `${step}: surplus() is exactly what was donated`);
      assert.equal(
        await p.token.read.balanceOf([p.split.address]),
        sum + model.surplus,
        `${step}: split balance == sum of claimable + surplus`,
      );
    };

    const release = async (who: Address, step: string) => {
      const expected = model.claimable(who);
      if (expected === 0n) {
        await viem.assertions.revertWithCustomErrorWithArgs(asAnyone.write.release([who]), p.split, "NothingToWithdraw", [who]);
        return;
      }
      const before = await p.token.read.balanceOf([who]);
      await viem.assertions.emitWithArgs(asAnyone.write.release([who]), p.split, "Withdrawn", [who, who, expected]);
      assert.equal(model.payOut(who), expected);
      assert.equal(await p.token.read.balanceOf([who]), before + expected, `${step}: release paid ${who}`);
      stats.releases++;
    };

    for (let i = 0; i < PAYMENTS; i++) {
      const step = `seed ${SEED} step ${i}`;

      if (rng.chance(0.1)) {
        // The split manager names any asset owner and operator; the protocol leg and the shares are the factory's.
        const recipients = [rng.pick(pool), rng.pick(pool), pool[2]] as [Address, Address, Address];
        const bps: [number, number, number] = [...LEG_BPS];
        await viem.assertions.emitWithArgs(setFixtureRecipients(p, recipients[0], recipients[1]), p.split, "LegsUpdated", [
          recipients,
          bps,
        ]);
        model.setRecipients(recipients);
        assert.deepEqual(await p.split.read.legs(), [recipients, bps], `${step}: legs()`);
        stats.recipientChanges++;
        await checkBalances(`${step} after setRecipients`);
      }
      if (rng.chance(0.1)) {
        await release(rng.pick(pool), step);
        await checkBalances(`${step} after release`);
      }
      if (rng.chance(0.08)) {
        // A donation: tokens sent straight to the split become surplus and credit no one.
        const donation = rng.chance(0.5) ? 1n + rng.below(10n ** 9n) : 1n + rng.below(MAX_U96);
        await p.token.write.mint([p.split.address, donation]);
        model.surplus += donation;
        stats.donations++;
        await checkBalances(`${step} after a donation`);
      }
      if (rng.chance(0.04)) {
        const to = p.accounts.admin.account.address;
        if (model.surplus === 0n) {
          await viem.assertions.revertWithCustomErrorWithArgs(
            (await factoryAs(p, p.accounts.admin)).write.recoverSurplus([KEY, to]),
            p.split,
            "NothingToWithdraw",
            [getAddress(p.split.address)],
          );
        } else {
          const before = await p.token.read.balanceOf([to]);
          await viem.assertions.emitWithArgs(
            (await factoryAs(p, p.accounts.admin)).write.recoverSurplus([KEY, to]),
            p.split,
            "SurplusRecovered",
            [getAddress(to), model.surplus],
          );
          assert.equal(await p.token.read.balanceOf([to]), before + model.surplus, `${step}: recoverSurplus paid the surplus`);
          model.surplus = 0n;
          stats.recoveries++;
        }
        await checkBalances(`${step} after recoverSurplus`);
      }

      const amount = randomAmount(rng);
      const rail = rng.pick(RAILS);
      const order = await makeOrder(p, amount, { orderId: (BigInt(i) << 64n) | rng.below(1n << 64n) });
      assert.deepEqual(await p.split.read.previewSplit([amount]), expectedLegs(amount, model.bps), `${step}: previewSplit`);

      let overflow = model.overflow(amount);
      if (overflow !== undefined) {
        // The split owes at most 2**96 - 1 in total: the settlement must be refused, whole, until withdrawals
        // make room.
        await viem.assertions.revertWithCustomErrorWithArgs(
          (await prepareRail(p, rail, order))(),
          p.split,
          "SafeCastOverflowedUintDowncast",
          overflow,
        );
        assert.equal(await p.router.read.isPaid([order.orderId]), false, `${step}: a refused order stays unpaid`);
        stats.overflows++;
        await checkBalances(`${step} after a refused settlement`);
        for (const who of pool) {
          if (model.overflow(amount) === undefined) break;
          if (model.claimable(who) > 0n) await release(who, step);
        }
        overflow = model.overflow(amount);
        if (overflow !== undefined) {
          // Even an empty split cannot take this amount.
          await checkBalances(`${step} after an unpayable amount`);
          continue;
        }
      }

      const payer = railPayer(p, rail).account.address;
      const payerBefore = await p.token.read.balanceOf([payer]);
      const hash = await (await prepareRail(p, rail, order))();
      const receipt = await publicClient.waitForTransactionReceipt({ hash });
      assert.equal(receipt.status, "success", step);
      const legs = model.settle(amount);
      paidIds.push(order.orderId);
      stats.paid++;
      stats.rails[rail]++;

      const deposits = parseEventLogs({ abi: p.split.abi, eventName: "YieldDeposited", logs: receipt.logs });
      assert.equal(deposits.length, 1, `${step}: one settlement per payment`);
      const d = deposits[0].args;
      assert.equal(d.gross, amount, step);
      assert.equal(d.assetOwnerAmount + d.operatorAmount + d.protocolAmount, d.gross, `${step}: legs sum to gross`);
      assert.deepEqual([d.assetOwnerAmount, d.operatorAmount, d.protocolAmount], legs, `${step}: legs`);
      assert.equal(d.ref, toHex(order.orderId, { size: 32 }), step);
      assert.equal(d.depositor, getAddress(p.router.address), step);

      const paid = parseEventLogs({ abi: p.router.abi, eventName: "OrderPaid", logs: receipt.logs });
      assert.equal(paid.length, 1, step);
      assert.equal(paid[0].args.rail, RAIL_ID[rail], step);
      assert.equal(paid[0].args.payer, getAddress(payer), step);
      assert.equal(paid[0].args.amount, amount, step);
      assert.equal(await p.token.read.balanceOf([payer]), payerBefore - amount, `${step}: payer debited exactly`);

      await checkBalances(step);

      // Paid at most once, whatever the rail of the second attempt.
      await viem.assertions.revertWithCustomErrorWithArgs((await prepareRail(p, rng.pick(RAILS), order))(), p.router, "OrderAlreadyPaid", [
        order.orderId,
      ]);
    }

    // Every order ever paid is still marked, and the model agrees with the chain to the last unit.
    for (const id of paidIds) assert.equal(await p.router.read.isPaid([id]), true);
    await checkBalances("end");
    for (const who of pool) if (model.claimable(who) > 0n) await release(who, "final release");
    assert.equal(model.held(), 0n);
    assert.equal(await p.token.read.balanceOf([p.split.address]), model.surplus, "everything credited was paid out");
    if (model.surplus > 0n) {
      await viem.assertions.emitWithArgs(
        (await factoryAs(p, p.accounts.admin)).write.recoverSurplus([KEY, p.accounts.admin.account.address]),
        p.split,
        "SurplusRecovered",
        [getAddress(p.accounts.admin.account.address), model.surplus],
      );
      model.surplus = 0n;
    }
    assert.equal(await p.token.read.balanceOf([p.split.address]), 0n, "nothing left after the surplus was recovered");

    // The run must have exercised what it claims to.
    assert.ok(stats.paid >= PAYMENTS * 0.9, JSON.stringify(stats));
    for (const rail of RAILS) assert.ok(stats.rails[rail] > 20, JSON.stringify(stats));
    assert.ok(stats.recipientChanges > 5 && stats.releases > 5, JSON.stringify(stats));
    assert.ok(stats.donations > 5 && stats.recoveries > 2 && stats.overflows > 2, JSON.stringify(stats));
    t.diagnostic(`stats: ${JSON.stringify(stats)}`);
  });

  it("the PRNG is deterministic for a seed", () => {
    const a = prng(42n);
    const b = prng(42n);
    const c = prng(43n);
    const seqA = Array.from({ length: 8 }, () => a.below(1n << 200n));
    assert.deepEqual(
      seqA,
      Array.from({ length: 8 }, () => b.below(1n << 200n)),
    );
    assert.notDeepEqual(
      seqA,
      Array.from({ length: 8 }, () => c.below(1n << 200n)),
    );
  });
});
