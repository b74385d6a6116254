// Quotes and orders: the server prices a session from the device's tiers and locks the amount; an order
// carries the quote signer's EIP-712 voucher, which is the same lock on-chain.
import { eq, sql } from "drizzle-orm";
import { type Address, type Hex, toHex } from "viem";
import { PERMIT2_ADDRESS, permit2WitnessTypes, permitTypes, receiveAuthorizationTypes } from "../../../sdk/src/payment-order.ts";
import { formatPaymentRequest } from "../../../sdk/src/payment-request.ts";
import type { Db } from "../db/client.ts";
import { chainTransactions, devices, orderOnchainIdSeq, orders, quotes } from "../db/schema.ts";
import { recordOrderEvent } from "../events/record.ts";
import { errors } from "../errors.ts";
import { ORDER_ID_PATTERN, newId } from "../ids.ts";
import type { Services } from "../services.ts";
import { readyTokenSplit } from "./token-splits.ts";
import { sameAmount, tierPrice, tokenAmountForMicros, usd } from "./pricing.ts";
import { checksummed, tokenRef } from "../representation.ts";

export type OrderRow = typeof orders.$inferSelect;

async function stablecoin(services: Services, symbol: string) {
  const tokens = await services.chain.stablecoins().catch(() => {
    throw errors.unavailable("the chain is not reachable; retry shortly");
  });
  const token = tokens.get(symbol);
  if (!token) {
    throw errors.invalid(`token must be one of: ${[...tokens.keys()].join(", ")}`, [{ path: "token", message: `unknown token ${symbol}` }]);
  }
  return token;
}

function checkChain(services: Services, chain: string) {
  if (chain !== services.config.CHAIN_NAME) {
    throw errors.invalid(`chain must be one of: ${services.config.CHAIN_NAME}`, [{ path: "chain", message: `unknown chain ${chain}` }]);
  }
}

/** What a quote is asked for (POST /v1/quote's body, validated by the route). */
export type QuoteInput = { deviceId: string; chain: string; token: string; tier: string };

/** What an order is made from (POST /v1/orders's body, validated by the route). */
export type OrderInput = { deviceId: string; chain: string; token: string; amountUsd: number; quoteId: string };

export async function createQuote(services: Services, req: QuoteInput) {
  const {
    config,
    database: { db },
  } = services;
  checkChain(services, req.chain);
  const durationSeconds = config.TIERS.get(req.tier);
  if (durationSeconds === undefined) {
    throw errors.invalid(`tier must be one of: ${[...config.TIERS.keys()].join(", ")}`, [
      { path: "tier", message: `unknown tier ${req.tier}` },
    ]);
  }
  const token = await stablecoin(services, req.token);
  const [device] = await db.select().from(devices).where(eq(devices.id, req.deviceId));
  if (!device) throw errors.notFound(`device ${req.deviceId}`);
  // The device's payments settle through its own split in the token: created on demand (409 split_not_ready
  // meanwhile).
  await readyTokenSplit(services, device, token);
  const micros = tierPrice(device.tiers, req.tier);
  if (micros === undefined) {
    const offered = Object.keys(device.tiers)
      .filter((tier) => config.TIERS.has(tier))
      .sort((a, b) => config.TIERS.get(a)! - config.TIERS.get(b)!);
    throw errors.invalid(`device ${device.id} offers the tiers: ${offered.join(", ")}`, [
      { path: "tier", message: `tier ${req.tier} is not offered by this device` },
    ]);
  }
  const now = Date.now();
  const [quote] = await db
    .insert(quotes)
    .values({
      id: newId("qt"),
      deviceId: device.id,
      chain: req.chain,
      token: token.symbol,
      tier: req.tier,
      durationSeconds,
      amountUsdMicros: micros,
      tokenAmount: tokenAmountForMicros(micros, token.decimals).toString(),
      createdAt: new Date(now),
      expiresAt: new Date(now + config.QUOTE_TTL_SECONDS * 1000),
    })
    .returning();
  return {
    quoteId: quote.id,
    deviceId: quote.deviceId,
    chain: quote.chain,
    token: tokenRef(token.symbol, token.address),
    tier: quote.tier,
    durationSeconds: quote.durationSeconds,
    amountUsd: usd(quote.amountUsdMicros),
    tokenAmount: quote.tokenAmount,
    tokenDecimals: token.decimals,
    expiresAt: quote.expiresAt.toISOString(),
  };
}

