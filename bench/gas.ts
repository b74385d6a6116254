// Gas of every contract entry point, on Hardhat's in-process chain (deterministic): first those a payment
// touches, then settlement, withdrawal, the admin operations and telemetry anchoring.
// Run: node bench/gas.ts (after `npm run build`). Prints a table and writes bench/results/gas.json (the
// figures do not depend on the machine or its load).
//
// "warm" means the system has seen payments before (the split holds a balance, the legs have accrued,
// the order bitmap word is in use): the state of a running service. A payer's first permit payment
// also pays for its first permit nonce and, for a new token holder, nothing else: both cases are shown.
import os from "node:os";
import { type Hex, keccak256, toHex } from "viem";
import {
  MAX_UINT256,
  USDC,
  deployPayments,
  makeOrder,
  permitPayment,
  publicClient,
  routerAs,
  signVoucher,
  splitAs,
  tokenAs,
  viem,
} from "../test/contracts/fixture.ts";
import { machineInfo, target, writeResult } from "./common.ts";

const startedAt = new Date().toISOString();
const machineAtStart = machineInfo();

const gasOf = async (hash: Promise<Hex>) => (await publicClient.waitForTransactionReceipt({ hash: await hash })).gasUsed;
const median = (xs: bigint[]) => [...xs].sort((a, b) => (a < b ? -1 : 1))[Math.floor(xs.length / 2)];

const p = await deployPayments();
const { payer, relayer, agent, stranger, assetOwner, admin } = p.accounts;
const asRelayer = await routerAs(p, relayer);
const results: Array<{ operation: string; gas: bigint; note: string }> = [];

// Warm the system: one payment by another wallet.
await p.token.write.mint([stranger.account.address, USDC(100)]);
await (await tokenAs(p, stranger)).write.approve([p.router.address, MAX_UINT256]);
const warmup = await makeOrder(p, USDC(1));
await gasOf((await routerAs(p, stranger)).write.pay([warmup, await signVoucher(p, warmup)]));

const first = await makeOrder(p, USDC(1.5));
results.push({
  operation: "payWithPermit, a payer's first payment",
  gas: await gasOf(asRelayer.write.payWithPermit(await permitPayment(p, first))),
  note: "the payer's permit nonce goes 0 -> 1",
});

const repeat: bigint[] = [];
for (let i = 0; i < 5; i++) {
  const order = await makeOrder(p, USDC(1.5));
  repeat.push(await gasOf(asRelayer.write.payWithPermit(await permitPayment(p, order))));
}
results.push({ operation: "payWithPermit, a repeat payer", gas: median(repeat), note: "median of 5; target <= 110,000" });

await (await tokenAs(p, payer)).write.approve([p.router.address, MAX_UINT256]);
const approval: bigint[] = [];
for (let i = 0; i < 5; i++) {
  const order = await makeOrder(p, USDC(1.5));
  approval.push(await gasOf((await routerAs(p, payer)).write.pay([order, await signVoucher(p, order)])));
}
results.push({ operation: "pay (approval given beforehand)", gas: median(approval), note: "median of 5" });

const cash: bigint[] = [];
for (let i = 0; i < 5; i++) {
  const order = await makeOrder(p, USDC(1.5));
  cash.push(await gasOf((await routerAs(p, agent)).write.payCash([order, await signVoucher(p, order)])));
}
results.push({ operation: "payCash (agent float)", gas: median(cash), note: "median of 5" });

const newWord = await makeOrder(p, USDC(1.5), { orderId: 256n * 1000n });
results.push({
  operation: "payWithPermit, first order id of a new 256-id bitmap word",
  gas: await gasOf(asRelayer.write.payWithPermit(await permitPayment(p, newWord))),
  note: "once every 256 sequential orders",
});

await p.token.write.mint([admin.account.address, USDC(1_000)]);
await p.split.write.grantRole([await p.split.read.DEPOSITOR_ROLE(), admin.account.address]);
await p.token.write.approve([p.split.address, MAX_UINT256]);
results.push({
  operation: "AssetSplit.deposit (batch settlement)",
  gas: await gasOf(p.split.write.deposit([`0x${"ab".repeat(32)}`, USDC(250)])),
  note: "depositor pulls from itself",
});

results.push({
  operation: "AssetSplit.withdraw (first, with checkpoint)",
  gas: await gasOf((await splitAs(p, assetOwner)).write.withdraw([assetOwner.account.address])),
  note: "moves the three legs' accruals to their recipients, then pays out",
});
const again = await makeOrder(p, USDC(2));
await gasOf(asRelayer.write.payWithPermit(await permitPayment(p, again)));
results.push({
  operation: "AssetSplit.release (anyone pushes a recipient's credit)",
  gas: await gasOf((await splitAs(p, stranger)).write.release([assetOwner.account.address])),
  note: "",
});

