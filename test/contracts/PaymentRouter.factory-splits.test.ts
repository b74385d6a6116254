// The router pays only through the splits its split factories created (one factory per token), without registering
// them: it derives the split of an order from its device id and token. An order can only pay its own device's split
// in its token, never a split the token's factory did not create; setSplitFactory and removeSplitFactory are the
// admin's, and setSplitFactory checks the factory.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { getAddress, toFunctionSelector, zeroAddress, type Address } from "viem";
import {
  LEG_BPS,
  RAILS,
  RAIL_ID,
  FIXTURE_DEVICE,
  USDC,
  assetKey,
  createFactorySplit,
  deviceKey,
  deployPayments,
  deploySplitFor,
  expectedLegs,
  factoryOf,
  makeOrder,
  networkHelpers,
  payOnRail,
  prepareRail,
  railPayer,
  routerAs,
  viem,
} from "./fixture.ts";

const DEVICE_1 = assetKey(FIXTURE_DEVICE);
const DEVICE_2_ASSET_OWNER = (await viem.getWalletClients())[9].account.address; // the fixture's stranger
const DEVICE_2 = assetKey("device-2", { assetOwner: DEVICE_2_ASSET_OWNER });

/** The fixture (device-1's split created) with device-2's split created too, for another asset owner. */
async function deployWithFactorySplits() {
  const p = await deployPayments();
  const split1 = p.split;
  const split2 = await createFactorySplit(p, deviceKey("device-2"), { assetOwner: DEVICE_2_ASSET_OWNER });
  return { ...p, split1, split2 };
}

