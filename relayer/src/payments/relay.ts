// The relayer's payment rails: a wallet signs only the permit (or, where the token has EIP-3009, a receive
// authorization) and the relayer submits payWithPermit (payWithAuthorization) from its own account, paying
// the gas; or an agent confirms cash and the relayer pays through the cash rail from its float; or a wallet
// transferred the amount to the order's deposit address and the relayer submits payFromDeposit. Each order gets at most one relayer transaction, whatever the number of requests.
// The hot wallet pays only for what will succeed (relay-guard.ts): no relay of an order expiring within the
// margin of the chain's next block, one relay in flight per payer, none past a payer's or tenant's budget of
// reverted transactions, and none of an order whose cancellation is queued (both hold the order's row).
import {
  type Address,
  type Hex,
  type TypedDataDefinition,
  encodeFunctionData,
  erc20Abi,
  getAddress,
  recoverTypedDataAddress,
  toHex,
} from "viem";
import { paymentRouterAbi } from "../../../generated/abis.ts";
import { PERMIT2_ADDRESS, permit2TypedData, permitTypedData, receiveAuthorizationTypedData } from "../../../sdk/src/payment-order.ts";
import { and, eq, inArray } from "drizzle-orm";
import { enqueueTransaction } from "../chain/tx-sender.ts";
import { chainTransactions, orders } from "../db/schema.ts";
import { revertReason } from "../chain/revert-reason.ts";
import { recordOrderEvent } from "../events/record.ts";
import { errors } from "../errors.ts";
import type { Services } from "../services.ts";
import { activeCancellation } from "./cancellation.ts";
import { type OrderRow, voucherOf } from "./orders.ts";
import {
  assertPayerRevertBudget,
  assertTenantRevertBudget,
  chainClock,
  expiresTooSoon,
  lockPayer,
  orderExpiring,
  payerRelayInFlight,
} from "./relay-guard.ts";

/** Whether the order can be relayed now: unpaid, not cancelled, its tenant within its budget of reverted
 * transactions, and its voucher still good RELAY_EXPIRY_MARGIN_BLOCKS blocks after the chain's next block
 * (chain time: the router compares the expiry with the block's timestamp). */
async function assertPayable(services: Services, order: OrderRow) {
  if (order.status === "success") throw errors.conflict("order_already_paid", `order ${order.id} is paid already`);
  if (order.status === "expired" || order.expiresAt.getTime() <= Date.now()) {
    throw errors.conflict("order_expired", `order ${order.id} expired at ${order.expiresAt.toISOString()}`);
  }
  if (await activeCancellation(services.database.db, order.id))
    throw errors.conflict("order_cancelled", `order ${order.id} is being cancelled`);
  await assertTenantRevertBudget(services.database.db, services.config, order.tenantId);
  // Read from the chain's latest block; when the RPC will not say (a provider's quota on block reads), the
  // sender's own check just before it signs, which costs nothing when it refuses, is the one that counts.
  const clock = await chainClock(services.chain.publicClient, services.config).catch(() => undefined);
  const expiry = voucherOf(order).expiry;
  const margin = services.config.RELAY_EXPIRY_MARGIN_BLOCKS;
  if (clock && expiresTooSoon(expiry, clock, margin)) throw orderExpiring(order.id, expiry, clock, margin);
}

/** Simulates the call from the relayer's account; a revert becomes a 422 that names the contract error. */
async function simulate(services: Services, data: Hex) {
  try {
    await services.chain.publicClient.call({ account: services.chain.relayerAccount.address, to: services.chain.router, data });
  } catch (error) {
    const reason = revertReason(error);
    if (!reason) throw errors.unavailable("the chain is not reachable; retry shortly");
    if (reason.name === "OrderAlreadyPaid") throw errors.conflict("order_already_paid", "the order is paid already");
    if (reason.name === "OrderExpired") throw errors.conflict("order_expired", "the order expired");
    throw errors.invalid(`the payment would fail on-chain: ${reason.text}`, [{ message: reason.text }]);
  }
}

/** The relayer transaction already under way for the order on the same rail, if any: repeating a request
 * returns it. A failed one does not count (the order may be retried); one on the other rail is a conflict. */
