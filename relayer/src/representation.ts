// One representation per concept, in every response of /v1, every webhook's data and every order event
// (docs/payment-service.md, "Representation"):
// - US dollars: a JSON number of dollars, at most 6 decimals, in a field named `...Usd` (`amountUsd`,
//   `grossUsd`, `volumeUsd`...), as the interface gives `amountUsd` and the statistics.
// - Token amounts: a string of integer base units (`tokenAmount`, `amount`, `gross`, `credited`...): exact
//   for any uint256, which a JSON number is not. Their decimals, where given, are an integer `tokenDecimals`.
// - A token: `{symbol, address}` (the Token component).
// - An address: EIP-55 checksummed (the indexer stores them in lower case: checksummed where they are
//   mapped into an answer, with `checksummed`).
// - A split leg: `assetOwner`, `operator` or `protocol` (the SplitLeg component).
import { z } from "@hono/zod-openapi";
import { getAddress } from "viem";

/** An address as the service answers it: EIP-55 checksummed. */
export function checksummed(address: string): `0x${string}` {
  return getAddress(address);
}

/** A token as the service answers it. */
export function tokenRef(symbol: string, address: string): { symbol: string; address: `0x${string}` } {
  return { symbol, address: getAddress(address) };
}

/** An address in an answer: 0x and 40 hex digits with the EIP-55 checksum (checked: the webhook tests parse
 * every delivery with these schemas). Inline rather than a component: a nullable reference to a component
 * comes out of the generator as allOf, which a client generator reads as never null. */
export function checksummedAddress(description = "An address") {
  return z
    .string()
    .regex(/^0x[0-9a-fA-F]{40}$/)
    .refine((value) => value === getAddress(value), "an EIP-55 checksummed address")
    .openapi({ description: `${description} (EIP-55 checksummed)`, example: "0x90F79bf6EB2c4f870365E785982E1f101E93b906" });
}

export const ChecksummedAddress = checksummedAddress();

export const Token = z
  .object({
    symbol: z.string().openapi({ example: "USDC" }),
    address: checksummedAddress("The token contract").openapi({ example: "0x036CbD53842c5426634e7929541eC2318f3dCF7e" }),
  })
  .openapi("Token", { description: "A stablecoin: its symbol and its contract's address (EIP-55)" });

export const SPLIT_LEGS = ["assetOwner", "operator", "protocol"] as const;

export const SplitLeg = z
  .enum(SPLIT_LEGS)
  .openapi("SplitLeg", { description: "A leg of the 50/40/10 split: asset owner (50%), operator (40%), protocol (10%)" });

/** Token base units, as a string of digits. */
export const BaseUnits = z
  .string()
  .regex(/^\d+$/)
  .openapi({ description: "Token base units: an integer as a string of digits", example: "500000" });
