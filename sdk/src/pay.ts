// Paying an order with a viem account, on the rail the order offers: an EIP-3009 receive authorization where
// the token has it (USDC: `paymentDetails.authorization`), else an EIP-2612 permit where it has that, else a
// Permit2 transfer (`paymentDetails.permit2`: the rail of tokens without either standard, such as USDT on many
// chains; the wallet approves Permit2 for the token once). `rail` picks one explicitly. Each is one signature, no transaction and no gas for
// the wallet: the relayer submits it (POST /orders/{id}/authorization, /permit or /permit2) and pays the gas. The
// order is `success` once the payment is indexed on-chain.
//
//   const paid = await payOrder(client, order, privateKeyToAccount(key), { rpcUrl });
import { createPublicClient, http, type Address, type Hex } from "viem";
import type { PaymentClient } from "./clients.ts";
import { unwrap } from "./errors.ts";
import type { components } from "./generated/payment-api.ts";
import { paymentOrderOf, permit2TypedData, signOrderAuthorization, signOrderPermit, toAddress, type Signer } from "./payment-order.ts";

export type Order = components["schemas"]["Order"];
export type PaymentDetails = components["schemas"]["PaymentDetails"];
export type RelayAccepted = components["schemas"]["RelayAccepted"];

/** A payer's signature, ready for the relayer's route of its rail. */
export type SignedPayment =
  | { rail: "authorization"; body: { from: Address; signature: Hex } }
  | { rail: "permit"; body: { owner: Address; signature: Hex }; nonce: bigint }
  | { rail: "permit2"; body: { owner: Address; signature: Hex } };

/** Reads the payer's EIP-2612 nonce on the token: a viem PublicClient has it. */
export type NonceReader = {
  readContract(args: { address: Address; abi: typeof noncesAbi; functionName: "nonces"; args: readonly [Address] }): Promise<bigint>;
};

const noncesAbi = [
  {
    type: "function",
    name: "nonces",
    stateMutability: "view",
    inputs: [{ name: "owner", type: "address" }],
    outputs: [{ name: "", type: "uint256" }],
  },
] as const;

export type SignOptions = {
  /** The rail to sign: by default the authorization where the order offers one, else the permit, else Permit2.
   * `permit2` signs the order's Permit2 transfer: the wallet must have approved Permit2 for the token (once). */
  rail?: "authorization" | "permit" | "permit2";
  /** Permit only: the payer's permit nonce on the token, if known; otherwise it is read from the chain. */
  nonce?: bigint;
  /** Permit only: the chain's JSON-RPC URL, to read the nonce (`nonces(owner)`) from. */
  rpcUrl?: string;
  /** Permit only: a client to read the nonce with instead (a viem PublicClient). */
  publicClient?: NonceReader;
};

/** The order's payment details, or a TypeError when it has none (paid or expired already). */
export function paymentDetailsOf(order: Pick<Order, "id" | "status" | "paymentDetails">): PaymentDetails {
  if (order.status !== "pending" || !order.paymentDetails) {
    throw new TypeError(`order ${order.id} is ${order.status}: only a pending order (with paymentDetails) can be paid`);
  }
  return order.paymentDetails;
}

/** Signs the payment of `order` with `account` on the rail it offers (see SignOptions.rail). */
export async function signOrderPayment(
  order: Pick<Order, "id" | "status" | "paymentDetails">,
  account: Signer,
  options: SignOptions = {},
): Promise<SignedPayment> {
  const details = paymentDetailsOf(order);
  const rail = options.rail ?? (details.authorization ? "authorization" : details.permit ? "permit" : "permit2");
  if (rail === "authorization") {
    if (!details.authorization) throw new TypeError(`order ${order.id} offers no EIP-3009 authorization (its token has none)`);
    const signature = await signOrderAuthorization(account, {
      chainId: details.chainId,
      router: toAddress(details.router, "paymentDetails.router"),
      order: paymentOrderOf(details.order),
      tokenDomain: details.authorization.domain,
    });
    return { rail, body: { from: account.address, signature } };
  }
  if (rail === "permit2") {
    if (!details.permit2) throw new TypeError(`order ${order.id} offers no Permit2 transfer (Permit2 is not on its chain)`);
    // Built from the order itself (as the authorization is), not from the API's message: what is signed is what
    // the router checks.
    const signature = await account.signTypedData(
      permit2TypedData({
        chainId: details.chainId,
        router: toAddress(details.router, "paymentDetails.router"),
        order: paymentOrderOf(details.order),
      }),
    );
    return { rail, body: { owner: account.address, signature } };
  }
  if (!details.permit) throw new TypeError(`order ${order.id} offers no EIP-2612 permit (its token has none): pay through Permit2`);
  const nonce = options.nonce ?? (await readPermitNonce(details, account.address, options));
  const signature = await signOrderPermit(account, details.permit, nonce);
  return { rail: "permit", body: { owner: account.address, signature }, nonce };
}