/** Creates the order for a quote. A quote makes one order: the same request again returns that order
 * (`created: false`), a different one is a conflict. */
export async function createOrder(services: Services, req: OrderInput): Promise<{ order: OrderRow; created: boolean }> {
  const {
    config,
    database: { db },
    chain,
  } = services;
  const [quote] = await db.select().from(quotes).where(eq(quotes.id, req.quoteId));
  if (!quote) throw errors.notFound(`quote ${req.quoteId}`);

  // Each field that differs from the quote is named, with the quote's value (the quote's own answer showed it).
  const mismatches = (
    [
      ["deviceId", req.deviceId !== quote.deviceId, JSON.stringify(quote.deviceId)],
      ["chain", req.chain !== quote.chain, JSON.stringify(quote.chain)],
      ["token", req.token !== quote.token, JSON.stringify(quote.token)],
      ["amountUsd", !sameAmount(req.amountUsd, quote.amountUsdMicros), String(usd(quote.amountUsdMicros))],
    ] as const
  ).filter(([, differs]) => differs);
  if (mismatches.length > 0) {
    const fields = mismatches.map(([field, , quoted]) => `${field} (the quote's is ${quoted})`);
    const locked = mismatches.some(([field]) => field === "amountUsd") ? "; the amount is locked by the server" : "";
    throw errors.invalid(
      `the order must match quote ${quote.id}: ${fields.join(", ")} ${mismatches.length === 1 ? "differs" : "differ"}${locked}`,
      mismatches.map(([field, , quoted]) => ({ path: field, message: `differs from quote ${quote.id}, which has ${quoted}` })),
    );
  }

  const [existing] = await db.select().from(orders).where(eq(orders.quoteId, quote.id));
  if (existing) return { order: existing, created: false };
  if (quote.expiresAt.getTime() <= Date.now()) {
    throw errors.conflict("quote_expired", `quote ${quote.id} expired at ${quote.expiresAt.toISOString()}`);
  }

  const [device] = await db.select().from(devices).where(eq(devices.id, quote.deviceId));
  const token = await stablecoin(services, quote.token);
  const { split, assetKey } = await readyTokenSplit(services, device, token);
  const expiresAt = new Date(Date.now() + config.ORDER_TTL_SECONDS * 1000);
  const id = newId("ord");

  const order = await db.transaction(async (tx) => {
    const seq = await tx.execute(sql`select nextval(${orderOnchainIdSeq.seqName}) as id`);
    const onchainId = BigInt((seq as unknown as { rows: Array<{ id: string | number }> }).rows[0].id);
    const voucher = {
      orderId: onchainId,
      // The split's asset key: the router derives the split from it (AssetSplitFactory.assetKeyOf).
      deviceId: assetKey,
      token: token.address,
      split,
      amount: BigInt(quote.tokenAmount),
      expiry: BigInt(Math.floor(expiresAt.getTime() / 1000)),
    };
    const voucherSignature = await chain.signVoucher(voucher);
    const [row] = await tx
      .insert(orders)
      .values({
        id,
        tenantId: device.tenantId,
        deviceId: device.id,
        quoteId: quote.id,
        chain: quote.chain,
        chainId: chain.chainId,
        token: quote.token,
        tier: quote.tier,
        durationSeconds: quote.durationSeconds,
        amountUsdMicros: quote.amountUsdMicros,
        tokenAddress: token.address,
        splitAddress: split,
        routerAddress: chain.router,
        tokenAmount: quote.tokenAmount,
        onchainId,
        chainDeviceId: device.chainDeviceId,
        assetKey,
        voucherSignature,
        expiresAt,
      })
      .onConflictDoNothing({ target: orders.quoteId })
      .returning();
    if (!row) return undefined;
    await recordOrderEvent(tx, id, "order.created", { status: "pending", expiresAt: expiresAt.toISOString() });
    return row;
  });
  if (!order) {
    // Another request created the order for this quote first.
    const [winner] = await db.select().from(orders).where(eq(orders.quoteId, quote.id));
    return { order: winner, created: false };
  }
  return { order, created: true };
}

