// Paying orders on a local chain through every rail, as the service and its users would: the quote signer
// (account 1) signs each order's voucher, a payer signs a permit bound to the order, and the transactions go
// to the node. An order settles through its device's split, created by the split factory at the device's asset
// key, which commits to the split's first recipients (deviceId() below; anyone may create a split: the agent,
// account 2, does, and pay() creates a device's split the first time it is paid). Recipient changes go through
// the split manager (account 13) and the factory's delay (setRecipients). Typed data comes from
// sdk/src/payment-order.ts, ABIs from generated/abis.ts, addresses from the deployment record.
import { randomBytes } from "node:crypto";
import {
  type Address,
  type Hex,
  type TransactionReceipt,
  createPublicClient,
  createWalletClient,
  defineChain,
  encodeAbiParameters,
  hashTypedData,
  http,
  keccak256,
  maxUint256,
  toHex,
} from "viem";
import { assetSplitAbi, assetSplitFactoryAbi, paymentRouterAbi } from "../../generated/abis.ts";
import { type PaymentOrder, orderTypedData, permitTypedData } from "../../sdk/src/payment-order.ts";
import { LOCAL_ACCOUNT_INDEX, type LocalChain, localAccount, localStablecoin, localStablecoinAbi } from "./local-chain.ts";

export type Rail = "permit" | "approval" | "cash";

/** USD amount (dollars, at most 6 decimals) in the stablecoin's base units. */
export function usdc(dollars: number): bigint {
  return BigInt(Math.round(dollars * 1_000_000));
}

/** The device key and first recipients of every asset key deviceId() gave, to create its split. */
const assetKeys = new Map<Hex, { deviceKey: Hex; assetOwner: Address; operator: Address }>();

/** The device id (bytes32) of the orders of device `name`: the asset key of its split (keccak256 of the name,
 * bound to the split's first recipients, default the asset-owner and operator accounts). */
export function deviceId(name: string, recipients: { assetOwner?: Address; operator?: Address } = {}): Hex {
  const deviceKey = keccak256(toHex(name));
  const assetOwner = recipients.assetOwner ?? localAccount(LOCAL_ACCOUNT_INDEX.assetOwner).address;
  const operator = recipients.operator ?? localAccount(LOCAL_ACCOUNT_INDEX.operator).address;
  const key = keccak256(
    encodeAbiParameters([{ type: "bytes32" }, { type: "address" }, { type: "address" }], [deviceKey, assetOwner, operator]),
  );
  assetKeys.set(key, { deviceKey, assetOwner, operator });
  return key;
}

export type Payments = ReturnType<typeof createPayments>;

