import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { getAddress, hashTypedData, keccak256, toHex, zeroAddress, zeroHash } from "viem";
import { orderTypedData, paymentOrderTypes, type PaymentOrder } from "../../sdk/src/payment-order.ts";
import {
  MAX_UINT256,
  RAILS,
  RAIL_ID,
  USDC,
  chainId,
  deployPayments,
  makeOrder,
  networkHelpers,
  prepareRail,
  publicClient,
  railPayer,
  routerAs,
  tokenAs,
  viem,
} from "./fixture.ts";

const DEFAULT_ADMIN_ROLE = zeroHash;

describe("PaymentRouter administration", () => {
  describe("recoverERC20", () => {
    it("sends tokens transferred to the router by mistake to `to` and emits TokensRecovered", async () => {
      const p = await networkHelpers.loadFixture(deployPayments);
      const { payer, stranger } = p.accounts;
      // A payer sends 5 USDC to the router by mistake.
      await (await tokenAs(p, payer)).write.transfer([p.router.address, USDC(5)]);
      assert.equal(await p.token.read.balanceOf([p.router.address]), USDC(5));

      await viem.assertions.emitWithArgs(
        p.router.write.recoverERC20([p.token.address, payer.account.address, USDC(3)]),
        p.router,
        "TokensRecovered",
        [getAddress(p.token.address), getAddress(payer.account.address), USDC(3)],
      );
      assert.equal(await p.token.read.balanceOf([p.router.address]), USDC(2));
      assert.equal(await p.token.read.balanceOf([payer.account.address]), USDC(998));

      await viem.assertions.emitWithArgs(
        p.router.write.recoverERC20([p.token.address, stranger.account.address, USDC(2)]),
        p.router,
        "TokensRecovered",
        [getAddress(p.token.address), getAddress(stranger.account.address), USDC(2)],
      );
      assert.equal(await p.token.read.balanceOf([p.router.address]), 0n);
      assert.equal(await p.token.read.balanceOf([stranger.account.address]), USDC(2));
      assert.equal(await p.token.read.totalSupply(), USDC(2_000));
    });

    it("recovers any ERC-20, not only the one its splits settle in", async () => {
      const p = await networkHelpers.loadFixture(deployPayments);
      const other = await viem.deployContract("BlocklistToken");
      await other.write.mint([p.router.address, 42n]);
      await viem.assertions.emitWithArgs(
        p.router.write.recoverERC20([other.address, p.accounts.stranger.account.address, 42n]),
        p.router,
        "TokensRecovered",
        [getAddress(other.address), getAddress(p.accounts.stranger.account.address), 42n],
      );
      assert.equal(await other.read.balanceOf([p.accounts.stranger.account.address]), 42n);
      assert.equal(await other.read.balanceOf([p.router.address]), 0n);
    });

    it("is only for the default admin", async () => {
      const p = await networkHelpers.loadFixture(deployPayments);
      await p.token.write.mint([p.router.address, USDC(5)]);
      for (const caller of [p.accounts.stranger, p.accounts.pauser, p.accounts.agent, p.accounts.quoteSigner, p.accounts.payer]) {
        await viem.assertions.revertWithCustomErrorWithArgs(
          (await routerAs(p, caller)).write.recoverERC20([p.token.address, caller.account.address, USDC(5)]),
          p.router,
          "AccessControlUnauthorizedAccount",
          [getAddress(caller.account.address), DEFAULT_ADMIN_ROLE],
        );
      }
      assert.equal(await p.token.read.balanceOf([p.router.address]), USDC(5));
      assert.equal(await p.token.read.balanceOf([p.accounts.stranger.account.address]), 0n);
    });

    it("moves only the router's own balance, never a payer's allowance to the router", async () => {
      const p = await networkHelpers.loadFixture(deployPayments);
      const { payer, admin } = p.accounts;
      await (await tokenAs(p, payer)).write.approve([p.router.address, MAX_UINT256]);
      await viem.assertions.revertWithCustomErrorWithArgs(
        p.router.write.recoverERC20([p.token.address, admin.account.address, 1n]),
        p.token,
        "ERC20InsufficientBalance",
        [getAddress(p.router.address), 0n, 1n],
      );
      await p.token.write.mint([p.router.address, USDC(1)]);
      await viem.assertions.revertWithCustomErrorWithArgs(
        p.router.write.recoverERC20([p.token.address, admin.account.address, USDC(1) + 1n]),
        p.token,
        "ERC20InsufficientBalance",
        [getAddress(p.router.address), USDC(1), USDC(1) + 1n],
      );
      assert.equal(await p.token.read.balanceOf([payer.account.address]), USDC(1_000));
      assert.equal(await p.token.read.allowance([payer.account.address, p.router.address]), MAX_UINT256);
      assert.equal(await p.token.read.balanceOf([admin.account.address]), 0n);
    });
  });

  describe("pause and unpause", () => {
    it("are only for the pauser role", async () => {
      const p = await networkHelpers.loadFixture(deployPayments);
      const pauserRole = await p.router.read.PAUSER_ROLE();
      for (const caller of [p.accounts.stranger, p.accounts.admin]) {
        await viem.assertions.revertWithCustomErrorWithArgs(
          (await routerAs(p, caller)).write.pause(),
          p.router,
          "AccessControlUnauthorizedAccount",
          [getAddress(caller.account.address), pauserRole],
        );
      }
      await (await routerAs(p, p.accounts.pauser)).write.pause();
      await viem.assertions.revertWithCustomErrorWithArgs(
        (await routerAs(p, p.accounts.stranger)).write.unpause(),
        p.router,
        "AccessControlUnauthorizedAccount",
        [getAddress(p.accounts.stranger.account.address), pauserRole],
      );
      assert.equal(await p.router.read.paused(), true);
    });

    it("emit Paused/Unpaused and refuse to pause twice or unpause when not paused", async () => {
      const p = await networkHelpers.loadFixture(deployPayments);
      const asPauser = await routerAs(p, p.accounts.pauser);
      const pauser = getAddress(p.accounts.pauser.account.address);
      await viem.assertions.revertWithCustomErrorWithArgs(asPauser.write.unpause(), p.router, "ExpectedPause", []);
      await viem.assertions.emitWithArgs(asPauser.write.pause(), p.router, "Paused", [pauser]);
      assert.equal(await p.router.read.paused(), true);
      await viem.assertions.revertWithCustomErrorWithArgs(asPauser.write.pause(), p.router, "EnforcedPause", []);
      await viem.assertions.emitWithArgs(asPauser.write.unpause(), p.router, "Unpaused", [pauser]);
      assert.equal(await p.router.read.paused(), false);
    });

    it("every pay function reverts with EnforcedPause while paused and works again after unpause", async () => {
      const p = await networkHelpers.loadFixture(deployPayments);
      const asPauser = await routerAs(p, p.accounts.pauser);
      await asPauser.write.pause();
      const orders = new Map<string, PaymentOrder>();
      for (const rail of RAILS) {
        const order = await makeOrder(p, USDC(1));
        orders.set(rail, order);
        await viem.assertions.revertWithCustomErrorWithArgs((await prepareRail(p, rail, order))(), p.router, "EnforcedPause", []);
        assert.equal(await p.router.read.isPaid([order.orderId]), false);
      }
      assert.equal(await p.token.read.balanceOf([p.split.address]), 0n);

      await asPauser.write.unpause();
      for (const rail of RAILS) {
        const order = orders.get(rail)!;
        await viem.assertions.emitWithArgs((await prepareRail(p, rail, order))(), p.router, "OrderPaid", [
          order.orderId,
          order.deviceId,
          getAddress(railPayer(p, rail).account.address),
          getAddress(p.token.address),
          getAddress(p.split.address),
          USDC(1),
          RAIL_ID[rail],
        ]);
      }
      assert.equal(await p.token.read.balanceOf([p.split.address]), USDC(3));
    });

    it("views and administration keep working while paused", async () => {
      const p = await networkHelpers.loadFixture(deployPayments);
      await (await routerAs(p, p.accounts.pauser)).write.pause();
      const order = await makeOrder(p, USDC(1));
      assert.equal(await p.router.read.isPaid([order.orderId]), false);
      assert.equal(BigInt(await p.router.read.hashOrder([order])), await p.router.read.permitDeadline([order]));
      await viem.assertions.emit(p.router.write.setSplitFactory([p.factory.address]), p.router, "SplitFactorySet");
      await p.token.write.mint([p.router.address, 1n]);
      await viem.assertions.emit(
        p.router.write.recoverERC20([p.token.address, p.accounts.admin.account.address, 1n]),
        p.router,
        "TokensRecovered",
      );
    });
  });

  describe("EIP-712 order hashing", () => {
    const edgeOrders = (p: { token: { address: `0x${string}` }; split: { address: `0x${string}` } }): PaymentOrder[] => [
      { orderId: 0n, deviceId: zeroHash, token: p.token.address, split: p.split.address, amount: 1n, expiry: 0n },
      {
        orderId: 2n ** 256n - 1n,
        deviceId: `0x${"ff".repeat(32)}`,
        token: p.token.address,
        split: p.split.address,
        amount: 2n ** 256n - 1n,
        expiry: 2n ** 64n - 1n,
      },
      { orderId: 42n, deviceId: keccak256(toHex("device-42")), token: zeroAddress, split: zeroAddress, amount: 0n, expiry: 1n },
    ];

    it("hashOrder equals viem's hashTypedData of the SDK's orderTypedData", async () => {
      const p = await networkHelpers.loadFixture(deployPayments);
      for (const order of [await makeOrder(p, USDC(12.34)), ...edgeOrders(p)]) {
        assert.equal(await p.router.read.hashOrder([order]), hashTypedData(orderTypedData(chainId, p.router.address, order)));
      }
    });

    it("permitDeadline is the order digest as an integer", async () => {
      const p = await networkHelpers.loadFixture(deployPayments);
      for (const order of [await makeOrder(p, USDC(1)), ...edgeOrders(p)]) {
        const digest = await p.router.read.hashOrder([order]);
        assert.equal(await p.router.read.permitDeadline([order]), BigInt(digest));
      }
    });

    it("the digest changes with every field of the order", async () => {
      const p = await networkHelpers.loadFixture(deployPayments);
      const base = await makeOrder(p, USDC(1));
      const variants: PaymentOrder[] = [
        base,
        { ...base, orderId: base.orderId + 1n },
        { ...base, deviceId: zeroHash },
        { ...base, token: p.split.address },
        { ...base, split: p.token.address },
        { ...base, amount: base.amount + 1n },
        { ...base, expiry: base.expiry + 1n },
      ];
      const digests = new Set<string>();
      for (const order of variants) digests.add(await p.router.read.hashOrder([order]));
      assert.equal(digests.size, variants.length);
    });

    it("PAYMENT_ORDER_TYPEHASH is the keccak256 of the encodeType built from the SDK's paymentOrderTypes", async () => {
      const p = await networkHelpers.loadFixture(deployPayments);
      const encodeType = `PaymentOrder(${paymentOrderTypes.PaymentOrder.map((f) => `${f.type} ${f.name}`).join(",")})`;
      assert.equal(encodeType, "PaymentOrder(uint256 orderId,bytes32 deviceId,address token,address split,uint256 amount,uint64 expiry)");
      assert.equal(await p.router.read.PAYMENT_ORDER_TYPEHASH(), keccak256(toHex(encodeType)));
    });

    it("the EIP-712 domain is PaymentRouter v1 on this chain at this address", async () => {
      const p = await networkHelpers.loadFixture(deployPayments);
      const [fields, name, version, domainChainId, verifyingContract, salt, extensions] = await p.router.read.eip712Domain();
      assert.equal(fields, "0x0f");
      assert.equal(name, "PaymentRouter");
      assert.equal(version, "1");
      assert.equal(domainChainId, BigInt(chainId));
      assert.equal(verifyingContract, getAddress(p.router.address));
      assert.equal(salt, zeroHash);
      assert.deepEqual(extensions, []);
    });

    it("role identifiers are the keccak256 of their names", async () => {
      const p = await networkHelpers.loadFixture(deployPayments);
      assert.equal(await p.router.read.QUOTE_SIGNER_ROLE(), keccak256(toHex("QUOTE_SIGNER_ROLE")));
      assert.equal(await p.router.read.AGENT_ROLE(), keccak256(toHex("AGENT_ROLE")));
      assert.equal(await p.router.read.PAUSER_ROLE(), keccak256(toHex("PAUSER_ROLE")));
      assert.equal(await p.router.read.DEFAULT_ADMIN_ROLE(), DEFAULT_ADMIN_ROLE);
    });
  });

  describe("default admin transfer", () => {
    it("is two-step: begin by the admin, accept by the new admin", async () => {
      const p = await networkHelpers.loadFixture(deployPayments);
      const { admin, stranger } = p.accounts;
      const newAdmin = getAddress(stranger.account.address);
      assert.equal(await p.router.read.defaultAdmin(), getAddress(admin.account.address));

      const hash = await p.router.write.beginDefaultAdminTransfer([stranger.account.address]);
      const receipt = await publicClient.waitForTransactionReceipt({ hash });
      const { timestamp } = await publicClient.getBlock({ blockNumber: receipt.blockNumber });
      const [pending, schedule] = await p.router.read.pendingDefaultAdmin();
      assert.equal(pending, newAdmin);
      assert.equal(schedule, Number(timestamp), "delay 0: accept possible right after");
      // Nothing changed yet.
      assert.equal(await p.router.read.hasRole([DEFAULT_ADMIN_ROLE, admin.account.address]), true);
      assert.equal(await p.router.read.hasRole([DEFAULT_ADMIN_ROLE, newAdmin]), false);

      await viem.assertions.revertWithCustomErrorWithArgs(
        (await routerAs(p, p.accounts.pauser)).write.acceptDefaultAdminTransfer(),
        p.router,
        "AccessControlInvalidDefaultAdmin",
        [getAddress(p.accounts.pauser.account.address)],
      );

      const asNewAdmin = await routerAs(p, stranger);
      await viem.assertions.emitWithArgs(asNewAdmin.write.acceptDefaultAdminTransfer(), p.router, "RoleGranted", [
        DEFAULT_ADMIN_ROLE,
        newAdmin,
        newAdmin,
      ]);
      assert.equal(await p.router.read.defaultAdmin(), newAdmin);
      assert.equal(await p.router.read.hasRole([DEFAULT_ADMIN_ROLE, admin.account.address]), false);

      // The old admin lost its powers, the new one has them.
      await viem.assertions.revertWithCustomErrorWithArgs(
        p.router.write.setSplitFactory([p.factory.address]),
        p.router,
        "AccessControlUnauthorizedAccount",
        [getAddress(admin.account.address), DEFAULT_ADMIN_ROLE],
      );
      await viem.assertions.emit(asNewAdmin.write.setSplitFactory([p.factory.address]), p.router, "SplitFactorySet");
    });

    it("cannot be shortcut with grantRole and enforces the configured delay", async () => {
      const p = await networkHelpers.loadFixture(deployPayments);
      const { admin, stranger } = p.accounts;
      await viem.assertions.revertWithCustomErrorWithArgs(
        p.router.write.grantRole([DEFAULT_ADMIN_ROLE, stranger.account.address]),
        p.router,
        "AccessControlEnforcedDefaultAdminRules",
        [],
      );

      const delay = 3n * 86_400n;
      const router = await viem.deployContract("PaymentRouter", [admin.account.address, Number(delay)]);
      await router.write.beginDefaultAdminTransfer([stranger.account.address]);
      const [, schedule] = await router.read.pendingDefaultAdmin();
      const asStranger = await viem.getContractAt("PaymentRouter", router.address, { client: { wallet: stranger } });
      await viem.assertions.revertWithCustomErrorWithArgs(
        asStranger.write.acceptDefaultAdminTransfer(),
        router,
        "AccessControlEnforcedDefaultAdminDelay",
        [schedule],
      );
      await networkHelpers.time.increaseTo(schedule);
      await asStranger.write.acceptDefaultAdminTransfer();
      assert.equal(await router.read.defaultAdmin(), getAddress(stranger.account.address));
    });

    it("can be cancelled by the current admin", async () => {
      const p = await networkHelpers.loadFixture(deployPayments);
      const { stranger } = p.accounts;
      await p.router.write.beginDefaultAdminTransfer([stranger.account.address]);
      await p.router.write.cancelDefaultAdminTransfer();
      assert.deepEqual(await p.router.read.pendingDefaultAdmin(), [zeroAddress, 0]);
      await viem.assertions.revertWithCustomErrorWithArgs(
        (await routerAs(p, stranger)).write.acceptDefaultAdminTransfer(),
        p.router,
        "AccessControlInvalidDefaultAdmin",
        [getAddress(stranger.account.address)],
      );
    });
  });
});
