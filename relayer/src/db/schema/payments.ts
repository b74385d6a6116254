// Devices, quotes, orders and what follows a payment: the order's event log (its SSE stream), the
// relayer's outgoing transactions, background jobs, revenue participants and sync cursors.
import { sql } from "drizzle-orm";
import { bigint, bigserial, index, integer, json, jsonb, numeric, pgSequence, pgTable, text, timestamp, unique } from "drizzle-orm/pg-core";
import { paymentRouterRailValues } from "../../../../generated/abis.ts";
import { tenants } from "./accounts.ts";
import { checkOneOf, foreignKeyTo } from "./constraints.ts";

export const splitStatuses = ["pending", "created", "failed", "mismatch"] as const;

/** The devices whose split still has to be asked for: payout parties set, split not requested yet or its
 * creation failed. The predicate of devices_split_due_idx, and the split provisioner's query
 * (payments/payout-parties.ts splitsDue), so that the query reads through that partial index. */
export const splitDue = sql`asset_owner is not null and operator is not null and (split_status is null or split_status = 'failed')`;

/** The devices whose split's recipients the relayer watches on-chain: a payout change waits for the split
 * manager, or the split pays recipients other than the device's. The predicate of devices_split_watch_idx and
 * of the split watcher's query (payments/split-watch.ts). */
export const splitWatched = sql`pending_asset_owner is not null or split_status = 'mismatch'`;

