// Indexing functions: orders, settlements, splits and their legs, participants' earnings (across splits and
// per split) and the network statistics. Events of one transaction arrive in log order: a router payment emits
// the token's Transfer, then the split's YieldDeposited, then the router's OrderPaid; the factory's createSplit
// emits the new split's LegsUpdated, then the factory's SplitCreated.
//
// The splits are one source, "AssetSplit": every split the factory created, from its creation block.
import { type Context, ponder } from "ponder:registry";
import {
  dailyStats,
  deviceStats,
  networkStats,
  orders,
  participants,
  RAILS,
  type Rail,
  settlementCredits,
  settlements,
  splitParticipants,
  splits,
  tokenStats,
  tokens,
  withdrawals,
} from "ponder:schema";
import { erc20Abi, hexToBigInt } from "viem";
import { assetSplitAbi } from "../../generated/abis.ts";
import { emptyNetworkStats } from "../network-stats.ts";

type Address = `0x${string}`;
type Legs = { recipients: readonly [Address, Address, Address]; bps: readonly [number, number, number] };
type Leg = "creditedAsAssetOwner" | "creditedAsOperator" | "creditedAsProtocol";
/** The columns `participants` and `split_participants` share. */
type Earnings = typeof participants.$inferSelect;

const SECONDS_PER_DAY = 86_400n;
const MICRO = 10n ** 6n;

/** floor(amount * 10^6 / 10^decimals): exact for tokens of at most 6 decimals. */
function toUsdMicro(amount: bigint, decimals: number): bigint {
  return decimals <= 6 ? amount * 10n ** BigInt(6 - decimals) : (amount * MICRO) / 10n ** BigInt(decimals);
}

function utcDate(day: number): string {
  return new Date(day * 86_400_000).toISOString().slice(0, 10);
}

/** The token's decimals, read on chain the first time the token is seen. */
async function tokenDecimals(context: Context, token: Address): Promise<number> {
  const known = await context.db.find(tokens, { address: token });
  if (known) return known.decimals;
  const decimals = await context.client.readContract({ address: token, abi: erc20Abi, functionName: "decimals" });
  await context.db.insert(tokens).values({ address: token, decimals }).onConflictDoNothing();
  return decimals;
}

/** The split's row with its token. The token comes from SplitCreated; a split whose creation was not indexed
 * (created before the configured start block) has it read on chain, and its legs too when none of its
 * LegsUpdated was indexed. */
async function splitRow(context: Context, split: Address, blockTimestamp: bigint) {
  const known = await context.db.find(splits, { address: split });
  if (known?.token) return { ...known, token: known.token };
  const token = await context.client.readContract({ address: split, abi: assetSplitAbi, functionName: "asset" });
  if (known) return { ...(await context.db.update(splits, { address: split }).set({ token })), token };
  const [recipients, bps] = await context.client.readContract({ address: split, abi: assetSplitAbi, functionName: "legs" });
  const row = await context.db.insert(splits).values({
    address: split,
    token,
    ...legColumns({ recipients, bps }),
    legsVersion: 0,
    legsUpdatedAt: blockTimestamp,
  });
  return { ...row, token };
}

function legColumns(legs: Legs) {
  return {
    assetOwner: legs.recipients[0],
    operator: legs.recipients[1],
    protocol: legs.recipients[2],
    assetOwnerBps: legs.bps[0],
    operatorBps: legs.bps[1],
    protocolBps: legs.bps[2],
  };
}

/** A split's recipients changed, or its legs were set at its creation (the first LegsUpdated: the row's creation
 * block). */
ponder.on("AssetSplit:LegsUpdated", async ({ event, context }) => {
  const legs = legColumns(event.args);
  await context.db
    .insert(splits)
    .values({
      address: event.log.address,
      createdBlock: event.block.number,
      createdAt: event.block.timestamp,
      ...legs,
      legsVersion: 1,
      legsUpdatedAt: event.block.timestamp,
    })
    .onConflictDoUpdate((row) => ({
      ...legs,
      legsVersion: row.legsVersion + 1,
      legsUpdatedAt: event.block.timestamp,
    }));
});

