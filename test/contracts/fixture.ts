// Shared deployment and signing helpers of the contract tests.
import { network } from "hardhat";
import { concat, encodeAbiParameters, keccak256, toHex, zeroAddress, zeroHash, type Address, type Hex, type LocalAccount } from "viem";
import {
  PERMIT2_ADDRESS,
  orderTypedData,
  permit2TypedData,
  permitSignatureParts,
  permitTypedData,
  receiveAuthorizationTypedData,
  signOrderAuthorization,
  type PaymentOrder,
} from "../../sdk/src/payment-order.ts";
import { installPermit2 } from "../../lib/permit2.ts";

export const connection = await network.connect();
export const { viem, networkHelpers } = connection;
export const publicClient = await viem.getPublicClient();
export const chainId = await publicClient.getChainId();

export const USDC = (dollars: number) => BigInt(Math.round(dollars * 1_000_000));
export const LEG_BPS = [5000, 4000, 1000] as const;
export const MAX_UINT256 = 2n ** 256n - 1n;

/** The device of the fixture's orders ({@link makeOrder}) and of its split, `split`. */
export const FIXTURE_DEVICE = "device-1";

/** Delay of the fixture factory's recipient changes (proposal to execution), in seconds. */
export const RECIPIENT_CHANGE_DELAY = 86_400n;

/** Deploys token, router and split factory, wires the roles as the Ignition modules do, creates the split of
 * {@link FIXTURE_DEVICE} (the fixture's asset owner and operator; the protocol recipient is the factory's) and
 * funds a payer. The relayer account (the hot wallet) holds no factory role: it creates splits, which anyone may.
 * The split manager (a distinct account, offline in production) proposes recipient changes; the pauser pauses
 * splits; the admin is the factory's default admin (surplus recovery). */
export async function deployPayments() {
  const [admin, quoteSigner, agent, pauser, assetOwner, operator, protocol, payer, relayer, stranger, manager] =
    await viem.getWalletClients();
  const token = await viem.deployContract("TestStablecoin", ["USD Coin (test)", "USDC", admin.account.address]);
  const router = await viem.deployContract("PaymentRouter", [admin.account.address, 0]);

  await router.write.grantRole([await router.read.QUOTE_SIGNER_ROLE(), quoteSigner.account.address]);
  await router.write.grantRole([await router.read.AGENT_ROLE(), agent.account.address]);
  await router.write.grantRole([await router.read.PAUSER_ROLE(), pauser.account.address]);
  await router.write.grantRole([await router.read.ORDER_CANCELLER_ROLE(), relayer.account.address]);

  const { factory, split } = await deployFactory(token.address, router.address, {
    admin,
    relayer,
    manager,
    pauser,
    assetOwner,
    operator,
    protocol,
  });
  await router.write.setSplitFactory([factory.address]);

  await token.write.mint([payer.account.address, USDC(1_000)]);
  await token.write.mint([agent.account.address, USDC(1_000)]);
  const tokenAsAgent = await viem.getContractAt("TestStablecoin", token.address, { client: { wallet: agent } });
  await tokenAsAgent.write.approve([router.address, MAX_UINT256]);

  return {
    token,
    split,
    router,
    factory,
    accounts: { admin, quoteSigner, agent, pauser, assetOwner, operator, protocol, payer, relayer, stranger, manager },
  };
}

export type Payments = Awaited<ReturnType<typeof deployPayments>>;
export type Wallet = Awaited<ReturnType<typeof viem.getWalletClients>>[number];

/** The fixture's asset owner and operator (accounts 4 and 5): the default first recipients of its splits. */
const [FIXTURE_ASSET_OWNER, FIXTURE_OPERATOR] = (await viem.getWalletClients()).slice(4, 6).map((w) => w.account.address);

/** The device key of a device: keccak256 of its id, as the relayer keeps it (`chainDeviceId`). */
export const deviceKey = (deviceId: string): Hex => keccak256(toHex(deviceId));

/** The split's asset key of a device key and its first recipients (SplitAddress.assetKeyOf): the device id of the
 * router's orders. */
export const splitAssetKey = (key: Hex, assetOwner: Address, operator: Address): Hex =>
  keccak256(encodeAbiParameters([{ type: "bytes32" }, { type: "address" }, { type: "address" }], [key, assetOwner, operator]));

/** The asset key of a device's split created with the fixture's asset owner and operator (unless given others),
 * as the relayer puts it in orders (`deviceId`). */
