// Smart-contract accounts for the contract tests: OpenZeppelin's account with several owners and a threshold
// (contracts/test/MultiOwnerAccount.sol), deployed through its CREATE2 factory or only predicted (an account
// that signs before it exists, with an ERC-6492 wrapper), and the signatures its ERC-1271 check accepts.
import { encodeFunctionData, hashTypedData, type Address, type Hex, type TypedDataDefinition } from "viem";
import { generatePrivateKey, privateKeyToAccount, type PrivateKeyAccount } from "viem/accounts";
import { erc6492Signature, multiOwnerSignature } from "../../lib/multi-owner-account.ts";
import { permitTypedData, receiveAuthorizationTypedData, type PaymentOrder } from "../../sdk/src/payment-order.ts";
import { USDC, usdcDomain, viem, type Payments } from "./fixture.ts";

/** A multi-owner account: its address, its owners (keys that never hold funds: they only sign), its threshold,
 * and the factory call that deploys it. */
export type SmartAccount = {
  address: Address;
  owners: PrivateKeyAccount[];
  threshold: number;
  factory: Address;
  factoryCalldata: Hex;
};

let nextSalt = 1_000n;

/** A 2-of-3 account (or `owners`/`threshold` given), deployed unless `deployed` is false (then only its address
 * is known, as for a wallet that has not sent a transaction yet). */
export async function smartAccount(
  opts: { owners?: number; threshold?: number; deployed?: boolean; keys?: Hex[]; salt?: bigint } = {},
): Promise<SmartAccount> {
  const factory = await viem.deployContract("MultiOwnerAccountFactory");
  // Fixed keys and salt (`keys`, `salt`) give the same account and signatures on every run: the gas benchmark's.
  const keys = opts.keys ?? Array.from({ length: opts.owners ?? 3 }, () => generatePrivateKey());
  const owners = keys.map((key) => privateKeyToAccount(key));
  const threshold = opts.threshold ?? 2;
  const signers = owners.map((owner) => owner.address);
  const salt = `0x${(opts.salt ?? nextSalt++).toString(16).padStart(64, "0")}` as Hex;
  const args = [signers, BigInt(threshold), salt] as const;
  const address = await factory.read.predictAccount(args);
  if (opts.deployed ?? true) await factory.write.createAccount(args);
  const factoryCalldata = encodeFunctionData({ abi: factory.abi, functionName: "createAccount", args });
  return { address, owners, threshold, factory: factory.address, factoryCalldata };
}

/** The account's ERC-1271 signature of `typedData` by its first `count` owners (the threshold unless given; see
 * lib/multi-owner-account.ts), wrapped in ERC-6492 (the account's factory call) when `erc6492` is set. */
export async function signAsAccount(
  account: SmartAccount,
  typedData: TypedDataDefinition,
  opts: { count?: number; erc6492?: boolean } = {},
): Promise<Hex> {
  const signature = await multiOwnerSignature(account.owners.slice(0, opts.count ?? account.threshold), hashTypedData(typedData));
  return opts.erc6492 ? erc6492Signature(account, signature) : signature;
}

/** The account's permit of `order.amount` to the router in RehearsalUsdc, bound to `order` by its deadline. */
export async function accountPermit(
  p: Payments,
  account: SmartAccount,
  order: PaymentOrder,
  opts: { count?: number; erc6492?: boolean } = {},
) {
  const usdc = await viem.getContractAt("RehearsalUsdc", order.token);
  const typedData = permitTypedData({
    tokenDomain: await usdcDomain(order.token),
    owner: account.address,
    spender: p.router.address,
    value: order.amount,
    nonce: await usdc.read.nonces([account.address]),
    deadline: await p.router.read.permitDeadline([order]),
  });
  return signAsAccount(account, typedData as TypedDataDefinition, opts);
}

/** The account's receive authorization of `order.amount` to the router in RehearsalUsdc, bound to `order`. */
export async function accountAuthorization(
  p: Payments,
  account: SmartAccount,
  order: PaymentOrder,
  opts: { count?: number; erc6492?: boolean } = {},
) {
  const typedData = receiveAuthorizationTypedData({
    tokenDomain: await usdcDomain(order.token),
    from: account.address,
    to: p.router.address,
    value: order.amount,
    validAfter: 0n,
    validBefore: order.expiry,
    nonce: await p.router.read.authorizationNonce([order]),
  });
  return signAsAccount(account, typedData as TypedDataDefinition, opts);
}

/** Funds `account` with 100 USDC of RehearsalUsdc at `token` (minted by its owner, the fixture's admin). */
export async function fundAccount(token: Address, account: SmartAccount) {
  const usdc = await viem.getContractAt("RehearsalUsdc", token);
  await usdc.write.mint([account.address, USDC(100)]);
}