type RelayKind = "pay_with_permit" | "pay_with_authorization" | "pay_with_permit2" | "pay_cash" | typeof PAY_FROM_DEPOSIT_TX_KIND;
const RAIL_OF: Record<RelayKind, "permit" | "authorization" | "permit2" | "cash" | "transfer"> = {
  pay_with_permit: "permit",
  pay_with_authorization: "authorization",
  pay_with_permit2: "permit2",
  pay_cash: "cash",
  pay_from_deposit: "transfer",
};

/** The relayer transaction kind of payFromDeposit (the transfer rail: the deposit watcher submits it). */
export const PAY_FROM_DEPOSIT_TX_KIND = "pay_from_deposit";

async function activeRelay(services: Services, order: OrderRow, kind: RelayKind) {
  const [row] = await services.database.db.select().from(chainTransactions).where(eq(chainTransactions.ref, order.id));
  if (!row || row.status === "failed" || row.status === "reverted") return undefined;
  if (row.kind !== kind) {
    if (order.status === "success") throw errors.conflict("order_already_paid", `order ${order.id} is paid already`);
    throw errors.conflict("payment_in_progress", `a payment of order ${order.id} is already under way`);
  }
  return { orderId: order.id, status: row.status, transactionHash: row.txHash as Hex | null };
}

/** Queues the order's relay in one database transaction that holds the order's row (a cancellation queued
 * at the same moment waits for it, and then sees it) and, for a wallet's payment, the payer's lock: a relay of
 * the payer's already queued or under way is a 409 payer_payment_in_progress. */
async function enqueue(
  services: Services,
  order: OrderRow,
  kind: RelayKind,
  data: Hex,
  actor: Record<string, unknown> & { payer?: Address },
) {
  return services.database.db.transaction(async (tx) => {
    await tx.select({ id: orders.id }).from(orders).where(eq(orders.id, order.id)).for("update");
    if (await activeCancellation(tx, order.id)) throw errors.conflict("order_cancelled", `order ${order.id} is being cancelled`);
    if (actor.payer) {
      await lockPayer(tx, actor.payer);
      const other = await payerRelayInFlight(tx, actor.payer, order.id);
      if (other) {
        throw errors.conflict(
          "payer_payment_in_progress",
          `a relayed payment by ${actor.payer} (order ${other}) is queued or under way: its permit nonce and balance are in use; ` +
            "sign this order's permit or authorization again once it is mined",
        );
      }
    }
    await tx
      .delete(chainTransactions)
      .where(and(eq(chainTransactions.ref, order.id), inArray(chainTransactions.status, ["failed", "reverted"])));
    const { row, created } = await enqueueTransaction(tx, { kind, ref: order.id, to: services.chain.router, data });
    if (created) await recordOrderEvent(tx, order.id, "payment.submitted", { rail: RAIL_OF[kind], ...actor });
    return row;
  });
}

/** Simulates `data` from the relayer's account, queues it as the order's one transaction of `kind` and wakes
 * the sender: what every rail does once its request is checked. */
async function submit(
  services: Services,
  order: OrderRow,
  kind: RelayKind,
  data: Hex,
  actor: Record<string, unknown> & { payer?: Address },
) {
  await simulate(services, data);
  const row = await enqueue(services, order, kind, data, actor);
  services.txSender.wake();
  return { orderId: order.id, status: row.status, transactionHash: row.txHash as Hex | null };
}

/** Whether `signature` is `signer`'s signature of `typedData`: recovered here for an account without code (ECDSA);
 * otherwise asked of the chain, which checks a smart-contract account's ERC-1271 signature, or one of an account not
 * deployed yet wrapped in ERC-6492 (viem's verification, through the universal ERC-6492 validator in an eth_call). */
async function signedBy(services: Services, signer: Address, typedData: TypedDataDefinition, signature: Hex): Promise<boolean> {
  const recovered = await recoverTypedDataAddress({ ...typedData, signature }).catch(() => undefined);
  if (recovered === signer) return true;
  return services.chain.publicClient.verifyTypedData({ address: signer, ...typedData, signature }).catch(() => {
    throw errors.unavailable("the chain is not reachable; retry shortly");
  });
}

/** The stablecoin of the order's voucher, as the chain described it. */
async function tokenOf(services: Services, token: Address) {
  const info = [...(await services.chain.stablecoins()).values()].find((t) => t.address === token);
  if (!info) throw errors.unavailable(`token ${token} is no longer accepted`);
  return info;
}

