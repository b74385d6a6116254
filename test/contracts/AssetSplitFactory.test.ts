// AssetSplitFactory: where a split is (the documented CREATE2 formula over an asset key that commits to the first
// recipients), that anyone creates it, once, and that nobody can squat it, and which role may call each of the
// factory's other operations on a split. The recipient changes are tested in the AssetSplitFactory.<operation>
// files, what each operation does to the split in the AssetSplit.<operation> files.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import {
  type Address,
  type Hex,
  concat,
  encodeAbiParameters,
  getAddress,
  getContractAddress,
  keccak256,
  parseEventLogs,
  zeroAddress,
} from "viem";
import { assetSplitFactoryAbi } from "../../generated/abis.ts";
import {
  LEG_BPS,
  USDC,
  assetKey,
  createFactorySplit,
  deviceKey,
  deployPayments,
  expectedLegs,
  factoryAs,
  makeOrder,
  networkHelpers,
  payOnRail,
  publicClient,
  splitAssetKey,
  viem,
  type Payments,
  type Wallet,
} from "./fixture.ts";

const DEVICE = deviceKey("device-of-the-factory-tests");
/** The asset key of DEVICE's split with the fixture's asset owner and operator. */
const KEY = assetKey("device-of-the-factory-tests");

/** The documented formula (contracts/libraries/SplitAddress.sol), computed without asking the chain. */
function predictedSplit(factory: Address, token: Address, key: Hex): { implementation: Address; split: Address } {
  const implementation = getContractAddress({ from: factory, nonce: 1n });
  const salt = keccak256(encodeAbiParameters([{ type: "address" }, { type: "bytes32" }], [token, key]));
  const bytecode = concat(["0x3d602d80600a3d3981f3363d3d373d3d3d363d73", implementation, "0x5af43d82803e903d91602b57fd5bf3"]);
  return { implementation, split: getContractAddress({ opcode: "CREATE2", from: factory, salt, bytecode }) };
}

function splitAt(address: Address, wallet?: Wallet) {
  return viem.getContractAt("AssetSplit", address, wallet ? { client: { wallet } } : undefined);
}

/** The fixture with the split of device-1 created and paid 100 USDC (cash rail): 50 / 40 / 10 accrued. */
async function deployWithPaidSplit() {
  const p = await deployPayments();
  const split = await createFactorySplit(p, DEVICE);
  await payOnRail(p, "cash", await makeOrder(p, USDC(100), { split: split.address, deviceId: KEY }));
  return { ...p, keySplit: split };
}

async function roleError(p: Payments, call: Promise<unknown>, wallet: Wallet, role: Hex) {
  await viem.assertions.revertWithCustomErrorWithArgs(call, p.factory, "AccessControlUnauthorizedAccount", [
    getAddress(wallet.account.address),
    role,
  ]);
}

