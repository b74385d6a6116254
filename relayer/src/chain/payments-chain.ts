// The relayer's view of the payment contracts: the deployment's router and split factories (one per stablecoin;
// each asset, a device, has its own split in each, which the factory creates), the stablecoins they settle in
// (read from the chain, never configured by hand), the quote signer that locks order prices, and the relayer's hot
// wallet.
import {
  AbiDecodingDataSizeTooSmallError,
  type Address,
  BaseError,
  BlockNotFoundError,
  ContractFunctionRevertedError,
  ContractFunctionZeroDataError,
  type Hex,
  type PublicClient,
  createPublicClient,
  defineChain,
  erc20Abi,
  fallback,
  hashDomain,
  hashTypedData,
  http,
  parseAbi,
  type Transport,
  zeroAddress,
  toHex,
  zeroHash,
} from "viem";
import { type PrivateKeyAccount, privateKeyToAccount } from "viem/accounts";
import { assetSplitAbi, assetSplitFactoryAbi, paymentRouterAbi } from "../../../generated/abis.ts";
import {
  type DeploymentRecord,
  SPLIT_FACTORY,
  loadDeploymentRecord,
  splitFactoriesOf,
  waitForDeploymentRecord,
} from "../../../ignition/deployment-records.ts";
import { PERMIT2_ADDRESS, type PaymentOrder, orderTypedData } from "../../../sdk/src/payment-order.ts";
import { type Config, rpcUrls } from "../config.ts";
import type { Logger } from "../logger.ts";
import { predictDepositAddress } from "./deposit-address.ts";
import { predictSplitAddress } from "./split-address.ts";

export type StablecoinInfo = {
  symbol: string;
  address: Address;
  decimals: number;
  /** The AssetSplitFactory whose splits settle in this token. */
  factory: Address;
  /** The token's EIP-712 domain, for the permits and authorizations wallets sign; null for a token without
   * EIP-2612 permits (it has no EIP-3009 either: its orders are paid through Permit2, by transfer or in cash). */
  domain: { name: string; version: string; chainId: number; verifyingContract: Address } | null;
  /** Whether the token has EIP-3009 (USDC's transfers by signed authorization): its orders can be paid on
   * the authorization rail (PaymentRouter.payWithAuthorization) as well as by permit. Read from the chain
   * (the token answers authorizationState), never from a list of names. */
  eip3009: boolean;
  /** Whether Uniswap's Permit2 is on this chain at its canonical address: the token's orders can then be paid on
   * the Permit2 rail (PaymentRouter.payWithPermit2), whatever signatures the token itself has. */
  permit2: boolean;
  /** Whether the router has the transfer rail (PaymentRouter.payFromDeposit) and puts the token's deposit
   * addresses where the relayer computes them (predictDepositAddress, checked against the router's own
   * depositAddress once): only then do orders carry an EIP-681 payment request to a deposit address. */
  transfer: boolean;
};

const permitExtrasAbi = parseAbi([
  "function DOMAIN_SEPARATOR() view returns (bytes32)",
  "function version() view returns (string)",
  "function nonces(address owner) view returns (uint256)",
  "function authorizationState(address authorizer, bytes32 nonce) view returns (bool)",
  "function eip712Domain() view returns (bytes1 fields, string name, string version, uint256 chainId, address verifyingContract, bytes32 salt, uint256[] extensions)",
]);

export type PaymentsChain = Awaited<ReturnType<typeof connectPaymentsChain>>;

/** Whether a failed read was the contract's answer (a revert, no data, or data too short for the function: a
 * contract without that function, or one whose fallback accepts any call), not a failure to reach the chain. */
function contractAnswered(error: unknown): boolean {
  return (
    error instanceof BaseError &&
    Boolean(
      error.walk(
        (e) =>
          e instanceof ContractFunctionRevertedError ||
          e instanceof ContractFunctionZeroDataError ||
          e instanceof AbiDecodingDataSizeTooSmallError,
      ),
    )
  );
}