/** The voucher message of an order, as the router takes it. */
export function voucherOf(order: OrderRow) {
  return {
    orderId: order.onchainId,
    // Orders made before splits had asset keys carried the device's chainDeviceId.
    deviceId: (order.assetKey ?? order.chainDeviceId) as Hex,
    token: order.tokenAddress as Address,
    split: order.splitAddress as Address,
    amount: BigInt(order.tokenAmount),
    expiry: BigInt(Math.floor(order.expiresAt.getTime() / 1000)),
  };
}

/** Everything a wallet needs to pay the order. */
export async function paymentDetails(services: Services, order: OrderRow) {
  const token = await stablecoin(services, order.token);
  const voucher = voucherOf(order);
  const deadline = services.chain.permitDeadline(voucher);
  const base = services.config.publicBaseUrl;
  const domain = token.domain === null ? null : { ...token.domain, verifyingContract: checksummed(token.domain.verifyingContract) };
  return {
    chain: order.chain,
    chainId: order.chainId,
    router: checksummed(order.routerAddress),
    token: tokenRef(token.symbol, token.address),
    tokenDecimals: token.decimals,
    split: checksummed(order.splitAddress),
    amount: order.tokenAmount,
    order: {
      orderId: voucher.orderId.toString(),
      deviceId: voucher.deviceId,
      token: checksummed(voucher.token),
      split: checksummed(voucher.split),
      amount: voucher.amount.toString(),
      expiry: voucher.expiry.toString(),
    },
    voucherSignature: order.voucherSignature,
    // EIP-2612, where the token has it (a token without it, as USDT on many chains, is paid through Permit2).
    ...(domain
      ? {
          permit: {
            domain,
            types: { Permit: [...permitTypes.Permit] },
            primaryType: "Permit" as const,
            message: { spender: checksummed(order.routerAddress), value: order.tokenAmount, deadline: deadline.toString() },
          },
          relay: {
            method: "POST" as const,
            url: `${base}/v1/orders/${order.id}/permit`,
            body: '{"owner": "<wallet address>", "signature": "<65-byte permit signature>"}',
          },
        }
      : {}),
    // USDC's own gasless rail, where the token has it: an authorization that pays this order only, once,
    // and that a wallet shows with its real expiry.
    ...(token.eip3009 && domain
      ? {
          authorization: {
            domain,
            types: { ReceiveWithAuthorization: [...receiveAuthorizationTypes.ReceiveWithAuthorization] },
            primaryType: "ReceiveWithAuthorization" as const,
            message: {
              to: checksummed(order.routerAddress),
              value: order.tokenAmount,
              validAfter: "0",
              validBefore: voucher.expiry.toString(),
              nonce: toHex(deadline, { size: 32 }),
            },
            relay: {
              method: "POST" as const,
              url: `${base}/v1/orders/${order.id}/authorization`,
              body: '{"from": "<wallet address>", "signature": "<65-byte authorization signature>"}',
            },
          },
        }
      : {}),
    // Permit2, where the chain has it: one signature that pays this order only, once, until its expiry, for any
    // token (the only gasless rail of a token without EIP-2612 or EIP-3009); the wallet approves Permit2 once.
    ...(token.permit2
      ? {
          permit2: {
            domain: { name: "Permit2" as const, chainId: order.chainId, verifyingContract: PERMIT2_ADDRESS },
            types: {
              PermitWitnessTransferFrom: [...permit2WitnessTypes.PermitWitnessTransferFrom],
              TokenPermissions: [...permit2WitnessTypes.TokenPermissions],
              PaymentOrder: [...permit2WitnessTypes.PaymentOrder],
            },
            primaryType: "PermitWitnessTransferFrom" as const,
            message: {
              permitted: { token: voucher.token, amount: voucher.amount.toString() },
              spender: order.routerAddress,
              nonce: voucher.orderId.toString(),
              deadline: voucher.expiry.toString(),
              witness: {
                orderId: voucher.orderId.toString(),
                deviceId: voucher.deviceId,
                token: voucher.token,
                split: voucher.split,
                amount: voucher.amount.toString(),
                expiry: voucher.expiry.toString(),
              },
            },
            relay: {
              method: "POST" as const,
              url: `${base}/v1/orders/${order.id}/permit2`,
              body: '{"owner": "<wallet address>", "signature": "<Permit2 signature>"}',
            },
          },
        }
      : {}),
    // A plain ERC-20 transfer to the order's deposit address, which any wallet sends from an EIP-681 payment
    // request (a QR code): the relayer sees the deposit and submits payFromDeposit (deposit-watch.ts).
    ...(token.transfer ? { transfer: transferRequest(order, services.chain.depositAddress(voucher), base) } : {}),
    scanToPay: { uri: `${base}/pay/${order.id}`, qrCodeUrl: `${base}/pay/${order.id}/qr.svg` },
  };
}

