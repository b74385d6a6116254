import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { getAddress, keccak256, parseEventLogs, toHex } from "viem";
import {
  LEG_BPS,
  USDC,
  deployPayments,
  deploySplitFor,
  expectedLegs,
  makeOrder,
  networkHelpers,
  payOnRail,
  publicClient,
  splitAs,
  viem,
  type Payments,
} from "./fixture.ts";

/** The fixture plus a settler: an account with the factory's depositor role that settles amounts it sent to the
 * split. */
async function deployWithSettler() {
  const p = await deployPayments();
  await p.factory.write.grantRole([await p.factory.read.DEPOSITOR_ROLE(), p.accounts.relayer.account.address]);
  return p;
}

/** Sends `gross` to the split, as the router does, and returns the settle call of the settler. */
async function fundAndSettle(p: Payments, ref: `0x${string}`, gross: bigint) {
  await p.token.write.mint([p.split.address, gross]);
  return (await splitAs(p, p.accounts.relayer)).write.settle([ref, gross]);
}

const ref = (n: number) => toHex(n, { size: 32 });

describe("AssetSplit.settle", () => {
  it("is only for the router and the holders of the factory's depositor role (asked of the factory)", async () => {
    const p = await networkHelpers.loadFixture(deployWithSettler);
    const depositorRole = await p.split.read.DEPOSITOR_ROLE();
    assert.equal(depositorRole, keccak256(toHex("DEPOSITOR_ROLE")));
    assert.equal(depositorRole, await p.factory.read.DEPOSITOR_ROLE());
    await p.token.write.mint([p.split.address, USDC(1)]);
    // The factory's admin, pauser and split manager, the recipients: none of them settles.
    const { stranger, admin, assetOwner, pauser, agent, manager } = p.accounts;
    for (const caller of [stranger, admin, assetOwner, pauser, agent, manager]) {
      await viem.assertions.revertWithCustomErrorWithArgs(
        (await splitAs(p, caller)).write.settle([ref(1), USDC(1)]),
        p.split,
        "NotDepositor",
        [getAddress(caller.account.address)],
      );
    }
    // The depositor role on the split's own address means nothing: only the factory's roles count.
    await p.factory.write.grantRole([depositorRole, p.split.address]);
    await viem.assertions.revertWithCustomErrorWithArgs(
      (await splitAs(p, stranger)).write.settle([ref(1), USDC(1)]),
      p.split,
      "NotDepositor",
      [getAddress(stranger.account.address)],
    );
    // Revoking the factory's role stops the settler; granting it to another account lets that one settle.
    await p.factory.write.revokeRole([depositorRole, p.accounts.relayer.account.address]);
    await viem.assertions.revertWithCustomErrorWithArgs(
      (await splitAs(p, p.accounts.relayer)).write.settle([ref(1), USDC(1)]),
      p.split,
      "NotDepositor",
      [getAddress(p.accounts.relayer.account.address)],
    );
    await p.factory.write.grantRole([depositorRole, stranger.account.address]);
    await viem.assertions.emit((await splitAs(p, stranger)).write.settle([ref(1), USDC(1)]), p.split, "YieldDeposited");
  });

  it("the router settles without any role: it is fixed in the split's implementation", async () => {
    const p = await networkHelpers.loadFixture(deployWithSettler);
    assert.equal(await p.split.read.router(), getAddress(p.router.address));
    assert.equal(await p.factory.read.hasRole([await p.factory.read.DEPOSITOR_ROLE(), p.router.address]), false);
    await viem.assertions.emit(payOnRail(p, "cash", await makeOrder(p, USDC(1))), p.split, "YieldDeposited");
  });

  it("reverts with ZeroAmount for a settlement of zero", async () => {
    const p = await networkHelpers.loadFixture(deployWithSettler);
    await viem.assertions.revertWithCustomErrorWithArgs(
      (await splitAs(p, p.accounts.relayer)).write.settle([ref(1), 0n]),
      p.split,
      "ZeroAmount",
      [],
    );
  });

  it("emits YieldDeposited with the reference, the settler and the three legs", async () => {
    const p = await networkHelpers.loadFixture(deployWithSettler);
    const r = keccak256(toHex("batch-2024-06"));
    await viem.assertions.emitWithArgs(fundAndSettle(p, r, USDC(123.45)), p.split, "YieldDeposited", [
      r,
      getAddress(p.accounts.relayer.account.address),
      USDC(123.45),
      USDC(61.725),
      USDC(49.38),
      USDC(12.345),
    ]);
  });

  it("moves no tokens: it only records what the depositor already sent", async () => {
    const p = await networkHelpers.loadFixture(deployWithSettler);
    await p.token.write.mint([p.split.address, USDC(10)]);
    const hash = await (await splitAs(p, p.accounts.relayer)).write.settle([ref(1), USDC(10)]);
    const receipt = await publicClient.waitForTransactionReceipt({ hash });
    assert.equal(parseEventLogs({ abi: p.token.abi, eventName: "Transfer", logs: receipt.logs }).length, 0);
    assert.equal(await p.token.read.balanceOf([p.split.address]), USDC(10));
    assert.equal(await p.split.read.surplus(), 0n);
  });

  describe("backing: the tokens held beyond what is owed must cover gross (UnbackedSettlement)", () => {
    it("reverts with UnbackedSettlement(gross, 0) when nothing was sent, and credits nothing", async () => {
      const p = await networkHelpers.loadFixture(deployWithSettler);
      const asSettler = await splitAs(p, p.accounts.relayer);
      for (const gross of [1n, USDC(10), 2n ** 96n, 2n ** 256n - 1n]) {
        await viem.assertions.revertWithCustomErrorWithArgs(asSettler.write.settle([ref(1), gross]), p.split, "UnbackedSettlement", [
          gross,
          0n,
        ]);
      }
      for (const w of [p.accounts.assetOwner, p.accounts.operator, p.accounts.protocol]) {
        assert.equal(await p.split.read.claimable([w.account.address]), 0n);
      }
      assert.equal(await p.token.read.balanceOf([p.split.address]), 0n);
    });

    it("reverts with UnbackedSettlement(gross, available) when fewer tokens were sent, then settles what was sent", async () => {
      const p = await networkHelpers.loadFixture(deployWithSettler);
      const asSettler = await splitAs(p, p.accounts.relayer);
      await p.token.write.mint([p.split.address, USDC(9.99)]);
      assert.equal(await p.split.read.surplus(), USDC(9.99));
      await viem.assertions.revertWithCustomErrorWithArgs(asSettler.write.settle([ref(1), USDC(10)]), p.split, "UnbackedSettlement", [
        USDC(10),
        USDC(9.99),
      ]);
      await viem.assertions.revertWithCustomErrorWithArgs(
        asSettler.write.settle([ref(1), USDC(9.99) + 1n]),
        p.split,
        "UnbackedSettlement",
        [USDC(9.99) + 1n, USDC(9.99)],
      );
      await viem.assertions.emitWithArgs(asSettler.write.settle([ref(1), USDC(9.99)]), p.split, "YieldDeposited", [
        ref(1),
        getAddress(p.accounts.relayer.account.address),
        USDC(9.99),
        ...expectedLegs(USDC(9.99)),
      ]);
      assert.equal(await p.split.read.surplus(), 0n);
      assert.equal(await p.split.read.claimable([p.accounts.operator.account.address]), expectedLegs(USDC(9.99))[1]);
    });

    it("a settlement backed by a prior transfer of exactly gross succeeds; the same tokens cannot back a second one", async () => {
      const p = await networkHelpers.loadFixture(deployWithSettler);
      const asSettler = await splitAs(p, p.accounts.relayer);
      await p.token.write.mint([p.accounts.relayer.account.address, USDC(10)]);
      // The settler sends the tokens itself, then records them.
      const tokenAsSettler = await viem.getContractAt("TestStablecoin", p.token.address, { client: { wallet: p.accounts.relayer } });
      await tokenAsSettler.write.transfer([p.split.address, USDC(10)]);
      await viem.assertions.emitWithArgs(asSettler.write.settle([ref(1), USDC(10)]), p.split, "YieldDeposited", [
        ref(1),
        getAddress(p.accounts.relayer.account.address),
        USDC(10),
        USDC(5),
        USDC(4),
        USDC(1),
      ]);
      assert.equal(await p.split.read.surplus(), 0n);
      await viem.assertions.revertWithCustomErrorWithArgs(asSettler.write.settle([ref(2), USDC(10)]), p.split, "UnbackedSettlement", [
        USDC(10),
        0n,
      ]);
      await viem.assertions.revertWithCustomErrorWithArgs(asSettler.write.settle([ref(2), 1n]), p.split, "UnbackedSettlement", [1n, 0n]);
      assert.equal(await p.split.read.claimable([p.accounts.assetOwner.account.address]), USDC(5));
      assert.equal(await p.token.read.balanceOf([p.split.address]), USDC(10));
    });

    it("tokens already owed to recipients never back a settlement; only the tokens beyond them do", async () => {
      const p = await networkHelpers.loadFixture(deployWithSettler);
      const asSettler = await splitAs(p, p.accounts.relayer);
      await payOnRail(p, "cash", await makeOrder(p, USDC(100)));
      assert.equal(await p.token.read.balanceOf([p.split.address]), USDC(100));
      await viem.assertions.revertWithCustomErrorWithArgs(asSettler.write.settle([ref(1), 1n]), p.split, "UnbackedSettlement", [1n, 0n]);
      await p.token.write.mint([p.split.address, USDC(5)]);
      await viem.assertions.revertWithCustomErrorWithArgs(asSettler.write.settle([ref(1), USDC(6)]), p.split, "UnbackedSettlement", [
        USDC(6),
        USDC(5),
      ]);
      await asSettler.write.settle([ref(1), USDC(5)]);
      assert.equal(await p.split.read.claimable([p.accounts.assetOwner.account.address]), USDC(52.5));
      assert.equal(await p.split.read.surplus(), 0n);

      // After withdrawals the rest of the balance is still owed: it backs nothing either.
      await (await splitAs(p, p.accounts.assetOwner)).write.withdraw([p.accounts.assetOwner.account.address]);
      assert.equal(await p.token.read.balanceOf([p.split.address]), USDC(52.5));
      await viem.assertions.revertWithCustomErrorWithArgs(asSettler.write.settle([ref(2), 1n]), p.split, "UnbackedSettlement", [1n, 0n]);
      assert.equal(await p.split.read.claimable([p.accounts.operator.account.address]), USDC(42));
      assert.equal(await p.split.read.claimable([p.accounts.protocol.account.address]), USDC(10.5));
    });
  });

  describe("rounding", () => {
    // [gross, asset owner, operator, protocol] at 50/40/10: operator and protocol round down, the asset owner
    // takes the remainder.
    const cases: Array<[bigint, bigint, bigint, bigint]> = [
      [1n, 1n, 0n, 0n],
      [2n, 2n, 0n, 0n],
      [3n, 2n, 1n, 0n],
      [7n, 5n, 2n, 0n],
      [9n, 6n, 3n, 0n],
      [10n, 5n, 4n, 1n],
      [19n, 11n, 7n, 1n],
      [9_999n, 5_001n, 3_999n, 999n],
      [10_000n, 5_000n, 4_000n, 1_000n],
      [10_001n, 5_001n, 4_000n, 1_000n],
    ];
    for (const [gross, owner, op, proto] of cases) {
      it(`gross ${gross} splits into ${owner}/${op}/${proto} and the legs sum to gross`, async () => {
        const p = await networkHelpers.loadFixture(deployWithSettler);
        assert.equal(owner + op + proto, gross);
        assert.deepEqual(expectedLegs(gross), [owner, op, proto]);
        assert.deepEqual(await p.split.read.previewSplit([gross]), [owner, op, proto]);
        await viem.assertions.emitWithArgs(fundAndSettle(p, ref(Number(gross)), gross), p.split, "YieldDeposited", [
          ref(Number(gross)),
          getAddress(p.accounts.relayer.account.address),
          gross,
          owner,
          op,
          proto,
        ]);
        assert.equal(await p.split.read.claimable([p.accounts.assetOwner.account.address]), owner);
        assert.equal(await p.split.read.claimable([p.accounts.operator.account.address]), op);
        assert.equal(await p.split.read.claimable([p.accounts.protocol.account.address]), proto);
      });
    }

    it("remainders are not carried over: fifty settlements of 1 all go to the asset owner", async () => {
      const p = await networkHelpers.loadFixture(deployWithSettler);
      const asSettler = await splitAs(p, p.accounts.relayer);
      await p.token.write.mint([p.split.address, 50n]);
      for (let i = 0; i < 50; i++) await asSettler.write.settle([ref(i), 1n]);
      assert.equal(await p.split.read.claimable([p.accounts.assetOwner.account.address]), 50n);
      assert.equal(await p.split.read.claimable([p.accounts.operator.account.address]), 0n);
      assert.equal(await p.split.read.claimable([p.accounts.protocol.account.address]), 0n);
    });
  });

  it("accumulates claimable per recipient over several settlements", async () => {
    const p = await networkHelpers.loadFixture(deployWithSettler);
    const grosses = [USDC(1), 3n, USDC(2.5), 9_999n, USDC(100)];
    let sum = [0n, 0n, 0n];
    for (const [i, gross] of grosses.entries()) {
      await fundAndSettle(p, ref(i), gross);
      const legs = expectedLegs(gross);
      sum = sum.map((s, j) => s + legs[j]);
      assert.equal(await p.split.read.claimable([p.accounts.assetOwner.account.address]), sum[0]);
      assert.equal(await p.split.read.claimable([p.accounts.operator.account.address]), sum[1]);
      assert.equal(await p.split.read.claimable([p.accounts.protocol.account.address]), sum[2]);
    }
    const total = grosses.reduce((a, b) => a + b, 0n);
    assert.equal(sum[0] + sum[1] + sum[2], total);
    assert.equal(await p.token.read.balanceOf([p.split.address]), total);
    assert.equal(await p.split.read.claimable([p.accounts.stranger.account.address]), 0n);
  });

  describe("previewSplit", () => {
    it("matches the legs of the current shares, for zero and for huge amounts too", async () => {
      const p = await networkHelpers.loadFixture(deployWithSettler);
      for (const gross of [0n, 1n, 3n, USDC(1), 2n ** 128n - 1n, 2n ** 200n]) {
        assert.deepEqual(await p.split.read.previewSplit([gross]), expectedLegs(gross, LEG_BPS));
      }
    });

    it("follows the shares fixed by the split's factory", async () => {
      const p = await networkHelpers.loadFixture(deployWithSettler);
      const bps = [3333, 3333, 3334] as const;
      const split = await deploySplitFor(p, p.token.address, { bps, setFactory: false });
      assert.deepEqual(await split.read.legs(), [
        [p.accounts.assetOwner.account.address, p.accounts.operator.account.address, p.accounts.protocol.account.address].map((a) =>
          getAddress(a),
        ),
        [...bps],
      ]);
      assert.deepEqual(await split.read.previewSplit([100n]), [34n, 33n, 33n]);
      assert.deepEqual(await split.read.previewSplit([1n]), [1n, 0n, 0n]);
      assert.deepEqual(await split.read.previewSplit([USDC(7)]), expectedLegs(USDC(7), bps));
    });
  });

  describe("capacity: everything owed is tracked as a uint96, and so is each leg's accrual (a part of it)", () => {
    const MAX_U96 = 2n ** 96n - 1n;

    it("reverts with SafeCastOverflowedUintDowncast(96, owed) when the total owed would pass 2**96 - 1", async () => {
      const p = await networkHelpers.loadFixture(deployWithSettler);
      await viem.assertions.revertWithCustomErrorWithArgs(
        fundAndSettle(p, ref(1), MAX_U96 + 1n),
        p.split,
        "SafeCastOverflowedUintDowncast",
        [96, MAX_U96 + 1n],
      );
      assert.equal(await p.split.read.surplus(), MAX_U96 + 1n, "the refused settlement's tokens stay unsettled");
      // 2**96 - 1 owed in total fits exactly (settled out of the surplus already sent).
      await viem.assertions.emit((await splitAs(p, p.accounts.relayer)).write.settle([ref(1), MAX_U96]), p.split, "YieldDeposited");
      assert.equal(await p.split.read.surplus(), 1n);
      await viem.assertions.revertWithCustomErrorWithArgs(
        (await splitAs(p, p.accounts.relayer)).write.settle([ref(2), 1n]),
        p.split,
        "SafeCastOverflowedUintDowncast",
        [96, MAX_U96 + 1n],
      );
      // A withdrawal lowers what is owed, after which the settlement fits.
      const [owner, op, proto] = expectedLegs(MAX_U96);
      await (await splitAs(p, p.accounts.stranger)).write.release([p.accounts.protocol.account.address]);
      await viem.assertions.emit((await splitAs(p, p.accounts.relayer)).write.settle([ref(2), 1n]), p.split, "YieldDeposited");
      assert.equal(await p.split.read.claimable([p.accounts.assetOwner.account.address]), owner + 1n);
      assert.equal(await p.split.read.claimable([p.accounts.operator.account.address]), op);
      assert.equal(await p.split.read.claimable([p.accounts.protocol.account.address]), 0n);
      assert.equal(await p.token.read.balanceOf([p.split.address]), owner + 1n + op);
      assert.equal(proto > 0n, true);
      // What is owed is now 2**96 - proto: a settlement of proto is one unit too many, proto - 1 fits exactly.
      await viem.assertions.revertWithCustomErrorWithArgs(fundAndSettle(p, ref(3), proto), p.split, "SafeCastOverflowedUintDowncast", [
        96,
        MAX_U96 + 1n,
      ]);
      await viem.assertions.emit((await splitAs(p, p.accounts.relayer)).write.settle([ref(3), proto - 1n]), p.split, "YieldDeposited");
      assert.equal(await p.split.read.surplus(), 1n);
    });

    it("a single huge settlement fails the total's cast, before any leg's: SafeCastOverflowedUintDowncast(96, owed)", async () => {
      const p = await networkHelpers.loadFixture(deployWithSettler);
      // 2**129 would give the asset owner 2**128 plus the rounding remainder; the total owed is checked first.
      assert.equal(expectedLegs(2n ** 129n)[0], 2n ** 128n + 1n);
      await viem.assertions.revertWithCustomErrorWithArgs(fundAndSettle(p, ref(1), 2n ** 129n), p.split, "SafeCastOverflowedUintDowncast", [
        96,
        2n ** 129n,
      ]);
      await viem.assertions.revertWithCustomErrorWithArgs(
        (await splitAs(p, p.accounts.relayer)).write.settle([ref(2), 2n ** 128n - 1n]),
        p.split,
        "SafeCastOverflowedUintDowncast",
        [96, 2n ** 128n - 1n],
      );
      assert.equal(await p.split.read.claimable([p.accounts.assetOwner.account.address]), 0n);
    });
  });
});
