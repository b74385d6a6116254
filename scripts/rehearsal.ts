// `npm run rehearsal`: the system on a local chain that behaves like Base Sepolia, deployed and run the way
// the README's testnet section says, then a payment end to end with its timings.
//
// - The chain: a Hardhat node running hardhat.config.ts's `rehearsalChain` (chain id 84532, an OP-stack
//   chain, no automine: a block every 2 s, EIP-1559 base fees).
// - The token: RehearsalUsdc, which behaves like Circle's USDC v2.2 on Base Sepolia (name "USDC", version
//   "2", 6 decimals, no ERC-5267, EIP-2612 permit, EIP-3009 authorizations, a blocklist). It is deployed
//   first, as USDC exists before the system does.
// - The contracts: ignition/modules/Payments.ts with a parameters file written for this chain (the token's
//   address, the roles' accounts), deployed to the `rehearsal` network whose URL and deployer key are
//   configuration variables (REHEARSAL_RPC_URL, REHEARSAL_DEPLOYER_PRIVATE_KEY: from the environment, as
//   the testnet's are, or Hardhat's keystore). Ignition waits for one confirmation per transaction here
//   (a public network: its default of 5).
//   Uniswap's Permit2 is at its canonical address after the deployment, as on Base Sepolia: lib/chain.ts
//   installs it where the chain has no code there (lib/permit2.ts), and the rehearsal checks that it is.
// - A smart-contract wallet: contracts/test/MultiOwnerAccountFactory.sol, deployed from its compiled artifact,
//   creates a 2-of-3 account (OpenZeppelin's Account, ERC-1271) and predicts another that is not deployed;
//   both get USDC.
// - The indexer and the relayer in public-network mode: DEPLOYMENT=rehearsal-84532 (not chain-84532, the
//   id the real testnet deployment is committed under), CHAIN_NAME=base-sepolia, CONFIRMATIONS=5.
//
// Then a wallet pays an order without gas by USDC's own rail (an EIP-3009 receive authorization, which the
// order's payment details offer because the token has it; another wallet's signature is refused first),
// the relayer submits it, an agent pays another order in cash, and a signed
// webhook receiver checks that payment.succeeded comes once the payment is mined and payment.confirmed only
// once its block is CONFIRMATIONS deep. Three more payments follow, side by side, each to the order's success
// with the rail and the payer it shows: the wallet on the Permit2 rail (it approves Permit2 once with its own
// transaction, signs paymentDetails.permit2 and posts it to its relay URL), the 2-of-3 account by authorization
// with its owners' ERC-1271 signature (one owner's is refused first), and the undeployed account by
// authorization with an ERC-6492 signature (the payment deploys it). The last line says what passed and the
// timings; the exit code is 0 only if everything did. Everything runs on 127.0.0.1 and stops at the end.
//
// Environment: REHEARSAL_DIR (.local/rehearsal: data, logs), REHEARSAL_PORT_BASE (18540: the chain on it,
// then the device cloud, the indexer, the relayer and the webhook receiver on the next four ports),
// REHEARSAL_DEPLOYER_PRIVATE_KEY (default: the local node's first account), REHEARSAL_RESULT_FILE (also
// write the figures there, as JSON), REHEARSAL_KEEP (after the last line, keep everything running with an
// unpaid order whose checkout page a browser wallet can pay, until Ctrl-C or SIGTERM).
import { randomBytes } from "node:crypto";
import { mkdir, readFile, rm, writeFile } from "node:fs/promises";
import http from "node:http";
import path from "node:path";
import {
  type Abi,
  type Address,
  type Hex,
  createPublicClient,
  createWalletClient,
  defineChain,
  getAddress,
  http as viemHttp,
  maxUint256,
  parseAbi,
  toHex,
  size,
  type PublicClient,
  type TransactionReceipt,
} from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { repoRoot } from "../ignition/deployment-records.ts";
import { call } from "../lib/api-call.ts";
import { deployWithIgnition, startChain } from "../lib/chain.ts";
import { abisUpToDate, compileContracts, generateAbis } from "../lib/contracts.ts";
import { createIndexerDatabase, startIndexer } from "../lib/indexer.ts";
import { type MultiOwnerAccount, accountSigner, deployAccount, deployAccountFactory, predictAccount } from "../lib/smart-account.ts";
import { PERMIT2_ADDRESS } from "../lib/permit2.ts";
import { stopAllServices } from "../lib/processes.ts";
import { step } from "../lib/progress.ts";
import { createRelayerDatabase, registerSimulatedDevices, seedRelayer, startDeviceCloud, startRelayer } from "../lib/relayer.ts";
import { SAMPLE_DEVICES, localAccount, localPrivateKey, sampleSeedSpec } from "../lib/sample-data.ts";
import {
  type Order,
  PaygApiError,
  type PaymentClient,
  createPaymentClient,
  paidOrFailed,
  signOrderPayment,
  submitOrderPayment,
  waitForOrder,
} from "../sdk/src/index.ts";
import { paymentOrderOf, permit2TypedData, toAddress } from "../sdk/src/payment-order.ts";
import { verifyWebhook } from "../sdk/src/webhooks.ts";