/** POST /v1/orders/{id}/permit: checks the permit off-chain, simulates the payment, queues it. */
export async function relayPermit(services: Services, order: OrderRow, body: { owner: string; signature: string }) {
  const active = await activeRelay(services, order, "pay_with_permit");
  if (active) return active;
  await assertPayable(services, order);
  const owner = getAddress(body.owner);
  await assertPayerRevertBudget(services.database.db, services.config, owner);
  const voucher = voucherOf(order);
  const chain = services.chain;
  const token = await tokenOf(services, voucher.token);
  if (!token.domain) {
    throw errors.invalid(`token ${token.symbol} has no EIP-2612 permits: pay through Permit2 (paymentDetails.permit2)`, [
      { path: "signature", message: "this order's token takes no permit" },
    ]);
  }
  const deadline = chain.permitDeadline(voucher);
  const [nonce, balance] = await Promise.all([chain.permitNonce(voucher.token, owner), chain.balanceOf(voucher.token, owner)]).catch(() => {
    throw errors.unavailable("the chain is not reachable; retry shortly");
  });
  const signature = body.signature as Hex;
  const permit = permitTypedData({ tokenDomain: token.domain, owner, spender: chain.router, value: voucher.amount, nonce, deadline });
  if (!(await signedBy(services, owner, permit, signature))) {
    throw errors.invalid("the permit signature is not the owner's signature of this order's permit", [
      { path: "signature", message: "does not recover to owner for the permit in paymentDetails.permit with the owner's current nonce" },
    ]);
  }
  if (balance < voucher.amount) {
    throw errors.invalid("the owner's balance does not cover the order", [
      { path: "owner", message: `balance ${balance} < amount ${voucher.amount}` },
    ]);
  }
  const data = encodeFunctionData({
    abi: paymentRouterAbi,
    functionName: "payWithPermit",
    args: [voucher, order.voucherSignature as Hex, owner, signature],
  });
  return submit(services, order, "pay_with_permit", data, { payer: owner });
}

/** POST /v1/orders/{id}/authorization: checks the EIP-3009 receive authorization off-chain, simulates the
 * payment, queues it. */
export async function relayAuthorization(services: Services, order: OrderRow, body: { from: string; signature: string }) {
  const active = await activeRelay(services, order, "pay_with_authorization");
  if (active) return active;
  await assertPayable(services, order);
  const from = getAddress(body.from);
  await assertPayerRevertBudget(services.database.db, services.config, from);
  const voucher = voucherOf(order);
  const chain = services.chain;
  const token = await tokenOf(services, voucher.token);
  if (!token.eip3009 || !token.domain) {
    throw errors.invalid(
      `token ${token.symbol} has no EIP-3009 authorizations: pay by ${token.domain ? "permit (paymentDetails.permit)" : "Permit2 (paymentDetails.permit2)"}`,
      [{ path: "signature", message: "this order's token takes no authorization" }],
    );
  }
  const nonce = toHex(chain.permitDeadline(voucher), { size: 32 });
  const signature = body.signature as Hex;
  const authorization = receiveAuthorizationTypedData({
    tokenDomain: token.domain,
    from,
    to: chain.router,
    value: voucher.amount,
    validAfter: 0n,
    validBefore: voucher.expiry,
    nonce,
  });
  if (!(await signedBy(services, from, authorization, signature))) {
    throw errors.invalid("the signature is not the wallet's signature of this order's authorization", [
      { path: "signature", message: "does not recover to `from` for the authorization in paymentDetails.authorization" },
    ]);
  }
  const [used, balance] = await Promise.all([
    chain.authorizationUsed(voucher.token, from, nonce),
    chain.balanceOf(voucher.token, from),
  ]).catch(() => {
    throw errors.unavailable("the chain is not reachable; retry shortly");
  });
  if (used) {
    throw errors.conflict("authorization_used", "the wallet's authorization for this order was used or cancelled at the token");
  }
  if (balance < voucher.amount) {
    throw errors.invalid("the wallet's balance does not cover the order", [
      { path: "from", message: `balance ${balance} < amount ${voucher.amount}` },
    ]);
  }
  const data = encodeFunctionData({
    abi: paymentRouterAbi,
    functionName: "payWithAuthorization",
    args: [voucher, order.voucherSignature as Hex, from, signature],
  });
  return submit(services, order, "pay_with_authorization", data, { payer: from });
}

