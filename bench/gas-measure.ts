// The gas of every contract entry point, measured on Hardhat's in-process chain: first what a payment
// touches, then settlement, withdrawal, the admin operations, the split factory and its splits, and telemetry
// anchoring. Shared by bench/gas.ts (the benchmark, which writes the checked-in snapshot
// bench/gas-snapshot.json) and test/contracts/gas-snapshot.test.ts (which fails when a figure moves from the
// snapshot).
//
// "warm" means the system has seen payments before (the split holds a balance, the legs have accrued,
// the order bitmap word is in use): the state of a running service. A payer's first permit payment
// also pays for its first permit nonce: both cases are shown. Payments go through the device's own AssetSplit,
// created by the split factory (the only splits the router pays through), in the test stablecoin unless the name
// says "in RehearsalUsdc" (USDC's stand-in, which has EIP-3009: the authorization rail, beside the permit rail in
// the same token) or "in PlainStablecoin" (USDT's stand-in: Permit2). The router takes one split factory per token;
// the token named in a payment's figure has the main factory, except PlainStablecoin, which has a second one, as on
// the local stack. The split's administration goes through the factory (AssetSplitFactory.*), which forwards
// each call to the split.
//
// The figures are deterministic: the same transactions with the same calldata on every run. Orders get
// fixed ids and a fixed expiry (an expiry taken from the clock would change the order's digest, so the
// signatures, and with them the calldata's zero bytes, from run to run), and the chain is put back to
// the state it started in, so that contracts deploy at the same addresses on the next call.
import { type Hex, type TypedDataDefinition, keccak256, toHex } from "viem";
import { PERMIT2_ADDRESS, type PaymentOrder, permit2TypedData } from "../sdk/src/payment-order.ts";
import {
  FIXTURE_DEVICE,
  MAX_UINT256,
  USDC,
  RECIPIENT_CHANGE_DELAY,
  assetKey,
  authorizationPayment,
  deployPayments,
  deployPermit2Rail,
  deployUsdcRail,
  deviceKey,
  factoryAs,
  makeOrder,
  networkHelpers,
  permit2Payment,
  permitPayment,
  publicClient,
  routerAs,
  signVoucher,
  splitAs,
  tokenAs,
  transferToDeposit,
  viem,
} from "../test/contracts/fixture.ts";
import { accountAuthorization, accountPermit, fundAccount, signAsAccount, smartAccount } from "../test/contracts/smart-account-fixture.ts";

/** One measured operation: `name` is its key in bench/gas-snapshot.json. */
export type GasFigure = { name: string; gas: number; note: string };

/** The repeat payer's `payWithPermit` through the device's own split. */
export const REPEAT_PAYER = "payWithPermit, repeat payer";
/** The repeat payer's `payWithAuthorization` (EIP-3009) in RehearsalUsdc through the device's split in it. */
export const AUTHORIZATION_REPEAT_PAYER = "payWithAuthorization in RehearsalUsdc, repeat payer";
/** The repeat payer's `payWithPermit` in RehearsalUsdc, the same scenario: the two gasless rails side by side. */
export const USDC_PERMIT_REPEAT_PAYER = "payWithPermit in RehearsalUsdc, repeat payer";
/** The repeat payer's `payWithPermit2` in PlainStablecoin (no EIP-2612, no EIP-3009) through the device's split. */
export const PERMIT2_REPEAT_PAYER = "payWithPermit2 in PlainStablecoin, repeat payer";
/** Creating a device's split. */
export const CREATE_SPLIT = "AssetSplitFactory.createSplit";

/** The two steps of a recipient change. */
export const PROPOSE_RECIPIENTS = "AssetSplitFactory.proposeRecipients";
export const EXECUTE_RECIPIENTS = "AssetSplitFactory.executeRecipients";

/** The figures with a target: name -> the most gas it may take. */
export const GAS_TARGETS: Readonly<Record<string, number>> = {
  [REPEAT_PAYER]: 95_500,
  [AUTHORIZATION_REPEAT_PAYER]: 129_000,
  [PERMIT2_REPEAT_PAYER]: 115_000,
  [CREATE_SPLIT]: 150_000,
};
const targetNote = (name: string) => `target <= ${GAS_TARGETS[name].toLocaleString("en-US")}`;

