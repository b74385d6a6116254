// The indexer's tables. Money is stored as exact integers: token amounts in the token's base units
// (numeric(78)), USD amounts in micro-USD (1 USD = 1,000,000), computed per payment as
// floor(amount * 10^6 / 10^decimals) - exact for tokens of at most 6 decimals, like USDC.
// Addresses and hashes are lowercase hex. Timestamps are unix seconds.
//
// This file is also the read path's typed schema: indexer/client.ts queries these tables through
// `@ponder/client`, and PostgreSQL readers find the same tables (snake_case names and columns) in the
// views schema.
import { index, onchainTable, primaryKey, relations } from "ponder";
import { paymentRouterRailValues } from "../generated/abis.ts";

/** How an order was paid: PaymentRouter.Rail, by name, in the enum's order (generated from the contract). */
export const RAILS = paymentRouterRailValues;
export type Rail = (typeof RAILS)[number];

/** One row per paid order (PaymentRouter.OrderPaid). */
export const orders = onchainTable(
  "orders",
  (t) => ({
    /** The order's on-chain key (unique per router: an order pays once). */
    orderId: t.bigint().primaryKey(),
    /** Ponder's event id: a fixed-width decimal checkpoint (block timestamp, chain id, block number,
     * transaction index, event type, log index) that sorts in chain order. The read path's cursor. */
    cursor: t.text().notNull(),
    deviceId: t.hex().notNull(),
    payer: t.hex().notNull(),
    token: t.hex().notNull(),
    split: t.hex().notNull(),
    /** Amount in the token's base units. */
    amount: t.bigint().notNull(),
    /** Amount in micro-USD. */
    usdMicro: t.bigint().notNull(),
    rail: t.text().$type<Rail>().notNull(),
    chainId: t.integer().notNull(),
    blockNumber: t.bigint().notNull(),
    blockHash: t.hex().notNull(),
    blockTimestamp: t.bigint().notNull(),
    transactionHash: t.hex().notNull(),
    transactionIndex: t.integer().notNull(),
    logIndex: t.integer().notNull(),
  }),
  (table) => ({
    cursorIndex: index().on(table.cursor),
    deviceIndex: index().on(table.deviceId),
    payerIndex: index().on(table.payer),
    blockIndex: index().on(table.blockNumber),
  }),
);

/** One row per settlement (AssetSplit.YieldDeposited): router payments and batch deposits. */
export const settlements = onchainTable(
  "settlements",
  (t) => ({
    /** Ponder's event id (sorts in chain order, like orders.cursor). */
    id: t.text().primaryKey(),
    split: t.hex().notNull(),
    token: t.hex().notNull(),
    /** The on-chain reference: bytes32(orderId) for router payments, a batch id for deposits. */
    ref: t.hex().notNull(),
    /** The order id when the depositor is the payment router (ref read as a number), else null. */
    orderId: t.bigint(),
    depositor: t.hex().notNull(),
    gross: t.bigint().notNull(),
    assetOwnerAmount: t.bigint().notNull(),
    operatorAmount: t.bigint().notNull(),
    protocolAmount: t.bigint().notNull(),
    /** Recipients of the three legs when the settlement happened (who was credited). */
    assetOwner: t.hex().notNull(),
    operator: t.hex().notNull(),
    protocol: t.hex().notNull(),
    /** Gross in micro-USD. */
    grossUsdMicro: t.bigint().notNull(),
    chainId: t.integer().notNull(),
    blockNumber: t.bigint().notNull(),
    blockHash: t.hex().notNull(),
    blockTimestamp: t.bigint().notNull(),
    transactionHash: t.hex().notNull(),
    transactionIndex: t.integer().notNull(),
    logIndex: t.integer().notNull(),
  }),
  (table) => ({
    refIndex: index().on(table.ref),
    orderIndex: index().on(table.orderId),
    splitIndex: index().on(table.split, table.id),
  }),
);

/** Each split the split factory created, one per asset (`assetKey`; the router pays through it without
 * registering it): its token and its current legs (LegsUpdated, emitted at its creation too). */
export const splits = onchainTable(
  "splits",
  (t) => ({
    address: t.hex().primaryKey(),
    /** The split's asset (from SplitCreated, or read on chain). */
    token: t.hex(),
    /** The asset (the device id of the router's orders); null when the split's creation was not indexed. */
    assetKey: t.hex(),
    /** The factory that created the split; null when the split's creation was not indexed. */
    factory: t.hex(),
    /** Block and time of the split's creation (its first LegsUpdated, in the factory's createSplit); null when
     * that happened before the indexed range. */
    createdBlock: t.bigint(),
    createdAt: t.bigint(),
    assetOwner: t.hex().notNull(),
    operator: t.hex().notNull(),
    protocol: t.hex().notNull(),
    assetOwnerBps: t.integer().notNull(),
    operatorBps: t.integer().notNull(),
    protocolBps: t.integer().notNull(),
    /** Number of LegsUpdated events seen (1 after creation). */
    legsVersion: t.integer().notNull(),
    legsUpdatedAt: t.bigint().notNull(),
  }),
  (table) => ({ assetKeyIndex: index().on(table.assetKey) }),
);

/** Tokens paid or settled in, with their decimals (read on chain once). */
export const tokens = onchainTable("tokens", (t) => ({
  address: t.hex().primaryKey(),
  decimals: t.integer().notNull(),
}));

/** Per recipient and token: credited (sum of the legs attributed to the recipient when each settlement
 * happened), withdrawn (Withdrawn events) and claimable (credited - withdrawn, which equals the splits'
 * `claimable(recipient)` summed over the splits of that token). */
