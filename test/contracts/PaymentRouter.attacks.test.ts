// Attacks on the router and the split, written as tests: each one must fail for the attacker.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { concat, encodeFunctionData, getAddress, keccak256, toHex, zeroAddress, zeroHash, type Address, type Hex } from "viem";
import { permitSignatureParts, permitTypedData, type PaymentOrder } from "../../sdk/src/payment-order.ts";
import {
  DUMMY_SIGNATURE,
  FIXTURE_DEVICE,
  MAX_UINT256,
  RAILS,
  RAIL_ID,
  USDC,
  assetKey,
  chainId,
  createFactorySplit,
  deviceKey,
  deployPayments,
  deploySplitFor,
  expectedLegs,
  factoryAs,
  factoryOf,
  grantDepositor,
  makeOrder,
  networkHelpers,
  payOnRail,
  permitPayment,
  prepareRail,
  publicClient,
  railPayer,
  routerAs,
  signPermit,
  signVoucher,
  splitAs,
  tokenAs,
  viem,
  type Payments,
  type RailName,
  type Wallet,
} from "./fixture.ts";

/** A genuine order for `amount` of the attacker's own device, through that device's split (created here). */
async function attackerOrder(p: Payments, amount: bigint) {
  const deviceId = assetKey("attacker-device");
  const split = (await p.factory.read.isSplitCreated([deviceId]))
    ? await p.factory.read.predictSplit([deviceId])
    : (await createFactorySplit(p, deviceKey("attacker-device"))).address;
  return makeOrder(p, amount, { deviceId, split });
}

/** Mints `amount` of a test token (any of them: they share `mint(address,uint256)`) to the payer and the agent,
 * and lets the agent's float pay through the router. */
async function fund(p: Payments, token: Address, amount: bigint) {
  const erc20 = await viem.getContractAt("TestStablecoin", token);
  await erc20.write.mint([p.accounts.payer.account.address, amount]);
  await erc20.write.mint([p.accounts.agent.account.address, amount]);
  const asAgent = await viem.getContractAt("TestStablecoin", token, { client: { wallet: p.accounts.agent } });
  await asAgent.write.approve([p.router.address, MAX_UINT256]);
  return erc20;
}

function tokenOf(address: Address, wallet?: Wallet) {
  return viem.getContractAt("TestStablecoin", address, wallet ? { client: { wallet } } : undefined);
}

/** The relayer's payWithPermit call for `order` paid by `payer` with the permit parts `v, r, s`. */
async function relayPermit(p: Payments, order: PaymentOrder, voucher: Hex, payer: Address, signature: Hex) {
  return (await routerAs(p, p.accounts.relayer)).write.payWithPermit([order, voucher, payer, signature]);
}