describe("PaymentRouter and factory splits", () => {
  for (const rail of RAILS) {
    it(`pays a device's own split on the ${rail} rail and settles it 50/40/10`, async () => {
      const p = await networkHelpers.loadFixture(deployWithFactorySplits);
      const order = await makeOrder(p, USDC(10), { split: p.split1.address, deviceId: DEVICE_1 });
      const submit = await prepareRail(p, rail, order);
      await viem.assertions.emitWithArgs(submit(), p.router, "OrderPaid", [
        order.orderId,
        DEVICE_1,
        getAddress(railPayer(p, rail).account.address),
        getAddress(p.token.address),
        getAddress(p.split1.address),
        USDC(10),
        RAIL_ID[rail],
      ]);
      const [owner, op, proto] = expectedLegs(USDC(10));
      assert.equal(await p.split1.read.claimable([p.accounts.assetOwner.account.address]), owner);
      assert.equal(await p.split1.read.claimable([p.accounts.operator.account.address]), op);
      assert.equal(await p.split1.read.claimable([p.accounts.protocol.account.address]), proto);
      assert.equal(await p.token.read.balanceOf([p.split1.address]), USDC(10));
      assert.equal(await p.router.read.isPaid([order.orderId]), true);
    });
  }

  it("makes the split emit YieldDeposited with the order id and the router as depositor", async () => {
    const p = await networkHelpers.loadFixture(deployWithFactorySplits);
    const order = await makeOrder(p, USDC(3), { split: p.split2.address, deviceId: DEVICE_2 });
    await viem.assertions.emitWithArgs(payOnRail(p, "permit", order), p.split2, "YieldDeposited", [
      `0x${order.orderId.toString(16).padStart(64, "0")}`,
      getAddress(p.router.address),
      USDC(3),
      ...expectedLegs(USDC(3)),
    ]);
    assert.equal(await p.split2.read.claimable([p.accounts.stranger.account.address]), USDC(1.5));
  });

  it("refuses another device's split with TokenNotAllowed: a voucher cannot move a device's revenue elsewhere", async () => {
    const p = await networkHelpers.loadFixture(deployWithFactorySplits);
    for (const rail of RAILS) {
      const order = await makeOrder(p, USDC(1), { split: p.split2.address, deviceId: DEVICE_1 });
      await viem.assertions.revertWithCustomErrorWithArgs((await prepareRail(p, rail, order))(), p.router, "TokenNotAllowed", [
        getAddress(p.token.address),
        getAddress(p.split2.address),
      ]);
    }
    assert.equal(await p.token.read.balanceOf([p.split2.address]), 0n);
  });

  it("refuses a device's split that was not created yet with SplitNotCreated, and pays it once created", async () => {
    const p = await networkHelpers.loadFixture(deployWithFactorySplits);
    const device = assetKey("device-3");
    const split = await p.factory.read.predictSplit([device]);
    const order = await makeOrder(p, USDC(1), { split, deviceId: device });
    await viem.assertions.revertWithCustomErrorWithArgs(payOnRail(p, "cash", order), p.router, "SplitNotCreated", [split]);
    assert.equal(await p.router.read.isPaid([order.orderId]), false);
    await createFactorySplit(p, deviceKey("device-3"));
    await viem.assertions.emit(payOnRail(p, "cash", order), p.router, "OrderPaid");
  });

  it("refuses a factory split for an order in another token (the token is bound into the split's address)", async () => {
    const p = await networkHelpers.loadFixture(deployWithFactorySplits);
    const other = await viem.deployContract("TestStablecoin", ["Other USD", "OUSD", p.accounts.admin.account.address]);
    await other.write.mint([p.accounts.agent.account.address, USDC(10)]);
    const order = await makeOrder(p, USDC(1), { token: other.address, split: p.split1.address, deviceId: DEVICE_1 });
    await viem.assertions.revertWithCustomErrorWithArgs(payOnRail(p, "cash", order), p.router, "TokenNotAllowed", [
      getAddress(other.address),
      getAddress(p.split1.address),
    ]);
  });

  it("refuses with TokenNotAllowed a split its factory did not create, even an AssetSplit that would settle for it", async () => {
    const p = await networkHelpers.loadFixture(deployWithFactorySplits);
    // Another factory of the same token and router, with the same recipients and shares, creates device-1's split:
    // a real AssetSplit whose router is this one, so it would accept the router's settlement.
    const foreign = await deploySplitFor(p, p.token.address, { setFactory: false });
    assert.equal(await foreign.read.router(), getAddress(p.router.address));
    assert.notEqual(getAddress(foreign.address), getAddress(p.split1.address));
    const before = await p.token.read.balanceOf([p.accounts.agent.account.address]);
    for (const split of [foreign.address, p.router.address, p.token.address, p.accounts.stranger.account.address, zeroAddress]) {
      const order = await makeOrder(p, USDC(1), { split, deviceId: DEVICE_1 });
      await viem.assertions.revertWithCustomErrorWithArgs(payOnRail(p, "cash", order), p.router, "TokenNotAllowed", [
        getAddress(p.token.address),
        getAddress(split),
      ]);
      assert.equal(await p.router.read.isPaid([order.orderId]), false);
    }
    assert.equal(await p.token.read.balanceOf([foreign.address]), 0n);
    assert.equal(await p.token.read.balanceOf([p.accounts.agent.account.address]), before, "nothing moved");
    // The device's own split, the one the router derives, pays.
    await viem.assertions.emit(
      payOnRail(p, "cash", await makeOrder(p, USDC(1), { split: p.split1.address, deviceId: DEVICE_1 })),
      p.split1,
      "YieldDeposited",
    );
  });

  it("a paused factory split refuses payments; its router and the other splits keep paying", async () => {
    const p = await networkHelpers.loadFixture(deployWithFactorySplits);
    const { pauser } = p.accounts;
    await (await viem.getContractAt("AssetSplitFactory", p.factory.address, { client: { wallet: pauser } })).write.pauseSplit([DEVICE_1]);
    const order = await makeOrder(p, USDC(1), { split: p.split1.address, deviceId: DEVICE_1 });
    await viem.assertions.revertWithCustomErrorWithArgs(payOnRail(p, "cash", order), p.split1, "EnforcedPause", []);
    assert.equal(await p.router.read.isPaid([order.orderId]), false);
    await viem.assertions.emit(
      payOnRail(p, "cash", await makeOrder(p, USDC(1), { split: p.split2.address, deviceId: DEVICE_2 })),
      p.router,
      "OrderPaid",
    );
  });

  describe("setSplitFactory", () => {
    it("is only for the default admin", async () => {
      const p = await networkHelpers.loadFixture(deployWithFactorySplits);
      for (const caller of [p.accounts.stranger, p.accounts.pauser, p.accounts.quoteSigner]) {
        await viem.assertions.revertWithCustomErrorWithArgs(
          (await routerAs(p, caller)).write.setSplitFactory([zeroAddress]),
          p.router,
          "AccessControlUnauthorizedAccount",
          [getAddress(caller.account.address), `0x${"00".repeat(32)}`],
        );
      }
      assert.equal(await p.router.read.splitFactory(), getAddress(p.factory.address));
    });

    it("emits SplitFactorySet; removeSplitFactory stops the token's payments until its factory is set again", async () => {
      const p = await networkHelpers.loadFixture(deployWithFactorySplits);
      await viem.assertions.emitWithArgs(p.router.write.removeSplitFactory([p.token.address]), p.router, "SplitFactorySet", [
        zeroAddress,
        getAddress(p.token.address),
      ]);
      assert.equal(await p.router.read.splitFactory(), zeroAddress);
      assert.equal(await p.router.read.tokenSplitFactory([p.token.address]), zeroAddress);
      const order = await makeOrder(p, USDC(1), { split: p.split1.address, deviceId: DEVICE_1 });
      await viem.assertions.revertWithCustomErrorWithArgs(payOnRail(p, "cash", order), p.router, "TokenNotAllowed", [
        getAddress(p.token.address),
        getAddress(p.split1.address),
      ]);
      await viem.assertions.revertWithCustomErrorWithArgs(
        p.router.write.removeSplitFactory([p.token.address]),
        p.router,
        "NoSplitFactory",
        [getAddress(p.token.address)],
      );
      await viem.assertions.emitWithArgs(p.router.write.setSplitFactory([p.factory.address]), p.router, "SplitFactorySet", [
        getAddress(p.factory.address),
        getAddress(p.token.address),
      ]);
      await viem.assertions.emit(payOnRail(p, "cash", order), p.router, "OrderPaid");
    });

    it("refuses address zero with InvalidSplitFactory, and removeSplitFactory is only for the default admin", async () => {
      const p = await networkHelpers.loadFixture(deployWithFactorySplits);
      await viem.assertions.revertWithCustomErrorWithArgs(p.router.write.setSplitFactory([zeroAddress]), p.router, "InvalidSplitFactory", [
        zeroAddress,
      ]);
      await viem.assertions.revertWithCustomErrorWithArgs(
        (await routerAs(p, p.accounts.stranger)).write.removeSplitFactory([p.token.address]),
        p.router,
        "AccessControlUnauthorizedAccount",
        [getAddress(p.accounts.stranger.account.address), `0x${"00".repeat(32)}`],
      );
      assert.equal(await p.router.read.tokenSplitFactory([p.token.address]), getAddress(p.factory.address));
    });

    it("pays a second token through its own factory beside the main one; each token's payments stop alone", async () => {
      const p = await networkHelpers.loadFixture(deployWithFactorySplits);
      const plain = await viem.deployContract("PlainStablecoin", ["Tether USD (test)", "USDT", p.accounts.admin.account.address]);
      await plain.write.mint([p.accounts.agent.account.address, USDC(100)]);
      await (
        await viem.getContractAt("PlainStablecoin", plain.address, { client: { wallet: p.accounts.agent } })
      ).write.approve([p.router.address, USDC(100)]);
      const plainSplit = await deploySplitFor(p, plain.address);
      const plainFactory = await plainSplit.read.factory();
      // The first factory stays the main one; the second token's is looked up by token.
      assert.equal(await p.router.read.splitFactory(), getAddress(p.factory.address));
      assert.equal(await p.router.read.tokenSplitFactory([plain.address]), getAddress(plainFactory));
      assert.equal(await p.router.read.tokenSplitFactory([p.token.address]), getAddress(p.factory.address));
      const plainOrder = () => makeOrder(p, USDC(10), { token: plain.address, split: plainSplit.address, deviceId: DEVICE_1 });
      const mainOrder = () => makeOrder(p, USDC(1), { split: p.split1.address, deviceId: DEVICE_1 });
      await viem.assertions.emit(payOnRail(p, "cash", await plainOrder()), p.router, "OrderPaid");
      await viem.assertions.emit(payOnRail(p, "cash", await mainOrder()), p.router, "OrderPaid");
      const [owner, op, proto] = expectedLegs(USDC(10));
      assert.deepEqual(
        await Promise.all(
          [p.accounts.assetOwner, p.accounts.operator, p.accounts.protocol].map((w) => plainSplit.read.claimable([w.account.address])),
        ),
        [owner, op, proto],
        "the second token's split settles 50/40/10 in its token",
      );
      // Neither token pays through the other's split, nor through an address derived from the other factory.
      for (const [token, split] of [
        [plain.address, p.split1.address],
        [p.token.address, plainSplit.address],
      ] as const) {
        await viem.assertions.revertWithCustomErrorWithArgs(
          payOnRail(p, "cash", await makeOrder(p, USDC(1), { token, split, deviceId: DEVICE_1 })),
          p.router,
          "TokenNotAllowed",
          [getAddress(token), getAddress(split)],
        );
      }
      // Removing the second token stops its payments only.
      await p.router.write.removeSplitFactory([plain.address]);
      await viem.assertions.revertWithCustomErrorWithArgs(payOnRail(p, "cash", await plainOrder()), p.router, "TokenNotAllowed", [
        getAddress(plain.address),
        getAddress(plainSplit.address),
      ]);
      await viem.assertions.emit(payOnRail(p, "cash", await mainOrder()), p.router, "OrderPaid");
      // Removing the main one stops its token only; the next factory set becomes the main one.
      await p.router.write.setSplitFactory([plainFactory]);
      await p.router.write.removeSplitFactory([p.token.address]);
      assert.equal(await p.router.read.splitFactory(), zeroAddress);
      await viem.assertions.emit(payOnRail(p, "cash", await plainOrder()), p.router, "OrderPaid");
      await viem.assertions.revertWithCustomError(payOnRail(p, "cash", await mainOrder()), p.router, "TokenNotAllowed");
      await p.router.write.setSplitFactory([p.factory.address]);
      assert.equal(await p.router.read.splitFactory(), getAddress(p.factory.address));
      await viem.assertions.emit(payOnRail(p, "cash", await mainOrder()), p.router, "OrderPaid");
      await viem.assertions.emit(payOnRail(p, "cash", await plainOrder()), p.router, "OrderPaid");
    });

    it("a new factory replaces the old one: the old factory's splits stop being payable, their credits stay", async () => {
      const p = await networkHelpers.loadFixture(deployWithFactorySplits);
      await payOnRail(p, "cash", await makeOrder(p, USDC(10), { split: p.split1.address, deviceId: DEVICE_1 }));
      const { admin, protocol, relayer } = p.accounts;
      const next = await viem.deployContract("AssetSplitFactory", [
        p.token.address,
        p.router.address,
        protocol.account.address,
        [...LEG_BPS],
        admin.account.address,
        0,
        0,
      ]);
      await p.router.write.setSplitFactory([next.address]);
      const order = await makeOrder(p, USDC(1), { split: p.split1.address, deviceId: DEVICE_1 });
      await viem.assertions.revertWithCustomErrorWithArgs(payOnRail(p, "cash", order), p.router, "TokenNotAllowed", [
        getAddress(p.token.address),
        getAddress(p.split1.address),
      ]);
      const asCreator = await viem.getContractAt("AssetSplitFactory", next.address, { client: { wallet: relayer } });
      await asCreator.write.createSplit([
        deviceKey(FIXTURE_DEVICE),
        p.accounts.assetOwner.account.address,
        p.accounts.operator.account.address,
      ]);
      const split = await next.read.predictSplit([DEVICE_1]);
      await viem.assertions.emit(payOnRail(p, "cash", await makeOrder(p, USDC(1), { split, deviceId: DEVICE_1 })), p.router, "OrderPaid");
      await (
        await viem.getContractAt("AssetSplit", p.split1.address, { client: { wallet: p.accounts.operator } })
      ).write.withdraw([p.accounts.operator.account.address]);
      assert.equal(await p.token.read.balanceOf([p.accounts.operator.account.address]), USDC(4));
    });

    it("reverts with InvalidSplitFactory for a factory that settles through another router", async () => {
      const p = await networkHelpers.loadFixture(deployWithFactorySplits);
      const otherRouter = await viem.deployContract("PaymentRouter", [p.accounts.admin.account.address, 0]);
      const foreign = await viem.deployContract("AssetSplitFactory", [
        p.token.address,
        otherRouter.address,
        p.accounts.protocol.account.address,
        [...LEG_BPS],
        p.accounts.admin.account.address,
        0,
        0,
      ]);
      await viem.assertions.revertWithCustomErrorWithArgs(
        p.router.write.setSplitFactory([foreign.address]),
        p.router,
        "InvalidSplitFactory",
        [getAddress(foreign.address)],
      );
      assert.equal(await p.router.read.splitFactory(), getAddress(p.factory.address));
    });

    it("reverts with InvalidSplitFactory for a factory whose implementation is not its first creation", async () => {
      const p = await networkHelpers.loadFixture(deployWithFactorySplits);
      const impostor = await viem.deployContract("MisplacedSplitFactory", [p.router.address, p.token.address]);
      assert.equal(await impostor.read.router(), getAddress(p.router.address));
      await viem.assertions.revertWithCustomErrorWithArgs(
        p.router.write.setSplitFactory([impostor.address]),
        p.router,
        "InvalidSplitFactory",
        [getAddress(impostor.address)],
      );
    });

    /** A factory of `token` for the fixture's router (with the fixture device's split), not set on the router. */
    async function factoryOfToken(p: Awaited<ReturnType<typeof deployWithFactorySplits>>, token: Address) {
      return factoryOf(await deploySplitFor(p, token, { setFactory: false }));
    }

    /** `setSplitFactory(factory)` reverts with TokenAcceptsInvalidSignature(token), and the router keeps its factory. */
    async function assertRefused(p: Awaited<ReturnType<typeof deployWithFactorySplits>>, factory: Address, token: Address) {
      await viem.assertions.revertWithCustomErrorWithArgs(
        p.router.write.setSplitFactory([factory]),
        p.router,
        "TokenAcceptsInvalidSignature",
        [getAddress(token)],
      );
      assert.equal(await p.router.read.splitFactory(), getAddress(p.factory.address));
    }

    it("refuses with TokenAcceptsInvalidSignature a factory whose token returns from a permit or authorization it cannot have checked", async () => {
      const p = await networkHelpers.loadFixture(deployWithFactorySplits);
      // A fallback that accepts any call (WETH9's), and a permit() that checks nothing, whatever it does with the nonce.
      const phantom = await viem.deployContract("PhantomPermitToken");
      await assertRefused(p, (await factoryOfToken(p, phantom.address)).address, phantom.address);
      const noop = await viem.deployContract("NoopPermitToken");
      const noopFactory = await factoryOfToken(p, noop.address);
      for (const step of [0n, 1n, 2n]) {
        await noop.write.setNonceStep([step]);
        await assertRefused(p, noopFactory.address, noop.address);
      }
      // Each of the four calls the gasless rails make is checked on its own: a token that returns from any one of
      // them without checking is refused.
      const selective = await viem.deployContract("SelectiveFallbackToken");
      const selectiveFactory = await factoryOfToken(p, selective.address);
      for (const signature of [
        "permit(address,address,uint256,uint256,uint8,bytes32,bytes32)",
        "permit(address,address,uint256,uint256,bytes)",
        "receiveWithAuthorization(address,address,uint256,uint256,uint256,bytes32,uint8,bytes32,bytes32)",
        "receiveWithAuthorization(address,address,uint256,uint256,uint256,bytes32,bytes)",
      ]) {
        await selective.write.setAccepted([toFunctionSelector(signature)]);
        await assertRefused(p, selectiveFactory.address, selective.address);
      }
      // Control: the same token accepting none of them is taken.
      await selective.write.setAccepted(["0x00000000"]);
      await viem.assertions.emitWithArgs(p.router.write.setSplitFactory([selectiveFactory.address]), p.router, "SplitFactorySet", [
        getAddress(selectiveFactory.address),
        getAddress(selective.address),
      ]);
    });

    it("refuses with TokenAcceptsInvalidSignature a factory whose token has no code (every call to it returns)", async () => {
      const p = await networkHelpers.loadFixture(deployWithFactorySplits);
      const account = p.accounts.stranger.account.address;
      await assertRefused(p, (await factoryOfToken(p, account)).address, account);
    });

    it("takes a factory whose token checks its permits and authorizations, or has neither, and the check moves nothing", async () => {
      const p = await networkHelpers.loadFixture(deployWithFactorySplits);
      const usdc = await viem.deployContract("RehearsalUsdc", [p.accounts.admin.account.address]); // EIP-2612 and EIP-3009
      const plain = await viem.deployContract("PlainStablecoin", ["Tether USD (test)", "USDT", p.accounts.admin.account.address]);
      for (const token of [p.token.address, usdc.address, plain.address]) {
        const factory = await factoryOfToken(p, token);
        await viem.assertions.emitWithArgs(p.router.write.setSplitFactory([factory.address]), p.router, "SplitFactorySet", [
          getAddress(factory.address),
          getAddress(token),
        ]);
        assert.equal(await p.router.read.tokenSplitFactory([token]), getAddress(factory.address));
        const erc20 = await viem.getContractAt("TestStablecoin", token);
        assert.equal(await erc20.read.allowance([p.router.address, p.router.address]), 0n);
      }
      assert.equal(await p.token.read.nonces([p.router.address]), 0n);
      assert.equal(await usdc.read.nonces([p.router.address]), 0n);
      assert.equal(await usdc.read.authorizationState([p.router.address, `0x${"00".repeat(32)}`]), false);
    });

    it("reverts for an address that is not a factory", async () => {
      const p = await networkHelpers.loadFixture(deployWithFactorySplits);
      await viem.assertions.revert(p.router.write.setSplitFactory([p.accounts.stranger.account.address]));
      await viem.assertions.revert(p.router.write.setSplitFactory([p.split.address]));
    });
  });
});