export const participants = onchainTable(
  "participants",
  (t) => ({
    recipient: t.hex().notNull(),
    token: t.hex().notNull(),
    credited: t.bigint().notNull(),
    withdrawn: t.bigint().notNull(),
    claimable: t.bigint().notNull(),
    /** `credited`, by leg. */
    creditedAsAssetOwner: t.bigint().notNull(),
    creditedAsOperator: t.bigint().notNull(),
    creditedAsProtocol: t.bigint().notNull(),
    settlements: t.integer().notNull(),
    withdrawals: t.integer().notNull(),
    updatedAt: t.bigint().notNull(),
  }),
  (table) => ({ pk: primaryKey({ columns: [table.recipient, table.token] }) }),
);

/** Per split and recipient: what `participants` holds across splits, for one split. `claimable` equals the
 * split's `claimable(recipient)`. */
export const splitParticipants = onchainTable(
  "split_participants",
  (t) => ({
    split: t.hex().notNull(),
    recipient: t.hex().notNull(),
    token: t.hex().notNull(),
    credited: t.bigint().notNull(),
    withdrawn: t.bigint().notNull(),
    claimable: t.bigint().notNull(),
    /** `credited`, by leg. */
    creditedAsAssetOwner: t.bigint().notNull(),
    creditedAsOperator: t.bigint().notNull(),
    creditedAsProtocol: t.bigint().notNull(),
    settlements: t.integer().notNull(),
    withdrawals: t.integer().notNull(),
    updatedAt: t.bigint().notNull(),
  }),
  (table) => ({
    pk: primaryKey({ columns: [table.split, table.recipient] }),
    recipientIndex: index().on(table.recipient),
  }),
);

/** Per settlement, each recipient it credited (one row for a recipient of several legs): a participant's
 * settlements newest first are a range of the primary key (recipient, settlement id), and those in one split a
 * range of the index (recipient, split, settlement id), however many other settlements the splits have
 * (GET /v1/participants/{id}/earnings' latest settlements, in the tenant's splits). */
export const settlementCredits = onchainTable(
  "settlement_credits",
  (t) => ({
    recipient: t.hex().notNull(),
    /** settlements.id. */
    settlementId: t.text().notNull(),
    split: t.hex().notNull(),
    /** The sum of the legs of the settlement credited to the recipient, in the split's token. */
    credited: t.bigint().notNull(),
  }),
  (table) => ({
    pk: primaryKey({ columns: [table.recipient, table.settlementId] }),
    recipientSplitIndex: index().on(table.recipient, table.split, table.settlementId),
  }),
);

/** One row per withdrawal (AssetSplit.Withdrawn). */
export const withdrawals = onchainTable(
  "withdrawals",
  (t) => ({
    id: t.text().primaryKey(),
    split: t.hex().notNull(),
    token: t.hex().notNull(),
    recipient: t.hex().notNull(),
    to: t.hex().notNull(),
    amount: t.bigint().notNull(),
    blockNumber: t.bigint().notNull(),
    blockTimestamp: t.bigint().notNull(),
    transactionHash: t.hex().notNull(),
    logIndex: t.integer().notNull(),
  }),
  (table) => ({ recipientIndex: index().on(table.recipient) }),
);

/** Running totals of the network (one row, keyed by chain id). */
export const networkStats = onchainTable("network_stats", (t) => ({
  chainId: t.integer().primaryKey(),
  payments: t.integer().notNull(),
  volumeUsdMicro: t.bigint().notNull(),
  /** Distinct devices that were paid for. */
  devices: t.integer().notNull(),
  permitPayments: t.integer().notNull(),
  approvalPayments: t.integer().notNull(),
  cashPayments: t.integer().notNull(),
  authorizationPayments: t.integer().notNull(),
  permit2Payments: t.integer().notNull(),
  transferPayments: t.integer().notNull(),
  /** All settlements (router payments and batch deposits) and their gross in micro-USD. */
  settlements: t.integer().notNull(),
  settledUsdMicro: t.bigint().notNull(),
  firstPaymentAt: t.bigint(),
  lastPaymentAt: t.bigint(),
  lastPaymentBlock: t.bigint(),
}));

/** Running totals per token, in its base units and in micro-USD. */
export const tokenStats = onchainTable("token_stats", (t) => ({
  token: t.hex().primaryKey(),
  decimals: t.integer().notNull(),
  payments: t.integer().notNull(),
  volume: t.bigint().notNull(),
  volumeUsdMicro: t.bigint().notNull(),
}));

/** Running totals per device, i.e. per asset (a device id is its asset key), over all its payments (through its
 * split; all tokens; volume in micro-USD, the tokens being USD stablecoins). */
export const deviceStats = onchainTable("device_stats", (t) => ({
  deviceId: t.hex().primaryKey(),
  payments: t.integer().notNull(),
  volumeUsdMicro: t.bigint().notNull(),
  firstPaidAt: t.bigint().notNull(),
  lastPaidAt: t.bigint().notNull(),
  lastOrderId: t.bigint().notNull(),
}));

/** Running totals per UTC day (day = floor(block timestamp / 86400)). */
export const dailyStats = onchainTable("daily_stats", (t) => ({
  day: t.integer().primaryKey(),
  /** The day as YYYY-MM-DD (UTC). */
  date: t.text().notNull(),
  payments: t.integer().notNull(),
  volumeUsdMicro: t.bigint().notNull(),
  /** Devices paid for the first time that day. */
  newDevices: t.integer().notNull(),
}));

export const ordersRelations = relations(orders, ({ many }) => ({
  settlements: many(settlements),
}));

export const settlementsRelations = relations(settlements, ({ one }) => ({
  order: one(orders, { fields: [settlements.orderId], references: [orders.orderId] }),
}));
