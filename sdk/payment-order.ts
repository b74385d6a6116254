// EIP-712 typed data of the payment router's price-locked order (the voucher) and of the EIP-2612 permit or
// EIP-3009 receive authorization that pays it. The order's fields are read from the generated router ABI, so
// they cannot drift from the Solidity struct.
import { hashTypedData, parseSignature, type Address, type Hex, type LocalAccount, type TypedDataDomain } from "viem";
import { paymentRouterAbi } from "../generated/abis.ts";

type PayWithPermit = Extract<(typeof paymentRouterAbi)[number], { type: "function"; name: "payWithPermit" }>;
type OrderComponents = PayWithPermit["inputs"][0]["components"];
type Field<C> = C extends { name: infer N; type: infer T } ? { name: N; type: T } : never;
type Fields<T extends readonly unknown[]> = { readonly [K in keyof T]: Field<T[K]> };

const payWithPermit = paymentRouterAbi.find((item): item is PayWithPermit => item.type === "function" && item.name === "payWithPermit");
if (!payWithPermit) throw new Error("the router ABI has no payWithPermit");

/** EIP-712 types of `PaymentOrder`, field for field as in `PaymentRouter.PaymentOrder`. */
export const paymentOrderTypes = {
  PaymentOrder: payWithPermit.inputs[0].components.map(({ name, type }) => ({ name, type })) as unknown as Fields<OrderComponents>,
} as const;

/** A price-locked order as the router takes it. */
export type PaymentOrder = {
  orderId: bigint;
  deviceId: Hex;
  token: Address;
  split: Address;
  amount: bigint;
  expiry: bigint;
};

/** `paymentDetails.order` as the API sends it (numbers as decimal strings) as the router takes it. */
export function paymentOrderOf(order: {
  orderId: string;
  deviceId: Hex;
  token: Address;
  split: Address;
  amount: string;
  expiry: string;
}): PaymentOrder {
  return {
    orderId: BigInt(order.orderId),
    deviceId: order.deviceId,
    token: order.token,
    split: order.split,
    amount: BigInt(order.amount),
    expiry: BigInt(order.expiry),
  };
}

/** The router's EIP-712 domain: it binds a voucher to one chain and one router. */
export function routerDomain(chainId: number, router: Address) {
  return { name: "PaymentRouter", version: "1", chainId, verifyingContract: router } as const;
}

/** Typed data the quote signer signs to lock an order's price. */
export function orderTypedData(chainId: number, router: Address, order: PaymentOrder) {
  return {
    domain: routerDomain(chainId, router),
    types: paymentOrderTypes,
    primaryType: "PaymentOrder",
    message: order,
  } as const;
}

/** The order's EIP-712 digest under the router's domain: the router's `hashOrder(order)`, which is also the
 * permit deadline (`permitDeadline`, as a number) and the authorization nonce (`authorizationNonce`) that bind a
 * payer's signature to this one order. */
export function orderDigest(chainId: number, router: Address, order: PaymentOrder): Hex {
  return hashTypedData(orderTypedData(chainId, router, order));
}

/** EIP-2612 permit types. */
export const permitTypes = {
  Permit: [
    { name: "owner", type: "address" },
    { name: "spender", type: "address" },
    { name: "value", type: "uint256" },
    { name: "nonce", type: "uint256" },
    { name: "deadline", type: "uint256" },
  ],
} as const;

/** Typed data of the permit a payer signs: `deadline` must be the order's digest (the router's
 * `permitDeadline(order)`), which binds the permit to that one order. */
export function permitTypedData(params: {
  tokenDomain: TypedDataDomain;
  owner: Address;
  spender: Address;
  value: bigint;
  nonce: bigint;
  deadline: bigint;
}) {
  const { tokenDomain, ...message } = params;
  return { domain: tokenDomain, types: permitTypes, primaryType: "Permit", message } as const;
}

/** An order's `paymentDetails.permit`, as the service returns it (amounts as decimal strings). */
export type OrderPermit = {
  domain: TypedDataDomain;
  message: { spender: Address; value: string; deadline: string };
};

/** Signs the permit that pays an order: `permit` is the order's `paymentDetails.permit`, `nonce` the
 * owner's current permit nonce on the token (`nonces(owner)`). The signature goes to
 * POST /v1/orders/{id}/permit (the relayer pays the gas) or, as it is, into the wallet's own
 * `payWithPermit(order, voucherSignature, owner, signature)` transaction. */
export function signOrderPermit(
  account: Pick<LocalAccount, "address" | "signTypedData">,
  permit: OrderPermit,
  nonce: bigint,
): Promise<Hex> {
  return account.signTypedData(
    permitTypedData({
      tokenDomain: permit.domain,
      owner: account.address,
      spender: permit.message.spender,
      value: BigInt(permit.message.value),
      nonce,
      deadline: BigInt(permit.message.deadline),
    }),
  );
}