export async function connectPaymentsChain(config: Config, logger: Logger) {
  const deployment: DeploymentRecord =
    config.DEPLOYMENT_WAIT_SECONDS > 0
      ? await waitForDeploymentRecord(config.DEPLOYMENT, config.DEPLOYMENT_WAIT_SECONDS * 1_000)
      : await loadDeploymentRecord(config.DEPLOYMENT);
  const router = deployment.contracts.PaymentRouter?.address;
  const splitFactories = splitFactoriesOf(deployment).map((f) => f.address);
  // The main stablecoin's factory: a device's split in it is the one the relayer records (devices.split_address).
  const splitFactory = deployment.contracts[SPLIT_FACTORY]?.address;
  if (!router || !splitFactory) {
    throw new Error(`deployment ${config.DEPLOYMENT} has no PaymentRouter or AssetSplitFactory`);
  }
  const urls = rpcUrls(config.RPC_URL);
  const chain = defineChain({
    id: deployment.chainId,
    name: config.CHAIN_NAME,
    nativeCurrency: { name: "Ether", symbol: "ETH", decimals: 18 },
    rpcUrls: { default: { http: urls } },
  });
  const publicClient: PublicClient = createPublicClient({ chain, transport: rpcTransport(urls) });
  const quoteSigner: PrivateKeyAccount = privateKeyToAccount(config.QUOTE_SIGNER_PRIVATE_KEY);
  const relayerAccount: PrivateKeyAccount = privateKeyToAccount(config.RELAYER_PRIVATE_KEY);

  let tokens: Promise<Map<string, StablecoinInfo>> | undefined;
  const deadlines = new Map<string, bigint>();

  /** The stablecoin of `factory`, or undefined if the router no longer pays through it (another factory of its
   * token replaced it, or the token was removed). */
  async function readStablecoin(factory: Address): Promise<StablecoinInfo | undefined> {
    const address = await publicClient.readContract({ address: factory, abi: assetSplitFactoryAbi, functionName: "token" });
    const taken = await publicClient.readContract({
      address: router!,
      abi: paymentRouterAbi,
      functionName: "tokenSplitFactory",
      args: [address],
    });
    if (taken.toLowerCase() !== factory.toLowerCase()) {
      logger.warn("the router does not pay through a split factory of the deployment: its token is not offered", {
        factory,
        token: address,
      });
      return undefined;
    }
    const [symbol, decimals, name] = await Promise.all([
      publicClient.readContract({ address, abi: erc20Abi, functionName: "symbol" }),
      publicClient.readContract({ address, abi: erc20Abi, functionName: "decimals" }),
      publicClient.readContract({ address, abi: erc20Abi, functionName: "name" }),
    ]);
    const [domain, eip3009, permit2Code, transfer] = await Promise.all([
      readPermitDomain(address, name, deployment.chainId),
      hasEip3009(address),
      publicClient.getCode({ address: PERMIT2_ADDRESS }),
      hasTransferRail(address),
    ]);
    return { symbol, address, decimals, factory, domain, eip3009, permit2: (permit2Code?.length ?? 0) > 2, transfer };
  }

  /** Whether the router answers depositAddress with the address computed here, for a probe order in `token`. A
   * router without it (deployed before the transfer rail) is a no, and so is one whose answer differs (its
   * OrderDeposit is not the code this relayer was built with): a wallet must never be sent to an address the
   * router cannot collect from. A failure to reach the chain is thrown. */
  async function hasTransferRail(token: Address): Promise<boolean> {
    const probe: PaymentOrder = { orderId: 0n, deviceId: zeroHash, token, split: zeroAddress, amount: 1n, expiry: 0n };
    try {
      const onChain = await publicClient.readContract({
        address: router!,
        abi: paymentRouterAbi,
        functionName: "depositAddress",
        args: [probe],
      });
      const computed = predictDepositAddress(router!, toHex(permitDeadline(probe), { size: 32 }), token);
      if (onChain === computed) return true;
      logger.error("the router's deposit addresses differ from the relayer's: the transfer rail is off", { onChain, computed });
      return false;
    } catch (error) {
      if (contractAnswered(error)) return false;
      throw error;
    }
  }

  /** Whether `token` answers EIP-3009's authorizationState. A revert or an answer that is not a bool (a
   * token without it, or one whose fallback accepts any call) is a no; a failure to reach the chain is
   * thrown, so that it is asked again rather than remembered as a no. */
  async function hasEip3009(token: Address): Promise<boolean> {
    try {
      await publicClient.readContract({
        address: token,
        abi: permitExtrasAbi,
        functionName: "authorizationState",
        args: [zeroAddress, zeroHash],
      });
      return true;
    } catch (error) {
      if (contractAnswered(error)) return false;
      throw error;
    }
  }

  /** Whether `authorizer` has used or cancelled the EIP-3009 authorization `nonce` at `token`. */
  function authorizationUsed(token: Address, authorizer: Address, nonce: Hex): Promise<boolean> {
    return publicClient.readContract({
      address: token,
      abi: permitExtrasAbi,
      functionName: "authorizationState",
      args: [authorizer, nonce],
    });
  }

  /** The token's EIP-712 domain for EIP-2612 permits, or null if it has none (no nonces, or no domain). */
  async function readPermitDomain(address: Address, fallbackName: string, chainId: number): Promise<StablecoinInfo["domain"]> {
    try {
      await publicClient.readContract({ address, abi: permitExtrasAbi, functionName: "nonces", args: [zeroAddress] });
    } catch (error) {
      if (contractAnswered(error)) return null;
      throw error;
    }
    try {
      const [, name, version] = await publicClient.readContract({
        address,
        abi: permitExtrasAbi,
        functionName: "eip712Domain",
      });
      return { name, version, chainId, verifyingContract: address } as StablecoinInfo["domain"];
    } catch {
      // Tokens without ERC-5267 (USDC): name() and version(), checked against DOMAIN_SEPARATOR().
      const version = await publicClient.readContract({ address, abi: permitExtrasAbi, functionName: "version" }).catch(() => "1");
      const domain: StablecoinInfo["domain"] = { name: fallbackName, version, chainId, verifyingContract: address };
      const separator = await publicClient
        .readContract({ address, abi: permitExtrasAbi, functionName: "DOMAIN_SEPARATOR" })
        .catch((error: unknown) => {
          if (contractAnswered(error)) return null;
          throw error;
        });
      if (separator === null) return null;
      if (hashDomain({ domain: { ...domain, chainId: BigInt(chainId) }, types: { EIP712Domain: eip712DomainFields } }) !== separator) {
        throw new Error(`cannot determine the EIP-712 domain of token ${address}`);
      }
      return domain;
    }
  }

  /** The stablecoins payments can be made in, by symbol (read from the chain once, then cached). */
  function stablecoins(): Promise<Map<string, StablecoinInfo>> {
    tokens ??= Promise.all(splitFactories.map(readStablecoin)).then(
      (read) => {
        const list = read.filter((t) => t !== undefined);
        logger.info("stablecoins read from the chain", {
          tokens: list.map((t) => ({ symbol: t.symbol, address: t.address, factory: t.factory })),
        });
        return new Map(list.map((t) => [t.symbol, t]));
      },
      (error) => {
        tokens = undefined; // not cached: the next call asks the chain again
        throw error;
      },
    );
    return tokens;
  }

  /** Checks that the configured accounts hold the roles they need; logs what is missing. */
  async function checkRoles(): Promise<{ quoteSigner: boolean; agent: boolean }> {
    const [quoteSignerRole, agentRole] = await Promise.all([
      publicClient.readContract({ address: router, abi: paymentRouterAbi, functionName: "QUOTE_SIGNER_ROLE" }),
      publicClient.readContract({ address: router, abi: paymentRouterAbi, functionName: "AGENT_ROLE" }),
    ]);
    const [hasSigner, hasAgent] = await Promise.all([
      publicClient.readContract({
        address: router,
        abi: paymentRouterAbi,
        functionName: "hasRole",
        args: [quoteSignerRole, quoteSigner.address],
      }),
      publicClient.readContract({
        address: router,
        abi: paymentRouterAbi,
        functionName: "hasRole",
        args: [agentRole, relayerAccount.address],
      }),
    ]);
    if (!hasSigner) logger.warn("the quote signer lacks the router's quote-signer role", { account: quoteSigner.address });
    if (!hasAgent) logger.warn("the relayer account lacks the router's agent role", { account: relayerAccount.address });
    return { quoteSigner: hasSigner, agent: hasAgent };
  }

  /** The split of asset key `assetKey` (splitAssetKey of a device and its first recipients) in `token` (default:
   * the main stablecoin), predicted off-chain: the address is the same before and after its creation. */
  async function splitOf(assetKey: Hex, token?: StablecoinInfo): Promise<{ split: Address; token: StablecoinInfo }> {
    const coin = token ?? [...(await stablecoins()).values()].find((t) => t.factory === splitFactory);
    if (!coin) throw new Error("the router does not pay through the deployment's main split factory");
    return { split: predictSplitAddress(coin.factory, coin.address, assetKey), token: coin };
  }

  /** The asset-owner and operator recipients `split` pays now (its legs() on-chain). */
  async function splitRecipients(split: Address): Promise<{ assetOwner: Address; operator: Address }> {
    const [recipients] = await publicClient.readContract({ address: split, abi: assetSplitAbi, functionName: "legs" });
    return { assetOwner: recipients[0], operator: recipients[1] };
  }

  /** Whether block `blockNumber` on the chain is the one with hash `blockHash` (false: another block, or none
   * at that height). A failure to ask is thrown. */
  async function isCanonicalBlock(blockNumber: bigint, blockHash: Hex): Promise<boolean> {
    try {
      return (await publicClient.getBlock({ blockNumber })).hash === blockHash;
    } catch (error) {
      if (error instanceof BlockNotFoundError) return false;
      throw error;
    }
  }

  /** The order's EIP-712 digest under the router's domain (the router's hashOrder, computed here): also the permit
   * deadline that binds a permit to this order. */
  function permitDeadline(order: PaymentOrder): bigint {
    // A pure function of the order's fields, asked for on every read of a pending order (GET
    // /v1/orders/{id}, the checkout page): remembered for the most recent orders.
    const key = `${order.orderId}:${order.deviceId}:${order.token}:${order.split}:${order.amount}:${order.expiry}`;
    let deadline = deadlines.get(key);
    if (deadline === undefined) {
      deadline = BigInt(hashTypedData(orderTypedData(deployment.chainId, router, order)));
      if (deadlines.size >= DEADLINE_CACHE_SIZE) deadlines.delete(deadlines.keys().next().value!);
      deadlines.set(key, deadline);
    }
    return deadline;
  }

  let multicall3: Promise<boolean> | undefined;
  /** Whether Multicall3 is at its canonical address on this chain (asked once; a failure to ask is asked again). */
  function hasMulticall3(): Promise<boolean> {
    multicall3 ??= publicClient.getCode({ address: MULTICALL3_ADDRESS }).then(
      (code) => (code?.length ?? 0) > 2,
      (error) => {
        multicall3 = undefined;
        throw error;
      },
    );
    return multicall3;
  }

  /** The balances of `owners` in `token`, in their order: one Multicall3 call per BALANCE_BATCH owners where the
   * chain has Multicall3, otherwise BALANCE_BATCH balanceOf reads at a time, in parallel. A failed read is
   * thrown. */
  async function balancesOf(token: Address, owners: readonly Address[]): Promise<bigint[]> {
    const batched = await hasMulticall3();
    const balances: bigint[] = [];
    for (let i = 0; i < owners.length; i += BALANCE_BATCH) {
      const batch = owners.slice(i, i + BALANCE_BATCH);
      if (batched) {
        balances.push(
          ...(await publicClient.multicall({
            contracts: batch.map((owner) => ({ address: token, abi: erc20Abi, functionName: "balanceOf", args: [owner] }) as const),
            multicallAddress: MULTICALL3_ADDRESS,
            allowFailure: false,
          })),
        );
      } else {
        balances.push(
          ...(await Promise.all(
            batch.map((owner) => publicClient.readContract({ address: token, abi: erc20Abi, functionName: "balanceOf", args: [owner] })),
          )),
        );
      }
    }
    return balances;
  }

  /** Whether the split of `assetKey` exists on-chain (`factory`'s isSplitCreated; default: the main factory). */
  const isSplitCreated = (assetKey: Hex, factory: Address = splitFactory): Promise<boolean> =>
    publicClient.readContract({ address: factory, abi: assetSplitFactoryAbi, functionName: "isSplitCreated", args: [assetKey] });

  return {
    deployment,
    chainId: deployment.chainId,
    chain,
    router,
    splitFactory,
    splitOf,
    splitRecipients,
    isSplitCreated,
    isCanonicalBlock,
    publicClient,
    quoteSigner,
    relayerAccount,
    stablecoins,
    checkRoles,
    /** The quote signer's EIP-712 signature of `order` (the on-chain price lock). */
    signVoucher: (order: PaymentOrder): Promise<Hex> => quoteSigner.signTypedData(orderTypedData(deployment.chainId, router, order)),
    /** The order's EIP-712 digest under the router's domain (the router's hashOrder, computed here): also
     * the permit deadline that binds a permit to this order. */
    permitDeadline,
    /** The order's deposit address (the router's depositAddress, computed here): where a wallet transfers the
     * order amount for its EIP-681 payment request. */
    depositAddress(order: PaymentOrder): Address {
      const deadline = permitDeadline(order);
      return predictDepositAddress(router, toHex(deadline, { size: 32 }), order.token);
    },
    balancesOf,
    permitNonce: (token: Address, owner: Address): Promise<bigint> =>
      publicClient.readContract({ address: token, abi: permitExtrasAbi, functionName: "nonces", args: [owner] }),
    authorizationUsed,
    balanceOf: (token: Address, owner: Address): Promise<bigint> =>
      publicClient.readContract({ address: token, abi: erc20Abi, functionName: "balanceOf", args: [owner] }),
  };
}

