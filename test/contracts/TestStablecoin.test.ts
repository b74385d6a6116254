import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { getAddress, hashDomain, recoverTypedDataAddress, serializeSignature, zeroAddress, zeroHash } from "viem";
import { permitSignatureParts, permitTypedData } from "../../sdk/src/payment-order.ts";
import { USDC, chainId, deployPayments, networkHelpers, tokenAs, viem, type Payments, type Wallet } from "./fixture.ts";

/** `owner`'s EIP-2612 permit of `value` to `spender` with the token's current nonce. */
async function permitOf(p: Payments, owner: Wallet, spender: `0x${string}`, value: bigint, deadline: bigint, nonce?: bigint) {
  const signature = await owner.signTypedData({
    account: owner.account,
    ...permitTypedData({
      tokenDomain: { name: "USD Coin (test)", version: "1", chainId, verifyingContract: p.token.address },
      owner: owner.account.address,
      spender,
      value,
      nonce: nonce ?? (await p.token.read.nonces([owner.account.address])),
      deadline,
    }),
  });
  return permitSignatureParts(signature);
}

describe("TestStablecoin", () => {
  it("has six decimals, its name and symbol, and the admin as owner", async () => {
    const p = await networkHelpers.loadFixture(deployPayments);
    assert.equal(await p.token.read.decimals(), 6);
    assert.equal(await p.token.read.name(), "USD Coin (test)");
    assert.equal(await p.token.read.symbol(), "USDC");
    assert.equal(await p.token.read.owner(), getAddress(p.accounts.admin.account.address));
    assert.equal(await p.token.read.totalSupply(), USDC(2_000), "the fixture minted to the payer and the agent");
  });

  it("the owner mints to any account", async () => {
    const p = await networkHelpers.loadFixture(deployPayments);
    const { stranger } = p.accounts;
    await viem.assertions.emitWithArgs(p.token.write.mint([stranger.account.address, USDC(12.5)]), p.token, "Transfer", [
      zeroAddress,
      getAddress(stranger.account.address),
      USDC(12.5),
    ]);
    assert.equal(await p.token.read.balanceOf([stranger.account.address]), USDC(12.5));
    assert.equal(await p.token.read.totalSupply(), USDC(2_012.5));
  });

  it("only the owner mints (OwnableUnauthorizedAccount)", async () => {
    const p = await networkHelpers.loadFixture(deployPayments);
    for (const caller of [p.accounts.stranger, p.accounts.payer, p.accounts.agent]) {
      await viem.assertions.revertWithCustomErrorWithArgs(
        (await tokenAs(p, caller)).write.mint([caller.account.address, 1n]),
        p.token,
        "OwnableUnauthorizedAccount",
        [getAddress(caller.account.address)],
      );
    }
    assert.equal(await p.token.read.totalSupply(), USDC(2_000));
  });

  it("minting passes to a new owner after transferOwnership", async () => {
    const p = await networkHelpers.loadFixture(deployPayments);
    const { admin, stranger } = p.accounts;
    await viem.assertions.emitWithArgs(p.token.write.transferOwnership([stranger.account.address]), p.token, "OwnershipTransferred", [
      getAddress(admin.account.address),
      getAddress(stranger.account.address),
    ]);
    await (await tokenAs(p, stranger)).write.mint([stranger.account.address, 1n]);
    await viem.assertions.revertWithCustomErrorWithArgs(
      p.token.write.mint([admin.account.address, 1n]),
      p.token,
      "OwnableUnauthorizedAccount",
      [getAddress(admin.account.address)],
    );
    assert.equal(await p.token.read.balanceOf([stranger.account.address]), 1n);
  });

  describe("permit (EIP-2612)", () => {
    it("sets the allowance from an off-chain signature, submitted by anyone, and bumps the nonce", async () => {
      const p = await networkHelpers.loadFixture(deployPayments);
      const { payer, stranger, relayer } = p.accounts;
      const deadline = BigInt(await networkHelpers.time.latest()) + 600n;
      const { v, r, s } = await permitOf(p, payer, stranger.account.address, USDC(25), deadline);
      await viem.assertions.emitWithArgs(
        (await tokenAs(p, relayer)).write.permit([payer.account.address, stranger.account.address, USDC(25), deadline, v, r, s]),
        p.token,
        "Approval",
        [getAddress(payer.account.address), getAddress(stranger.account.address), USDC(25)],
      );
      assert.equal(await p.token.read.allowance([payer.account.address, stranger.account.address]), USDC(25));
      assert.equal(await p.token.read.nonces([payer.account.address]), 1n);

      await (await tokenAs(p, stranger)).write.transferFrom([payer.account.address, stranger.account.address, USDC(25)]);
      assert.equal(await p.token.read.balanceOf([stranger.account.address]), USDC(25));
      assert.equal(await p.token.read.allowance([payer.account.address, stranger.account.address]), 0n);
    });

    it("refuses a replayed permit with ERC2612InvalidSigner", async () => {
      const p = await networkHelpers.loadFixture(deployPayments);
      const { payer, stranger } = p.accounts;
      const { v, r, s } = await permitOf(p, payer, stranger.account.address, 1n, 2n ** 64n);
      const args = [payer.account.address, stranger.account.address, 1n, 2n ** 64n, v, r, s] as const;
      await p.token.write.permit(args);
      // With the nonce now 1, the same signature recovers some unrelated address.
      const recovered = await recoverTypedDataAddress({
        ...permitTypedData({
          tokenDomain: { name: "USD Coin (test)", version: "1", chainId, verifyingContract: p.token.address },
          owner: payer.account.address,
          spender: stranger.account.address,
          value: 1n,
          nonce: 1n,
          deadline: 2n ** 64n,
        }),
        signature: serializeSignature({ r, s, v: BigInt(v) }),
      });
      assert.notEqual(recovered, getAddress(payer.account.address));
      await viem.assertions.revertWithCustomErrorWithArgs(p.token.write.permit(args), p.token, "ERC2612InvalidSigner", [
        recovered,
        getAddress(payer.account.address),
      ]);
      assert.equal(await p.token.read.nonces([payer.account.address]), 1n);
    });

    it("refuses a permit signed by someone else with ERC2612InvalidSigner(signer, owner)", async () => {
      const p = await networkHelpers.loadFixture(deployPayments);
      const { payer, stranger } = p.accounts;
      // The stranger signs a permit claiming to be the payer, using the payer's nonce.
      const signature = await stranger.signTypedData({
        account: stranger.account,
        ...permitTypedData({
          tokenDomain: { name: "USD Coin (test)", version: "1", chainId, verifyingContract: p.token.address },
          owner: payer.account.address,
          spender: stranger.account.address,
          value: USDC(1_000),
          nonce: 0n,
          deadline: 2n ** 64n,
        }),
      });
      const { v, r, s } = permitSignatureParts(signature);
      await viem.assertions.revertWithCustomErrorWithArgs(
        p.token.write.permit([payer.account.address, stranger.account.address, USDC(1_000), 2n ** 64n, v, r, s]),
        p.token,
        "ERC2612InvalidSigner",
        [getAddress(stranger.account.address), getAddress(payer.account.address)],
      );
      assert.equal(await p.token.read.allowance([payer.account.address, stranger.account.address]), 0n);
    });

    it("refuses an expired permit with ERC2612ExpiredSignature(deadline)", async () => {
      const p = await networkHelpers.loadFixture(deployPayments);
      const { payer, stranger } = p.accounts;
      const deadline = BigInt(await networkHelpers.time.latest()) + 60n;
      const { v, r, s } = await permitOf(p, payer, stranger.account.address, 1n, deadline);
      await networkHelpers.time.increaseTo(deadline + 1n);
      await viem.assertions.revertWithCustomErrorWithArgs(
        p.token.write.permit([payer.account.address, stranger.account.address, 1n, deadline, v, r, s]),
        p.token,
        "ERC2612ExpiredSignature",
        [deadline],
      );
    });

    it("uses the EIP-712 domain (token name, version 1, this chain, this token)", async () => {
      const p = await networkHelpers.loadFixture(deployPayments);
      const domain = { name: "USD Coin (test)", version: "1", chainId: BigInt(chainId), verifyingContract: p.token.address } as const;
      assert.equal(
        await p.token.read.DOMAIN_SEPARATOR(),
        hashDomain({
          domain,
          types: {
            EIP712Domain: [
              { name: "name", type: "string" },
              { name: "version", type: "string" },
              { name: "chainId", type: "uint256" },
              { name: "verifyingContract", type: "address" },
            ],
          },
        }),
      );
      const [fields, name, version, domainChainId, verifyingContract, salt] = await p.token.read.eip712Domain();
      assert.deepEqual(
        [fields, name, version, domainChainId, verifyingContract, salt],
        ["0x0f", "USD Coin (test)", "1", BigInt(chainId), getAddress(p.token.address), zeroHash],
      );
    });
  });
});