/** POST /v1/orders/{id}/permit2: checks the Permit2 signature (the order as witness) off-chain, the owner's balance
 * and its approval of Permit2, simulates the payment, queues it. */
export async function relayPermit2(services: Services, order: OrderRow, body: { owner: string; signature: string }) {
  const active = await activeRelay(services, order, "pay_with_permit2");
  if (active) return active;
  await assertPayable(services, order);
  const owner = getAddress(body.owner);
  await assertPayerRevertBudget(services.database.db, services.config, owner);
  const voucher = voucherOf(order);
  const chain = services.chain;
  const token = await tokenOf(services, voucher.token);
  if (!token.permit2) {
    throw errors.invalid("this chain has no Permit2: pay by permit (paymentDetails.permit)", [
      { path: "signature", message: "Permit2 is not deployed on this chain" },
    ]);
  }
  const signature = body.signature as Hex;
  const typedData = permit2TypedData({ chainId: order.chainId, router: chain.router, order: voucher });
  if (!(await signedBy(services, owner, typedData as unknown as TypedDataDefinition, signature))) {
    throw errors.invalid("the signature is not the owner's Permit2 signature of this order", [
      { path: "signature", message: "does not verify for owner against the typed data in paymentDetails.permit2" },
    ]);
  }
  const [balance, approved] = await Promise.all([
    chain.balanceOf(voucher.token, owner),
    chain.publicClient.readContract({ address: voucher.token, abi: erc20Abi, functionName: "allowance", args: [owner, PERMIT2_ADDRESS] }),
  ]).catch(() => {
    throw errors.unavailable("the chain is not reachable; retry shortly");
  });
  if (balance < voucher.amount) {
    throw errors.invalid("the owner's balance does not cover the order", [
      { path: "owner", message: `balance ${balance} < amount ${voucher.amount}` },
    ]);
  }
  if (approved < voucher.amount) {
    throw errors.invalid("the owner has not approved Permit2 for the token: approve it once, then sign again", [
      { path: "owner", message: `allowance to Permit2 ${approved} < amount ${voucher.amount}` },
    ]);
  }
  const data = encodeFunctionData({
    abi: paymentRouterAbi,
    functionName: "payWithPermit2",
    args: [voucher, order.voucherSignature as Hex, owner, signature],
  });
  return submit(services, order, "pay_with_permit2", data, { payer: owner });
}

/** The transfer rail: `deposit`, the order's deposit address, holds the order amount (a wallet transferred it, from
 * the order's EIP-681 payment request); the relayer submits payFromDeposit, after the same checks as every relayed
 * rail and a simulation, so the hot wallet never pays for a call that would revert. Called by the deposit watcher
 * (deposit-watch.ts), never by a client; it throws the rails' errors (409 order_already_paid, order_expiring,
 * order_cancelled, payment_in_progress, 429 too_many_reverts, 422 when the simulation reverts). */
export async function relayDeposit(services: Services, order: OrderRow, deposit: Address) {
  return relayVoucherCall(services, order, PAY_FROM_DEPOSIT_TX_KIND, "payFromDeposit", { payer: deposit });
}

/** POST /v1/orders/{id}/cash: an agent took cash for the order; the relayer pays it from its float. The
 * order's events are public: they do not name the agent's key (the route logs it). */
export async function relayCash(services: Services, order: OrderRow) {
  return relayVoucherCall(services, order, "pay_cash", "payCash", {});
}

/** A rail whose call is the order and its voucher alone (payCash, payFromDeposit): the relay in progress if there is
 * one, else the checks every relayed rail has, a simulation, and the transaction queued. */
async function relayVoucherCall(
  services: Services,
  order: OrderRow,
  kind: RelayKind,
  functionName: "payCash" | "payFromDeposit",
  actor: { payer?: Address },
) {
  const active = await activeRelay(services, order, kind);
  if (active) return active;
  await assertPayable(services, order);
  const data = encodeFunctionData({ abi: paymentRouterAbi, functionName, args: [voucherOf(order), order.voucherSignature as Hex] });
  return submit(services, order, kind, data, actor);
}