/** The owners of the benchmark's smart-contract accounts: fixed keys, so that their signatures, and the calldata's
 * zero bytes with them, are the same on every run. */
const BENCH_OWNER_KEYS: Hex[] = [1, 2, 3].map((i) => keccak256(toHex(`bench smart-account owner ${i}`)));

/** 2099-12-31T23:59:59Z: four non-zero bytes, as a real expiry has. */
const EXPIRY = 4_102_444_799n;

const gasOf = async (hash: Promise<Hex>) => (await publicClient.waitForTransactionReceipt({ hash: await hash })).gasUsed;
const median = (xs: bigint[]) => [...xs].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0))[Math.floor(xs.length / 2)]!;

/** Measures every figure on the in-process chain, which must be as Hardhat started it (nothing mined), and
 * leaves it so. Takes a few seconds. */
export async function measureGas(): Promise<GasFigure[]> {
  const block = await publicClient.getBlockNumber();
  if (block !== 0n) throw new Error(`measureGas needs a fresh chain; this one is at block ${block}`);
  const snapshot = await networkHelpers.takeSnapshot();
  try {
    return await measure();
  } finally {
    await snapshot.restore();
  }
}

async function measure(): Promise<GasFigure[]> {
  const p = await deployPayments();
  const { payer, relayer, agent, stranger, assetOwner, operator, admin, pauser, manager } = p.accounts;
  const key = assetKey(FIXTURE_DEVICE);
  const asRelayer = await routerAs(p, relayer);
  const figures: GasFigure[] = [];
  const record = (name: string, gas: bigint, note = "") => figures.push({ name, gas: Number(gas), note });
  let nextOrderId = 1n;
  const order = (amount: bigint, overrides: Partial<PaymentOrder> = {}) =>
    makeOrder(p, amount, { orderId: nextOrderId++, expiry: EXPIRY, ...overrides });

  // Warm the system: one payment by another wallet.
  await p.token.write.mint([stranger.account.address, USDC(100)]);
  await (await tokenAs(p, stranger)).write.approve([p.router.address, MAX_UINT256]);
  const warmup = await order(USDC(1));
  await gasOf((await routerAs(p, stranger)).write.pay([warmup, await signVoucher(p, warmup)]));

  const first = await order(USDC(1.5));
  record(
    "payWithPermit, a payer's first payment",
    await gasOf(asRelayer.write.payWithPermit(await permitPayment(p, first))),
    "the payer's permit nonce goes 0 -> 1",
  );

  const repeat: bigint[] = [];
  for (let i = 0; i < 5; i++) {
    const o = await order(USDC(1.5));
    repeat.push(await gasOf(asRelayer.write.payWithPermit(await permitPayment(p, o))));
  }
  record(REPEAT_PAYER, median(repeat), `median of 5; ${targetNote(REPEAT_PAYER)}`);

  await (await tokenAs(p, payer)).write.approve([p.router.address, MAX_UINT256]);
  const approval: bigint[] = [];
  for (let i = 0; i < 5; i++) {
    const o = await order(USDC(1.5));
    approval.push(await gasOf((await routerAs(p, payer)).write.pay([o, await signVoucher(p, o)])));
  }
  record("pay (prior approval)", median(approval), "median of 5; the payer approved the router beforehand");

  const cash: bigint[] = [];
  for (let i = 0; i < 5; i++) {
    const o = await order(USDC(1.5));
    cash.push(await gasOf((await routerAs(p, agent)).write.payCash([o, await signVoucher(p, o)])));
  }
  record("payCash", median(cash), "median of 5; from the agent's float");

  // The transfer rail: the payer transferred the amount to the order's deposit address beforehand (a wallet's
  // EIP-681 payment); each payment creates that order's OrderDeposit, which keeps no code.
  const fromDeposit: bigint[] = [];
  let overpaid: PaymentOrder | undefined;
  for (let i = 0; i < 5; i++) {
    const o = await order(USDC(1.5));
    await transferToDeposit(p, o, i === 0 ? USDC(2) : o.amount);
    fromDeposit.push(await gasOf(asRelayer.write.payFromDeposit([o, await signVoucher(p, o)])));
    overpaid ??= o;
  }
  record("payFromDeposit", median(fromDeposit), "median of 5; creates the order's deposit, then collects from it");
  record(
    "PaymentRouter.recoverDeposit",
    await gasOf(p.router.write.recoverDeposit([overpaid!, admin.account.address, USDC(0.5)])),
    "admin; an overpayment at a paid order's deposit address",
  );

  const newWord = await order(USDC(1.5), { orderId: 256n * 1000n });
  record(
    "payWithPermit, first order id of a new bitmap word",
    await gasOf(asRelayer.write.payWithPermit(await permitPayment(p, newWord))),
    "once every 256 sequential orders",
  );

  await p.token.write.mint([admin.account.address, USDC(1_000)]);
  await p.factory.write.grantRole([await p.factory.read.DEPOSITOR_ROLE(), admin.account.address]);
  await p.token.write.approve([p.split.address, MAX_UINT256]);
  record(
    "AssetSplit.deposit",
    await gasOf(p.split.write.deposit([`0x${"ab".repeat(32)}`, USDC(250)])),
    "batch settlement; a depositor of the factory pulls from itself",
  );

  record(
    "AssetSplit.withdraw (with checkpoint)",
    await gasOf((await splitAs(p, assetOwner)).write.withdraw([assetOwner.account.address])),
    "the first: moves the three legs' accruals to their recipients, then pays out",
  );
  const again = await order(USDC(2));
  await gasOf(asRelayer.write.payWithPermit(await permitPayment(p, again)));
  record(
    "AssetSplit.release",
    await gasOf((await splitAs(p, stranger)).write.release([assetOwner.account.address])),
    "anyone pushes a recipient's credit",
  );

  // The rest of the entry points: settlement of tokens already sent, and the administration (through the factory).
  await p.factory.write.grantRole([await p.factory.read.DEPOSITOR_ROLE(), relayer.account.address]);
  await p.token.write.mint([p.split.address, USDC(10)]);
  record(
    "AssetSplit.settle",
    await gasOf((await splitAs(p, relayer)).write.settle([`0x${"cd".repeat(32)}`, USDC(10)])),
    "a depositor of the factory settles tokens it transferred first",
  );
  await p.token.write.mint([p.split.address, USDC(1)]);
  record(
    "AssetSplitFactory.recoverSurplus",
    await gasOf(p.factory.write.recoverSurplus([key, admin.account.address])),
    "admin; a split's tokens sent directly, owed to no one",
  );
  // A recipient change: proposed by the split manager, executed by anyone after the factory's delay.
  record(
    PROPOSE_RECIPIENTS,
    await gasOf((await factoryAs(p, manager)).write.proposeRecipients([key, stranger.account.address, operator.account.address])),
    "split manager; records the change and when it may be executed",
  );
  await networkHelpers.time.increase(RECIPIENT_CHANGE_DELAY);
  record(
    EXECUTE_RECIPIENTS,
    await gasOf((await factoryAs(p, stranger)).write.executeRecipients([key])),
    "anyone, after the delay; checkpoints the split's accruals, then replaces the asset owner",
  );
  await (await factoryAs(p, manager)).write.proposeRecipients([key, assetOwner.account.address, operator.account.address]);
  record(
    "AssetSplitFactory.cancelRecipients",
    await gasOf((await factoryAs(p, stranger)).write.cancelRecipients([key])),
    "the split's asset-owner recipient (here after the change above) or the split manager",
  );
  const factoryAsPauser = await factoryAs(p, pauser);
  record("AssetSplitFactory.pauseSplit", await gasOf(factoryAsPauser.write.pauseSplit([key])), "pauser");
  record("AssetSplitFactory.unpauseSplit", await gasOf(factoryAsPauser.write.unpauseSplit([key])), "pauser");
  const routerAsPauser = await routerAs(p, pauser);
  record("PaymentRouter.pause", await gasOf(routerAsPauser.write.pause()), "pauser");
  record("PaymentRouter.unpause", await gasOf(routerAsPauser.write.unpause()), "pauser");
  await p.token.write.mint([p.router.address, USDC(1)]);
  record(
    "PaymentRouter.recoverERC20",
    await gasOf(p.router.write.recoverERC20([p.token.address, admin.account.address, USDC(1)])),
    "admin; tokens sent to the router by mistake",
  );

  // Another device's split, created.
  const createHash = (await factoryAs(p, relayer)).write.createSplit([
    deviceKey("device-2"),
    assetOwner.account.address,
    operator.account.address,
  ]);
  record(CREATE_SPLIT, await gasOf(createHash), `anyone (the relayer); an EIP-1167 clone, initialised; ${targetNote(CREATE_SPLIT)}`);
  const cancelled = await order(USDC(1));
  record(
    "PaymentRouter.cancelOrder",
    await gasOf((await routerAs(p, p.accounts.quoteSigner)).write.cancelOrder([cancelled.orderId])),
    "quote signer; an order id in a bitmap word in use",
  );
  record(
    "PaymentRouter.setSplitFactory",
    await gasOf(p.router.write.setSplitFactory([p.factory.address])),
    "admin; checks the factory's router and implementation, and that its token refuses invalid signatures",
  );

  // The two gasless rails in USDC's stand-in, in the same scenario as the permit figures above (a split that
  // another wallet paid through, a payer who paid before), shown beside them. Measured after the other
  // payments, so that the contracts deployed for them move none of those figures.
  const { usdc, usdcSplit } = await deployUsdcRail(p);
  // As on the local stack, USDC's factory is the router's main one (read from the slot every payment reads) and
  // PlainStablecoin's (USDT's, below) a second one (one more slot read).
  await p.router.write.removeSplitFactory([p.token.address]);
  await p.router.write.setSplitFactory([await usdcSplit.read.factory()]);
  const usdcOrder = (amount: bigint) => order(amount, { token: usdc.address, split: usdcSplit.address });
  await usdc.write.mint([stranger.account.address, USDC(100)]);
  await (
    await viem.getContractAt("RehearsalUsdc", usdc.address, { client: { wallet: stranger } })
  ).write.approve([p.router.address, MAX_UINT256]);
  const usdcWarmup = await usdcOrder(USDC(1));
  await gasOf((await routerAs(p, stranger)).write.pay([usdcWarmup, await signVoucher(p, usdcWarmup)]));
  await gasOf(asRelayer.write.payWithPermit(await permitPayment(p, await usdcOrder(USDC(1.5)))));
  await gasOf(asRelayer.write.payWithAuthorization(await authorizationPayment(p, await usdcOrder(USDC(1.5)))));
  const usdcPermit: bigint[] = [];
  const usdcAuthorization: bigint[] = [];
  for (let i = 0; i < 5; i++) {
    usdcPermit.push(await gasOf(asRelayer.write.payWithPermit(await permitPayment(p, await usdcOrder(USDC(1.5))))));
    usdcAuthorization.push(await gasOf(asRelayer.write.payWithAuthorization(await authorizationPayment(p, await usdcOrder(USDC(1.5))))));
  }
  const usdcFigures: GasFigure[] = [
    { name: USDC_PERMIT_REPEAT_PAYER, gas: Number(median(usdcPermit)), note: "median of 5; USDC's EIP-712 domain" },
    {
      name: AUTHORIZATION_REPEAT_PAYER,
      gas: Number(median(usdcAuthorization)),
      note: `median of 5; one EIP-3009 receive authorization, through the router to the split; ${targetNote(AUTHORIZATION_REPEAT_PAYER)}`,
    },
  ];

  // The same two rails from a smart-contract account: OpenZeppelin's account with 2-of-3 owners (ERC-1271; its
  // signature is abi.encode(signers, signatures), some 450 bytes), a repeat payer, through the tokens' bytes
  // overloads. Then an account not deployed yet, whose first payment deploys it (ERC-6492).
  const account = await smartAccount({ keys: BENCH_OWNER_KEYS, salt: 1n });
  await fundAccount(usdc.address, account);
  const accountPermitPay = async () => {
    const o = await usdcOrder(USDC(1.5));
    return gasOf(asRelayer.write.payWithPermit([o, await signVoucher(p, o), account.address, await accountPermit(p, account, o)]));
  };
  const accountAuthorizationPay = async () => {
    const o = await usdcOrder(USDC(1.5));
    const signature = await accountAuthorization(p, account, o);
    return gasOf(asRelayer.write.payWithAuthorization([o, await signVoucher(p, o), account.address, signature]));
  };
  await accountPermitPay();
  await accountAuthorizationPay();
  const accountPermitGas: bigint[] = [];
  const accountAuthorizationGas: bigint[] = [];
  for (let i = 0; i < 3; i++) {
    accountPermitGas.push(await accountPermitPay());
    accountAuthorizationGas.push(await accountAuthorizationPay());
  }
  const fresh = await smartAccount({ keys: BENCH_OWNER_KEYS, salt: 2n, deployed: false });
  await fundAccount(usdc.address, fresh);
  const freshOrder = await usdcOrder(USDC(1.5));
  const freshSignature = await accountAuthorization(p, fresh, freshOrder, { erc6492: true });
  const freshGas = await gasOf(
    asRelayer.write.payWithAuthorization([freshOrder, await signVoucher(p, freshOrder), fresh.address, freshSignature]),
  );
  usdcFigures.push(
    { name: "payWithPermit in RehearsalUsdc, 2-of-3 smart account", gas: Number(median(accountPermitGas)), note: "median of 3; ERC-1271" },
    {
      name: "payWithAuthorization in RehearsalUsdc, 2-of-3 smart account",
      gas: Number(median(accountAuthorizationGas)),
      note: "median of 3; ERC-1271",
    },
    {
      name: "payWithAuthorization in RehearsalUsdc, undeployed 2-of-3 smart account",
      gas: Number(freshGas),
      note: "ERC-6492: the payment deploys the account through its factory first",
    },
  );

  // Permit2 in a token without EIP-2612 or EIP-3009 (as USDT), the same scenario: a split another wallet paid
  // through, a payer who paid before (its Permit2 nonce word in use) and approved Permit2 once.
  const { plain, plainSplit } = await deployPermit2Rail(p);
  const plainOrder = (amount: bigint) => order(amount, { token: plain.address, split: plainSplit.address });
  await plain.write.mint([stranger.account.address, USDC(100)]);
  await (
    await viem.getContractAt("PlainStablecoin", plain.address, { client: { wallet: stranger } })
  ).write.approve([p.router.address, MAX_UINT256]);
  const plainWarmup = await plainOrder(USDC(1));
  await gasOf((await routerAs(p, stranger)).write.pay([plainWarmup, await signVoucher(p, plainWarmup)]));
  const firstPermit2 = await gasOf(asRelayer.write.payWithPermit2(await permit2Payment(p, await plainOrder(USDC(1.5)))));
  const permit2Gas: bigint[] = [];
  for (let i = 0; i < 5; i++)
    permit2Gas.push(await gasOf(asRelayer.write.payWithPermit2(await permit2Payment(p, await plainOrder(USDC(1.5))))));
  // The smart account approved Permit2 once, by a transaction of its own (sent here on its behalf).
  await plain.write.mint([account.address, USDC(100)]);
  await networkHelpers.impersonateAccount(account.address);
  await networkHelpers.setBalance(account.address, 10n ** 18n);
  const asAccount = await viem.getContractAt("PlainStablecoin", plain.address, {
    client: { wallet: await viem.getWalletClient(account.address) },
  });
  await asAccount.write.approve([PERMIT2_ADDRESS, MAX_UINT256]);
  await networkHelpers.stopImpersonatingAccount(account.address);
  const accountPermit2Pay = async () => {
    const o = await plainOrder(USDC(1.5));
    const typedData = permit2TypedData({ chainId: await publicClient.getChainId(), router: p.router.address, order: o });
    const signature = await signAsAccount(account, typedData as unknown as TypedDataDefinition);
    return gasOf(asRelayer.write.payWithPermit2([o, await signVoucher(p, o), account.address, signature]));
  };
  await accountPermit2Pay();
  const accountPermit2Gas: bigint[] = [];
  for (let i = 0; i < 3; i++) accountPermit2Gas.push(await accountPermit2Pay());
  usdcFigures.push(
    { name: "payWithPermit2 in PlainStablecoin, a payer's first payment", gas: Number(firstPermit2), note: "its first Permit2 nonce word" },
    { name: PERMIT2_REPEAT_PAYER, gas: Number(median(permit2Gas)), note: `median of 5; ${targetNote(PERMIT2_REPEAT_PAYER)}` },
    {
      name: "payWithPermit2 in PlainStablecoin, 2-of-3 smart account",
      gas: Number(median(accountPermit2Gas)),
      note: "median of 3; ERC-1271",
    },
  );
  figures.splice(figures.findIndex((f) => f.name === REPEAT_PAYER) + 1, 0, ...usdcFigures);

  // Telemetry anchoring: one anchorBatches transaction anchors the root of a tree of many batches, so a
  // batch's share is the transaction's gas divided by the batches in it (the calldata, the one slot and the
  // event do not grow with them).
  const anchor = await viem.deployContract("TelemetryAnchor", [admin.account.address, 0, relayer.account.address]);
  const anchorAsRelayer = await viem.getContractAt("TelemetryAnchor", anchor.address, { client: { wallet: relayer } });
  for (const batches of [1, 10, 100]) {
    const gas = await gasOf(anchorAsRelayer.write.anchorBatches([keccak256(toHex(`bench batches root ${batches}`)), batches]));
    record(
      `TelemetryAnchor.anchorBatches, per batch (${batches} ${batches === 1 ? "batch" : "batches"} a transaction)`,
      gas / BigInt(batches),
      `anchorer; the transaction's ${gas.toLocaleString("en-US")} gas / ${batches}`,
    );
  }
  return figures;
}