// A factory split: its own LegsUpdated came first, in the same transaction, and made its row with the legs;
// this adds what the factory knows (asset key, token, factory). Without that row, the legs are read on chain.
ponder.on("AssetSplitFactory:SplitCreated", async ({ event, context }) => {
  const { split, assetKey, token } = event.args;
  await tokenDecimals(context, token);
  const created = {
    token,
    assetKey,
    factory: event.log.address,
    createdBlock: event.block.number,
    createdAt: event.block.timestamp,
  };
  if (await context.db.find(splits, { address: split })) {
    await context.db.update(splits, { address: split }).set(created);
    return;
  }
  const [recipients, bps] = await context.client.readContract({ address: split, abi: assetSplitAbi, functionName: "legs" });
  await context.db.insert(splits).values({
    address: split,
    ...created,
    ...legColumns({ recipients, bps }),
    legsVersion: 0,
    legsUpdatedAt: event.block.timestamp,
  });
});

ponder.on("AssetSplit:YieldDeposited", async ({ event, context }) => {
  const { ref, depositor, gross, assetOwnerAmount, operatorAmount, protocolAmount } = event.args;
  const split = await splitRow(context, event.log.address, event.block.timestamp);
  const token = split.token;
  const decimals = await tokenDecimals(context, token);
  const grossUsdMicro = toUsdMicro(gross, decimals);
  const router = context.contracts.PaymentRouter.address as Address;

  await context.db.insert(settlements).values({
    id: event.id,
    split: event.log.address,
    token,
    ref,
    orderId: depositor.toLowerCase() === router.toLowerCase() ? hexToBigInt(ref) : null,
    depositor,
    gross,
    assetOwnerAmount,
    operatorAmount,
    protocolAmount,
    assetOwner: split.assetOwner,
    operator: split.operator,
    protocol: split.protocol,
    grossUsdMicro,
    chainId: context.chain.id,
    blockNumber: event.block.number,
    blockHash: event.block.hash,
    blockTimestamp: event.block.timestamp,
    transactionHash: event.transaction.hash,
    transactionIndex: event.transaction.transactionIndex,
    logIndex: event.log.logIndex,
  });

  // Each leg is credited to the recipient current at this event (the contract checkpoints accruals to the
  // recipients before any recipient change, so this is exactly what it credits).
  const credits: [Address, bigint, Leg][] = [
    [split.assetOwner, assetOwnerAmount, "creditedAsAssetOwner"],
    [split.operator, operatorAmount, "creditedAsOperator"],
    [split.protocol, protocolAmount, "creditedAsProtocol"],
  ];
  // One row per recipient credited (a recipient of two legs gets their sum): the participant's settlements.
  const byRecipient = new Map<Address, bigint>();
  for (const [recipient, amount] of credits) if (amount > 0n) byRecipient.set(recipient, (byRecipient.get(recipient) ?? 0n) + amount);
  for (const [recipient, credited] of byRecipient) {
    await context.db.insert(settlementCredits).values({ recipient, settlementId: event.id, split: event.log.address, credited });
  }
  for (const [recipient, amount, leg] of credits) {
    if (amount === 0n) continue;
    const credit = {
      token,
      credited: amount,
      withdrawn: 0n,
      claimable: amount,
      creditedAsAssetOwner: 0n,
      creditedAsOperator: 0n,
      creditedAsProtocol: 0n,
      [leg]: amount,
      settlements: 1,
      withdrawals: 0,
      updatedAt: event.block.timestamp,
    };
    const add = (row: Earnings) => ({
      credited: row.credited + amount,
      claimable: row.claimable + amount,
      [leg]: row[leg] + amount,
      settlements: row.settlements + 1,
      updatedAt: event.block.timestamp,
    });
    await context.db
      .insert(participants)
      .values({ recipient, ...credit })
      .onConflictDoUpdate(add);
    await context.db
      .insert(splitParticipants)
      .values({ split: event.log.address, recipient, ...credit })
      .onConflictDoUpdate(add);
  }

  await context.db
    .insert(networkStats)
    .values({ ...emptyNetworkStats(context.chain.id), settlements: 1, settledUsdMicro: grossUsdMicro })
    .onConflictDoUpdate((row) => ({
      settlements: row.settlements + 1,
      settledUsdMicro: row.settledUsdMicro + grossUsdMicro,
    }));
});

