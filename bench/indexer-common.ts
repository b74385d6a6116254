// Shared pieces of the indexer benchmarks: a fast cash-order payer for the local chain (vouchers signed by
// the quote signer, transactions signed locally with explicit nonces, sent raw), percentiles, the
// machine's description and command-line options.
import os from "node:os";
import { type Address, type Hex, encodeFunctionData } from "viem";
import { paymentRouterAbi } from "../generated/abis.ts";
import { orderTypedData, type PaymentOrder } from "../sdk/src/payment-order.ts";
import { selectedDatabaseKinds, type DatabaseKind } from "../test/support/databases.ts";
import { LOCAL_ACCOUNT_INDEX, type LocalChain, localAccount, localStablecoin } from "../test/support/local-chain.ts";
import { createPayments, deviceId } from "../test/support/payments.ts";

/** Pays cash orders from the agent's float as fast as the node takes them, for 50 devices, each through its own
 * split (created here first, by the agent: creation needs no role). */
export async function createCashPayer(chain: LocalChain) {
  const { record } = chain;
  const router = record.contracts.PaymentRouter!.address;
  const token = localStablecoin(record);
  const agent = localAccount(LOCAL_ACCOUNT_INDEX.agent);
  const quoteSigner = localAccount(LOCAL_ACCOUNT_INDEX.quoteSigner);
  const devices = Array.from({ length: 50 }, (_, i) => deviceId(`bench-device-${i}`));
  const payments = createPayments(chain);
  const splits = new Map<Hex, Address>();
  for (const device of devices) splits.set(device, await payments.ensureSplit(device));
  let nonce = Number(await chain.rpc<Hex>("eth_getTransactionCount", [agent.address, "pending"]));
  let nextOrderId = BigInt(Date.now()) << 20n;
  const latest = await chain.rpc<{ timestamp: Hex }>("eth_getBlockByNumber", ["latest", false]);
  // Far enough ahead for any run (the node's clock advances a second per block when mining fast).
  const expiry = BigInt(latest.timestamp) + 10n * 365n * 86_400n;

  return {
    /** A signed raw transaction paying a fresh order of `amount` base units (not sent). */
    async prepare(amount = 10_000n): Promise<{ order: PaymentOrder; raw: Hex }> {
      const orderId = nextOrderId++;
      const deviceId = devices[Number(orderId % BigInt(devices.length))]!;
      const order: PaymentOrder = {
        orderId,
        deviceId,
        token,
        split: splits.get(deviceId)!,
        amount,
        expiry,
      };
      const voucher = await quoteSigner.signTypedData(orderTypedData(record.chainId, router, order));
      const raw = await agent.signTransaction({
        chainId: record.chainId,
        type: "eip1559",
        to: router,
        data: encodeFunctionData({ abi: paymentRouterAbi, functionName: "payCash", args: [order, voucher] }),
        gas: 300_000n,
        nonce: nonce++,
        maxFeePerGas: 100_000_000_000n,
        maxPriorityFeePerGas: 1_000_000_000n,
      });
      return { order, raw };
    },
    /** Sends a prepared transaction; with automine, it is mined when this resolves. */
    send(raw: Hex): Promise<Hex> {
      return chain.rpc<Hex>("eth_sendRawTransaction", [raw]);
    },
  };
}

/** The q-quantile (0..1) of `values` (nearest rank). */
export function percentile(values: number[], q: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))]!;
}

export function machine(): string {
  const cpus = os.cpus();
  const load = os
    .loadavg()
    .map((l) => l.toFixed(1))
    .join(" ");
  return `${os.availableParallelism()} cores (${cpus[0]?.model.trim() ?? "unknown CPU"}), ${Math.round(os.totalmem() / 2 ** 30)} GiB, node ${process.version}, load average ${load}`;
}

/** `--name value` or `--name=value` from argv, else `fallback`. */
export function option(name: string, fallback: string): string {
  const args = process.argv.slice(2);
  for (let i = 0; i < args.length; i++) {
    if (args[i] === `--${name}`) return args[i + 1] ?? fallback;
    if (args[i]!.startsWith(`--${name}=`)) return args[i]!.slice(name.length + 3);
  }
  return fallback;
}

/** The databases to benchmark: --db pglite|postgres|both (default: TEST_DATABASES, else `fallback`, else
 * both, PGlite first). */
export function benchDatabases(fallback?: DatabaseKind[]): DatabaseKind[] {
  const db = option("db", "");
  if (db === "pglite" || db === "postgres") return [db];
  if (db === "both") return ["pglite", "postgres"];
  if (db === "") return process.env.TEST_DATABASES?.trim() || !fallback ? selectedDatabaseKinds() : fallback;
  throw new Error(`--db must be pglite, postgres or both, got "${db}"`);
}