/** The order's EIP-681 payment request: a transfer of exactly the order amount of its token to `deposit`. */
export function transferRequest(order: OrderRow, deposit: Address, base: string) {
  const depositAddress = checksummed(deposit);
  return {
    depositAddress,
    uri: formatPaymentRequest({
      token: checksummed(order.tokenAddress),
      chainId: order.chainId,
      to: depositAddress,
      amount: BigInt(order.tokenAmount),
    }),
    qrCodeUrl: `${base}/pay/${order.id}/transfer.svg`,
    expiresAt: order.expiresAt.toISOString(),
  };
}

/** The relayer transaction of an order, as its view shows it. */
export type OrderRelay = Pick<typeof chainTransactions.$inferSelect, "status" | "txHash" | "lastError">;

/** The order as GET /v1/orders/{id} shows it. `relay` is the order's relayer transaction (null: none) if
 * the caller read it with the order (findOrderWithRelay); otherwise it is read here. */
export async function orderView(services: Services, order: OrderRow, relay?: OrderRelay | null) {
  if (relay === undefined) {
    [relay] = await services.database.db
      .select({ status: chainTransactions.status, txHash: chainTransactions.txHash, lastError: chainTransactions.lastError })
      .from(chainTransactions)
      .where(eq(chainTransactions.ref, order.id));
  }
  return {
    id: order.id,
    status: order.status,
    deviceId: order.deviceId,
    quoteId: order.quoteId,
    chain: order.chain,
    token: tokenRef(order.token, order.tokenAddress),
    tier: order.tier,
    durationSeconds: order.durationSeconds,
    amountUsd: usd(order.amountUsdMicros),
    tokenAmount: order.tokenAmount,
    createdAt: order.createdAt.toISOString(),
    expiresAt: order.expiresAt.toISOString(),
    ...(order.status === "pending" ? { paymentDetails: await paymentDetails(services, order) } : {}),
    payment:
      order.status === "success" && order.rail && order.payer && order.txHash && order.paidAt
        ? {
            rail: order.rail,
            payer: checksummed(order.payer),
            transactionHash: order.txHash,
            blockNumber: order.blockNumber ?? 0,
            paidAt: order.paidAt.toISOString(),
          }
        : null,
    settlement: order.splitTxHash ? { transactionHash: order.splitTxHash } : null,
    device: {
      poweredOnAt: order.poweredOnAt?.toISOString() ?? null,
      sessionEndsAt: order.sessionEndsAt?.toISOString() ?? null,
    },
    relay: relay ? { status: relay.status, transactionHash: relay.txHash, error: relay.lastError } : null,
  };
}

/** Reads of orders by id, the most frequent queries of the service (clients poll orders): built once per
 * database as prepared statements. */