export const REHEARSAL_CHAIN_ID = 84532;
const DEPLOYMENT = "rehearsal-84532";
const CHAIN_NAME = "base-sepolia";
const CONFIRMATIONS = 5;
const BLOCK_MS = 2_000;

const dir = path.resolve(repoRoot, process.env.REHEARSAL_DIR || ".local/rehearsal");
const logDir = path.join(dir, "logs");
const log = (name: string) => path.join(logDir, `${name}.log`);
const base = Number(process.env.REHEARSAL_PORT_BASE ?? 18_540);
const ports = { chain: base, deviceCloud: base + 1, indexer: base + 2, relayer: base + 3, receiver: base + 4 };
const rpcUrl = `http://127.0.0.1:${ports.chain}`;
const rehearsalChain = defineChain({
  id: REHEARSAL_CHAIN_ID,
  name: "rehearsal",
  nativeCurrency: { name: "Ether", symbol: "ETH", decimals: 18 },
  rpcUrls: { default: { http: [rpcUrl] } },
});

const deployerKey = (process.env.REHEARSAL_DEPLOYER_PRIVATE_KEY as Hex | undefined) ?? localPrivateKey(0);
const deployer = privateKeyToAccount(deployerKey);
/** The local node's accounts, as in the local stack: 1 quote signer, 2 the relayer's hot wallet (agent and
 * anchorer; it holds no split factory role, creation needs none), 6 the protocol recipient, 7 the paying wallet,
 * 13 the split manager (an offline signer in production). */
const quoteSignerKey = localPrivateKey(1);
const hotWalletKey = localPrivateKey(2);
const hotWallet = localAccount(2).address;
const walletKey = localPrivateKey(7);

/** A payment followed from its submission to the order's success, with the rail and the payer the paid order
 * shows (checked against the ones expected: the rehearsal fails otherwise). */
export type RehearsalPayment = {
  orderId: string;
  rail: "permit2" | "authorization";
  payer: Address;
  /** The payer's signature's length: 65 for a wallet's, more for a smart account's. */
  signatureBytes: number;
  submittedToSuccessMs: number;
};

/** A payment by a 2-of-3 account of MultiOwnerAccountFactory, with what makes its address (the factory's
 * `predictAccount(owners, threshold, salt)`). */
export type RehearsalAccountPayment = RehearsalPayment & {
  factory: Address;
  owners: Address[];
  threshold: number;
  salt: Hex;
  /** Whether the account had code before it paid (the ERC-6492 one has none: its payment deploys it). */
  deployedBefore: boolean;
};

/** The figures the last line reports. */
export type RehearsalResult = {
  chainId: number;
  blockMs: number;
  confirmations: number;
  readyS: number;
  rail: "authorization" | "permit";
  submittedToSuccessMs: number;
  minedToSucceededWebhookMs: number;
  minedToConfirmedWebhookMs: number;
  /** Blocks on top of the payment's block when payment.confirmed arrived. */
  confirmedDepth: number;
  /** An agent's cash payment for another device, from the API call to the order's success. */
  cashSubmittedToSuccessMs: number;
  /** The wallet's payment on the Permit2 rail (after its one approval of Permit2). */
  permit2: RehearsalPayment;
  /** The deployed 2-of-3 account's payment by authorization, with its ERC-1271 signature. */
  smartAccount: RehearsalAccountPayment;
  /** The undeployed 2-of-3 account's payment by authorization, with its ERC-6492 signature. */
  undeployedSmartAccount: RehearsalAccountPayment;
  /** With REHEARSAL_KEEP: where the running rehearsal answers, and an unpaid order's checkout page. */
  kept?: { relayerUrl: string; rpcUrl: string; orderId: string; checkoutUrl: string };
};