/** The owner's EIP-2612 nonce on the order's token. */
async function readPermitNonce(details: PaymentDetails, owner: Address, options: SignOptions): Promise<bigint> {
  let reader = options.publicClient;
  if (!reader) {
    if (!options.rpcUrl) {
      throw new TypeError(
        "this order is paid with an EIP-2612 permit, which needs the wallet's permit nonce on the token: pass { rpcUrl } (the chain's JSON-RPC), { publicClient } or { nonce }",
      );
    }
    reader = createPublicClient({ transport: http(options.rpcUrl) });
  }
  return reader.readContract({
    address: toAddress(details.token.address, "paymentDetails.token.address"),
    abi: noncesAbi,
    functionName: "nonces",
    args: [owner],
  });
}

/** Sends a signed payment to the relayer's route of its rail; resolves with the relay's state (202). Throws
 * PaygApiError when the relayer refuses it (409 order_paid, 409 authorization_used, 422 ...). */
export async function submitOrderPayment(client: PaymentClient, orderId: string, signed: SignedPayment): Promise<RelayAccepted> {
  const params = { path: { id: orderId } };
  if (signed.rail === "authorization") {
    return unwrap(await client.POST("/orders/{id}/authorization", { params, body: signed.body }), `POST /orders/${orderId}/authorization`);
  }
  if (signed.rail === "permit2") {
    return unwrap(await client.POST("/orders/{id}/permit2", { params, body: signed.body }), `POST /orders/${orderId}/permit2`);
  }
  return unwrap(await client.POST("/orders/{id}/permit", { params, body: signed.body }), `POST /orders/${orderId}/permit`);
}

export type WaitOptions = {
  /** Give up after this long (default 120 s): rejects with a timeout error. */
  timeoutMs?: number;
  /** How often to read the order (default 1 s). */
  pollIntervalMs?: number;
  /** Stops waiting when aborted. */
  signal?: AbortSignal;
};

/** A payment that cannot complete: the order expired, or the relayer's transaction failed or reverted. */
export class PaymentFailedError extends Error {
  readonly order: Order;
  constructor(order: Order, message: string) {
    super(message);
    this.name = "PaymentFailedError";
    this.order = order;
  }
}

const sleep = (ms: number, signal?: AbortSignal) =>
  new Promise<void>((resolve, reject) => {
    const timer = setTimeout(resolve, ms);
    signal?.addEventListener(
      "abort",
      () => {
        clearTimeout(timer);
        reject(signal.reason);
      },
      { once: true },
    );
  });

/** Reads `GET /orders/{id}` until `until(order)` holds; resolves with that order. `until` may throw to stop
 * waiting (payOrder throws PaymentFailedError that way). */
export async function waitForOrder(
  client: PaymentClient,
  orderId: string,
  until: (order: Order) => boolean,
  options: WaitOptions = {},
): Promise<Order> {
  const timeoutMs = options.timeoutMs ?? 120_000;
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    options.signal?.throwIfAborted();
    const order = unwrap(
      await client.GET("/orders/{id}", { params: { path: { id: orderId } }, signal: options.signal }),
      `GET /orders/${orderId}`,
    );
    if (until(order)) return order;
    if (Date.now() >= deadline) {
      throw new Error(`order ${orderId} did not reach the state awaited within ${timeoutMs} ms (it is ${order.status})`);
    }
    await sleep(Math.min(options.pollIntervalMs ?? 1000, Math.max(0, deadline - Date.now())), options.signal);
  }
}

/** `until` of payOrder: success resolves; an expired order or a failed relay rejects. */
export function paidOrFailed(order: Order): boolean {
  if (order.status === "success") return true;
  if (order.status === "expired") throw new PaymentFailedError(order, `order ${order.id} expired before it was paid`);
  if (order.relay && (order.relay.status === "failed" || order.relay.status === "reverted")) {
    throw new PaymentFailedError(
      order,
      `the relayer's transaction for order ${order.id} ${order.relay.status}: ${order.relay.error ?? "no reason given"}`,
    );
  }
  return false;
}

/**
 * Pays `order` (as `POST /orders` answered) with `account`: signs the rail the order offers (the EIP-3009
 * authorization where offered, else the EIP-2612 permit, whose nonce is read with `rpcUrl` or `publicClient`),
 * submits it to the relayer, and resolves with the order once it is `success` (the payment indexed on-chain).
 * Rejects with PaygApiError when the relayer refuses the signature, PaymentFailedError when the order expires
 * or the relayer's transaction fails, and an Error after `timeoutMs`.
 */
export async function payOrder(
  client: PaymentClient,
  order: Pick<Order, "id" | "status" | "paymentDetails">,
  account: Signer,
  options: SignOptions & WaitOptions = {},
): Promise<Order> {
  const signed = await signOrderPayment(order, account, options);
  await submitOrderPayment(client, order.id, signed);
  return waitForOrder(client, order.id, paidOrFailed, options);
}
