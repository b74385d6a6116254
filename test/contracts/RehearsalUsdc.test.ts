import assert from "node:assert/strict";
import { describe, it } from "node:test";
import {
  domainSeparator,
  getAddress,
  keccak256,
  toFunctionSelector,
  toHex,
  zeroAddress,
  type Address,
  type Hex,
  type TypedDataDefinition,
} from "viem";
import { permitSignatureParts, permitTypedData, permitTypes, receiveAuthorizationTypes } from "../../sdk/src/payment-order.ts";
import { USDC, networkHelpers, publicClient, usdcDomain, viem, type Wallet } from "./fixture.ts";
import { signAsAccount, smartAccount } from "./smart-account-fixture.ts";

async function deployUsdc() {
  const [owner, alice, bob, carol, blacklister] = await viem.getWalletClients();
  const usdc = await viem.deployContract("RehearsalUsdc", [owner.account.address]);
  await usdc.write.mint([alice.account.address, USDC(100)]);
  return { usdc, owner, alice, bob, carol, blacklister };
}
type Deployed = Awaited<ReturnType<typeof deployUsdc>>;

const usdcAs = (d: Deployed, wallet: Wallet) => viem.getContractAt("RehearsalUsdc", d.usdc.address, { client: { wallet } });

let nextNonce = 0;

/** `from`'s EIP-3009 authorization of `value` to `to`; `kind` picks the transfer or the receive type. */
async function authorization(
  d: Deployed,
  kind: "TransferWithAuthorization" | "ReceiveWithAuthorization",
  from: Wallet,
  to: Address,
  value: bigint,
  window: { validAfter?: bigint; validBefore?: bigint } = {},
) {
  const nonce = keccak256(toHex(`authorization-${nextNonce++}`));
  const validAfter = window.validAfter ?? 0n;
  const validBefore = window.validBefore ?? BigInt(await networkHelpers.time.latest()) + 3600n;
  const signature = await from.signTypedData({
    account: from.account,
    domain: await usdcDomain(d.usdc.address),
    types: { [kind]: receiveAuthorizationTypes.ReceiveWithAuthorization },
    primaryType: kind,
    message: { from: from.account.address, to, value, validAfter, validBefore, nonce },
  });
  const { v, r, s } = permitSignatureParts(signature);
  return [from.account.address, to, value, validAfter, validBefore, nonce, v, r, s] as const;
}

async function cancellation(d: Deployed, authorizer: Wallet, nonce: Hex) {
  const signature = await authorizer.signTypedData({
    account: authorizer.account,
    domain: await usdcDomain(d.usdc.address),
    types: {
      CancelAuthorization: [
        { name: "authorizer", type: "address" },
        { name: "nonce", type: "bytes32" },
      ],
    },
    primaryType: "CancelAuthorization",
    message: { authorizer: authorizer.account.address, nonce },
  });
  const { v, r, s } = permitSignatureParts(signature);
  return [authorizer.account.address, nonce, v, r, s] as const;
}