const tokenAbi = parseAbi([
  "function mint(address to, uint256 amount)",
  "function approve(address spender, uint256 amount) returns (bool)",
  "function nonces(address owner) view returns (uint256)",
  "function name() view returns (string)",
  "function version() view returns (string)",
]);

async function until<T>(what: string, probe: () => Promise<T | undefined>, timeoutMs: number, everyMs = 100): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe().catch(() => undefined);
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`${what}: not within ${timeoutMs / 1000} s`);
    await new Promise((resolve) => setTimeout(resolve, everyMs));
  }
}

/** A compiled contract of `npm run build` (artifacts/contracts/...). */
async function artifact(file: string): Promise<{ abi: Abi; bytecode: Hex }> {
  return JSON.parse(await readFile(path.join(repoRoot, "artifacts/contracts", file), "utf8")) as { abi: Abi; bytecode: Hex };
}

async function deployToken(): Promise<Address> {
  const token = await artifact("rehearsal/RehearsalUsdc.sol/RehearsalUsdc.json");
  const client = createPublicClient({ transport: viemHttp(rpcUrl) });
  const owner = createWalletClient({ account: deployer, chain: rehearsalChain, transport: viemHttp(rpcUrl) });
  const hash = await owner.deployContract({ abi: token.abi, bytecode: token.bytecode, args: [deployer.address] });
  const receipt = await client.waitForTransactionReceipt({ hash, pollingInterval: 250 });
  const address = receipt.contractAddress!;
  // 10,000 USDC to the paying wallet, 1,000,000 to the hot wallet's cash float.
  const mints = [
    await owner.writeContract({ address, abi: tokenAbi, functionName: "mint", args: [localAccount(7).address, 10_000_000_000n] }),
    await owner.writeContract({ address, abi: tokenAbi, functionName: "mint", args: [hotWallet, 1_000_000_000_000n] }),
  ];
  for (const mint of mints) await client.waitForTransactionReceipt({ hash: mint, pollingInterval: 250 });
  return address;
}

/** A 2-of-3 account of MultiOwnerAccountFactory (lib/smart-account.ts) and the salt that makes its address. */
type SmartAccount = MultiOwnerAccount & { salt: Hex };

/** Deploys MultiOwnerAccountFactory, creates a 2-of-3 account with it and predicts another of the same owners that
 * stays undeployed (a wallet that signs before its first transaction), and gives each 100 USDC. */
async function deploySmartAccounts(token: Address): Promise<{ deployed: SmartAccount; undeployed: SmartAccount }> {
  const client = createPublicClient({ transport: viemHttp(rpcUrl) });
  const owner = createWalletClient({ account: deployer, chain: rehearsalChain, transport: viemHttp(rpcUrl) });
  const factory = await deployAccountFactory(owner, client);
  const owners = Array.from({ length: 3 }, () => privateKeyToAccount(generatePrivateKey()));
  const threshold = 2;
  const account = async (salt: bigint): Promise<SmartAccount> => ({
    ...(await predictAccount(client, factory, { owners, threshold, salt })),
    salt: toHex(salt, { size: 32 }),
  });
  const [deployed, undeployed] = await Promise.all([account(1n), account(2n)]);
  await deployAccount(owner, client, deployed);
  const sent = [
    await owner.writeContract({ address: token, abi: tokenAbi, functionName: "mint", args: [deployed.address, 100_000_000n] }),
    await owner.writeContract({ address: token, abi: tokenAbi, functionName: "mint", args: [undeployed.address, 100_000_000n] }),
  ];
  for (const tx of sent) {
    const receipt = await client.waitForTransactionReceipt({ hash: tx, pollingInterval: 250 });
    if (receipt.status !== "success") throw new Error(`funding the smart accounts reverted (${tx})`);
  }
  if (!(await client.getCode({ address: deployed.address }))) throw new Error(`the factory did not deploy ${deployed.address}`);
  return { deployed, undeployed };
}