export const assetKey = (deviceId: string, recipients: { assetOwner?: Address; operator?: Address } = {}): Hex =>
  splitAssetKey(deviceKey(deviceId), recipients.assetOwner ?? FIXTURE_ASSET_OWNER, recipients.operator ?? FIXTURE_OPERATOR);

let nextOrderId = 1n;

/** A fresh order for `amount` of the fixture's device, through its split, valid for an hour. */
export async function makeOrder(p: Payments, amount: bigint, overrides: Partial<PaymentOrder> = {}): Promise<PaymentOrder> {
  const now = BigInt(await networkHelpers.time.latest());
  return {
    orderId: nextOrderId++,
    deviceId: assetKey(FIXTURE_DEVICE),
    token: p.token.address,
    split: p.split.address,
    amount,
    expiry: now + 3600n,
    ...overrides,
  };
}

/** The quote signer's voucher for `order` (or another signer's, or one for another router or chain). */
export function signVoucher(
  p: Payments,
  order: PaymentOrder,
  opts: { signer?: Wallet; router?: Address; chainId?: number } = {},
): Promise<Hex> {
  const signer = opts.signer ?? p.accounts.quoteSigner;
  return signer.signTypedData({
    account: signer.account,
    ...orderTypedData(opts.chainId ?? chainId, opts.router ?? p.router.address, order),
  });
}

/** The payer's EIP-2612 permit of `order.amount` to the router, bound to `order` by its deadline. */
export async function signPermit(p: Payments, order: PaymentOrder, opts: { owner?: Wallet; value?: bigint; deadline?: bigint } = {}) {
  const owner = opts.owner ?? p.accounts.payer;
  // Every token of these tests is an OpenZeppelin ERC20Permit (domain version "1", the test stablecoin's ABI
  // reads any of them) or RehearsalUsdc, whose `version()` gives USDC's "2".
  const erc20 = await viem.getContractAt("TestStablecoin", order.token);
  const version = await (await viem.getContractAt("RehearsalUsdc", order.token)).read.version().catch(() => "1");
  const nonce = await erc20.read.nonces([owner.account.address]);
  const deadline = opts.deadline ?? (await p.router.read.permitDeadline([order]));
  const signature = await owner.signTypedData({
    account: owner.account,
    ...permitTypedData({
      tokenDomain: { name: await erc20.read.name(), version, chainId, verifyingContract: order.token },
      owner: owner.account.address,
      spender: p.router.address,
      value: opts.value ?? order.amount,
      nonce,
      deadline,
    }),
  });
  return { ...permitSignatureParts(signature), signature, owner: owner.account.address, deadline };
}

/** Arguments of `payWithPermit` for `order`, signed by the quote signer and the payer. */
export async function permitPayment(p: Payments, order: PaymentOrder) {
  const permit = await signPermit(p, order);
  return [order, await signVoucher(p, order), permit.owner, permit.signature] as const;
}

/** Deploys RehearsalUsdc (USDC's EIP-712 domain, EIP-2612, EIP-3009 and blocklist; the admin owns it), points the
 * router at a split factory of it with the fixture device's split ({@link deploySplitFor}), and funds the payer,
 * for the authorization rail. Orders in it: `makeOrder(p, amount, { token: usdc.address, split: usdcSplit.address })`. */
export async function deployUsdcRail(p: Payments) {
  const usdc = await viem.deployContract("RehearsalUsdc", [p.accounts.admin.account.address]);
  const usdcSplit = await deploySplitFor(p, usdc.address);
  await usdc.write.mint([p.accounts.payer.account.address, USDC(1_000)]);
  return { usdc, usdcSplit };
}

/** The token domain of RehearsalUsdc (and USDC) at `token`: its name and version "2", which the token does not
 * publish by ERC-5267. */
export async function usdcDomain(token: Address) {
  const usdc = await viem.getContractAt("RehearsalUsdc", token);
  return { name: await usdc.read.name(), version: "2", chainId, verifyingContract: token } as const;
}

/** The payer's EIP-3009 receive authorization of `order.amount` to the router, valid before the order's expiry,
 * bound to `order` by its nonce (or with other values, to test the router's checks). */