/** Helpers to pay orders and drive the splits on `chain` (a LocalStack deployment). */
export function createPayments(chain: LocalChain) {
  const { record } = chain;
  const router = record.contracts.PaymentRouter!.address;
  const factory = record.contracts.AssetSplitFactory!.address;
  const token = localStablecoin(record);
  const viemChain = defineChain({
    id: record.chainId,
    name: "local",
    nativeCurrency: { name: "Ether", symbol: "ETH", decimals: 18 },
    rpcUrls: { default: { http: [chain.rpcUrl] } },
  });
  const transport = http(chain.rpcUrl, { retryCount: 0, timeout: 10_000 });
  const publicClient = createPublicClient({ chain: viemChain, transport, pollingInterval: 50 });
  const wallets = new Map<number, ReturnType<typeof makeWallet>>();
  function makeWallet(index: number) {
    return createWalletClient({ account: localAccount(index), chain: viemChain, transport });
  }
  const wallet = (index: number) => {
    let client = wallets.get(index);
    if (!client) wallets.set(index, (client = makeWallet(index)));
    return client;
  };
  const quoteSigner = localAccount(LOCAL_ACCOUNT_INDEX.quoteSigner);

  // Order ids: random per process, sequential within it, so several suites can share a chain.
  let nextOrderId = BigInt(`0x${randomBytes(6).toString("hex")}`) << 16n;

  async function mined(hash: Hex): Promise<TransactionReceipt> {
    const receipt = await publicClient.waitForTransactionReceipt({ hash, pollingInterval: 20 });
    if (receipt.status !== "success") throw new Error(`transaction ${hash} reverted`);
    return receipt;
  }

  async function chainTime(): Promise<bigint> {
    return (await publicClient.getBlock({ blockTag: "latest" })).timestamp;
  }

  const api = {
    publicClient,
    wallet,
    addresses: { router, token, factory },

    /** A fresh order of `amount` base units for `device`, valid for a day from the chain's time, settled
     * through `split` (default `device`'s split, deviceSplit; the router pays no other). */
    async newOrder(opts: { device: Hex; amount: bigint; orderId?: bigint; split?: Address }): Promise<PaymentOrder> {
      return {
        orderId: opts.orderId ?? nextOrderId++,
        deviceId: opts.device,
        token,
        split: opts.split ?? (await api.deviceSplit(opts.device)),
        amount: opts.amount,
        expiry: (await chainTime()) + 86_400n * 30n,
      };
    },

    /** The quote signer's voucher for `order`. */
    signVoucher(order: PaymentOrder): Promise<Hex> {
      return quoteSigner.signTypedData(orderTypedData(record.chainId, router, order));
    },

    /** Pays `order` with a permit signed by account `payer` (default the test wallet), submitted by account
     * `submitter` (default the agent, as the relayer does). */
    async payWithPermit(order: PaymentOrder, opts: { payer?: number; submitter?: number } = {}): Promise<TransactionReceipt> {
      const payer = localAccount(opts.payer ?? LOCAL_ACCOUNT_INDEX.testWallet);
      const [nonce, name, version] = await Promise.all([
        publicClient.readContract({ address: token, abi: localStablecoinAbi, functionName: "nonces", args: [payer.address] }),
        publicClient.readContract({ address: token, abi: localStablecoinAbi, functionName: "name" }),
        publicClient.readContract({ address: token, abi: localStablecoinAbi, functionName: "version" }),
      ]);
      const deadline = BigInt(hashTypedData(orderTypedData(record.chainId, router, order)));
      const signature = await payer.signTypedData(
        permitTypedData({
          tokenDomain: { name, version, chainId: record.chainId, verifyingContract: token },
          owner: payer.address,
          spender: router,
          value: order.amount,
          nonce,
          deadline,
        }),
      );
      const voucher = await api.signVoucher(order);
      const hash = await wallet(opts.submitter ?? LOCAL_ACCOUNT_INDEX.agent).writeContract({
        address: router,
        abi: paymentRouterAbi,
        functionName: "payWithPermit",
        args: [order, voucher, payer.address, signature],
      });
      return mined(hash);
    },

    /** Pays `order` from account `payer`'s allowance (approving the router first if needed). */
    async payWithApproval(order: PaymentOrder, opts: { payer?: number } = {}): Promise<TransactionReceipt> {
      const payerIndex = opts.payer ?? LOCAL_ACCOUNT_INDEX.testWallet;
      const payer = wallet(payerIndex);
      const allowance = await publicClient.readContract({
        address: token,
        abi: localStablecoinAbi,
        functionName: "allowance",
        args: [payer.account.address, router],
      });
      if (allowance < order.amount) {
        await mined(
          await payer.writeContract({ address: token, abi: localStablecoinAbi, functionName: "approve", args: [router, maxUint256] }),
        );
      }
      const hash = await payer.writeContract({
        address: router,
        abi: paymentRouterAbi,
        functionName: "pay",
        args: [order, await api.signVoucher(order)],
      });
      return mined(hash);
    },

    /** Pays a cash order from the agent's float. */
    async payCash(order: PaymentOrder): Promise<TransactionReceipt> {
      const hash = await wallet(LOCAL_ACCOUNT_INDEX.agent).writeContract({
        address: router,
        abi: paymentRouterAbi,
        functionName: "payCash",
        args: [order, await api.signVoucher(order)],
      });
      return mined(hash);
    },

    /** Pays a fresh order through `rail` (settled through `opts.split`, default `device`'s split, which is
     * created first if it was not: ensureSplit); returns the order and the receipt. */
    async pay(rail: Rail, opts: { device: Hex; amount: bigint; split?: Address }) {
      if (opts.split === undefined) await api.ensureSplit(opts.device);
      const order = await api.newOrder(opts);
      const receipt =
        rail === "permit"
          ? await api.payWithPermit(order)
          : rail === "approval"
            ? await api.payWithApproval(order)
            : await api.payCash(order);
      return { order, receipt };
    },

    /** Account `index` withdraws its claimable amount from split `at` to itself. */
    async withdraw(index: number, at: Address): Promise<TransactionReceipt> {
      const account = wallet(index);
      return mined(
        await account.writeContract({
          address: at,
          abi: assetSplitAbi,
          functionName: "withdraw",
          args: [account.account.address],
        }),
      );
    },

    /** Split `at`'s current legs, on chain. */
    async legs(at: Address) {
      const [recipients, bps] = await publicClient.readContract({ address: at, abi: assetSplitAbi, functionName: "legs" });
      return { recipients, bps };
    },

    /** On-chain claimable amount of `recipient` at split `at`. */
    claimable(recipient: Address, at: Address): Promise<bigint> {
      return publicClient.readContract({ address: at, abi: assetSplitAbi, functionName: "claimable", args: [recipient] });
    },

    /** The address of `device`'s factory split (whether created yet or not). */
    deviceSplit(device: Hex): Promise<Address> {
      return publicClient.readContract({ address: factory, abi: assetSplitFactoryAbi, functionName: "predictSplit", args: [device] });
    },

    /** The agent (anyone may) creates the split of asset key `device`, which deviceId() gave, with the first
     * recipients deviceId() bound into it; the protocol leg and the shares are the factory's (account 6,
     * 50/40/10). */
    async createSplit(device: Hex) {
      const known = assetKeys.get(device);
      if (!known) throw new Error(`asset key ${device} was not made by deviceId(): its device key and recipients are unknown`);
      const receipt = await mined(
        await wallet(LOCAL_ACCOUNT_INDEX.agent).writeContract({
          address: factory,
          abi: assetSplitFactoryAbi,
          functionName: "createSplit",
          args: [known.deviceKey, known.assetOwner, known.operator],
        }),
      );
      return { split: await api.deviceSplit(device), receipt };
    },

    /** `device`'s split, created first (with the default recipients, as createSplit) unless it exists. Another
     * process sharing the chain (a test, a relayer) may create it meanwhile: the split it made is used. */
    async ensureSplit(device: Hex): Promise<Address> {
      const created = () =>
        publicClient.readContract({ address: factory, abi: assetSplitFactoryAbi, functionName: "isSplitCreated", args: [device] });
      if (!(await created())) {
        try {
          await api.createSplit(device);
        } catch (error) {
          if (!(await created())) throw error;
        }
      }
      return api.deviceSplit(device);
    },

    /** Replaces the asset-owner and operator recipients of `device`'s split as the factory allows: the split
     * manager proposes, the chain's clock is moved past the factory's delay, and the agent (anyone may)
     * executes. Resolves to the execution's receipt. */
    async setRecipients(device: Hex, assetOwner: Address, operator: Address): Promise<TransactionReceipt> {
      await mined(
        await wallet(LOCAL_ACCOUNT_INDEX.splitManager).writeContract({
          address: factory,
          abi: assetSplitFactoryAbi,
          functionName: "proposeRecipients",
          args: [device, assetOwner, operator],
        }),
      );
      const delay = await publicClient.readContract({ address: factory, abi: assetSplitFactoryAbi, functionName: "recipientChangeDelay" });
      await chain.rpc("evm_increaseTime", [Number(delay)]);
      return mined(
        await wallet(LOCAL_ACCOUNT_INDEX.agent).writeContract({
          address: factory,
          abi: assetSplitFactoryAbi,
          functionName: "executeRecipients",
          args: [device],
        }),
      );
    },

    /** Every split on chain: those the factory created (its SplitCreated events), in creation order. */
    async splitAddresses(): Promise<Address[]> {
      const created = await publicClient.getContractEvents({
        address: factory,
        abi: assetSplitFactoryAbi,
        eventName: "SplitCreated",
        fromBlock: BigInt(record.contracts.AssetSplitFactory!.startBlock),
        toBlock: "latest",
      });
      return created.map((log) => log.args.split!);
    },

    /** A batch settlement outside the router: the agent (made a depositor of the factory) deposits `gross` into
     * split `at` under `ref`. */
    async batchDeposit(ref: Hex, gross: bigint, at: Address): Promise<TransactionReceipt> {
      const agent = wallet(LOCAL_ACCOUNT_INDEX.agent);
      const admin = wallet(LOCAL_ACCOUNT_INDEX.admin);
      const role = await publicClient.readContract({ address: factory, abi: assetSplitFactoryAbi, functionName: "DEPOSITOR_ROLE" });
      const isDepositor = await publicClient.readContract({
        address: factory,
        abi: assetSplitFactoryAbi,
        functionName: "hasRole",
        args: [role, agent.account.address],
      });
      if (!isDepositor) {
        await mined(
          await admin.writeContract({
            address: factory,
            abi: assetSplitFactoryAbi,
            functionName: "grantRole",
            args: [role, agent.account.address],
          }),
        );
      }
      const allowance = await publicClient.readContract({
        address: token,
        abi: localStablecoinAbi,
        functionName: "allowance",
        args: [agent.account.address, at],
      });
      if (allowance < gross) {
        await mined(
          await agent.writeContract({ address: token, abi: localStablecoinAbi, functionName: "approve", args: [at, maxUint256] }),
        );
      }
      return mined(await agent.writeContract({ address: at, abi: assetSplitAbi, functionName: "deposit", args: [ref, gross] }));
    },

    /** Every OrderPaid of the router on chain, in chain order (the ground truth the indexer must match). */
    async orderPaidLogs() {
      return publicClient.getContractEvents({
        address: router,
        abi: paymentRouterAbi,
        eventName: "OrderPaid",
        fromBlock: BigInt(record.contracts.PaymentRouter!.startBlock),
        toBlock: "latest",
      });
    },

    /** Every YieldDeposited of every split on chain (splitAddresses), in chain order. */
    async yieldDepositedLogs() {
      const splits = await api.splitAddresses();
      // An empty address list would match every contract's events.
      if (splits.length === 0) return [];
      return publicClient.getContractEvents({
        address: splits,
        abi: assetSplitAbi,
        eventName: "YieldDeposited",
        fromBlock: BigInt(record.contracts.AssetSplitFactory!.startBlock),
        toBlock: "latest",
      });
    },

    /** Mines `count` empty blocks, one evm_mine each: `hardhat_mine` reserves blocks whose parent hashes do
     * not link up, which an indexer takes for a reorganisation. */
    async mine(count = 1): Promise<bigint> {
      for (let i = 0; i < count; i++) await chain.rpc("evm_mine");
      return publicClient.getBlockNumber({ cacheTime: 0 });
    },

    /** Moves the chain's clock forward by `seconds` (applies to the next block). */
    async increaseTime(seconds: number): Promise<void> {
      await chain.rpc("evm_increaseTime", [seconds]);
    },

    blockNumber(): Promise<bigint> {
      return publicClient.getBlockNumber({ cacheTime: 0 });
    },
  };
  return api;
}
