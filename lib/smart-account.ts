// Smart-contract accounts on a local chain, for `npm run demo` and the end-to-end suites: OpenZeppelin's account
// with several owners and a threshold (contracts/test/MultiOwnerAccount.sol), made at a CREATE2 address by its
// factory (contracts/test/MultiOwnerAccountFactory.sol), which is deployed from the build's artifact. Such an
// account signs through ERC-1271: its signature is `abi.encode(signers, signatures)` of `threshold` of its owners,
// far longer than 65 bytes, and a token with USDC v2.2's `bytes` overloads (the local stack's) checks it by asking
// the account. Before the account is deployed, the same signature wrapped in ERC-6492 (the factory call that
// deploys it) is what verifies. accountSigner() makes an account a viem account that signs typed data that way, so
// the SDK's signing functions sign for it as they do for a key.
import { readFile } from "node:fs/promises";
import {
  type Address,
  type Chain,
  type Hex,
  type LocalAccount,
  type PublicClient,
  type Transport,
  type TypedDataDefinition,
  type WalletClient,
  encodeAbiParameters,
  encodeFunctionData,
  getAddress,
  hashTypedData,
  keccak256,
  parseAbi,
  serializeErc6492Signature,
  toHex,
} from "viem";
import { toAccount } from "viem/accounts";

/** An owner of an account: a key that signs a hash (a viem private-key account; it needs no funds). */
export type AccountOwner = { address: Address; sign(args: { hash: Hex }): Promise<Hex> };

/** A multi-owner account: its address (the same before and after its deployment), its owners and threshold, and
 * the factory call that deploys it (what an ERC-6492 signature carries). */
export type MultiOwnerAccount = {
  address: Address;
  owners: readonly AccountOwner[];
  threshold: number;
  factory: Address;
  factoryCalldata: Hex;
};

const accountFactoryAbi = parseAbi([
  "function createAccount(bytes[] signers, uint64 threshold, bytes32 salt) returns (address account)",
  "function predictAccount(bytes[] signers, uint64 threshold, bytes32 salt) view returns (address)",
]);

const FACTORY_ARTIFACT = new URL("../artifacts/contracts/test/MultiOwnerAccountFactory.sol/MultiOwnerAccountFactory.json", import.meta.url);

type Wallet = WalletClient<Transport, Chain | undefined, LocalAccount>;

async function mined(publicClient: PublicClient, hash: Hex) {
  const receipt = await publicClient.waitForTransactionReceipt({ hash, pollingInterval: 50 });
  if (receipt.status !== "success") throw new Error(`transaction ${hash} reverted`);
  return receipt;
}

/** Deploys a MultiOwnerAccountFactory from `wallet` (the build's artifact: `npm run build` writes it); resolves to
 * its address. */
export async function deployAccountFactory(wallet: Wallet, publicClient: PublicClient): Promise<Address> {
  const artifact = JSON.parse(
    await readFile(FACTORY_ARTIFACT, "utf8").catch(() => {
      throw new Error(`no ${FACTORY_ARTIFACT.pathname}: run \`npm run build\` first`);
    }),
  ) as { bytecode: Hex };
  const hash = await wallet.deployContract({ abi: [], bytecode: artifact.bytecode, chain: wallet.chain });
  const { contractAddress } = await mined(publicClient, hash);
  if (!contractAddress) throw new Error("the account factory's deployment created no contract");
  return getAddress(contractAddress);
}

/** The account of `owners` (a `threshold` of them must sign) and `salt` that `factory` makes: its address, read from
 * the factory, whether it is deployed or not. */
export async function predictAccount(
  publicClient: PublicClient,
  factory: Address,
  opts: { owners: readonly AccountOwner[]; threshold: number; salt: bigint },
): Promise<MultiOwnerAccount> {
  const args = [opts.owners.map((owner) => owner.address as Hex), BigInt(opts.threshold), toHex(opts.salt, { size: 32 })] as const;
  const address = await publicClient.readContract({ address: factory, abi: accountFactoryAbi, functionName: "predictAccount", args });
  const factoryCalldata = encodeFunctionData({ abi: accountFactoryAbi, functionName: "createAccount", args });
  return { address, owners: opts.owners, threshold: opts.threshold, factory, factoryCalldata };
}

/** Deploys `account` through its factory, from `wallet` (anyone may). */
export async function deployAccount(wallet: Wallet, publicClient: PublicClient, account: MultiOwnerAccount): Promise<void> {
  await mined(publicClient, await wallet.sendTransaction({ to: account.factory, data: account.factoryCalldata, chain: wallet.chain }));
}

/** The account's ERC-1271 signature of `typedData`: `abi.encode(signers, signatures)` by its first `count` owners
 * (the threshold unless given), each signing the typed data's hash itself, signers in the order of their
 * keccak256, as OpenZeppelin's MultiSignerERC7913 checks them. Wrapped in ERC-6492 (the account's factory call)
 * with `erc6492`, for an account not deployed yet. */
export async function signAsAccount(
  account: MultiOwnerAccount,
  typedData: TypedDataDefinition,
  opts: { count?: number; erc6492?: boolean } = {},
): Promise<Hex> {
  const hash = hashTypedData(typedData);
  const signing = account.owners.slice(0, opts.count ?? account.threshold);
  const signed = await Promise.all(signing.map(async (owner) => ({ signer: owner.address as Hex, signature: await owner.sign({ hash }) })));
  signed.sort((a, b) => (keccak256(a.signer) < keccak256(b.signer) ? -1 : 1));
  const signature = encodeAbiParameters(
    [{ type: "bytes[]" }, { type: "bytes[]" }],
    [signed.map((s) => s.signer), signed.map((s) => s.signature)],
  );
  if (!opts.erc6492) return signature;
  return serializeErc6492Signature({ address: account.factory, data: account.factoryCalldata, signature });
}

/** `account` as a viem account that signs typed data as the account (signAsAccount with `opts`), for the SDK's
 * signing functions. It sends no transaction and signs no plain message. */
export function accountSigner(account: MultiOwnerAccount, opts: { count?: number; erc6492?: boolean } = {}): LocalAccount {
  const refuse = () => Promise.reject(new Error("a smart-contract account signs typed data only here"));
  return toAccount({
    address: account.address,
    signTypedData: (typedData) => signAsAccount(account, typedData as TypedDataDefinition, opts),
    signMessage: refuse,
    signTransaction: refuse,
  });
}