export const devices = pgTable(
  "devices",
  {
    /** Public device id (printed on the device's QR code). */
    id: text("id").primaryKey(),
    tenantId: text("tenant_id").notNull(),
    name: text("name").notNull(),
    deviceClass: text("device_class").notNull(),
    region: text("region").notNull(),
    /** Price of each session tier in micro-USD, e.g. {"1h": 500000}. */
    tiers: jsonb("tiers").$type<Record<string, number>>().notNull(),
    /** keccak256 of the id: the device's own key, from which its split's asset key is derived. */
    chainDeviceId: text("chain_device_id").notNull().unique("devices_chain_device_id_key"),
    /** Payout parties: the recipients of the asset-owner and operator legs of the device's split (EIP-55
     * checksummed addresses; null: none set, the device cannot be paid on-chain). */
    assetOwner: text("asset_owner"),
    operator: text("operator"),
    /** The asset key of the device's split (AssetSplitFactory.assetKeyOf of chain_device_id and the split's
     * first asset owner and operator): the device id the router's orders carry. Set, with split_address, when the
     * split is requested; fixed once it is created (a later payout change keeps the split). */
    assetKey: text("asset_key").unique("devices_asset_key_key"),
    /** The device's own split (AssetSplitFactory.predictSplit of asset_key), once requested. */
    splitAddress: text("split_address"),
    /** pending: its creation is queued or sent; created: on-chain, paying asset_owner and operator (read from
     * the chain); failed: the creation failed (retried on the next request); mismatch: on-chain, paying other
     * recipients (an alert: the device's quotes and orders are refused, 409 split_recipients_mismatch). Null: not
     * requested yet. */
    splitStatus: text("split_status", { enum: splitStatuses }),
    /** A payout change of a device whose split exists, waiting for the split manager (an offline key: proposed
     * with `npm run splits -- propose`, executed after the factory's delay); the relayer moves it to asset_owner
     * and operator when the split pays them. Null: none. */
    pendingAssetOwner: text("pending_asset_owner"),
    pendingOperator: text("pending_operator"),
    /** When the payout parties were last changed (null: never since they were first set): the cash rail
     * refuses the device's orders until PAYOUT_CHANGE_DELAY_SECONDS after it. */
    payoutChangedAt: timestamp("payout_changed_at", { withTimezone: true }),
    createdAt: timestamp("created_at", { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [
    foreignKeyTo("devices", t.tenantId, tenants.id),
    index("devices_tenant_idx").on(t.tenantId, t.id),
    checkOneOf("devices", t.splitStatus, splitStatuses),
    unique("devices_split_address_key").on(t.splitAddress),
    index("devices_split_due_idx").on(t.id).where(splitDue),
    index("devices_split_watch_idx").on(t.id).where(splitWatched),
  ],
);

export const quotes = pgTable(
  "quotes",
  {
    id: text("id").primaryKey(),
    deviceId: text("device_id").notNull(),
    chain: text("chain").notNull(),
    token: text("token").notNull(),
    tier: text("tier").notNull(),
    durationSeconds: integer("duration_seconds").notNull(),
    amountUsdMicros: bigint("amount_usd_micros", { mode: "number" }).notNull(),
    tokenAmount: numeric("token_amount", { precision: 78, scale: 0 }).notNull(),
    createdAt: timestamp("created_at", { withTimezone: true }).notNull().defaultNow(),
    expiresAt: timestamp("expires_at", { withTimezone: true }).notNull(),
  },
  (t) => [foreignKeyTo("quotes", t.deviceId, devices.id)],
);

/** Where orders' on-chain ids (orders.onchain_id) come from. */
export const orderOnchainIdSeq = pgSequence("order_onchain_id_seq", { startWith: 1 });

export const orderStatuses = ["pending", "success", "expired"] as const;
/** PaymentRouter.Rail's names (generated from the contract), the rail an order was paid on. */
export const orderRails = paymentRouterRailValues;

export const orders = pgTable(
  "orders",
  {
    id: text("id").primaryKey(),
    tenantId: text("tenant_id").notNull(),
    deviceId: text("device_id").notNull(),
    quoteId: text("quote_id").notNull().unique("orders_quote_id_key"),
    chain: text("chain").notNull(),
    chainId: integer("chain_id").notNull(),
    token: text("token").notNull(),
    tier: text("tier").notNull(),
    durationSeconds: integer("duration_seconds").notNull(),
    amountUsdMicros: bigint("amount_usd_micros", { mode: "number" }).notNull(),
    tokenAddress: text("token_address").notNull(),
    splitAddress: text("split_address").notNull(),
    routerAddress: text("router_address").notNull(),
    tokenAmount: numeric("token_amount", { precision: 78, scale: 0 }).notNull(),
    /** The order's key on the router (PaymentOrder.orderId), from order_onchain_id_seq. */
    onchainId: bigint("onchain_id", { mode: "bigint" }).notNull().unique("orders_onchain_id_key"),
    chainDeviceId: text("chain_device_id").notNull(),
    /** The device id the order carries on-chain (PaymentOrder.deviceId): its device's asset key. Null for orders
     * made before splits had asset keys, whose on-chain device id was chain_device_id. */
    assetKey: text("asset_key"),
    voucherSignature: text("voucher_signature").notNull(),
    expiresAt: timestamp("expires_at", { withTimezone: true }).notNull(),
    status: text("status", { enum: orderStatuses }).notNull().default("pending"),
    rail: text("rail", { enum: orderRails }),
    payer: text("payer"),
    txHash: text("tx_hash"),
    blockNumber: bigint("block_number", { mode: "number" }),
    paidAt: timestamp("paid_at", { withTimezone: true }),
    /** When the payment's block reached the configured confirmation depth. */
    confirmedAt: timestamp("confirmed_at", { withTimezone: true }),
    splitTxHash: text("split_tx_hash"),
    poweredOnAt: timestamp("powered_on_at", { withTimezone: true }),
    sessionEndsAt: timestamp("session_ends_at", { withTimezone: true }),
    energyWh: bigint("energy_wh", { mode: "number" }),
    createdAt: timestamp("created_at", { withTimezone: true }).notNull().defaultNow(),
    updatedAt: timestamp("updated_at", { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [
    foreignKeyTo("orders", t.tenantId, tenants.id),
    foreignKeyTo("orders", t.deviceId, devices.id),
    foreignKeyTo("orders", t.quoteId, quotes.id),
    checkOneOf("orders", t.status, orderStatuses),
    checkOneOf("orders", t.rail, orderRails),
    index("orders_tenant_idx").on(t.tenantId, t.createdAt),
    // The tenant's paid orders newest first (GET /v1/revenue/splits, the revenue overview's window and latest
    // splits), and those of one device (?deviceId=): the list's order and filters, no sort.
    index("orders_tenant_paid_idx")
      .on(t.tenantId, t.paidAt.desc().nullsFirst(), t.id.desc().nullsFirst())
      .where(sql`status = 'success'`),
    index("orders_tenant_device_paid_idx")
      .on(t.tenantId, t.deviceId, t.paidAt.desc().nullsFirst(), t.id.desc().nullsFirst())
      .where(sql`status = 'success'`),
    index("orders_pending_expiry_idx")
      .on(t.expiresAt)
      .where(sql`status = 'pending'`),
    // The deposit watcher's pages (payments/deposit-watch.ts): the pending orders not expired yet, by expiry, and
    // the orders closed (paid or expired) lately, by when they closed.
    index("orders_pending_expiry_id_idx")
      .on(t.expiresAt, t.id)
      .where(sql`status = 'pending'`),
    index("orders_closed_updated_idx")
      .on(t.updatedAt, t.id)
      .where(sql`status <> 'pending'`),
    index("orders_unconfirmed_idx")
      .on(t.blockNumber)
      .where(sql`status = 'success' and confirmed_at is null`),
  ],
);

/** Every change of an order, in order: the source of its event stream (the id is the SSE event id). */
export const orderEvents = pgTable(
  "order_events",
  {
    id: bigserial("id", { mode: "number" }).primaryKey(),
    orderId: text("order_id").notNull(),
    type: text("type").notNull(),
    // json, not jsonb: the payload keeps the key order it was written in.
    data: json("data").$type<Record<string, unknown>>().notNull(),
    createdAt: timestamp("created_at", { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [foreignKeyTo("order_events", t.orderId, orders.id), index("order_events_order_idx").on(t.orderId, t.id)],
);

export const chainTransactionStatuses = ["queued", "sent", "mined", "reverted", "failed"] as const;

/** Transactions the relayer's hot wallet sends (relayed permits, cash payments, telemetry anchors), at
 * most one per `ref`. One process at a time sends them, so nonces never collide. The signed transaction is
 * stored before it is broadcast, so a crash can only ever lead to the same transaction being sent again. */
export const chainTransactions = pgTable(
  "chain_transactions",
  {
    id: text("id").primaryKey(),
    /** What the transaction does, e.g. pay_with_permit, pay_cash, anchor. */
    kind: text("kind").notNull(),
    /** What it is for (an order id, a batch id): one transaction per ref. */
    ref: text("ref").notNull().unique("chain_transactions_ref_key"),
    toAddress: text("to_address").notNull(),
    calldata: text("calldata").notNull(),
    status: text("status", { enum: chainTransactionStatuses }).notNull().default("queued"),
    nonce: integer("nonce"),
    /** The signed transaction the sender broadcasts now (after a fee bump, the replacement), and its hash;
     * once final, the hash of the one mined. */
    txHash: text("tx_hash"),
    rawTransaction: text("raw_transaction"),
    /** Hashes of the earlier signed versions of this nonce, replaced by a fee bump: any of them may still be
     * the one mined. */
    replacedHashes: jsonb("replaced_hashes").$type<string[]>().notNull().default([]),
    /** The chain's latest block when the current signed version was first broadcast (fee bumps count from
     * it). */
    sentBlock: bigint("sent_block", { mode: "number" }),
    blockNumber: bigint("block_number", { mode: "number" }),
    attempts: integer("attempts").notNull().default(0),
    lastError: text("last_error"),
    sentAt: timestamp("sent_at", { withTimezone: true }),
    createdAt: timestamp("created_at", { withTimezone: true }).notNull().defaultNow(),
    updatedAt: timestamp("updated_at", { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [
    checkOneOf("chain_transactions", t.status, chainTransactionStatuses),
    index("chain_transactions_status_idx").on(t.status, t.createdAt),
  ],
);

/** Background jobs (device power-on, session energy) run by any relayer process, at most once at a time. */
export const jobs = pgTable(
  "jobs",
  {
    id: bigserial("id", { mode: "number" }).primaryKey(),
    kind: text("kind").notNull(),
    /** At most one job of a kind per key (e.g. the order id). */
    key: text("key").notNull(),
    payload: jsonb("payload").$type<Record<string, unknown>>().notNull(),
    runAt: timestamp("run_at", { withTimezone: true }).notNull().defaultNow(),
    attempts: integer("attempts").notNull().default(0),
    lastError: text("last_error"),
    doneAt: timestamp("done_at", { withTimezone: true }),
    createdAt: timestamp("created_at", { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [
    unique("jobs_kind_key_uq").on(t.kind, t.key),
    index("jobs_due_idx")
      .on(t.runAt)
      .where(sql`done_at is null`),
  ],
);

/** Cash confirmations the cash rail accepted (POST /v1/orders/{id}/cash): one per order, with the agent key
 * that confirmed it, counted against the daily cash limits (payments/cash-limits.ts). Never shown in a
 * public view. */
export const cashConfirmations = pgTable(
  "cash_confirmations",
  {
    orderId: text("order_id").primaryKey(),
    tenantId: text("tenant_id").notNull(),
    keyId: text("key_id").notNull(),
    amountUsdMicros: bigint("amount_usd_micros", { mode: "number" }).notNull(),
    createdAt: timestamp("created_at", { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [
    foreignKeyTo("cash_confirmations", t.orderId, orders.id),
    foreignKeyTo("cash_confirmations", t.tenantId, tenants.id),
    index("cash_confirmations_tenant_idx").on(t.tenantId, t.createdAt),
    index("cash_confirmations_key_idx").on(t.keyId, t.createdAt),
  ],
);

/** Revenue participants a tenant follows: the recipients of split legs. */
export const participants = pgTable(
  "participants",
  {
    id: text("id").primaryKey(),
    tenantId: text("tenant_id").notNull(),
    name: text("name").notNull(),
    /** Recipient address, lower-case. */
    address: text("address").notNull(),
    createdAt: timestamp("created_at", { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [foreignKeyTo("participants", t.tenantId, tenants.id), unique("participants_tenant_address_uq").on(t.tenantId, t.address)],
);

/** Named cursors of the background workers (e.g. the last indexed payment handled). */
export const syncState = pgTable("sync_state", {
  name: text("name").primaryKey(),
  value: text("value").notNull(),
  updatedAt: timestamp("updated_at", { withTimezone: true }).notNull().defaultNow(),
});