/** The parameters file of ignition/modules/Payments.ts for this chain, as ignition/parameters/base-sepolia.json
 * is for the testnet. */
async function writeParameters(token: Address): Promise<string> {
  const file = path.join(dir, "payments-parameters.json");
  const parameters = {
    Payments: {
      token,
      admin: deployer.address,
      adminTransferDelay: 0,
      protocolRecipient: localAccount(6).address,
      bps: [5000, 4000, 1000],
      quoteSigner: localAccount(1).address,
      agent: hotWallet,
      anchorer: hotWallet,
      splitManager: localAccount(13).address,
      recipientChangeDelay: 60,
      pauser: deployer.address,
    },
  };
  await writeFile(file, `${JSON.stringify(parameters, null, 2)}\n`);
  return file;
}

/** A quote and an order for `deviceId`. The device's split is created by the relayer at its start: quotes
 * answer 409 until it is on the chain. */
async function orderFor(api: string, deviceId: string, tier = "30m") {
  const quote = await until(
    `a quote for ${deviceId}`,
    async () => {
      const response = await fetch(`${api}/quote`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ deviceId, chain: CHAIN_NAME, token: "USDC", tier }),
      });
      return response.status === 201 ? response.json() : undefined;
    },
    60_000,
    500,
  );
  return call("POST", `${api}/orders`, { deviceId, chain: CHAIN_NAME, token: "USDC", amountUsd: quote.amountUsd, quoteId: quote.quoteId });
}

/** The status the relayer answered a submission with (202 if it took it). */
function statusOf(submission: Promise<unknown>): Promise<number> {
  return submission.then(
    () => 202,
    (error: unknown) => (error instanceof PaygApiError ? error.status : Promise.reject(error)),
  );
}

/** What the payments after the first use: the API, the SDK's client of it, the chain. */
type Payments = { api: string; client: PaymentClient; chain: PublicClient };

/** Follows order `orderId` from `submitted` to its success; the order and its receipt must show `expected`'s
 * rail and payer. */
async function followed(
  p: Payments,
  orderId: string,
  submitted: number,
  expected: { rail: RehearsalPayment["rail"]; payer: Address; signature: Hex },
): Promise<RehearsalPayment> {
  const paid = await waitForOrder(p.client, orderId, paidOrFailed, { timeoutMs: 90_000, pollIntervalMs: 100 });
  const submittedToSuccessMs = performance.now() - submitted;
  const receipt = await call("GET", `${p.api}/orders/${orderId}/receipt`);
  const payer = getAddress(expected.payer);
  for (const [where, payment] of [
    ["order", paid.payment],
    ["receipt", receipt.payment],
  ] as const) {
    if (payment?.rail !== expected.rail || payment.payer !== payer) {
      throw new Error(
        `order ${orderId}: its ${where} shows rail ${payment?.rail} and payer ${payment?.payer}, not ${expected.rail} and ${payer}`,
      );
    }
  }
  return { orderId, rail: expected.rail, payer, signatureBytes: size(expected.signature), submittedToSuccessMs };
}

/** The wallet pays `order` on the Permit2 rail: it approves Permit2 for the token once (its own transaction),
 * signs the PermitWitnessTransferFrom that paymentDetails.permit2 offers and posts it to the relay URL there. */
async function payByPermit2(p: Payments, order: Order): Promise<RehearsalPayment> {
  const offered = order.paymentDetails?.permit2;
  if (!offered) throw new Error("the order's paymentDetails offer no permit2 although Permit2 is on the chain");
  if (getAddress(offered.domain.verifyingContract) !== PERMIT2_ADDRESS) {
    throw new Error(`paymentDetails.permit2 is signed for ${offered.domain.verifyingContract}, not Permit2`);
  }
  // The SDK's typed data of what the order offers: the order as the witness, its id the nonce, its expiry the deadline.
  const voucher = paymentOrderOf(offered.message.witness);
  const router = toAddress(offered.message.spender, "permit2.message.spender");
  const typedData = permit2TypedData({ chainId: offered.domain.chainId, router, order: voucher });
  const { permitted, nonce, deadline } = offered.message;
  if (BigInt(permitted.amount) !== voucher.amount || BigInt(nonce) !== voucher.orderId || BigInt(deadline) !== voucher.expiry) {
    throw new Error("paymentDetails.permit2 does not transfer the order's amount, once, until its expiry");
  }
  const wallet = privateKeyToAccount(walletKey);
  const own = createWalletClient({ account: wallet, chain: rehearsalChain, transport: viemHttp(rpcUrl) });
  const approval = await own.writeContract({
    address: voucher.token,
    abi: tokenAbi,
    functionName: "approve",
    args: [PERMIT2_ADDRESS, maxUint256],
  });
  await p.chain.waitForTransactionReceipt({ hash: approval, pollingInterval: 250 });
  const signature = await wallet.signTypedData(typedData);
  const submitted = performance.now();
  await call(offered.relay.method, offered.relay.url, { owner: wallet.address, signature });
  return followed(p, order.id, submitted, { rail: "permit2", payer: wallet.address, signature });
}