/** Uniswap's Permit2, at the same address on every chain (the local chains install it there). */
export const PERMIT2_ADDRESS = "0x000000000022D473030F116dDEE9F6B43aC78BA3" as const;

/** Types of the Permit2 transfer that pays an order (`PermitWitnessTransferFrom` with the order as its witness):
 * the router's `PERMIT2_WITNESS_TYPE` is the tail of this type's encoding, from `PaymentOrder witness)` on. */
export const permit2WitnessTypes = {
  PermitWitnessTransferFrom: [
    { name: "permitted", type: "TokenPermissions" },
    { name: "spender", type: "address" },
    { name: "nonce", type: "uint256" },
    { name: "deadline", type: "uint256" },
    { name: "witness", type: "PaymentOrder" },
  ],
  TokenPermissions: [
    { name: "token", type: "address" },
    { name: "amount", type: "uint256" },
  ],
  PaymentOrder: paymentOrderTypes.PaymentOrder,
} as const;

/** Typed data of the Permit2 signature that pays `order` with the router's `payWithPermit2`: `order.amount` of
 * `order.token` to the router as spender, nonce the order id, deadline the order's expiry, and the order itself
 * as the witness. It pays that one order once (Permit2 spends the nonce) and expires with it. The payer must have
 * approved Permit2 for the token (once, for every later payment). */
export function permit2TypedData(params: { chainId: number; router: Address; order: PaymentOrder }) {
  const { chainId, router, order } = params;
  return {
    domain: { name: "Permit2", chainId, verifyingContract: PERMIT2_ADDRESS },
    types: permit2WitnessTypes,
    primaryType: "PermitWitnessTransferFrom",
    message: {
      permitted: { token: order.token, amount: order.amount },
      spender: router,
      nonce: order.orderId,
      deadline: order.expiry,
      witness: order,
    },
  } as const;
}

/** EIP-3009 `ReceiveWithAuthorization` types (USDC's gasless transfer that only the payee may submit). */
export const receiveAuthorizationTypes = {
  ReceiveWithAuthorization: [
    { name: "from", type: "address" },
    { name: "to", type: "address" },
    { name: "value", type: "uint256" },
    { name: "validAfter", type: "uint256" },
    { name: "validBefore", type: "uint256" },
    { name: "nonce", type: "bytes32" },
  ],
} as const;

/** Typed data of the receive authorization a payer signs to pay an order with `payWithAuthorization`: `to` is
 * the router, `value` the order amount, `validAfter` 0, `validBefore` the order's expiry and `nonce` the order's
 * digest (the router's `authorizationNonce(order)`), which binds the authorization to that one order.
 * `tokenDomain` is the token's own (USDC: its name and version "2"; USDC does not publish it by ERC-5267). */
export function receiveAuthorizationTypedData(params: {
  tokenDomain: TypedDataDomain;
  from: Address;
  to: Address;
  value: bigint;
  validAfter: bigint;
  validBefore: bigint;
  nonce: Hex;
}) {
  const { tokenDomain, ...message } = params;
  return {
    domain: tokenDomain,
    types: receiveAuthorizationTypes,
    primaryType: "ReceiveWithAuthorization",
    message,
  } as const;
}

/** Signs the EIP-3009 receive authorization that pays `order` through the router's `payWithAuthorization`
 * (USDC's own gasless rail): `order.amount` from the account to the router, valid before the order's expiry,
 * with the order's digest as nonce. `tokenDomain` is the token's EIP-712 domain: for USDC its `name()` and
 * version "2" (USDC does not publish its domain by ERC-5267). The signature goes as it is into
 * `payWithAuthorization(order, voucherSignature, account, signature)`, which anyone may submit; only
 * the router can use it (the token lets only the payee submit a receive authorization). */
export function signOrderAuthorization(
  account: Pick<LocalAccount, "address" | "signTypedData">,
  params: { chainId: number; router: Address; order: PaymentOrder; tokenDomain: TypedDataDomain },
): Promise<Hex> {
  const { chainId, router, order, tokenDomain } = params;
  return account.signTypedData(
    receiveAuthorizationTypedData({
      tokenDomain,
      from: account.address,
      to: router,
      value: order.amount,
      validAfter: 0n,
      validBefore: order.expiry,
      nonce: orderDigest(chainId, router, order),
    }),
  );
}

/** Splits a 65-byte signature into the `v`, `r`, `s` of a token's own `permit`, `receiveWithAuthorization` or
 * `cancelAuthorization` (the router's rails take the signature as bytes). */
export function permitSignatureParts(signature: Hex): { v: number; r: Hex; s: Hex } {
  const { v, r, s, yParity } = parseSignature(signature);
  return { v: Number(v ?? BigInt(yParity + 27)), r, s };
}