/** The snapshot's form: a flat object, figure name to gas, in measurement order. */
export function snapshotOf(figures: GasFigure[]): Record<string, number> {
  return Object.fromEntries(figures.map((f) => [f.name, f.gas]));
}

/** bench/gas-snapshot.json, checked in. */
export const SNAPSHOT_FILE = new URL("./gas-snapshot.json", import.meta.url);

/** The file's text for `figures` (what `npm run gas:snapshot` writes). */
export function snapshotText(figures: GasFigure[]): string {
  return `${JSON.stringify(snapshotOf(figures), null, 2)}\n`;
}

/** The page that shows the gas table, between these two lines (`npm run gas:snapshot` writes it; the gas snapshot
 * test checks it). */
export const GAS_TABLE_FILE = new URL("../docs/benchmarks.md", import.meta.url);
export const GAS_TABLE_START = "<!-- gas table: written by `npm run gas:snapshot` from bench/gas-snapshot.json -->";
export const GAS_TABLE_END = "<!-- end of gas table -->";

/** The gas table for `snapshot`: every figure, in the snapshot's order, with its target if it has one. */
export function gasTable(snapshot: Record<string, number>): string {
  const rows = Object.entries(snapshot).map(([name, gas]) => {
    const limit = Object.hasOwn(GAS_TARGETS, name) ? GAS_TARGETS[name] : undefined;
    const targetText = limit === undefined ? "" : `≤ ${limit.toLocaleString("en-US")}: ${gas <= limit ? "met" : "**missed**"}`;
    return `| ${name} | ${gas.toLocaleString("en-US")} | ${targetText} |`;
  });
  return ["| Operation | Gas | Target |", "| --- | ---: | --- |", ...rows].join("\n");
}

/** `page` with the text between the gas table's markers replaced by `table`. */
export function withGasTable(page: string, table: string): string {
  const start = page.indexOf(GAS_TABLE_START);
  const end = page.indexOf(GAS_TABLE_END);
  if (start < 0 || end < start) throw new Error("docs/benchmarks.md has no gas table markers");
  return `${page.slice(0, start + GAS_TABLE_START.length)}\n${table}\n${page.slice(end)}`;
}