/** The 2-of-3 account pays `order` by authorization through the SDK, whose signer is the account: its owners'
 * signature (ERC-1271), wrapped in ERC-6492 while the account has no code. A deployed account's signature by one
 * owner, below its threshold, is refused first. */
async function payFromAccount(p: Payments, order: Order, account: SmartAccount): Promise<RehearsalAccountPayment> {
  const deployedBefore = Boolean(await p.chain.getCode({ address: account.address }));
  const signed = await signOrderPayment(order, accountSigner(account, { erc6492: !deployedBefore }));
  if (signed.rail !== "authorization") throw new Error(`the SDK signed the ${signed.rail}, not the authorization the order offers`);
  if (deployedBefore) {
    const oneOwner = await signOrderPayment(order, accountSigner(account, { count: 1 }));
    const refused = await statusOf(submitOrderPayment(p.client, order.id, oneOwner));
    if (refused !== 422) throw new Error(`one owner's signature for the 2-of-3 account was answered ${refused}, not 422`);
  }
  const submitted = performance.now();
  await submitOrderPayment(p.client, order.id, signed);
  const payment = await followed(p, order.id, submitted, {
    rail: "authorization",
    payer: account.address,
    signature: signed.body.signature,
  });
  if (!deployedBefore && !(await p.chain.getCode({ address: account.address }))) {
    throw new Error(`the ERC-6492 payment did not deploy the account ${account.address}`);
  }
  const { factory, threshold, salt } = account;
  return { ...payment, factory, owners: account.owners.map((o) => o.address), threshold, salt, deployedBefore };
}

