// The payment API answers every address EIP-55 checksummed (relayer/src/representation.ts): the support's
// `api()` (stack.ts) checks every JSON answer of /v1 with this, so an answer that leaks a lower-case address
// from the indexer fails the test that got it.
import { getAddress } from "viem";

const ADDRESS = /^0x[0-9a-fA-F]{40}$/;

/** The JSON paths under `value` of 20-byte hex strings that are not EIP-55 checksummed. */
export function unchecksummedAddresses(value: unknown, path = "$", out: string[] = []): string[] {
  if (typeof value === "string") {
    if (ADDRESS.test(value) && value !== getAddress(value)) out.push(`${path}: ${value}`);
  } else if (Array.isArray(value)) {
    value.forEach((item, i) => unchecksummedAddresses(item, `${path}[${i}]`, out));
  } else if (value && typeof value === "object") {
    for (const [key, item] of Object.entries(value)) unchecksummedAddresses(item, `${path}.${key}`, out);
  }
  return out;
}