ponder.on("AssetSplit:Withdrawn", async ({ event, context }) => {
  const { recipient, to, amount } = event.args;
  const split = await splitRow(context, event.log.address, event.block.timestamp);
  await context.db.insert(withdrawals).values({
    id: event.id,
    split: event.log.address,
    token: split.token,
    recipient,
    to,
    amount,
    blockNumber: event.block.number,
    blockTimestamp: event.block.timestamp,
    transactionHash: event.transaction.hash,
    logIndex: event.log.logIndex,
  });
  // A withdrawal only pays out what was credited, so the recipient's rows exist unless its credits happened
  // before the indexed range.
  const debit = {
    token: split.token,
    credited: 0n,
    withdrawn: amount,
    claimable: -amount,
    creditedAsAssetOwner: 0n,
    creditedAsOperator: 0n,
    creditedAsProtocol: 0n,
    settlements: 0,
    withdrawals: 1,
    updatedAt: event.block.timestamp,
  };
  const subtract = (row: Earnings) => ({
    withdrawn: row.withdrawn + amount,
    claimable: row.claimable - amount,
    withdrawals: row.withdrawals + 1,
    updatedAt: event.block.timestamp,
  });
  await context.db
    .insert(participants)
    .values({ recipient, ...debit })
    .onConflictDoUpdate(subtract);
  await context.db
    .insert(splitParticipants)
    .values({ split: event.log.address, recipient, ...debit })
    .onConflictDoUpdate(subtract);
});

ponder.on("PaymentRouter:OrderPaid", async ({ event, context }) => {
  const { orderId, deviceId, payer, token, split, amount } = event.args;
  const rail = RAILS[event.args.rail];
  if (rail === undefined) throw new Error(`OrderPaid ${orderId}: unknown rail ${event.args.rail}`);
  const decimals = await tokenDecimals(context, token);
  const usdMicro = toUsdMicro(amount, decimals);
  const timestamp = event.block.timestamp;
  const day = Number(timestamp / SECONDS_PER_DAY);

  await context.db.insert(orders).values({
    orderId,
    cursor: event.id,
    deviceId,
    payer,
    token,
    split,
    amount,
    usdMicro,
    rail,
    chainId: context.chain.id,
    blockNumber: event.block.number,
    blockHash: event.block.hash,
    blockTimestamp: timestamp,
    transactionHash: event.transaction.hash,
    transactionIndex: event.transaction.transactionIndex,
    logIndex: event.log.logIndex,
  });

  const device = await context.db.find(deviceStats, { deviceId });
  const newDevice = device === null;
  if (device) {
    await context.db.update(deviceStats, { deviceId }).set({
      payments: device.payments + 1,
      volumeUsdMicro: device.volumeUsdMicro + usdMicro,
      lastPaidAt: timestamp,
      lastOrderId: orderId,
    });
  } else {
    await context.db.insert(deviceStats).values({
      deviceId,
      payments: 1,
      volumeUsdMicro: usdMicro,
      firstPaidAt: timestamp,
      lastPaidAt: timestamp,
      lastOrderId: orderId,
    });
  }

  await context.db
    .insert(dailyStats)
    .values({ day, date: utcDate(day), payments: 1, volumeUsdMicro: usdMicro, newDevices: newDevice ? 1 : 0 })
    .onConflictDoUpdate((row) => ({
      payments: row.payments + 1,
      volumeUsdMicro: row.volumeUsdMicro + usdMicro,
      newDevices: row.newDevices + (newDevice ? 1 : 0),
    }));

  await context.db
    .insert(tokenStats)
    .values({ token, decimals, payments: 1, volume: amount, volumeUsdMicro: usdMicro })
    .onConflictDoUpdate((row) => ({
      payments: row.payments + 1,
      volume: row.volume + amount,
      volumeUsdMicro: row.volumeUsdMicro + usdMicro,
    }));

  const railColumn = `${rail}Payments` as `${Rail}Payments`;
  await context.db
    .insert(networkStats)
    .values({
      ...emptyNetworkStats(context.chain.id),
      payments: 1,
      volumeUsdMicro: usdMicro,
      devices: newDevice ? 1 : 0,
      [railColumn]: 1,
      firstPaymentAt: timestamp,
      lastPaymentAt: timestamp,
      lastPaymentBlock: event.block.number,
    })
    .onConflictDoUpdate((row) => ({
      payments: row.payments + 1,
      volumeUsdMicro: row.volumeUsdMicro + usdMicro,
      devices: row.devices + (newDevice ? 1 : 0),
      [railColumn]: row[railColumn] + 1,
      firstPaymentAt: row.firstPaymentAt ?? timestamp,
      lastPaymentAt: timestamp,
      lastPaymentBlock: event.block.number,
    }));
});