async function main(): Promise<RehearsalResult> {
  const began = performance.now();
  await rm(dir, { recursive: true, force: true });
  await mkdir(logDir, { recursive: true });

  if (!(await abisUpToDate())) {
    await step("building contracts and generated code", async () => {
      await compileContracts({ logFile: log("build") });
      await generateAbis({ logFile: log("build") });
    });
  }
  const relayerDb = path.join(dir, "relayer-db");
  const indexerDb = path.join(dir, "indexer-db");
  const templates = path.join(dir, "database-templates");
  const databases = Promise.all([createRelayerDatabase(relayerDb, templates), createIndexerDatabase(indexerDb, templates)]);
  databases.catch(() => undefined);

  const spec = sampleSeedSpec();
  const relayerOptions = {
    port: ports.relayer,
    deploymentId: DEPLOYMENT,
    rpcUrl,
    indexerUrl: `http://127.0.0.1:${ports.indexer}`,
    deviceCloudUrl: `http://127.0.0.1:${ports.deviceCloud}`,
    database: { kind: "pglite" as const, directory: relayerDb },
    quoteSignerPrivateKey: quoteSignerKey,
    relayerPrivateKey: hotWalletKey,
    jwtSecret: randomBytes(32).toString("base64url"),
    env: {
      WEBHOOK_SECRET_KEY: randomBytes(32).toString("base64url"),
      CHAIN_NAME,
      CONFIRMATIONS: String(CONFIRMATIONS),
      WEBHOOK_ALLOWED_PRIVATE_HOSTS: `127.0.0.1:${ports.receiver}`,
      LOG_LEVEL: process.env.LOG_LEVEL ?? "info",
    },
    logFile: log("relayer"),
  };
  // Beside the chain and the deployment: the sample tenant's seed and the device cloud.
  const seeding = databases.then(() => step("seeding the sample tenant", () => seedRelayer(relayerOptions, [spec])));
  seeding.catch(() => undefined);
  const deviceCloud = step(`starting the device-cloud simulator on port ${ports.deviceCloud}`, async () => {
    const cloud = await startDeviceCloud({ port: ports.deviceCloud, timeScale: 60, logFile: log("device-cloud") });
    await registerSimulatedDevices(cloud.url, SAMPLE_DEVICES);
  });
  deviceCloud.catch(() => undefined);

  await step(
    `starting a chain like Base Sepolia on port ${ports.chain} (chain id ${REHEARSAL_CHAIN_ID}, a block every ${BLOCK_MS / 1000} s)`,
    () => startChain({ port: ports.chain, network: "rehearsalChain", logFile: log("chain") }),
  );
  const token = await step("deploying the USDC-like token (name USDC, version 2, EIP-2612, EIP-3009, blocklist)", deployToken);
  const parameters = await writeParameters(token);
  const record = await step("deploying ignition/modules/Payments.ts to the `rehearsal` network with Ignition", () =>
    deployWithIgnition({
      rpcUrl,
      deploymentId: DEPLOYMENT,
      logFile: log("deploy"),
      module: {
        name: "Payments",
        parameters,
        network: "rehearsal",
        // Ignition asks before deploying to a chain that is not local; on the testnet a person answers.
        env: { REHEARSAL_RPC_URL: rpcUrl, REHEARSAL_DEPLOYER_PRIVATE_KEY: deployerKey, HARDHAT_IGNITION_CONFIRM_DEPLOYMENT: "true" },
        confirmations: 1,
      },
    }),
  );
  const router = record.contracts.PaymentRouter!.address as Address;
  const chain = createPublicClient({ transport: viemHttp(rpcUrl) });
  if (!(await chain.getCode({ address: PERMIT2_ADDRESS }))) throw new Error(`Permit2 is not at its canonical address ${PERMIT2_ADDRESS}`);
  const accounts = step("deploying MultiOwnerAccountFactory: a 2-of-3 smart account (ERC-1271), another only predicted (ERC-6492)", () =>
    deploySmartAccounts(token),
  );
  accounts.catch(() => undefined);
  const approved = step("the hot wallet approves the router for its cash float", async () => {
    const client = createPublicClient({ transport: viemHttp(rpcUrl) });
    const wallet = createWalletClient({ account: privateKeyToAccount(hotWalletKey), chain: rehearsalChain, transport: viemHttp(rpcUrl) });
    const hash = await wallet.writeContract({ address: token, abi: tokenAbi, functionName: "approve", args: [router, 2n ** 256n - 1n] });
    await client.waitForTransactionReceipt({ hash, pollingInterval: 250 });
  });
  approved.catch(() => undefined);
  await step(`starting the indexer on port ${ports.indexer} (DEPLOYMENT=${DEPLOYMENT})`, async () => {
    await databases;
    await startIndexer({
      deploymentId: DEPLOYMENT,
      rpcUrl,
      port: ports.indexer,
      database: { kind: "pglite", directory: indexerDb },
      resetLocalChainSyncData: false,
      logFile: log("indexer"),
    });
  });
  const [[seeded], , , smartAccounts] = await Promise.all([seeding, deviceCloud, approved, accounts]);
  const relayer = await step(
    `starting the relayer on port ${ports.relayer} (CHAIN_NAME=${CHAIN_NAME}, CONFIRMATIONS=${CONFIRMATIONS})`,
    () => startRelayer(relayerOptions),
  );
  const readyS = (performance.now() - began) / 1000;
  const api = `${relayer.url}/v1`;

  // A signed-webhook receiver: each event with the time it arrived and the chain's head then.
  const arrivals: Array<{ type: string; at: number; head: bigint; data: Record<string, unknown> }> = [];
  let secret = "";
  const receiver = http.createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const at = performance.now();
    try {
      const event = verifyWebhook({ secret, body: Buffer.concat(chunks), headers: req.headers });
      res.writeHead(204).end();
      arrivals.push({ type: event.type, at, head: await chain.getBlockNumber({ cacheTime: 0 }), data: event.data });
    } catch {
      res.writeHead(400).end();
    }
  });
  await new Promise<void>((resolve) => receiver.listen(ports.receiver, "127.0.0.1", resolve));
  try {
    const { accessToken: jwt } = await call("POST", `${api}/auth/login`, { email: spec.user.email, password: spec.user.password });
    const subscription = await call(
      "POST",
      `${api}/webhooks/subscriptions`,
      { url: `http://127.0.0.1:${ports.receiver}/hooks`, eventTypes: ["payment.*"], description: "rehearsal" },
      jwt,
    );
    secret = subscription.secret;

    const order = await orderFor(api, seeded.devices[0]!);
    const details = order.paymentDetails;
    const wallet = privateKeyToAccount(walletKey);
    // The token has EIP-3009, so the order offers USDC's own rail, which the SDK picks (the permit stays for
    // tokens without it).
    if (!details.authorization) throw new Error("the order's paymentDetails offer no EIP-3009 authorization although the token has it");
    const client = createPaymentClient({ baseUrl: api });
    const signed = await signOrderPayment(order, wallet);
    if (signed.rail !== "authorization") throw new Error(`the SDK signed the ${signed.rail}, not the authorization the order offers`);
    const rail: RehearsalResult["rail"] = signed.rail;
    // Another wallet's authorization, sent as this wallet's: refused with 422.
    const forged = await signOrderPayment(order, privateKeyToAccount(localPrivateKey(8)));
    const asThisWallet = { rail: "authorization", body: { from: wallet.address, signature: forged.body.signature } } as const;
    const refused = await statusOf(submitOrderPayment(client, order.id, asThisWallet));
    if (refused !== 422) throw new Error(`another wallet's signature was answered ${refused}, not 422`);

    const submitted = performance.now();
    const relay = await submitOrderPayment(client, order.id, signed);
    if (relay.status !== "queued" && relay.status !== "sent" && relay.status !== "mined")
      throw new Error(`the relay answered ${JSON.stringify(relay)}`);
    // Mined: when the payment's receipt is first seen (polled every 100 ms).
    const hash = await until(
      "the relayer's transaction",
      async () => (await call("GET", `${api}/orders/${order.id}`)).relay?.transactionHash as Hex | undefined,
      60_000,
    );
    let receipt: TransactionReceipt | undefined;
    let minedAt = 0;
    await until(
      "the payment mined",
      async () => {
        const current = (await call("GET", `${api}/orders/${order.id}`)).relay?.transactionHash as Hex;
        receipt = await chain.getTransactionReceipt({ hash: current ?? hash });
        minedAt = performance.now();
        return receipt;
      },
      90_000,
    );
    if (receipt!.status !== "success") throw new Error(`the payment transaction reverted (${receipt!.transactionHash})`);
    const success = await until(
      "the order's success",
      async () => ((await call("GET", `${api}/orders/${order.id}`)).status === "success" ? performance.now() : undefined),
      60_000,
    );
    const paid = await call("GET", `${api}/orders/${order.id}`);
    if (paid.payment?.rail !== rail) throw new Error(`the order was paid on rail ${paid.payment?.rail}, not ${rail}`);
    const confirmed = await until(
      "payment.confirmed",
      async () => arrivals.find((a) => a.type === "payment.confirmed" && a.data.orderId === order.id),
      90_000,
    );
    const succeeded = arrivals.find((a) => a.type === "payment.succeeded" && a.data.orderId === order.id);
    if (!succeeded) throw new Error("payment.confirmed arrived without payment.succeeded");
    const depth = Number(confirmed.head - receipt!.blockNumber);
    if (depth < CONFIRMATIONS) {
      throw new Error(`payment.confirmed arrived when the payment's block was ${depth} deep (CONFIRMATIONS=${CONFIRMATIONS})`);
    }
    if (confirmed.at < succeeded.at) throw new Error("payment.confirmed arrived before payment.succeeded");

    // A cash payment by an agent for another device: the relayer pays it from the hot wallet's float.
    const agentKey = seeded.createdKeys.find((k) => k.role === "agent")!.key;
    const cashOrder = await orderFor(api, seeded.devices[1]!);
    const cashSubmitted = performance.now();
    await call("POST", `${api}/orders/${cashOrder.id}/cash`, undefined, agentKey);
    const cashSuccess = await until(
      "the cash order's success",
      async () => ((await call("GET", `${api}/orders/${cashOrder.id}`)).status === "success" ? performance.now() : undefined),
      60_000,
    );
    // Three more payers, side by side: the wallet on the Permit2 rail, the 2-of-3 account, the undeployed one.
    const payments: Payments = { api, client, chain };
    const [permit2Order, accountOrder, undeployedOrder] = await Promise.all(
      [seeded.devices[3]!, seeded.devices[4]!, seeded.devices[0]!].map((device) => orderFor(api, device, "1h")),
    );
    const [permit2, smartAccount, undeployedSmartAccount] = await Promise.all([
      payByPermit2(payments, permit2Order),
      payFromAccount(payments, accountOrder, smartAccounts.deployed),
      payFromAccount(payments, undeployedOrder, smartAccounts.undeployed),
    ]);
    // With REHEARSAL_KEEP, an order left open for a person (or a browser test) to pay on its checkout page.
    const open = process.env.REHEARSAL_KEEP ? await orderFor(api, seeded.devices[2]!, "1h") : undefined;
    return {
      ...(open ? { kept: { relayerUrl: relayer.url, rpcUrl, orderId: open.id, checkoutUrl: open.paymentDetails.scanToPay.uri } } : {}),
      chainId: REHEARSAL_CHAIN_ID,
      blockMs: BLOCK_MS,
      confirmations: CONFIRMATIONS,
      readyS,
      rail,
      submittedToSuccessMs: success - submitted,
      minedToSucceededWebhookMs: succeeded.at - minedAt,
      minedToConfirmedWebhookMs: confirmed.at - minedAt,
      confirmedDepth: depth,
      cashSubmittedToSuccessMs: cashSuccess - cashSubmitted,
      permit2,
      smartAccount,
      undeployedSmartAccount,
    };
  } finally {
    receiver.close();
  }
}