/** The JSON-RPC transport of RPC_URL's URLs. With several, viem's fallback sends each request to the first
 * URL (the primary) and hands it to the next one when a URL fails (cannot connect, times out, answers 429
 * or 5xx); a revert is an answer, never passed on. A request that failed everywhere is tried again twice,
 * after 250 ms then 500 ms (or the Retry-After the node sent), so a rate limit slows the relayer down
 * instead of failing what it was doing; what still fails reaches the caller (the transaction sender then
 * backs off further and keeps the transaction queued). */
function rpcTransport(urls: string[]): Transport {
  const retry = { retryCount: 2, retryDelay: 250 };
  if (urls.length === 1) return http(urls[0], { timeout: 10_000, ...retry });
  return fallback(
    urls.map((url) => http(url, { timeout: 10_000 })),
    retry,
  );
}

/** Multicall3, at the same address on every chain it is deployed to. */
const MULTICALL3_ADDRESS = "0xcA11bde05977b3631167028862bE2a173976CA11";
/** Balances read in one Multicall3 call, or in parallel without it. */
const BALANCE_BATCH = 50;

/** Permit deadlines (EIP-712 order digests) remembered, oldest dropped first. */
const DEADLINE_CACHE_SIZE = 10_000;

const eip712DomainFields = [
  { name: "name", type: "string" },
  { name: "version", type: "string" },
  { name: "chainId", type: "uint256" },
  { name: "verifyingContract", type: "address" },
] as const;