export async function signAuthorization(
  p: Payments,
  order: PaymentOrder,
  opts: { from?: Wallet; to?: Address; value?: bigint; validBefore?: bigint; nonce?: Hex } = {},
) {
  const from = opts.from ?? p.accounts.payer;
  const signature = await from.signTypedData({
    account: from.account,
    ...receiveAuthorizationTypedData({
      tokenDomain: await usdcDomain(order.token),
      from: from.account.address,
      to: opts.to ?? p.router.address,
      value: opts.value ?? order.amount,
      validAfter: 0n,
      validBefore: opts.validBefore ?? order.expiry,
      nonce: opts.nonce ?? (await p.router.read.authorizationNonce([order])),
    }),
  });
  return { ...permitSignatureParts(signature), signature, from: from.account.address };
}

/** `wallet` as the signing account the SDK takes. */
function sdkAccount(wallet: Wallet): Pick<LocalAccount, "address" | "signTypedData"> {
  return {
    address: wallet.account.address,
    signTypedData: (typedData) => wallet.signTypedData({ account: wallet.account, ...typedData } as Parameters<Wallet["signTypedData"]>[0]),
  };
}

/** Arguments of `payWithAuthorization` for `order`, signed by the quote signer and, with the SDK's
 * signOrderAuthorization, by the payer. */
export async function authorizationPayment(p: Payments, order: PaymentOrder) {
  const { payer } = p.accounts;
  const signature = await signOrderAuthorization(sdkAccount(payer), {
    chainId,
    router: p.router.address,
    order,
    tokenDomain: await usdcDomain(order.token),
  });
  return [order, await signVoucher(p, order), payer.account.address, signature] as const;
}

/** The router as seen by another account. */
export function routerAs(p: Payments, wallet: Wallet) {
  return viem.getContractAt("PaymentRouter", p.router.address, { client: { wallet } });
}

/** Creates the factory split of the device key `key` (as the relayer, though anyone may) for the fixture's asset
 * owner and operator unless given others; returns the split and its asset key (the device id of its orders). */
export async function createFactorySplit(p: Payments, key: Hex, recipients: { assetOwner?: Address; operator?: Address } = {}) {
  const factory = await factoryAs(p, p.accounts.relayer);
  const assetOwner = recipients.assetOwner ?? p.accounts.assetOwner.account.address;
  const operator = recipients.operator ?? p.accounts.operator.account.address;
  await factory.write.createSplit([key, assetOwner, operator]);
  const splitKey = splitAssetKey(key, assetOwner, operator);
  const split = await viem.getContractAt("AssetSplit", await p.factory.read.predictSplit([splitKey]));
  return Object.assign(split, { assetKey: splitKey });
}

/** Proposes a change of `key`'s split recipients as the split manager; resolves to the transaction hash. */
export async function proposeRecipients(p: Payments, key: Hex, assetOwner: Address, operator: Address) {
  return (await factoryAs(p, p.accounts.manager)).write.proposeRecipients([key, assetOwner, operator]);
}

/** Replaces the asset owner and operator of the fixture device's split as the factory allows it: proposed by the
 * split manager, executed (by a stranger: anyone may) once the delay has passed. Resolves to the execution's
 * transaction hash. */
export async function setFixtureRecipients(p: Payments, assetOwner: Address, operator: Address) {
  await proposeRecipients(p, assetKey(FIXTURE_DEVICE), assetOwner, operator);
  await networkHelpers.time.increase(RECIPIENT_CHANGE_DELAY);
  return (await factoryAs(p, p.accounts.stranger)).write.executeRecipients([assetKey(FIXTURE_DEVICE)]);
}

/** Pauses the fixture device's split, as the pauser does through the factory. */
export async function pauseFixtureSplit(p: Payments) {
  return (await factoryAs(p, p.accounts.pauser)).write.pauseSplit([assetKey(FIXTURE_DEVICE)]);
}

/** The factory that created `split` (as its admin, the default wallet, sees it). */
export async function factoryOf(split: { read: { factory: () => Promise<Address> } }) {
  return viem.getContractAt("AssetSplitFactory", await split.read.factory());
}

/** Grants `account` the depositor role of `split`'s factory: it may then settle and deposit into the factory's
 * splits. */
export async function grantDepositor(split: { read: { factory: () => Promise<Address> } }, account: Address) {
  const factory = await factoryOf(split);
  await factory.write.grantRole([await factory.read.DEPOSITOR_ROLE(), account]);
}

/** The split factory as seen by another account. */
export function factoryAs(p: Payments, wallet: Wallet) {
  return viem.getContractAt("AssetSplitFactory", p.factory.address, { client: { wallet } });
}

