// The indexer suites' stack: a fresh local chain with LocalStack deployed, the indexer on one of the test
// databases (optionally behind a TCP proxy to the chain), the read path's client and the payment helpers.
import assert from "node:assert/strict";
import path from "node:path";
import type { Address, Hex } from "viem";
import { createIndexerDatabase, startIndexer } from "../../lib/indexer.ts";
import type { Service } from "../../lib/processes.ts";
import { PGLITE_TEMPLATES, type TestDatabase } from "../support/databases.ts";
import { type TestIndexerClient, createTestIndexerClient } from "../support/indexer-reads.ts";
import { type LocalChain, startLocalChain, testLogDir } from "../support/local-chain.ts";
import { type Payments, createPayments } from "../support/payments.ts";
import { type TcpProxy, startTcpProxy } from "../support/tcp-proxy.ts";

export type Stack = {
  chain: LocalChain;
  indexer: Service;
  indexerUrl: string;
  client: TestIndexerClient;
  payments: Payments;
  proxy?: TcpProxy;
  stop(): Promise<void>;
};

const echo = process.env.TEST_ECHO === "1";

/** Starts chain, (proxy,) and indexer for `variant`; logs go to test-results/indexer/. `history` runs on the
 * chain before the indexer starts (what the indexer then backfills). */
export async function startStack(
  variant: TestDatabase,
  opts: { label: string; proxy?: boolean; history?: (payments: Payments) => Promise<void> },
): Promise<Stack> {
  const logDir = testLogDir("indexer");
  const chain = await startLocalChain({ label: `${opts.label}-${variant.name}`, logDir, echo });
  let proxy: TcpProxy | undefined;
  try {
    const payments = createPayments(chain);
    await opts.history?.(payments);
    proxy = opts.proxy ? await startTcpProxy(chain.rpcUrl) : undefined;
    if (variant.database.kind === "pglite") await createIndexerDatabase(variant.database.directory, PGLITE_TEMPLATES);
    const { service, url } = await startIndexer({
      deploymentId: chain.deploymentId,
      rpcUrl: proxy?.url ?? chain.rpcUrl,
      database: variant.database,
      logFile: path.join(logDir, `${chain.deploymentId}.indexer.log`),
      echo,
    });
    return {
      chain,
      indexer: service,
      indexerUrl: url,
      client: createTestIndexerClient(url),
      payments,
      proxy,
      async stop() {
        await service.stop();
        await proxy?.close();
        await chain.stop();
        await variant.cleanup();
      },
    };
  } catch (error) {
    await proxy?.close();
    await chain.stop();
    await variant.cleanup();
    throw error;
  }
}

/** The three leg amounts the split credits for `gross` (remainder to the asset owner). */
export function expectedLegs(gross: bigint, bps: readonly [number, number, number]): [bigint, bigint, bigint] {
  const operator = (gross * BigInt(bps[1])) / 10_000n;
  const protocol = (gross * BigInt(bps[2])) / 10_000n;
  return [gross - operator - protocol, operator, protocol];
}

/** Polls `check` until it returns a value other than undefined/false, or fails after `timeoutMs`. */
export async function eventually<T>(what: string, check: () => Promise<T | undefined | false>, timeoutMs = 30_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let lastError: unknown;
  for (;;) {
    try {
      const value = await check();
      if (value !== undefined && value !== false) return value as T;
    } catch (error) {
      lastError = error;
    }
    if (Date.now() > deadline) {
      throw new Error(`timed out waiting for ${what}${lastError ? `: ${(lastError as Error).message}` : ""}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** Asserts that the indexer's network, device and daily totals, and every participant's earnings, equal
 * what the chain says (its OrderPaid and YieldDeposited logs and the splits' `claimable`, summed over every
 * split the factory created). */
export async function assertTotalsMatchChain(stack: Stack, recipients: readonly Address[]): Promise<void> {
  const { client, payments } = stack;
  const [paid, settled] = await Promise.all([payments.orderPaidLogs(), payments.yieldDepositedLogs()]);
  const stats = await client.networkStats();
  const sum = (values: bigint[]) => values.reduce((a, b) => a + b, 0n);

  // The stablecoin has 6 decimals: micro-USD equals base units.
  assert.equal(stats.payments, paid.length, "network payments");
  assert.equal(stats.volumeUsdMicro, sum(paid.map((log) => log.args.amount!)), "network volume");
  assert.equal(stats.settlements, settled.length, "network settlements");
  assert.equal(stats.settledUsdMicro, sum(settled.map((log) => log.args.gross!)), "network settled volume");
  const byRail = [0, 1, 2, 3, 4, 5].map((rail) => paid.filter((log) => log.args.rail === rail).length);
  assert.deepEqual(
    [
      stats.permitPayments,
      stats.approvalPayments,
      stats.cashPayments,
      stats.authorizationPayments,
      stats.permit2Payments,
      stats.transferPayments,
    ],
    byRail,
    "payments by rail",
  );
  assert.equal(stats.tokens.length, paid.length > 0 ? 1 : 0);
  if (paid.length > 0) {
    assert.equal(stats.tokens[0]!.volume, stats.volumeUsdMicro);
    assert.equal(stats.tokens[0]!.payments, paid.length);
  }

  const devices = new Map<Hex, { payments: number; volume: bigint }>();
  for (const log of paid) {
    const entry = devices.get(log.args.deviceId!) ?? { payments: 0, volume: 0n };
    entry.payments++;
    entry.volume += log.args.amount!;
    devices.set(log.args.deviceId!, entry);
  }
  assert.equal(stats.devices, devices.size, "distinct devices");
  const deviceRows = await client.deviceStats();
  assert.deepEqual(
    new Map(deviceRows.map((row) => [row.deviceId, { payments: row.payments, volume: row.volumeUsdMicro }])),
    devices,
    "per-device totals",
  );

  const blockTimes = new Map<bigint, bigint>();
  for (const log of paid) {
    if (!blockTimes.has(log.blockNumber)) {
      blockTimes.set(log.blockNumber, (await payments.publicClient.getBlock({ blockNumber: log.blockNumber })).timestamp);
    }
  }
  const days = new Map<number, { payments: number; volume: bigint }>();
  for (const log of paid) {
    const day = Number(blockTimes.get(log.blockNumber)! / 86_400n);
    const entry = days.get(day) ?? { payments: 0, volume: 0n };
    entry.payments++;
    entry.volume += log.args.amount!;
    days.set(day, entry);
  }
  const dayRows = await client.dailyStats();
  assert.deepEqual(
    new Map(dayRows.map((row) => [row.day, { payments: row.payments, volume: row.volumeUsdMicro }])),
    days,
    "per-day totals",
  );
  assert.equal(
    dayRows.reduce((n, row) => n + row.newDevices, 0),
    devices.size,
    "new devices over all days",
  );

  const splits = await payments.splitAddresses();
  for (const recipient of recipients) {
    const [earnings] = await client.participantEarnings(recipient);
    let onChain = 0n;
    for (const split of splits) onChain += await payments.claimable(recipient, split);
    assert.equal(earnings?.claimable ?? 0n, onChain, `claimable of ${recipient}`);
    if (earnings) assert.equal(earnings.credited - earnings.withdrawn, earnings.claimable);
  }
  const participants = await client.participants();
  assert.equal(
    sum(participants.map((p) => p.credited)),
    sum(settled.map((log) => log.args.gross!)),
    "all credits sum to all settled gross",
  );
}