function prepareOrderQueries(db: Db) {
  const withRelay = {
    order: orders,
    relayStatus: chainTransactions.status,
    relayTxHash: chainTransactions.txHash,
    relayLastError: chainTransactions.lastError,
  };
  return {
    byId: db
      .select()
      .from(orders)
      .where(eq(orders.id, sql.placeholder("id")))
      .prepare("order_by_id"),
    withRelay: db
      .select(withRelay)
      .from(orders)
      .leftJoin(chainTransactions, eq(chainTransactions.ref, orders.id))
      .where(eq(orders.id, sql.placeholder("id")))
      .prepare("order_with_relay"),
    manyWithRelay: db
      .select(withRelay)
      .from(orders)
      .leftJoin(chainTransactions, eq(chainTransactions.ref, orders.id))
      .where(sql`${orders.id} = any(${sql.placeholder("ids")}::text[])`)
      .prepare("orders_with_relay"),
  };
}

type OrderQueries = ReturnType<typeof prepareOrderQueries>;
type OrderWithRelayRow = Awaited<ReturnType<OrderQueries["withRelay"]["execute"]>>[number];

/** Most ids one batched read asks for. */
const READ_BATCH = 100;

/** Reads of orders with their relayer transaction, batched: the ids asked for while the event loop handles
 * one round of I/O (e.g. many clients polling their orders at once) are read with one query when that
 * round is over (setImmediate), instead of one query each. Every read still happens after its request
 * arrived, so it sees every change committed before: nothing is cached. Alone, an id is read with the
 * single-order query. */
function createOrderLoader(queries: OrderQueries) {
  type Waiter = { resolve: (row: OrderWithRelayRow | undefined) => void; reject: (error: unknown) => void };
  let pending: Map<string, Waiter[]> | undefined;

  async function read(ids: string[]): Promise<Map<string, OrderWithRelayRow>> {
    const rows = ids.length === 1 ? await queries.withRelay.execute({ id: ids[0] }) : await queries.manyWithRelay.execute({ ids });
    return new Map(rows.map((row) => [row.order.id, row]));
  }

  function flush() {
    const batch = pending!;
    pending = undefined;
    const ids = [...batch.keys()];
    for (let i = 0; i < ids.length; i += READ_BATCH) {
      const chunk = ids.slice(i, i + READ_BATCH);
      read(chunk).then(
        (rows) => {
          for (const id of chunk) for (const waiter of batch.get(id)!) waiter.resolve(rows.get(id));
        },
        (error: unknown) => {
          for (const id of chunk) for (const waiter of batch.get(id)!) waiter.reject(error);
        },
      );
    }
  }

  return (id: string) =>
    new Promise<OrderWithRelayRow | undefined>((resolve, reject) => {
      if (!pending) {
        pending = new Map();
        setImmediate(flush);
      }
      const waiters = pending.get(id);
      if (waiters) waiters.push({ resolve, reject });
      else pending.set(id, [{ resolve, reject }]);
    });
}

const orderQueries = new WeakMap<Db, OrderQueries & { load: ReturnType<typeof createOrderLoader> }>();

function queriesOf(db: Db) {
  let queries = orderQueries.get(db);
  if (!queries) {
    const prepared = prepareOrderQueries(db);
    queries = { ...prepared, load: createOrderLoader(prepared) };
    orderQueries.set(db, queries);
  }
  return queries;
}

/** An id of another shape names no order: 404 like any unknown id, without asking the database. */
function checkOrderId(id: string) {
  if (!ORDER_ID_PATTERN.test(id)) throw errors.notFound(`order ${id.length > 40 ? `${id.slice(0, 40)}...` : id}`);
}

export async function findOrder(services: Services, id: string): Promise<OrderRow> {
  checkOrderId(id);
  const [order] = await queriesOf(services.database.db).byId.execute({ id });
  if (!order) throw errors.notFound(`order ${id}`);
  return order;
}

/** The order and its relayer transaction in one query, for orderView. */
export async function findOrderWithRelay(services: Services, id: string): Promise<{ order: OrderRow; relay: OrderRelay | null }> {
  checkOrderId(id);
  const row = await queriesOf(services.database.db).load(id);
  if (!row) throw errors.notFound(`order ${id}`);
  const relay = row.relayStatus === null ? null : { status: row.relayStatus, txHash: row.relayTxHash, lastError: row.relayLastError };
  return { order: row.order, relay };
}