// The rest of the entry points: settlement of tokens already sent, and the admin operations.
await p.split.write.grantRole([await p.split.read.DEPOSITOR_ROLE(), relayer.account.address]);
await p.token.write.mint([p.split.address, USDC(10)]);
results.push({
  operation: "AssetSplit.settle (tokens sent beforehand)",
  gas: await gasOf((await splitAs(p, relayer)).write.settle([`0x${"cd".repeat(32)}`, USDC(10)])),
  note: "a depositor settles what it transferred first",
});
await p.token.write.mint([p.split.address, USDC(1)]);
results.push({
  operation: "AssetSplit.recoverSurplus",
  gas: await gasOf(p.split.write.recoverSurplus([admin.account.address])),
  note: "admin; tokens sent directly, owed to no one",
});
results.push({
  operation: "AssetSplit.setLegs",
  gas: await gasOf(p.split.write.setLegs([[assetOwner.account.address, p.accounts.operator.account.address, stranger.account.address], [5000, 4000, 1000]])),
  note: "admin; checkpoints the accruals, then replaces a recipient",
});
const { pauser } = p.accounts;
const splitAsPauser = await splitAs(p, pauser);
results.push({ operation: "AssetSplit.pause", gas: await gasOf(splitAsPauser.write.pause()), note: "pauser" });
results.push({ operation: "AssetSplit.unpause", gas: await gasOf(splitAsPauser.write.unpause()), note: "pauser" });
const routerAsPauser = await routerAs(p, pauser);
results.push({ operation: "PaymentRouter.pause", gas: await gasOf(routerAsPauser.write.pause()), note: "pauser" });
results.push({ operation: "PaymentRouter.unpause", gas: await gasOf(routerAsPauser.write.unpause()), note: "pauser" });
const otherSplit = await viem.deployContract("AssetSplit", [
  p.token.address,
  admin.account.address,
  0,
  [assetOwner.account.address, p.accounts.operator.account.address, p.accounts.protocol.account.address],
  [5000, 4000, 1000],
]);
await otherSplit.write.grantRole([await otherSplit.read.DEPOSITOR_ROLE(), p.router.address]);
results.push({ operation: "PaymentRouter.registerSplit", gas: await gasOf(p.router.write.registerSplit([otherSplit.address])), note: "admin; checks the split's asset and depositor role" });
results.push({ operation: "PaymentRouter.unregisterSplit", gas: await gasOf(p.router.write.unregisterSplit([otherSplit.address])), note: "admin" });
await p.token.write.mint([p.router.address, USDC(1)]);
results.push({
  operation: "PaymentRouter.recoverERC20",
  gas: await gasOf(p.router.write.recoverERC20([p.token.address, admin.account.address, USDC(1)])),
  note: "admin; tokens sent to the router by mistake",
});
const anchor = await viem.deployContract("TelemetryAnchor", [admin.account.address, 0, relayer.account.address]);
const anchorAsRelayer = await viem.getContractAt("TelemetryAnchor", anchor.address, { client: { wallet: relayer } });
const project = keccak256(toHex("bench-project"));
const device = keccak256(toHex("bench-device"));
results.push({
  operation: "TelemetryAnchor.anchor (a device's first batch)",
  gas: await gasOf(anchorAsRelayer.write.anchor([project, device, 1n, keccak256(toHex("root-1")), 1000])),
  note: "anchorer; one telemetry batch's Merkle root",
});
results.push({
  operation: "TelemetryAnchor.anchor (a following batch)",
  gas: await gasOf(anchorAsRelayer.write.anchor([project, device, 2n, keccak256(toHex("root-2")), 1000])),
  note: "anchorer",
});

const rows = results.map((r) => ({ ...r, gas: Number(r.gas) }));
const width = Math.max(...rows.map((r) => r.operation.length));
const solcVersion = (await import("solc/package.json", { with: { type: "json" } })).default.version;
console.log(`Gas per operation (solc ${solcVersion}, optimizer 10,000 runs, cancun; ${os.cpus().length} cores)\n`);
for (const r of rows) console.log(`${r.operation.padEnd(width)}  ${String(r.gas).padStart(7)}  ${r.note}`);
console.log("\nFor comparison: Coinbase commerce-payments' charge() costs about 165,000 gas.");
const repeatPayer = rows.find((r) => r.operation === "payWithPermit, a repeat payer")!;
const out = await writeResult("gas", {
  startedAt,
  machine: machineAtStart,
  compiler: { solc: solcVersion, optimizerRuns: 10_000, evmVersion: "cancun" },
  results: rows,
  headlines: rows.map((r) => ({
    label: r.operation,
    value: `${r.gas.toLocaleString("en-US")} gas`,
    ...(r === repeatPayer ? { target: "<= 110,000", met: r.gas <= 110_000 } : {}),
  })),
  targets: [target("payWithPermit, a repeat payer", repeatPayer.gas, "atMost", 110_000, "gas")],
});
console.log(`wrote ${out}`);
process.exit(0);