describe("RehearsalUsdc", () => {
  it("has USDC's name, symbol, decimals and EIP-712 domain (USDC, version 2)", async () => {
    const d = await networkHelpers.loadFixture(deployUsdc);
    assert.equal(await d.usdc.read.name(), "USDC");
    assert.equal(await d.usdc.read.symbol(), "USDC");
    assert.equal(await d.usdc.read.decimals(), 6);
    assert.equal(await d.usdc.read.version(), "2");
    assert.equal(await d.usdc.read.DOMAIN_SEPARATOR(), domainSeparator({ domain: await usdcDomain(d.usdc.address) }));
  });

  it("has no eip712Domain() (no ERC-5267), as USDC", async () => {
    const d = await networkHelpers.loadFixture(deployUsdc);
    assert.equal(
      d.usdc.abi.some((item) => item.type === "function" && (item.name as string) === "eip712Domain"),
      false,
    );
    await assert.rejects(publicClient.call({ to: d.usdc.address, data: toFunctionSelector("eip712Domain()") }));
  });

  it("takes EIP-2612 permits: sets the allowance and moves the nonce; rejects expired and foreign ones", async () => {
    const d = await networkHelpers.loadFixture(deployUsdc);
    const { alice, bob } = d;
    const deadline = BigInt(await networkHelpers.time.latest()) + 600n;
    const sign = async (signer: Wallet, value: bigint, at: bigint) =>
      permitSignatureParts(
        await signer.signTypedData({
          account: signer.account,
          ...permitTypedData({
            tokenDomain: await usdcDomain(d.usdc.address),
            owner: alice.account.address,
            spender: bob.account.address,
            value,
            nonce: await d.usdc.read.nonces([alice.account.address]),
            deadline: at,
          }),
        }),
      );

    const bad = await sign(bob, USDC(5), deadline);
    await viem.assertions.revertWithCustomError(
      d.usdc.write.permit([alice.account.address, bob.account.address, USDC(5), deadline, bad.v, bad.r, bad.s]),
      d.usdc,
      "InvalidSignature",
    );
    const good = await sign(alice, USDC(5), deadline);
    await d.usdc.write.permit([alice.account.address, bob.account.address, USDC(5), deadline, good.v, good.r, good.s]);
    assert.equal(await d.usdc.read.allowance([alice.account.address, bob.account.address]), USDC(5));
    assert.equal(await d.usdc.read.nonces([alice.account.address]), 1n);
    await viem.assertions.revertWithCustomError(
      d.usdc.write.permit([alice.account.address, bob.account.address, USDC(5), deadline, good.v, good.r, good.s]),
      d.usdc,
      "InvalidSignature",
    );

    const late = await sign(alice, USDC(7), deadline);
    await networkHelpers.time.increaseTo(deadline + 1n);
    await viem.assertions.revertWithCustomErrorWithArgs(
      d.usdc.write.permit([alice.account.address, bob.account.address, USDC(7), deadline, late.v, late.r, late.s]),
      d.usdc,
      "PermitExpired",
      [deadline],
    );
  });

  describe("EIP-3009", () => {
    it("transferWithAuthorization: anyone submits it, once; it marks the nonce used", async () => {
      const d = await networkHelpers.loadFixture(deployUsdc);
      const { alice, bob, carol } = d;
      const args = await authorization(d, "TransferWithAuthorization", alice, bob.account.address, USDC(3));
      await viem.assertions.emitWithArgs((await usdcAs(d, carol)).write.transferWithAuthorization(args), d.usdc, "AuthorizationUsed", [
        getAddress(alice.account.address),
        args[5],
      ]);
      assert.equal(await d.usdc.read.balanceOf([bob.account.address]), USDC(3));
      assert.equal(await d.usdc.read.authorizationState([alice.account.address, args[5]]), true);
      await viem.assertions.revertWithCustomErrorWithArgs(
        d.usdc.write.transferWithAuthorization(args),
        d.usdc,
        "AuthorizationUsedOrCanceled",
        [getAddress(alice.account.address), args[5]],
      );
      assert.equal(await d.usdc.read.balanceOf([bob.account.address]), USDC(3));
    });

    it("takes an authorization strictly after validAfter and strictly before validBefore", async () => {
      const d = await networkHelpers.loadFixture(deployUsdc);
      const { alice, bob } = d;
      const now = BigInt(await networkHelpers.time.latest());
      const early = await authorization(d, "TransferWithAuthorization", alice, bob.account.address, 1n, { validAfter: now + 100n });
      await networkHelpers.time.setNextBlockTimestamp(now + 100n);
      await viem.assertions.revertWithCustomErrorWithArgs(
        d.usdc.write.transferWithAuthorization(early),
        d.usdc,
        "AuthorizationNotYetValid",
        [now + 100n],
      );
      await networkHelpers.time.setNextBlockTimestamp(now + 101n);
      await d.usdc.write.transferWithAuthorization(early);

      const until = BigInt(await networkHelpers.time.latest()) + 100n;
      const late = await authorization(d, "TransferWithAuthorization", alice, bob.account.address, 1n, { validBefore: until });
      await networkHelpers.time.setNextBlockTimestamp(until);
      await viem.assertions.revertWithCustomErrorWithArgs(d.usdc.write.transferWithAuthorization(late), d.usdc, "AuthorizationExpired", [
        until,
      ]);
      assert.equal(await d.usdc.read.balanceOf([bob.account.address]), 1n);
    });

    it("receiveWithAuthorization: only the payee submits it", async () => {
      const d = await networkHelpers.loadFixture(deployUsdc);
      const { alice, bob, carol } = d;
      const args = await authorization(d, "ReceiveWithAuthorization", alice, bob.account.address, USDC(2));
      await viem.assertions.revertWithCustomErrorWithArgs(
        (await usdcAs(d, carol)).write.receiveWithAuthorization(args),
        d.usdc,
        "CallerNotPayee",
        [getAddress(carol.account.address), getAddress(bob.account.address)],
      );
      await (await usdcAs(d, bob)).write.receiveWithAuthorization(args);
      assert.equal(await d.usdc.read.balanceOf([bob.account.address]), USDC(2));
      // A receive authorization is not a transfer authorization: the type hash differs.
      const other = await authorization(d, "ReceiveWithAuthorization", alice, bob.account.address, USDC(2));
      await viem.assertions.revertWithCustomError(
        (await usdcAs(d, bob)).write.transferWithAuthorization(other),
        d.usdc,
        "InvalidSignature",
      );
    });

    it("cancelAuthorization: the authorizer's signed cancellation voids an unused nonce, once", async () => {
      const d = await networkHelpers.loadFixture(deployUsdc);
      const { alice, bob, carol } = d;
      const args = await authorization(d, "TransferWithAuthorization", alice, bob.account.address, USDC(2));
      const forged = await cancellation(d, carol, args[5]);
      await viem.assertions.revertWithCustomError(
        d.usdc.write.cancelAuthorization([alice.account.address, forged[1], forged[2], forged[3], forged[4]]),
        d.usdc,
        "InvalidSignature",
      );
      const cancel = await cancellation(d, alice, args[5]);
      await viem.assertions.emitWithArgs((await usdcAs(d, carol)).write.cancelAuthorization(cancel), d.usdc, "AuthorizationCanceled", [
        getAddress(alice.account.address),
        args[5],
      ]);
      assert.equal(await d.usdc.read.authorizationState([alice.account.address, args[5]]), true);
      await viem.assertions.revertWithCustomError(d.usdc.write.transferWithAuthorization(args), d.usdc, "AuthorizationUsedOrCanceled");
      await viem.assertions.revertWithCustomError(d.usdc.write.cancelAuthorization(cancel), d.usdc, "AuthorizationUsedOrCanceled");
      assert.equal(await d.usdc.read.balanceOf([bob.account.address]), 0n);
    });
  });

  describe("blocklist", () => {
    it("a blacklisted account neither sends, receives nor approves until unblacklisted", async () => {
      const d = await networkHelpers.loadFixture(deployUsdc);
      const { alice, bob } = d;
      await viem.assertions.emitWithArgs(d.usdc.write.blacklist([alice.account.address]), d.usdc, "Blacklisted", [
        getAddress(alice.account.address),
      ]);
      assert.equal(await d.usdc.read.isBlacklisted([alice.account.address]), true);
      const asAlice = await usdcAs(d, alice);
      const blocked: [Address] = [getAddress(alice.account.address)];
      await viem.assertions.revertWithCustomErrorWithArgs(
        asAlice.write.transfer([bob.account.address, 1n]),
        d.usdc,
        "AccountBlacklisted",
        blocked,
      );
      await viem.assertions.revertWithCustomErrorWithArgs(
        (await usdcAs(d, bob)).write.transfer([alice.account.address, 0n]),
        d.usdc,
        "AccountBlacklisted",
        blocked,
      );
      await viem.assertions.revertWithCustomErrorWithArgs(
        d.usdc.write.mint([alice.account.address, 1n]),
        d.usdc,
        "AccountBlacklisted",
        blocked,
      );
      await viem.assertions.revertWithCustomErrorWithArgs(
        asAlice.write.approve([bob.account.address, 1n]),
        d.usdc,
        "AccountBlacklisted",
        blocked,
      );
      const auth = await authorization(d, "TransferWithAuthorization", alice, bob.account.address, 1n);
      await viem.assertions.revertWithCustomErrorWithArgs(
        d.usdc.write.transferWithAuthorization(auth),
        d.usdc,
        "AccountBlacklisted",
        blocked,
      );

      await viem.assertions.emitWithArgs(d.usdc.write.unBlacklist([alice.account.address]), d.usdc, "UnBlacklisted", blocked);
      await asAlice.write.transfer([bob.account.address, 1n]);
      await d.usdc.write.transferWithAuthorization(auth);
      assert.equal(await d.usdc.read.balanceOf([bob.account.address]), 2n);
    });

    it("only the blacklister blacklists; the owner hands the role on", async () => {
      const d = await networkHelpers.loadFixture(deployUsdc);
      const { owner, alice, blacklister } = d;
      assert.equal(await d.usdc.read.blacklister(), getAddress(owner.account.address));
      await viem.assertions.revertWithCustomErrorWithArgs(
        (await usdcAs(d, blacklister)).write.blacklist([alice.account.address]),
        d.usdc,
        "CallerNotBlacklister",
        [getAddress(blacklister.account.address)],
      );
      await viem.assertions.revertWithCustomError(
        (await usdcAs(d, alice)).write.updateBlacklister([alice.account.address]),
        d.usdc,
        "OwnableUnauthorizedAccount",
      );
      await viem.assertions.revertWithCustomError(d.usdc.write.updateBlacklister([zeroAddress]), d.usdc, "InvalidBlacklister");
      await viem.assertions.emitWithArgs(d.usdc.write.updateBlacklister([blacklister.account.address]), d.usdc, "BlacklisterChanged", [
        getAddress(blacklister.account.address),
      ]);
      await viem.assertions.revertWithCustomError(d.usdc.write.blacklist([alice.account.address]), d.usdc, "CallerNotBlacklister");
      await (await usdcAs(d, blacklister)).write.blacklist([alice.account.address]);
      assert.equal(await d.usdc.read.isBlacklisted([alice.account.address]), true);
    });
  });

  describe("USDC v2.2's bytes overloads", () => {
    const typed = async (
      d: Deployed,
      primaryType: "TransferWithAuthorization" | "CancelAuthorization" | "Permit",
      message: Record<string, unknown>,
    ) => ({
      domain: await usdcDomain(d.usdc.address),
      types:
        primaryType === "Permit"
          ? permitTypes
          : primaryType === "CancelAuthorization"
            ? {
                CancelAuthorization: [
                  { name: "authorizer", type: "address" },
                  { name: "nonce", type: "bytes32" },
                ],
              }
            : { TransferWithAuthorization: receiveAuthorizationTypes.ReceiveWithAuthorization },
      primaryType,
      message,
    });

    it("a multi-owner account permits, transfers and cancels with its ERC-1271 signature; too few owners is InvalidSignature", async () => {
      const d = await networkHelpers.loadFixture(deployUsdc);
      const { bob } = d;
      const account = await smartAccount();
      await d.usdc.write.mint([account.address, USDC(10)]);
      const deadline = BigInt(await networkHelpers.time.latest()) + 3600n;
      const permit = { owner: account.address, spender: bob.account.address, value: USDC(3), nonce: 0n, deadline };
      const permitData = (await typed(d, "Permit", permit)) as TypedDataDefinition;
      await viem.assertions.revertWithCustomError(
        d.usdc.write.permit([
          account.address,
          bob.account.address,
          USDC(3),
          deadline,
          await signAsAccount(account, permitData, { count: 1 }),
        ]),
        d.usdc,
        "InvalidSignature",
      );
      await d.usdc.write.permit([account.address, bob.account.address, USDC(3), deadline, await signAsAccount(account, permitData)]);
      assert.equal(await d.usdc.read.allowance([account.address, bob.account.address]), USDC(3));

      const validBefore = deadline;
      const transfer = {
        from: account.address,
        to: bob.account.address,
        value: USDC(2),
        validAfter: 0n,
        validBefore,
        nonce: keccak256(toHex("bytes-1")),
      };
      const signature = await signAsAccount(account, (await typed(d, "TransferWithAuthorization", transfer)) as TypedDataDefinition);
      await d.usdc.write.transferWithAuthorization([
        account.address,
        bob.account.address,
        USDC(2),
        0n,
        validBefore,
        transfer.nonce,
        signature,
      ]);
      assert.equal(await d.usdc.read.balanceOf([bob.account.address]), USDC(2));

      const nonce = keccak256(toHex("bytes-2"));
      const cancel = await signAsAccount(
        account,
        (await typed(d, "CancelAuthorization", { authorizer: account.address, nonce })) as TypedDataDefinition,
      );
      await d.usdc.write.cancelAuthorization([account.address, nonce, cancel]);
      assert.equal(await d.usdc.read.authorizationState([account.address, nonce]), true);
    });

    it("an account without code signs the bytes overload with its 65-byte ECDSA signature", async () => {
      const d = await networkHelpers.loadFixture(deployUsdc);
      const { alice, bob } = d;
      const deadline = BigInt(await networkHelpers.time.latest()) + 3600n;
      const signature = await alice.signTypedData({
        account: alice.account,
        ...permitTypedData({
          tokenDomain: await usdcDomain(d.usdc.address),
          owner: alice.account.address,
          spender: bob.account.address,
          value: USDC(1),
          nonce: 0n,
          deadline,
        }),
      });
      await d.usdc.write.permit([alice.account.address, bob.account.address, USDC(1), deadline, signature]);
      assert.equal(await d.usdc.read.allowance([alice.account.address, bob.account.address]), USDC(1));
    });
  });
});
