// Signatures of contracts/test/MultiOwnerAccount.sol, the multi-owner smart-contract account (OpenZeppelin's
// Account with MultiSignerERC7913) that the contract tests and `npm run rehearsal` pay from: what its ERC-1271
// `isValidSignature` accepts, and, for an account not deployed yet, the ERC-6492 wrapper that names the factory
// call deploying it.
import {
  encodeAbiParameters,
  hashTypedData,
  keccak256,
  serializeErc6492Signature,
  type Address,
  type Hex,
  type TypedDataDefinition,
} from "viem";
import type { Signer } from "../sdk/src/payment-order.ts";

/** An owner: a key that signs hashes for the account (it holds no funds). */
export type AccountOwner = { address: Address; sign: (parameters: { hash: Hex }) => Promise<Hex> };

/** The account's signature of `hash` by `owners` (as many as its threshold for a valid one): `abi.encode(signers,
 * signatures)`, signers in the order of their keccak256, as MultiSignerERC7913 reads it. */
export async function multiOwnerSignature(owners: readonly AccountOwner[], hash: Hex): Promise<Hex> {
  const signed = await Promise.all(owners.map(async (owner) => ({ signer: owner.address as Hex, signature: await owner.sign({ hash }) })));
  signed.sort((a, b) => (keccak256(a.signer) < keccak256(b.signer) ? -1 : 1));
  return encodeAbiParameters([{ type: "bytes[]" }, { type: "bytes[]" }], [signed.map((s) => s.signer), signed.map((s) => s.signature)]);
}

/** `signature` wrapped in ERC-6492 with the factory call that deploys the account. */
export function erc6492Signature(deployment: { factory: Address; factoryCalldata: Hex }, signature: Hex): Hex {
  return serializeErc6492Signature({ address: deployment.factory, data: deployment.factoryCalldata, signature });
}

/** The account as a signer of typed data (what the SDK's signing helpers take): its address, and its ERC-1271
 * signature by `owners` of the typed data's EIP-712 hash, ERC-6492-wrapped when `undeployed` gives the factory
 * call that deploys it. */
export function multiOwnerSigner(
  address: Address,
  owners: readonly AccountOwner[],
  undeployed?: { factory: Address; factoryCalldata: Hex },
): Signer {
  return {
    address,
    signTypedData: async (typedData) => {
      const signature = await multiOwnerSignature(owners, hashTypedData(typedData as TypedDataDefinition));
      return undeployed ? erc6492Signature(undeployed, signature) : signature;
    },
  };
}
