// EIP-712 typed data of the payment router's price-locked order (the voucher) and of the EIP-2612 permit
// that pays it. The order's fields are read from the generated router ABI, so they cannot drift from the
// Solidity struct.
import { parseSignature, type Address, type Hex, type LocalAccount, type TypedDataDomain } from "viem";
import { paymentRouterAbi } from "../generated/abis.ts";

type PayWithPermit = Extract<(typeof paymentRouterAbi)[number], { type: "function"; name: "payWithPermit" }>;
type OrderComponents = PayWithPermit["inputs"][0]["components"];
type Field<C> = C extends { name: infer N; type: infer T } ? { name: N; type: T } : never;
type Fields<T extends readonly unknown[]> = { readonly [K in keyof T]: Field<T[K]> };

const payWithPermit = paymentRouterAbi.find(
  (item): item is PayWithPermit => item.type === "function" && item.name === "payWithPermit",
);
if (!payWithPermit) throw new Error("the router ABI has no payWithPermit");

/** EIP-712 types of `PaymentOrder`, field for field as in `PaymentRouter.PaymentOrder`. */
export const paymentOrderTypes = {
  PaymentOrder: payWithPermit.inputs[0].components.map(({ name, type }) => ({ name, type })) as unknown as Fields<
    OrderComponents
  >,
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
 * POST /v1/orders/{id}/permit (the relayer pays the gas) or, split with permitSignatureParts, into the
 * wallet's own payWithPermit transaction. */
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

/** Splits a 65-byte signature into the `v`, `r`, `s` that `payWithPermit` takes. */
export function permitSignatureParts(signature: Hex): { v: number; r: Hex; s: Hex } {
  const { v, r, s, yParity } = parseSignature(signature);
  return { v: Number(v ?? BigInt(yParity + 27)), r, s };
}