/** The fixture device's split as seen by another account. */
export function splitAs(p: Payments, wallet: Wallet) {
  return viem.getContractAt("AssetSplit", p.split.address, { client: { wallet } });
}

/** The token as seen by another account. */
export function tokenAs(p: Payments, wallet: Wallet) {
  return viem.getContractAt("TestStablecoin", p.token.address, { client: { wallet } });
}

/** The three leg amounts the split must credit for `gross` (remainder to the asset-owner leg). */
export function expectedLegs(gross: bigint, bps: readonly number[] = LEG_BPS): [bigint, bigint, bigint] {
  const operator = (gross * BigInt(bps[1])) / 10_000n;
  const protocol = (gross * BigInt(bps[2])) / 10_000n;
  return [gross - operator - protocol, operator, protocol];
}

/** Deploys a split factory settling in `token` (any ERC-20) for the fixture's router, with the fixture's roles,
 * protocol recipient and shares (unless given others), points the router at it unless `setFactory` is false (the
 * router pays through one factory per token: a previous factory of the same token's splits are no longer paid) and creates the fixture
 * device's split in it. Returns that split. */
export async function deploySplitFor(
  p: Payments,
  token: Address,
  opts: { bps?: readonly [number, number, number]; setFactory?: boolean } = {},
) {
  const { factory, split } = await deployFactory(token, p.router.address, p.accounts, opts.bps);
  if (opts.setFactory ?? true) await p.router.write.setSplitFactory([factory.address]);
  return split;
}

/** Deploys a split factory of `token` and `router` (the admin its default admin, the manager its split manager,
 * the pauser its pauser; the protocol recipient's leg, the shares and the recipient-change delay fixed) and
 * creates the split of {@link FIXTURE_DEVICE} for the asset owner and operator, as the relayer (no role needed). */
async function deployFactory(
  token: Address,
  router: Address,
  accounts: Record<"admin" | "relayer" | "manager" | "pauser" | "assetOwner" | "operator" | "protocol", Wallet>,
  bps: readonly [number, number, number] = LEG_BPS,
) {
  const { admin, relayer, manager, pauser, assetOwner, operator, protocol } = accounts;
  const factory = await viem.deployContract("AssetSplitFactory", [
    token,
    router,
    protocol.account.address,
    [...bps],
    admin.account.address,
    0,
    Number(RECIPIENT_CHANGE_DELAY),
  ]);
  await factory.write.grantRole([await factory.read.SPLIT_MANAGER_ROLE(), manager.account.address]);
  await factory.write.grantRole([await factory.read.PAUSER_ROLE(), pauser.account.address]);
  const asRelayer = await viem.getContractAt("AssetSplitFactory", factory.address, { client: { wallet: relayer } });
  await asRelayer.write.createSplit([deviceKey(FIXTURE_DEVICE), assetOwner.account.address, operator.account.address]);
  const split = await viem.getContractAt("AssetSplit", await factory.read.predictSplit([assetKey(FIXTURE_DEVICE)]));
  return { factory, split };
}

/** 65 bytes (r = s = 0, v = 27) that recover no signer: a signature where the call needs one but no check reaches. */
export const DUMMY_SIGNATURE: Hex = concat([zeroHash, zeroHash, "0x1b"]);

/** The router's rails that pay in the fixture's token, by the name the tests use, and their `Rail` enum value.
 * The authorization rail (`Rail.Authorization`, 3) needs an EIP-3009 token: {@link deployUsdcRail}. */
export const RAILS = ["permit", "approval", "cash"] as const;
export type RailName = (typeof RAILS)[number];
export const RAIL_ID: Record<RailName, number> = { permit: 0, approval: 1, cash: 2 };
export const AUTHORIZATION_RAIL_ID = 3;

/** The account `rail` pays from: the payer for the permit and approval rails, the agent for cash. */
export function railPayer(p: Payments, rail: RailName): Wallet {
  return rail === "cash" ? p.accounts.agent : p.accounts.payer;
}

/** Does everything a payment of `order` on `rail` needs beforehand (the payer's permit, or the payer's approval
 * of exactly the amount; the agent's float approval is the fixture's) and returns the call that submits it: the
 * relayer's payWithPermit, the payer's pay, or the agent's payCash. Orders in token zero get a dummy permit. */
