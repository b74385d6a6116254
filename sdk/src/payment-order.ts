// EIP-712 typed data of the payment router's price-locked order (the voucher) and of the EIP-2612 permit or
// EIP-3009 receive authorization that pays it: typed domains, types and messages (amounts as bigint,
// addresses as `0x${string}`), built from an order's `paymentDetails` as the API returns it (numbers as
// decimal strings, addresses as plain strings), which are checked on the way in.
import { hashTypedData, parseSignature, type Address, type Hex, type LocalAccount } from "viem";

/** The account that signs: a viem local account (privateKeyToAccount, mnemonicToAccount, ...) or anything with
 * its address and signTypedData. */
export type Signer = Pick<LocalAccount, "address" | "signTypedData">;

/** An EIP-712 domain with every field the router's, a permit's and an authorization's domains have. */
export type Eip712Domain = { name: string; version: string; chainId: number; verifyingContract: Address };

/** A domain as the API returns it (the verifying contract as a plain string). */
export type ApiDomain = { name: string; version: string; chainId: number; verifyingContract: string };

/** EIP-712 types of `PaymentOrder`, field for field as in `PaymentRouter.PaymentOrder` (a test compares them
 * with the contract's ABI). */
export const paymentOrderTypes = {
  PaymentOrder: [
    { name: "orderId", type: "uint256" },
    { name: "deviceId", type: "bytes32" },
    { name: "token", type: "address" },
    { name: "split", type: "address" },
    { name: "amount", type: "uint256" },
    { name: "expiry", type: "uint64" },
  ],
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

/** `paymentDetails.order` as the API sends it. */
export type ApiPaymentOrder = { orderId: string; deviceId: string; token: string; split: string; amount: string; expiry: string };

const ADDRESS = /^0x[0-9a-fA-F]{40}$/;
const HEX = /^0x(?:[0-9a-fA-F]{2})*$/;
const UINT = /^\d{1,78}$/;

/** `value` as an address; throws a TypeError naming `field` otherwise. */
export function toAddress(value: string, field = "address"): Address {
  if (typeof value !== "string" || !ADDRESS.test(value)) throw new TypeError(`${field} is not a 20-byte hex address: ${String(value)}`);
  return value as Address;
}

/** `value` as hex bytes; throws a TypeError naming `field` otherwise. */
export function toHex(value: string, field = "value"): Hex {
  if (typeof value !== "string" || !HEX.test(value)) throw new TypeError(`${field} is not hex bytes: ${String(value)}`);
  return value as Hex;
}

/** A decimal string of an unsigned integer (base units, unix seconds, uint256) as a bigint. */
export function toUint(value: string, field = "value"): bigint {
  if (typeof value !== "string" || !UINT.test(value)) throw new TypeError(`${field} is not a decimal unsigned integer: ${String(value)}`);
  return BigInt(value);
}

function toDomain(domain: ApiDomain, field: string): Eip712Domain {
  return {
    name: domain.name,
    version: domain.version,
    chainId: domain.chainId,
    verifyingContract: toAddress(domain.verifyingContract, `${field}.verifyingContract`),
  };
}

/** `paymentDetails.order` as the API sends it (numbers as decimal strings) as the router takes it. */
export function paymentOrderOf(order: ApiPaymentOrder): PaymentOrder {
  return {
    orderId: toUint(order.orderId, "order.orderId"),
    deviceId: toHex(order.deviceId, "order.deviceId"),
    token: toAddress(order.token, "order.token"),
    split: toAddress(order.split, "order.split"),
    amount: toUint(order.amount, "order.amount"),
    expiry: toUint(order.expiry, "order.expiry"),
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

/** The message of an EIP-2612 permit. */
export type PermitMessage = { owner: Address; spender: Address; value: bigint; nonce: bigint; deadline: bigint };

/** Typed data of the permit a payer signs: `deadline` must be the order's digest (the router's
 * `permitDeadline(order)`), which binds the permit to that one order. */
export function permitTypedData(params: PermitMessage & { tokenDomain: Eip712Domain }) {
  const { tokenDomain, ...message } = params;
  return { domain: tokenDomain, types: permitTypes, primaryType: "Permit", message } as const;
}

/** An order's `paymentDetails.permit`, as the service returns it (amounts as decimal strings). */
export type OrderPermit = { domain: ApiDomain; message: { spender: string; value: string; deadline: string } };

/** The typed data of an order's permit (`paymentDetails.permit`) for `owner`, whose permit nonce on the
 * token (`nonces(owner)`) is `nonce`. */
export function orderPermitTypedData(permit: OrderPermit, owner: Address, nonce: bigint) {
  return permitTypedData({
    tokenDomain: toDomain(permit.domain, "permit.domain"),
    owner,
    spender: toAddress(permit.message.spender, "permit.message.spender"),
    value: toUint(permit.message.value, "permit.message.value"),
    nonce,
    deadline: toUint(permit.message.deadline, "permit.message.deadline"),
  });
}

/** Signs the permit that pays an order: `permit` is the order's `paymentDetails.permit`, `nonce` the
 * owner's current permit nonce on the token (`nonces(owner)`). The signature goes to
 * POST /v1/orders/{id}/permit (the relayer pays the gas) or, as it is, into the wallet's own
 * `payWithPermit(order, voucherSignature, owner, signature)` transaction. */
export function signOrderPermit(account: Signer, permit: OrderPermit, nonce: bigint): Promise<Hex> {
  return account.signTypedData(orderPermitTypedData(permit, account.address, nonce));
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

/** The message of an EIP-3009 receive authorization. */
export type ReceiveAuthorizationMessage = {
  from: Address;
  to: Address;
  value: bigint;
  validAfter: bigint;
  validBefore: bigint;
  nonce: Hex;
};

/** Typed data of the receive authorization a payer signs to pay an order with `payWithAuthorization`: `to` is
 * the router, `value` the order amount, `validAfter` 0, `validBefore` the order's expiry and `nonce` the order's
 * digest (the router's `authorizationNonce(order)`), which binds the authorization to that one order.
 * `tokenDomain` is the token's own (USDC: its name and version "2"; USDC does not publish it by ERC-5267). */
export function receiveAuthorizationTypedData(params: ReceiveAuthorizationMessage & { tokenDomain: Eip712Domain }) {
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
 * with the order's digest as nonce. `tokenDomain` is the token's EIP-712 domain (`paymentDetails.authorization
 * .domain`): for USDC its `name()` and version "2". The signature goes as it is into
 * `payWithAuthorization(order, voucherSignature, account, signature)`, which anyone may submit; only the router
 * can use it (the token lets only the payee submit a receive authorization). */
export function signOrderAuthorization(
  account: Signer,
  params: { chainId: number; router: Address; order: PaymentOrder; tokenDomain: ApiDomain },
): Promise<Hex> {
  const { chainId, router, order, tokenDomain } = params;
  return account.signTypedData(
    receiveAuthorizationTypedData({
      tokenDomain: toDomain(tokenDomain, "authorization.domain"),
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
