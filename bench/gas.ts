// Gas of every contract entry point a payment touches, on Hardhat's in-process chain (deterministic).
// Run: node bench/gas.ts (after `npm run build`). Prints a table and writes bench/results/gas.json.
//
// "warm" means the system has seen payments before (the split holds a balance, the legs have accrued,
// the order bitmap word is in use): the state of a running service. A payer's first permit payment
// also pays for its first permit nonce and, for a new token holder, nothing else: both cases are shown.
import { mkdir, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import type { Hex } from "viem";
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
} from "../test/contracts/fixture.ts";

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

const rows = results.map((r) => ({ ...r, gas: Number(r.gas) }));
const width = Math.max(...rows.map((r) => r.operation.length));
console.log(`Gas per operation (solc ${(await import("solc/package.json", { with: { type: "json" } })).default.version}, optimizer 10,000 runs, cancun; ${os.cpus().length} cores)\n`);
for (const r of rows) console.log(`${r.operation.padEnd(width)}  ${String(r.gas).padStart(7)}  ${r.note}`);
console.log("\nFor comparison: Coinbase commerce-payments' charge() costs about 165,000 gas.");
const out = path.join(import.meta.dirname, "results", "gas.json");
await mkdir(path.dirname(out), { recursive: true });
await writeFile(out, `${JSON.stringify({ measuredAt: new Date().toISOString(), results: rows }, null, 2)}\n`);
process.exit(0);