describe("AssetSplitFactory", () => {
  describe("where a split is", () => {
    it("predictSplit follows the documented formula, and createSplit deploys exactly there", async () => {
      const p = await networkHelpers.loadFixture(deployPayments);
      const { assetOwner, operator } = p.accounts;
      for (const device of [DEVICE, deviceKey("another device"), `0x${"00".repeat(32)}` as Hex, `0x${"ff".repeat(32)}` as Hex]) {
        const key = splitAssetKey(device, assetOwner.account.address, operator.account.address);
        assert.equal(await p.factory.read.assetKeyOf([device, assetOwner.account.address, operator.account.address]), key);
        const expected = predictedSplit(p.factory.address, p.token.address, key);
        assert.equal(await p.factory.read.implementation(), expected.implementation);
        assert.equal(await p.factory.read.predictSplit([key]), expected.split);
        assert.equal(await p.factory.read.isSplitCreated([key]), false);
        assert.equal(await publicClient.getCode({ address: expected.split }), undefined);
        await (
          await factoryAs(p, p.accounts.relayer)
        ).write.createSplit([device, p.accounts.assetOwner.account.address, p.accounts.operator.account.address]);
        assert.equal(await p.factory.read.isSplitCreated([key]), true);
        assert.equal(await (await splitAt(expected.split)).read.factory(), getAddress(p.factory.address));
      }
    });

    it("a split is a 45-byte EIP-1167 clone of the implementation", async () => {
      const p = await networkHelpers.loadFixture(deployPayments);
      const split = await createFactorySplit(p, DEVICE);
      const implementation = (await p.factory.read.implementation()).slice(2).toLowerCase();
      assert.equal(
        await publicClient.getCode({ address: split.address }),
        `0x363d3d373d3d3d363d73${implementation}5af43d82803e903d91602b57fd5bf3`,
      );
    });

    it("a split of another factory (another token) for the same key is elsewhere", async () => {
      const p = await networkHelpers.loadFixture(deployPayments);
      const other = await viem.deployContract("TestStablecoin", ["Other USD", "OUSD", p.accounts.admin.account.address]);
      const otherFactory = await viem.deployContract("AssetSplitFactory", [
        other.address,
        p.router.address,
        p.accounts.protocol.account.address,
        [...LEG_BPS],
        p.accounts.admin.account.address,
        0,
        0,
      ]);
      assert.notEqual(await otherFactory.read.predictSplit([KEY]), await p.factory.read.predictSplit([KEY]));
      assert.equal(await otherFactory.read.predictSplit([KEY]), predictedSplit(otherFactory.address, other.address, KEY).split);
    });
  });

  describe("createSplit", () => {
    it("creates the split with the asset owner and operator given, the factory's protocol recipient and 50/40/10", async () => {
      const p = await networkHelpers.loadFixture(deployPayments);
      const { assetOwner, operator, protocol, relayer } = p.accounts;
      const split = await p.factory.read.predictSplit([KEY]);
      const hash = await (await factoryAs(p, relayer)).write.createSplit([DEVICE, assetOwner.account.address, operator.account.address]);
      const receipt = await publicClient.waitForTransactionReceipt({ hash });
      const [created] = parseEventLogs({ abi: assetSplitFactoryAbi, logs: receipt.logs, eventName: "SplitCreated" });
      assert.deepEqual(created.args, {
        split,
        assetKey: KEY,
        assetOwner: getAddress(assetOwner.account.address),
        operator: getAddress(operator.account.address),
        protocol: getAddress(protocol.account.address),
        token: getAddress(p.token.address),
      });
      const clone = await splitAt(split);
      const recipients = [assetOwner, operator, protocol].map((w) => getAddress(w.account.address));
      assert.deepEqual(await clone.read.legs(), [recipients, [...LEG_BPS]]);
      assert.equal(await clone.read.asset(), getAddress(p.token.address));
      assert.equal(await clone.read.router(), getAddress(p.router.address));
      assert.equal(await clone.read.paused(), false);
      assert.deepEqual(await clone.read.previewSplit([USDC(7)]), expectedLegs(USDC(7)));
      // The split announces its legs at creation.
      const [legs] = parseEventLogs({ abi: clone.abi, logs: receipt.logs, eventName: "LegsUpdated" });
      assert.equal(legs.address, split.toLowerCase());
      assert.deepEqual(legs.args, { recipients, bps: [...LEG_BPS] });
    });

    it("returns the split's address", async () => {
      const p = await networkHelpers.loadFixture(deployPayments);
      const { assetOwner, operator, relayer } = p.accounts;
      const { result } = await (
        await factoryAs(p, relayer)
      ).simulate.createSplit([DEVICE, assetOwner.account.address, operator.account.address], {
        account: relayer.account.address,
      });
      assert.equal(result, await p.factory.read.predictSplit([KEY]));
    });

    it("reverts with SplitAlreadyCreated for the same device and recipients created before, whoever sends it", async () => {
      // Checked before CREATE2, which would fail only after burning the call's gas (FailedDeployment).
      const p = await networkHelpers.loadFixture(deployPayments);
      const { assetOwner, operator, stranger, relayer } = p.accounts;
      await (await factoryAs(p, relayer)).write.createSplit([DEVICE, assetOwner.account.address, operator.account.address]);
      const split = await p.factory.read.predictSplit([KEY]);
      await viem.assertions.revertWithCustomErrorWithArgs(
        (await factoryAs(p, stranger)).write.createSplit([DEVICE, assetOwner.account.address, operator.account.address]),
        p.factory,
        "SplitAlreadyCreated",
        [KEY, split],
      );
    });

    it("is open to anyone, and a creation with other recipients lands elsewhere: a device's split cannot be squatted", async () => {
      const p = await networkHelpers.loadFixture(deployPayments);
      const { assetOwner, operator, protocol, stranger } = p.accounts;
      // A stranger creates DEVICE's split first, for itself: it gets a split of its own, at another asset key.
      const asStranger = await factoryAs(p, stranger);
      await asStranger.write.createSplit([DEVICE, stranger.account.address, stranger.account.address]);
      const squatKey = splitAssetKey(DEVICE, stranger.account.address, stranger.account.address);
      assert.notEqual(await p.factory.read.predictSplit([squatKey]), await p.factory.read.predictSplit([KEY]));
      assert.equal(await p.factory.read.isSplitCreated([KEY]), false, "the device's own split is still free");
      // The device's split, created later by anyone, has the device's recipients.
      await asStranger.write.createSplit([DEVICE, assetOwner.account.address, operator.account.address]);
      const recipients = [assetOwner, operator, protocol].map((w) => getAddress(w.account.address));
      assert.deepEqual((await (await splitAt(await p.factory.read.predictSplit([KEY]))).read.legs())[0], recipients);
    });

    it("reverts with InvalidRecipient(leg) for a recipient of address zero", async () => {
      const p = await networkHelpers.loadFixture(deployPayments);
      const asCreator = await factoryAs(p, p.accounts.relayer);
      const valid = p.accounts.assetOwner.account.address;
      const cases: Array<[Address, Address, bigint]> = [
        [zeroAddress, valid, 0n],
        [valid, zeroAddress, 1n],
      ];
      // The split itself can no longer be named: its address hashes the recipients (no fixed point to find).
      for (const [owner, op, leg] of cases) {
        const key = splitAssetKey(DEVICE, owner, op);
        const clone = await splitAt(await p.factory.read.predictSplit([key]));
        await viem.assertions.revertWithCustomErrorWithArgs(asCreator.write.createSplit([DEVICE, owner, op]), clone, "InvalidRecipient", [
          leg,
        ]);
        assert.equal(await p.factory.read.isSplitCreated([key]), false);
      }
    });
  });

  describe("the constructor", () => {
    it("fixes the token, router, protocol recipient and shares every split gets, and deploys the implementation", async () => {
      const p = await networkHelpers.loadFixture(deployPayments);
      const { admin, protocol, stranger } = p.accounts;
      const factory = await viem.deployContract("AssetSplitFactory", [
        p.token.address,
        p.router.address,
        stranger.account.address,
        [7000, 2000, 1000],
        admin.account.address,
        0,
        172_800,
      ]);
      assert.equal(await factory.read.token(), getAddress(p.token.address));
      assert.equal(await factory.read.router(), getAddress(p.router.address));
      assert.equal(await factory.read.protocolRecipient(), getAddress(stranger.account.address));
      assert.deepEqual(await factory.read.legShares(), [7000, 2000, 1000]);
      assert.equal(await factory.read.recipientChangeDelay(), 172_800);
      assert.equal(await factory.read.implementation(), predictedSplit(factory.address, p.token.address, KEY).implementation);
      // The fixture's factory: the deployment's protocol recipient and 50/40/10.
      assert.equal(await p.factory.read.protocolRecipient(), getAddress(protocol.account.address));
      assert.deepEqual(await p.factory.read.legShares(), [...LEG_BPS]);
    });

    it("rejects shares that do not sum to 10,000 and a zero router or protocol recipient", async () => {
      const p = await networkHelpers.loadFixture(deployPayments);
      const { admin, protocol } = p.accounts;
      const deploy = (router: Address, recipient: Address, bps: [number, number, number]) =>
        viem.deployContract("AssetSplitFactory", [p.token.address, router, recipient, bps, admin.account.address, 0, 0]);
      await assert.rejects(deploy(p.router.address, protocol.account.address, [5000, 4000, 1001]), /InvalidBasisPoints/);
      await assert.rejects(deploy(zeroAddress, protocol.account.address, [...LEG_BPS]), /InvalidRouter/);
      await assert.rejects(deploy(p.router.address, zeroAddress, [...LEG_BPS]), /InvalidRecipient/);
      await assert.rejects(
        viem.deployContract("AssetSplitFactory", [
          zeroAddress,
          p.router.address,
          protocol.account.address,
          [...LEG_BPS],
          admin.account.address,
          0,
          0,
        ]),
        /InvalidAsset/,
      );
    });
  });

  describe("pauses", () => {
    it("pauseSplit and unpauseSplit are only for the pauser", async () => {
      const p = await networkHelpers.loadFixture(deployWithPaidSplit);
      const role = await p.factory.read.PAUSER_ROLE();
      for (const caller of [p.accounts.stranger, p.accounts.admin, p.accounts.relayer]) {
        const asCaller = await factoryAs(p, caller);
        await roleError(p, asCaller.write.pauseSplit([KEY]), caller, role);
        await roleError(p, asCaller.write.unpauseSplit([KEY]), caller, role);
      }
    });
  });

  describe("recoverSurplus", () => {
    it("is only for the default admin, and reverts with SplitNotFound for a key without a split", async () => {
      const p = await networkHelpers.loadFixture(deployWithPaidSplit);
      const { admin, relayer, pauser } = p.accounts;
      await p.token.write.mint([p.keySplit.address, USDC(3)]);
      for (const caller of [relayer, pauser]) {
        await roleError(
          p,
          (await factoryAs(p, caller)).write.recoverSurplus([KEY, caller.account.address]),
          caller,
          `0x${"00".repeat(32)}`,
        );
      }
      const other = assetKey("device-without-split");
      await viem.assertions.revertWithCustomErrorWithArgs(
        p.factory.write.recoverSurplus([other, admin.account.address]),
        p.factory,
        "SplitNotFound",
        [other, await p.factory.read.predictSplit([other])],
      );
      await viem.assertions.emit(p.factory.write.recoverSurplus([KEY, admin.account.address]), p.keySplit, "SurplusRecovered");
    });
  });
});