export async function prepareRail(p: Payments, rail: RailName, order: PaymentOrder, voucher?: Hex) {
  const signature = voucher ?? (await signVoucher(p, order));
  if (rail === "permit") {
    const permit =
      order.token === zeroAddress ? { owner: p.accounts.payer.account.address, signature: DUMMY_SIGNATURE } : await signPermit(p, order);
    const asRelayer = await routerAs(p, p.accounts.relayer);
    return () => asRelayer.write.payWithPermit([order, signature, permit.owner, permit.signature]);
  }
  if (rail === "approval") {
    if (order.token !== zeroAddress) {
      const erc20 = await viem.getContractAt("TestStablecoin", order.token, { client: { wallet: p.accounts.payer } });
      await erc20.write.approve([p.router.address, order.amount]);
    }
    const asPayer = await routerAs(p, p.accounts.payer);
    return () => asPayer.write.pay([order, signature]);
  }
  const asAgent = await routerAs(p, p.accounts.agent);
  return () => asAgent.write.payCash([order, signature]);
}

/** Prepares and submits a payment of `order` on `rail` (see {@link prepareRail}); resolves to the tx hash. */
export async function payOnRail(p: Payments, rail: RailName, order: PaymentOrder, voucher?: Hex): Promise<Hex> {
  return (await prepareRail(p, rail, order, voucher))();
}

/** The fixture after one 100 USDC cash payment through the device's split: 50 / 40 / 10 USDC claimable. */
export async function deployWithCredits() {
  const p = await deployPayments();
  await payOnRail(p, "cash", await makeOrder(p, USDC(100)));
  return p;
}

/** `address`'s balance of the fixture's token. */
export async function tokenBalance(p: Payments, address: Address) {
  return p.token.read.balanceOf([address]);
}

/** Installs Permit2 at its canonical address as the local stack does (lib/permit2.ts), deploys PlainStablecoin (no
 * EIP-2612, no EIP-3009: Permit2 is its only gasless rail), points the router at a split factory of it with the
 * fixture device's split, funds the payer and has the payer approve Permit2 once. Orders in it:
 * `makeOrder(p, amount, { token: plain.address, split: plainSplit.address })`. */
export async function deployPermit2Rail(p: Payments) {
  await installPermit2((method, params) => connection.provider.request({ method, params }));
  const plain = await viem.deployContract("PlainStablecoin", ["Tether USD (test)", "USDT", p.accounts.admin.account.address]);
  const plainSplit = await deploySplitFor(p, plain.address);
  await plain.write.mint([p.accounts.payer.account.address, USDC(1_000)]);
  const asPayer = await viem.getContractAt("PlainStablecoin", plain.address, { client: { wallet: p.accounts.payer } });
  await asPayer.write.approve([PERMIT2_ADDRESS, MAX_UINT256]);
  const permit2 = await viem.getContractAt("Permit2", PERMIT2_ADDRESS);
  return { plain, plainSplit, permit2 };
}

/** The payer's Permit2 signature of `order` (the order as witness, nonce its id, deadline its expiry), or another
 * signer's, or of another order's fields. */
export async function signPermit2(p: Payments, order: PaymentOrder, opts: { signer?: Wallet; signed?: PaymentOrder } = {}) {
  const signer = opts.signer ?? p.accounts.payer;
  return signer.signTypedData({
    account: signer.account,
    ...permit2TypedData({ chainId, router: p.router.address, order: opts.signed ?? order }),
  });
}

/** Arguments of `payWithPermit2` for `order`, signed by the quote signer and the payer. */
export async function permit2Payment(p: Payments, order: PaymentOrder) {
  return [order, await signVoucher(p, order), p.accounts.payer.account.address, await signPermit2(p, order)] as const;
}

/** The `Rail` enum value of payWithPermit2. */
export const PERMIT2_RAIL_ID = 4;

/** The `Rail` enum value of payFromDeposit (a plain transfer to the order's deposit address). */
export const TRANSFER_RAIL_ID = 5;

/** The payer (or `from`) transfers `amount` (the order amount unless given) of the order's token to `order`'s
 * deposit address, as a wallet does for the order's EIP-681 payment request; resolves to the address. */
export async function transferToDeposit(p: Payments, order: PaymentOrder, amount = order.amount, from: Wallet = p.accounts.payer) {
  const deposit = await p.router.read.depositAddress([order]);
  const erc20 = await viem.getContractAt("TestStablecoin", order.token, { client: { wallet: from } });
  await erc20.write.transfer([deposit, amount]);
  return deposit;
}