/** A payment as the last line shows it: its payer, signature length and time to success. */
function paymentLine(what: string, payment: RehearsalPayment): string {
  return `${what} from ${payment.payer}, ${payment.signatureBytes}-byte signature -> success ${(payment.submittedToSuccessMs / 1000).toFixed(1)} s`;
}

if (import.meta.main) {
  let code = 0;
  try {
    const r = await main();
    if (process.env.REHEARSAL_RESULT_FILE) await writeFile(process.env.REHEARSAL_RESULT_FILE, `${JSON.stringify(r, null, 2)}\n`);
    process.stdout.write(
      `rehearsal passed: chain ${r.chainId}, a block every ${r.blockMs / 1000} s, CONFIRMATIONS=${r.confirmations}; ready in ${r.readyS.toFixed(1)} s; ` +
        `${r.rail} payment submitted -> success ${(r.submittedToSuccessMs / 1000).toFixed(1)} s, mined -> payment.succeeded webhook ${Math.round(r.minedToSucceededWebhookMs)} ms, ` +
        `mined -> payment.confirmed webhook ${(r.minedToConfirmedWebhookMs / 1000).toFixed(1)} s (${r.confirmedDepth} blocks deep); ` +
        `cash payment -> success ${(r.cashSubmittedToSuccessMs / 1000).toFixed(1)} s; ` +
        `${paymentLine("the wallet's permit2 payment (Permit2 approved once)", r.permit2)}; ` +
        `${paymentLine("a 2-of-3 smart account's authorization payment (ERC-1271)", r.smartAccount)}; ` +
        `${paymentLine("an undeployed 2-of-3 smart account's authorization payment (ERC-6492, deployed by it)", r.undeployedSmartAccount)}\n`,
    );
    if (r.kept) {
      process.stdout.write(
        `kept running: the relayer at ${r.kept.relayerUrl}, an unpaid order at ${r.kept.checkoutUrl}; Ctrl-C stops it\n`,
      );
      await new Promise<void>((resolve) => {
        process.once("SIGINT", resolve);
        process.once("SIGTERM", resolve);
      });
    }
  } catch (error) {
    code = 1;
    process.stdout.write(`rehearsal failed: ${(error as Error).message} (logs in ${path.relative(repoRoot, logDir)}/)\n`);
  }
  await stopAllServices().catch(() => undefined);
  process.exit(code);
}