describe("PaymentRouter attacks", () => {
  describe("(1) a front-run permit", () => {
    it("does not stop the relayer: payWithPermit pays the order on the allowance the permit created", async () => {
      const p = await networkHelpers.loadFixture(deployPayments);
      const { payer, stranger, assetOwner } = p.accounts;
      const order = await makeOrder(p, USDC(4));
      const args = await permitPayment(p, order);
      const [, , owner, signature] = args;
      const { v, r, s } = permitSignatureParts(signature);

      // Someone watching the mempool submits the payer's permit straight to the token.
      const deadline = await p.router.read.permitDeadline([order]);
      await (await tokenAs(p, stranger)).write.permit([owner, p.router.address, order.amount, deadline, v, r, s]);
      assert.equal(await p.token.read.allowance([payer.account.address, p.router.address]), USDC(4));
      assert.equal(await p.token.read.nonces([payer.account.address]), 1n);

      await viem.assertions.emitWithArgs((await routerAs(p, p.accounts.relayer)).write.payWithPermit(args), p.router, "OrderPaid", [
        order.orderId,
        order.deviceId,
        getAddress(payer.account.address),
        getAddress(p.token.address),
        getAddress(p.split.address),
        USDC(4),
        RAIL_ID.permit,
      ]);
      assert.equal(await p.token.read.balanceOf([payer.account.address]), USDC(996));
      assert.equal(await p.token.read.balanceOf([p.split.address]), USDC(4));
      assert.equal(await p.token.read.allowance([payer.account.address, p.router.address]), 0n);
      assert.equal(await p.split.read.claimable([assetOwner.account.address]), USDC(2));
      assert.equal(await p.token.read.balanceOf([stranger.account.address]), 0n);
    });

    it("is not taken as consent any more once the payer changed the allowance it set: no payment from a standing approval", async () => {
      // The payer cancels after the front-run by approving the router for something else (here: a standing
      // approval of 500 for the approval rail). The front-run permit must not pay the order from that approval.
      const p = await networkHelpers.loadFixture(deployPayments);
      const { payer, stranger } = p.accounts;
      const order = await makeOrder(p, USDC(4));
      const args = await permitPayment(p, order);
      const [, , owner, signature] = args;
      const { v, r, s } = permitSignatureParts(signature);
      const deadline = await p.router.read.permitDeadline([order]);
      await (await tokenAs(p, stranger)).write.permit([owner, p.router.address, order.amount, deadline, v, r, s]);
      for (const allowance of [USDC(500), 0n, USDC(4) - 1n]) {
        await (await tokenAs(p, payer)).write.approve([p.router.address, allowance]);
        await viem.assertions.revertWithCustomErrorWithArgs(
          (await routerAs(p, p.accounts.relayer)).write.payWithPermit(args),
          p.router,
          "InvalidPermit",
          [getAddress(payer.account.address)],
        );
      }
      assert.equal(await p.token.read.balanceOf([payer.account.address]), USDC(1_000));
      assert.equal(await p.router.read.isPaid([order.orderId]), false);
      // Set back to exactly the permit's amount, the front-run permit pays again.
      await (await tokenAs(p, payer)).write.approve([p.router.address, USDC(4)]);
      await viem.assertions.emit((await routerAs(p, p.accounts.relayer)).write.payWithPermit(args), p.router, "OrderPaid");
    });

    it("known limitation: once the payer signs another permit, the front-run one is no longer recognised", async () => {
      // _permitWasConsumed only looks at the payer's latest nonce. The funds stay safe (InvalidPermit) and the
      // allowance stays with the router; the order has to be paid another way (here: the payer's own pay()).
      const p = await networkHelpers.loadFixture(deployPayments);
      const { payer, stranger } = p.accounts;
      const order = await makeOrder(p, USDC(4));
      const args = await permitPayment(p, order);
      const [, voucher, owner, signature] = args;
      const { v, r, s } = permitSignatureParts(signature);
      const deadline = await p.router.read.permitDeadline([order]);
      await (await tokenAs(p, stranger)).write.permit([owner, p.router.address, order.amount, deadline, v, r, s]);

      // The payer then signs an unrelated permit (nonce 1, another spender), which gets submitted.
      const unrelated = permitSignatureParts(
        await payer.signTypedData({
          account: payer.account,
          ...permitTypedData({
            tokenDomain: { name: await p.token.read.name(), version: "1", chainId, verifyingContract: p.token.address },
            owner: payer.account.address,
            spender: stranger.account.address,
            value: 1n,
            nonce: 1n,
            deadline: MAX_UINT256,
          }),
        }),
      );
      await p.token.write.permit([payer.account.address, stranger.account.address, 1n, MAX_UINT256, unrelated.v, unrelated.r, unrelated.s]);

      await viem.assertions.revertWithCustomErrorWithArgs(
        (await routerAs(p, p.accounts.relayer)).write.payWithPermit(args),
        p.router,
        "InvalidPermit",
        [getAddress(payer.account.address)],
      );
      assert.equal(await p.token.read.allowance([payer.account.address, p.router.address]), USDC(4));
      await viem.assertions.emit((await routerAs(p, payer)).write.pay([order, voucher]), p.router, "OrderPaid");
      assert.equal(await p.token.read.balanceOf([payer.account.address]), USDC(996));
    });
  });

  describe("(2) a stolen permit", () => {
    it("cannot pay another order of the same amount and token: InvalidPermit, before and after the permit hit the token", async () => {
      const p = await networkHelpers.loadFixture(deployPayments);
      const { payer, stranger: attacker } = p.accounts;
      const orderA = await makeOrder(p, USDC(10));
      const permitA = await signPermit(p, orderA);
      // The attacker gets a genuine voucher for its own order B: same token, split and amount.
      const orderB = await attackerOrder(p, USDC(10));
      const voucherB = await signVoucher(p, orderB);
      const asAttacker = await routerAs(p, attacker);

      await viem.assertions.revertWithCustomErrorWithArgs(
        asAttacker.write.payWithPermit([orderB, voucherB, payer.account.address, permitA.signature]),
        p.router,
        "InvalidPermit",
        [getAddress(payer.account.address)],
      );

      // The attacker submits the victim's permit to the token first: the allowance exists now, but is still
      // bound to order A.
      await (
        await tokenAs(p, attacker)
      ).write.permit([payer.account.address, p.router.address, USDC(10), permitA.deadline, permitA.v, permitA.r, permitA.s]);
      assert.equal(await p.token.read.allowance([payer.account.address, p.router.address]), USDC(10));
      await viem.assertions.revertWithCustomErrorWithArgs(
        asAttacker.write.payWithPermit([orderB, voucherB, payer.account.address, permitA.signature]),
        p.router,
        "InvalidPermit",
        [getAddress(payer.account.address)],
      );
      assert.equal(await p.router.read.isPaid([orderB.orderId]), false);
      assert.equal(await p.token.read.balanceOf([payer.account.address]), USDC(1_000));
      assert.equal(await p.token.read.balanceOf([p.split.address]), 0n);

      // Order A itself still goes through.
      await viem.assertions.emit(
        relayPermit(p, orderA, await signVoucher(p, orderA), payer.account.address, permitA.signature),
        p.router,
        "OrderPaid",
      );
      assert.equal(await p.token.read.balanceOf([payer.account.address]), USDC(990));
    });

    it("cannot be redirected to another payer, nor to a larger amount of the same order", async () => {
      const p = await networkHelpers.loadFixture(deployPayments);
      const { payer, stranger } = p.accounts;
      const order = await makeOrder(p, USDC(10));
      const permit = await signPermit(p, order);
      const voucher = await signVoucher(p, order);
      await viem.assertions.revertWithCustomErrorWithArgs(
        relayPermit(p, order, voucher, stranger.account.address, permit.signature),
        p.router,
        "InvalidPermit",
        [getAddress(stranger.account.address)],
      );
      const bigger = { ...order, amount: USDC(100) };
      await viem.assertions.revertWithCustomErrorWithArgs(
        relayPermit(p, bigger, await signVoucher(p, bigger), payer.account.address, permit.signature),
        p.router,
        "InvalidPermit",
        [getAddress(payer.account.address)],
      );
    });
  });

  describe("(3) a payer's standing approval", () => {
    it("cannot be spent by someone else through payWithPermit with a garbage signature", async () => {
      const p = await networkHelpers.loadFixture(deployPayments);
      const { payer, stranger: attacker } = p.accounts;
      await (await tokenAs(p, payer)).write.approve([p.router.address, MAX_UINT256]);
      const order = await attackerOrder(p, USDC(10));
      const voucher = await signVoucher(p, order);
      const asAttacker = await routerAs(p, attacker);
      const garbage: Array<[number, Hex, Hex]> = [
        [0, `0x${"00".repeat(32)}`, `0x${"00".repeat(32)}`],
        [27, `0x${"00".repeat(32)}`, `0x${"00".repeat(32)}`],
        [28, keccak256(toHex("r")), keccak256(toHex("s"))],
      ];
      const signatures: Hex[] = [
        ...garbage.map(([v, r, s]) => concat([r, s, toHex(v, { size: 1 })])),
        // Other lengths go to the token's bytes overload, which the test stablecoin does not have.
        "0x",
        `0x${"ab".repeat(130)}`,
      ];
      for (const signature of signatures) {
        await viem.assertions.revertWithCustomErrorWithArgs(
          asAttacker.write.payWithPermit([order, voucher, payer.account.address, signature]),
          p.router,
          "InvalidPermit",
          [getAddress(payer.account.address)],
        );
      }
      // Nor with a permit the attacker signed itself.
      const own = await signPermit(p, order, { owner: attacker });
      await viem.assertions.revertWithCustomErrorWithArgs(
        asAttacker.write.payWithPermit([order, voucher, payer.account.address, own.signature]),
        p.router,
        "InvalidPermit",
        [getAddress(payer.account.address)],
      );
      assert.equal(await p.token.read.balanceOf([payer.account.address]), USDC(1_000));
      assert.equal(await p.token.read.allowance([payer.account.address, p.router.address]), MAX_UINT256);
    });

    it("cannot be spent with the payer's old, already used permit signature", async () => {
      const p = await networkHelpers.loadFixture(deployPayments);
      const { payer, stranger: attacker } = p.accounts;
      // The payer once paid order A with a permit (nonce 0), then approved the router for the approval rail.
      const orderA = await makeOrder(p, USDC(10));
      const permitA = await signPermit(p, orderA);
      const voucherA = await signVoucher(p, orderA);
      await relayPermit(p, orderA, voucherA, payer.account.address, permitA.signature);
      await (await tokenAs(p, payer)).write.approve([p.router.address, MAX_UINT256]);
      assert.equal(await p.token.read.nonces([payer.account.address]), 1n);

      const orderB = await attackerOrder(p, USDC(10));
      const asAttacker = await routerAs(p, attacker);
      await viem.assertions.revertWithCustomErrorWithArgs(
        asAttacker.write.payWithPermit([orderB, await signVoucher(p, orderB), payer.account.address, permitA.signature]),
        p.router,
        "InvalidPermit",
        [getAddress(payer.account.address)],
      );
      // Replaying order A itself is refused as a double payment.
      await viem.assertions.revertWithCustomErrorWithArgs(
        asAttacker.write.payWithPermit([orderA, voucherA, payer.account.address, permitA.signature]),
        p.router,
        "OrderAlreadyPaid",
        [orderA.orderId],
      );
      assert.equal(await p.token.read.balanceOf([payer.account.address]), USDC(990));
      assert.equal(await p.token.read.allowance([payer.account.address, p.router.address]), MAX_UINT256);
    });
  });

  describe("(4) reentrancy through a token's transfer hook", () => {
    async function reentrantSetup(p: Payments) {
      const token = await viem.deployContract("ReentrantToken");
      const split = await deploySplitFor(p, token.address);
      await fund(p, token.address, USDC(1_000));
      return { token, split };
    }

    for (const outer of RAILS) {
      for (const inner of ["payCash", "pay", "payWithPermit"] as const) {
        it(`a ${outer}-rail payment whose token re-enters ${inner} reverts with ReentrancyGuardReentrantCall`, async () => {
          const p = await networkHelpers.loadFixture(deployPayments);
          const { token, split } = await reentrantSetup(p);
          const innerOrder = await makeOrder(p, USDC(1), { token: token.address, split: split.address });
          const innerVoucher = await signVoucher(p, innerOrder);
          let payload: Hex;
          if (inner === "payWithPermit") {
            const permit = await signPermit(p, innerOrder);
            payload = encodeFunctionData({
              abi: p.router.abi,
              functionName: "payWithPermit",
              args: [innerOrder, innerVoucher, permit.owner, permit.signature],
            });
          } else {
            payload = encodeFunctionData({ abi: p.router.abi, functionName: inner, args: [innerOrder, innerVoucher] });
          }
          const outerOrder = await makeOrder(p, USDC(2), { token: token.address, split: split.address });
          const submit = await prepareRail(p, outer, outerOrder);
          await token.write.arm([p.router.address, payload]);

          await viem.assertions.revertWithCustomErrorWithArgs(submit(), p.router, "ReentrancyGuardReentrantCall", []);
          assert.equal(await p.router.read.isPaid([outerOrder.orderId]), false);
          assert.equal(await p.router.read.isPaid([innerOrder.orderId]), false);
          assert.equal(await token.read.balanceOf([split.address]), 0n);
          assert.equal(await token.read.balanceOf([railPayer(p, outer).account.address]), USDC(1_000));

          // Disarmed, the very same payment goes through: only the guard stopped it.
          await token.write.arm([zeroAddress, "0x"]);
          await viem.assertions.emit(submit(), p.router, "OrderPaid");
          assert.equal(await token.read.balanceOf([split.address]), USDC(2));
        });
      }
    }

    it("the re-entered payWithPermit calldata is valid on its own (the guard, not the payload, stops it)", async () => {
      const p = await networkHelpers.loadFixture(deployPayments);
      const { token, split } = await reentrantSetup(p);
      const innerOrder = await makeOrder(p, USDC(1), { token: token.address, split: split.address });
      const permit = await signPermit(p, innerOrder);
      const payload = encodeFunctionData({
        abi: p.router.abi,
        functionName: "payWithPermit",
        args: [innerOrder, await signVoucher(p, innerOrder), permit.owner, permit.signature],
      });
      const outerOrder = await makeOrder(p, USDC(2), { token: token.address, split: split.address });
      await token.write.arm([p.router.address, payload]);
      await viem.assertions.revertWithCustomErrorWithArgs(payOnRail(p, "cash", outerOrder), p.router, "ReentrancyGuardReentrantCall", []);
      await token.write.arm([zeroAddress, "0x"]);
      const hash = await p.accounts.relayer.sendTransaction({ to: p.router.address, data: payload });
      await viem.assertions.emit(Promise.resolve(hash), p.router, "OrderPaid");
      assert.equal(await p.router.read.isPaid([innerOrder.orderId]), true);
    });

    it("a token that pays a recipient out of the split during the transfer: the payment still settles, backed", async () => {
      const p = await networkHelpers.loadFixture(deployPayments);
      const { token, split } = await reentrantSetup(p);
      const { assetOwner } = p.accounts;
      await payOnRail(p, "cash", await makeOrder(p, USDC(10), { token: token.address, split: split.address }));
      assert.equal(await split.read.claimable([assetOwner.account.address]), USDC(5));

      await token.write.arm([
        split.address,
        encodeFunctionData({ abi: split.abi, functionName: "release", args: [assetOwner.account.address] }),
      ]);
      const order = await makeOrder(p, USDC(10), { token: token.address, split: split.address });
      // The release pays the asset owner's 5 out during the transfer (a withdrawal it was owed); the 10 of the order
      // arrive whole, so the split's settlement check passes and the asset owner accrues its 5 of this order.
      await viem.assertions.emit(payOnRail(p, "cash", order), p.router, "OrderPaid");
      assert.equal(await token.read.balanceOf([assetOwner.account.address]), USDC(5));
      assert.equal(await split.read.claimable([assetOwner.account.address]), USDC(5));
      assert.equal(await token.read.balanceOf([split.address]), USDC(15));
      assert.equal(await split.read.surplus(), 0n);
    });

    it("AssetSplit.deposit and withdraw are guarded too", async () => {
      const p = await networkHelpers.loadFixture(deployPayments);
      const { token, split } = await reentrantSetup(p);
      const { relayer: depositor, assetOwner } = p.accounts;
      await grantDepositor(split, depositor.account.address);
      await token.write.mint([depositor.account.address, USDC(100)]);
      await (await tokenOf(token.address, depositor)).write.approve([split.address, MAX_UINT256]);
      const asDepositor = await viem.getContractAt("AssetSplit", split.address, { client: { wallet: depositor } });
      await asDepositor.write.deposit([toHex(1n, { size: 32 }), USDC(10)]);

      const withdrawPayload = encodeFunctionData({ abi: split.abi, functionName: "withdraw", args: [depositor.account.address] });
      await token.write.arm([split.address, withdrawPayload]);
      await viem.assertions.revertWithCustomErrorWithArgs(
        asDepositor.write.deposit([toHex(2n, { size: 32 }), USDC(10)]),
        split,
        "ReentrancyGuardReentrantCall",
        [],
      );
      const asOwner = await viem.getContractAt("AssetSplit", split.address, { client: { wallet: assetOwner } });
      await viem.assertions.revertWithCustomErrorWithArgs(
        asOwner.write.withdraw([assetOwner.account.address]),
        split,
        "ReentrancyGuardReentrantCall",
        [],
      );
      assert.equal(await split.read.claimable([assetOwner.account.address]), USDC(5));
      assert.equal(await token.read.balanceOf([split.address]), USDC(10));
    });

    it("AssetSplit.recoverSurplus is guarded too: its transfer cannot re-enter a withdrawal", async () => {
      const p = await networkHelpers.loadFixture(deployPayments);
      const { token, split } = await reentrantSetup(p);
      const { assetOwner, admin } = p.accounts;
      await payOnRail(p, "cash", await makeOrder(p, USDC(10), { token: token.address, split: split.address }));
      await token.write.mint([split.address, USDC(3)]);
      await token.write.arm([
        split.address,
        encodeFunctionData({ abi: split.abi, functionName: "release", args: [assetOwner.account.address] }),
      ]);
      await viem.assertions.revertWithCustomErrorWithArgs(
        (await factoryOf(split)).write.recoverSurplus([assetKey(FIXTURE_DEVICE), admin.account.address]),
        split,
        "ReentrancyGuardReentrantCall",
        [],
      );
      assert.equal(await split.read.surplus(), USDC(3));
      assert.equal(await split.read.claimable([assetOwner.account.address]), USDC(5));
      await token.write.arm([zeroAddress, "0x"]);
      const recovery = (await factoryOf(split)).write.recoverSurplus([assetKey(FIXTURE_DEVICE), admin.account.address]);
      await viem.assertions.emitWithArgs(recovery, split, "SurplusRecovered", [getAddress(admin.account.address), USDC(3)]);
      assert.equal(await token.read.balanceOf([split.address]), USDC(10));
    });
  });

  describe("(5) a fee-on-transfer token", () => {
    for (const rail of RAILS) {
      it(`is refused on the ${rail} rail by the split's settlement check, UnbackedSettlement(amount, received)`, async () => {
        const p = await networkHelpers.loadFixture(deployPayments);
        const fee = await viem.deployContract("FeeOnTransferToken");
        const split = await deploySplitFor(p, fee.address);
        await fund(p, fee.address, 1_000_000n);
        const order = await makeOrder(p, 10_000n, { token: fee.address, split: split.address });
        await viem.assertions.revertWithCustomErrorWithArgs(payOnRail(p, rail, order), split, "UnbackedSettlement", [10_000n, 9_900n]);
        assert.equal(await p.router.read.isPaid([order.orderId]), false);
        assert.equal(await fee.read.balanceOf([split.address]), 0n);
        assert.equal(await fee.read.balanceOf([railPayer(p, rail).account.address]), 1_000_000n);
      });
    }

    it("is refused by AssetSplit.deposit with UnexpectedBalance(gross, received)", async () => {
      const p = await networkHelpers.loadFixture(deployPayments);
      const fee = await viem.deployContract("FeeOnTransferToken");
      const split = await deploySplitFor(p, fee.address, { setFactory: false });
      const { relayer: depositor } = p.accounts;
      await grantDepositor(split, depositor.account.address);
      await fee.write.mint([depositor.account.address, 1_000_000n]);
      await (await tokenOf(fee.address, depositor)).write.approve([split.address, MAX_UINT256]);
      const asDepositor = await viem.getContractAt("AssetSplit", split.address, { client: { wallet: depositor } });
      await viem.assertions.revertWithCustomErrorWithArgs(
        asDepositor.write.deposit([toHex(1n, { size: 32 }), 12_345n]),
        split,
        "UnexpectedBalance",
        [12_345n, 12_222n],
      );
      assert.equal(await fee.read.balanceOf([split.address]), 0n);
    });
  });

  describe("(6) a blocked recipient", () => {
    async function blocklistSetup(p: Payments) {
      const token = await viem.deployContract("BlocklistToken");
      const split = await deploySplitFor(p, token.address);
      await fund(p, token.address, USDC(1_000));
      await token.write.setBlocked([p.accounts.operator.account.address, true]);
      return { token, split };
    }

    it("never blocks payments; only its own release fails, the others withdraw their exact shares", async () => {
      const p = await networkHelpers.loadFixture(deployPayments);
      const { token, split } = await blocklistSetup(p);
      const { assetOwner, operator, protocol, stranger } = p.accounts;
      for (const rail of RAILS) {
        const order = await makeOrder(p, USDC(10), { token: token.address, split: split.address });
        await viem.assertions.emitWithArgs(payOnRail(p, rail, order), p.router, "OrderPaid", [
          order.orderId,
          order.deviceId,
          getAddress(railPayer(p, rail).account.address),
          getAddress(token.address),
          getAddress(split.address),
          USDC(10),
          RAIL_ID[rail],
        ]);
      }
      assert.equal(await token.read.balanceOf([split.address]), USDC(30));
      assert.equal(await split.read.claimable([operator.account.address]), USDC(12));

      const asStranger = await viem.getContractAt("AssetSplit", split.address, { client: { wallet: stranger } });
      await viem.assertions.revertWithCustomErrorWithArgs(asStranger.write.release([operator.account.address]), token, "Blocked", [
        getAddress(operator.account.address),
      ]);
      const asOperator = await viem.getContractAt("AssetSplit", split.address, { client: { wallet: operator } });
      await viem.assertions.revertWithCustomErrorWithArgs(asOperator.write.withdraw([operator.account.address]), token, "Blocked", [
        getAddress(operator.account.address),
      ]);
      assert.equal(await split.read.claimable([operator.account.address]), USDC(12));

      await viem.assertions.emitWithArgs(asStranger.write.release([assetOwner.account.address]), split, "Withdrawn", [
        getAddress(assetOwner.account.address),
        getAddress(assetOwner.account.address),
        USDC(15),
      ]);
      const asProtocol = await viem.getContractAt("AssetSplit", split.address, { client: { wallet: protocol } });
      await asProtocol.write.withdraw([protocol.account.address]);
      assert.equal(await token.read.balanceOf([assetOwner.account.address]), USDC(15));
      assert.equal(await token.read.balanceOf([protocol.account.address]), USDC(3));
      assert.equal(await token.read.balanceOf([split.address]), USDC(12), "the operator's share stays in the split");

      // Payments keep working after the failed releases, and the operator is paid once unblocked.
      await payOnRail(p, "cash", await makeOrder(p, USDC(10), { token: token.address, split: split.address }));
      await token.write.setBlocked([operator.account.address, false]);
      await asStranger.write.release([operator.account.address]);
      assert.equal(await token.read.balanceOf([operator.account.address]), USDC(16));
      assert.equal(await split.read.claimable([operator.account.address]), 0n);
    });

    it("can still move its credit to another address with withdraw(to)", async () => {
      // Noted in the report: the blocklist only sees split -> `to`, so a blocked recipient is not frozen here.
      const p = await networkHelpers.loadFixture(deployPayments);
      const { token, split } = await blocklistSetup(p);
      const { operator, stranger } = p.accounts;
      await payOnRail(p, "cash", await makeOrder(p, USDC(10), { token: token.address, split: split.address }));
      const asOperator = await viem.getContractAt("AssetSplit", split.address, { client: { wallet: operator } });
      await viem.assertions.emitWithArgs(asOperator.write.withdraw([stranger.account.address]), split, "Withdrawn", [
        getAddress(operator.account.address),
        getAddress(stranger.account.address),
        USDC(4),
      ]);
      assert.equal(await token.read.balanceOf([stranger.account.address]), USDC(4));
    });

    it("a blocked payer cannot pay", async () => {
      const p = await networkHelpers.loadFixture(deployPayments);
      const { token, split } = await blocklistSetup(p);
      await token.write.setBlocked([p.accounts.agent.account.address, true]);
      const order = await makeOrder(p, USDC(1), { token: token.address, split: split.address });
      await viem.assertions.revertWithCustomErrorWithArgs(payOnRail(p, "cash", order), token, "Blocked", [
        getAddress(p.accounts.agent.account.address),
      ]);
      assert.equal(await p.router.read.isPaid([order.orderId]), false);
    });
  });

  describe("(7) pauses", () => {
    for (const rail of RAILS) {
      it(`a paused router and a paused split both reject a ${rail}-rail payment`, async () => {
        const p = await networkHelpers.loadFixture(deployPayments);
        const order = await makeOrder(p, USDC(1));
        const voucher = await signVoucher(p, order);
        const payerBefore = await p.token.read.balanceOf([railPayer(p, rail).account.address]);

        await (await routerAs(p, p.accounts.pauser)).write.pause();
        await viem.assertions.revertWithCustomErrorWithArgs((await prepareRail(p, rail, order, voucher))(), p.router, "EnforcedPause", []);
        await (await routerAs(p, p.accounts.pauser)).write.unpause();

        const factoryAsPauser = await factoryAs(p, p.accounts.pauser);
        await factoryAsPauser.write.pauseSplit([assetKey(FIXTURE_DEVICE)]);
        assert.equal(await p.router.read.paused(), false);
        await viem.assertions.revertWithCustomErrorWithArgs((await prepareRail(p, rail, order, voucher))(), p.split, "EnforcedPause", []);
        assert.equal(await p.router.read.isPaid([order.orderId]), false);
        assert.equal(await p.token.read.balanceOf([railPayer(p, rail).account.address]), payerBefore);
        assert.equal(await p.token.read.balanceOf([p.split.address]), 0n);

        await factoryAsPauser.write.unpauseSplit([assetKey(FIXTURE_DEVICE)]);
        await viem.assertions.emit((await prepareRail(p, rail, order, voucher))(), p.router, "OrderPaid");
        assert.equal(await p.token.read.balanceOf([p.split.address]), USDC(1));
      });
    }
  });

  describe("(8) the router never keeps tokens", () => {
    it("holds zero of every token after payments on every rail, failed ones included", async () => {
      const p = await networkHelpers.loadFixture(deployPayments);
      const blk = await viem.deployContract("BlocklistToken");
      const ree = await viem.deployContract("ReentrantToken");
      const fee = await viem.deployContract("FeeOnTransferToken");
      // The router pays through one factory, hence in one token, at a time: each token's payments are made with
      // the router pointed at that token's factory.
      const setups: Array<{ token: Address; split: Address; factory: Address }> = [
        { token: p.token.address, split: p.split.address, factory: p.factory.address },
      ];
      for (const t of [blk, ree, fee]) {
        const split = await deploySplitFor(p, t.address, { setFactory: false });
        await fund(p, t.address, USDC(1_000));
        setups.push({ token: t.address, split: split.address, factory: await split.read.factory() });
      }
      const balances = async () => {
        const out: bigint[] = [];
        for (const { token } of setups) out.push(await (await tokenOf(token)).read.balanceOf([p.router.address]));
        return out;
      };
      for (const { token, split, factory } of setups) {
        await p.router.write.setSplitFactory([factory]);
        for (const rail of RAILS as readonly RailName[]) {
          const order = await makeOrder(p, USDC(3), { token, split });
          if (token === fee.address) {
            await viem.assertions.revertWithCustomError(payOnRail(p, rail, order), p.split, "UnbackedSettlement");
          } else {
            await viem.assertions.emit(payOnRail(p, rail, order), p.router, "OrderPaid");
            await viem.assertions.revertWithCustomError(payOnRail(p, rail, order), p.router, "OrderAlreadyPaid");
          }
          assert.deepEqual(await balances(), [0n, 0n, 0n, 0n], `${rail} rail, token ${token}`);
        }
      }
      assert.equal(await p.token.read.balanceOf([p.split.address]), USDC(9));
      const [owner, op, proto] = expectedLegs(USDC(9));
      assert.equal(await p.split.read.claimable([p.accounts.assetOwner.account.address]), owner);
      assert.equal(await p.split.read.claimable([p.accounts.operator.account.address]), op);
      assert.equal(await p.split.read.claimable([p.accounts.protocol.account.address]), proto);
    });
  });

  describe("(9) a token whose permit() does not really permit", () => {
    /** The payer's tokens of `token` and a standing approval of the router (as for the approval rail), a factory of
     * the token with the fixture device's split, not set on the router, and an attacker's genuine voucher for an
     * order in that token through that split. */
    async function victimWithStandingApproval(p: Payments, token: Address) {
      const split = await deploySplitFor(p, token, { setFactory: false });
      const erc20 = await tokenOf(token);
      await erc20.write.mint([p.accounts.payer.account.address, USDC(100)]);
      await (await tokenOf(token, p.accounts.payer)).write.approve([p.router.address, MAX_UINT256]);
      const order = await makeOrder(p, USDC(100), { token, split: split.address });
      return { erc20, split, order, voucher: await signVoucher(p, order) };
    }

    /** Submits `order` on the permit rail with a signature that is no one's; it must fail with TokenNotAllowed (the
     * router pays only its factory's token) and leave the payer's tokens and approval as they were. */
    async function attackFails(p: Payments, erc20: Awaited<ReturnType<typeof tokenOf>>, order: PaymentOrder, voucher: Hex) {
      const { payer, stranger: attacker } = p.accounts;
      const asAttacker = await routerAs(p, attacker);
      await viem.assertions.revertWithCustomErrorWithArgs(
        asAttacker.write.payWithPermit([order, voucher, payer.account.address, DUMMY_SIGNATURE]),
        p.router,
        "TokenNotAllowed",
        [getAddress(order.token), getAddress(order.split)],
      );
      assert.equal(await p.router.read.isPaid([order.orderId]), false);
      assert.equal(await erc20.read.balanceOf([payer.account.address]), USDC(100));
      assert.equal(await erc20.read.balanceOf([order.split]), 0n);
      assert.equal(await erc20.read.allowance([payer.account.address, p.router.address]), MAX_UINT256);
    }

    it("phantom permit (no permit()/nonces(), a fallback accepting any call): the router refuses its factory, so no payment in it spends the approval", async () => {
      const p = await networkHelpers.loadFixture(deployPayments);
      const { payer, stranger: attacker } = p.accounts;
      const phantom = await viem.deployContract("PhantomPermitToken");
      const { erc20, split, order, voucher } = await victimWithStandingApproval(p, phantom.address);

      // The token really is a phantom: a permit call to it "succeeds" without checking anything or granting anything.
      const zero: Hex = `0x${"00".repeat(32)}`;
      const permitCall = encodeFunctionData({
        abi: p.token.abi,
        functionName: "permit",
        args: [payer.account.address, attacker.account.address, USDC(100), MAX_UINT256, 0, zero, zero],
      });
      const hash = await attacker.sendTransaction({ account: attacker.account, to: phantom.address, data: permitCall });
      assert.equal((await publicClient.waitForTransactionReceipt({ hash })).status, "success");
      assert.equal(await phantom.read.allowance([payer.account.address, attacker.account.address]), 0n);

      // Such a token never becomes the router's: the payments take a permit call that returned as executed.
      const factory = await split.read.factory();
      await viem.assertions.revertWithCustomErrorWithArgs(
        p.router.write.setSplitFactory([factory]),
        p.router,
        "TokenAcceptsInvalidSignature",
        [getAddress(phantom.address)],
      );
      assert.equal(await p.router.read.splitFactory(), getAddress(p.factory.address));
      await attackFails(p, erc20, order, voucher);
    });

    it("a permit() that returns without checking, whatever it does with the payer's nonce: the router refuses its factory", async () => {
      const p = await networkHelpers.loadFixture(deployPayments);
      const noop = await viem.deployContract("NoopPermitToken");
      const { erc20, split, order, voucher } = await victimWithStandingApproval(p, noop.address);
      const factory = await split.read.factory();
      for (const step of [0n, 1n, 2n]) {
        await noop.write.setNonceStep([step]);
        await viem.assertions.revertWithCustomErrorWithArgs(
          p.router.write.setSplitFactory([factory]),
          p.router,
          "TokenAcceptsInvalidSignature",
          [getAddress(noop.address)],
        );
        await attackFails(p, erc20, order, voucher);
      }
      assert.equal(await noop.read.nonces([p.accounts.payer.account.address]), 0n);
    });

    it("a genuine permit moves the payer's nonce by exactly one", async () => {
      const p = await networkHelpers.loadFixture(deployPayments);
      const order = await makeOrder(p, USDC(1));
      assert.equal(await p.token.read.nonces([p.accounts.payer.account.address]), 0n);
      await viem.assertions.emit(
        (await routerAs(p, p.accounts.relayer)).write.payWithPermit(await permitPayment(p, order)),
        p.router,
        "OrderPaid",
      );
      assert.equal(await p.token.read.nonces([p.accounts.payer.account.address]), 1n);
    });
  });

  describe("(10) an unbacked settlement", () => {
    it("a batch depositor cannot credit a settlement it never paid for: UnbackedSettlement, and the split stays solvent", async () => {
      // The depositor role also unlocks settle(), which records tokens already sent. Without backing, a depositor (or
      // its tooling calling settle instead of deposit) would credit amounts paid with other recipients' money.
      const p = await networkHelpers.loadFixture(deployPayments);
      const { relayer: batchDepositor, assetOwner, operator, protocol, stranger } = p.accounts;
      await grantDepositor(p.split, batchDepositor.account.address);
      await payOnRail(p, "cash", await makeOrder(p, USDC(100))); // real revenue

      const asDepositor = await splitAs(p, batchDepositor);
      await viem.assertions.revertWithCustomErrorWithArgs(
        asDepositor.write.settle([keccak256(toHex("batch-without-tokens")), USDC(1_000)]),
        p.split,
        "UnbackedSettlement",
        [USDC(1_000), 0n],
      );
      // Sending part of it does not help either: only what was sent backs a settlement.
      await p.token.write.mint([batchDepositor.account.address, USDC(10)]);
      await (await tokenAs(p, batchDepositor)).write.transfer([p.split.address, USDC(10)]);
      await viem.assertions.revertWithCustomErrorWithArgs(
        asDepositor.write.settle([keccak256(toHex("batch-partly-paid")), USDC(1_000)]),
        p.split,
        "UnbackedSettlement",
        [USDC(1_000), USDC(10)],
      );

      let credited = 0n;
      for (const w of [assetOwner, operator, protocol]) credited += await p.split.read.claimable([w.account.address]);
      assert.equal(credited, USDC(100));
      assert.equal(await p.token.read.balanceOf([p.split.address]), USDC(110));
      assert.equal(await p.split.read.surplus(), USDC(10));

      // Every recipient is paid its exact share of the real revenue.
      for (const w of [assetOwner, operator, protocol]) await (await splitAs(p, stranger)).write.release([w.account.address]);
      assert.equal(await p.token.read.balanceOf([assetOwner.account.address]), USDC(50));
      assert.equal(await p.token.read.balanceOf([operator.account.address]), USDC(40));
      assert.equal(await p.token.read.balanceOf([protocol.account.address]), USDC(10));
      assert.equal(await p.token.read.balanceOf([p.split.address]), USDC(10));
    });

    it("nor can a depositor re-settle what recipients are already owed, before or after they withdraw part of it", async () => {
      const p = await networkHelpers.loadFixture(deployPayments);
      const { relayer: batchDepositor, operator } = p.accounts;
      await grantDepositor(p.split, batchDepositor.account.address);
      await payOnRail(p, "approval", await makeOrder(p, USDC(100)));
      const asDepositor = await splitAs(p, batchDepositor);
      await viem.assertions.revertWithCustomErrorWithArgs(asDepositor.write.settle([zeroHash, USDC(100)]), p.split, "UnbackedSettlement", [
        USDC(100),
        0n,
      ]);
      await (await splitAs(p, operator)).write.withdraw([operator.account.address]);
      await viem.assertions.revertWithCustomErrorWithArgs(asDepositor.write.settle([zeroHash, USDC(60)]), p.split, "UnbackedSettlement", [
        USDC(60),
        0n,
      ]);
      assert.equal(await p.split.read.claimable([operator.account.address]), 0n);
      assert.equal(await p.token.read.balanceOf([p.split.address]), USDC(60));
    });
  });
});
