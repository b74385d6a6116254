// EIP-681 payment requests of an ERC-20 transfer, as an order's paymentDetails.transfer.uri carries them:
//
//   ethereum:<token>@<chainId>/transfer?address=<recipient>&uint256=<amount>
//
// The parser is strict: it takes exactly that form (an optional `pay-` prefix aside) and refuses anything else
// rather than guess: a request without a chain id (a wallet could send it on any chain), an ENS name instead of an
// address, an address whose mixed case is not its EIP-55 checksum, an amount of zero, with a fraction or beyond
// 2^256 - 1, a parameter twice or one it does not know. It runs in time linear in the input, which it refuses past
// MAX_PAYMENT_REQUEST_LENGTH characters.
import { type Address, getAddress, isAddress } from "viem";

/** A parsed EIP-681 request to transfer `amount` base units of the ERC-20 `token` to `to` on chain `chainId`. */
export type PaymentRequest = { token: Address; chainId: number; to: Address; amount: bigint };

/** Why a payment request was refused. */
export class PaymentRequestError extends Error {
  override name = "PaymentRequestError";
}

/** The longest request the parser reads (a transfer request is about 200 characters). */
export const MAX_PAYMENT_REQUEST_LENGTH = 512;

const MAX_UINT256 = (1n << 256n) - 1n;
const ADDRESS = /^0x[0-9a-fA-F]{40}$/;
const CHAIN_ID = /^[1-9][0-9]{0,15}$/;
// An EIP-681 number: digits, optionally with a fraction and an exponent (2.5e6); no sign, no leading zeros but "0".
const NUMBER = /^(0|[1-9][0-9]*)(?:\.([0-9]+))?(?:[eE]([0-9]{1,3}))?$/;

/** The EIP-681 URI of a transfer of `amount` base units of `token` to `to` on chain `chainId` (addresses
 * checksummed, the amount in plain digits). */
export function formatPaymentRequest(request: PaymentRequest): string {
  const { token, chainId, to, amount } = request;
  if (!Number.isSafeInteger(chainId) || chainId <= 0) throw new PaymentRequestError(`invalid chain id ${chainId}`);
  if (amount <= 0n || amount > MAX_UINT256) throw new PaymentRequestError(`invalid amount ${amount}`);
  return `ethereum:${getAddress(token)}@${chainId}/transfer?address=${getAddress(to)}&uint256=${amount}`;
}

/** Parses an EIP-681 ERC-20 transfer request. With `expect`, also checks that it names that chain (and token):
 * a wallet must not pay a request meant for another network. Throws PaymentRequestError. */
export function parsePaymentRequest(uri: string, expect: { chainId?: number; token?: Address } = {}): PaymentRequest {
  if (typeof uri !== "string") throw new PaymentRequestError("a payment request is a string");
  if (uri.length > MAX_PAYMENT_REQUEST_LENGTH) throw new PaymentRequestError(`longer than ${MAX_PAYMENT_REQUEST_LENGTH} characters`);
  const scheme = "ethereum:";
  if (uri.slice(0, scheme.length).toLowerCase() !== scheme) throw new PaymentRequestError("not an ethereum: URI");
  let rest = uri.slice(scheme.length);
  if (rest.startsWith("pay-")) rest = rest.slice(4);

  const slash = rest.indexOf("/");
  const query = rest.indexOf("?");
  if (slash < 0 || query < slash) throw new PaymentRequestError("not a function call: expected /transfer?...");
  const target = rest.slice(0, slash);
  const functionName = rest.slice(slash + 1, query);
  if (functionName !== "transfer") throw new PaymentRequestError(`unsupported function ${JSON.stringify(functionName)}: only transfer`);

  const at = target.indexOf("@");
  if (at < 0) throw new PaymentRequestError("no chain id: the request must name its chain (@<chainId>)");
  const token = address(target.slice(0, at), "token");
  const chainText = target.slice(at + 1);
  if (!CHAIN_ID.test(chainText)) throw new PaymentRequestError(`invalid chain id ${JSON.stringify(chainText)}`);
  const chainId = Number(chainText);
  if (!Number.isSafeInteger(chainId)) throw new PaymentRequestError(`invalid chain id ${chainText}`);

  const params = new Map<string, string>();
  for (const pair of rest.slice(query + 1).split("&")) {
    const eq = pair.indexOf("=");
    if (eq <= 0) throw new PaymentRequestError(`invalid parameter ${JSON.stringify(pair)}`);
    const key = pair.slice(0, eq);
    if (key !== "address" && key !== "uint256") throw new PaymentRequestError(`unsupported parameter ${JSON.stringify(key)}`);
    if (params.has(key)) throw new PaymentRequestError(`parameter ${key} given twice`);
    params.set(key, pair.slice(eq + 1));
  }
  const toText = params.get("address");
  const amountText = params.get("uint256");
  if (toText === undefined) throw new PaymentRequestError("no recipient (address=)");
  if (amountText === undefined) throw new PaymentRequestError("no amount (uint256=)");
  const to = address(toText, "recipient");
  const amount = number(amountText);

  if (expect.chainId !== undefined && chainId !== expect.chainId) {
    throw new PaymentRequestError(`the request is for chain ${chainId}, not ${expect.chainId}`);
  }
  if (expect.token !== undefined && token !== getAddress(expect.token)) {
    throw new PaymentRequestError(`the request is for token ${token}, not ${getAddress(expect.token)}`);
  }
  return { token, chainId, to, amount };
}

/** A hex address, checksummed; mixed case must be its EIP-55 checksum. */
function address(text: string, what: string): Address {
  if (!ADDRESS.test(text)) throw new PaymentRequestError(`invalid ${what} address ${JSON.stringify(text)}`);
  const lower = text.slice(2) === text.slice(2).toLowerCase();
  const upper = text.slice(2) === text.slice(2).toUpperCase();
  if (!lower && !upper && !isAddress(text, { strict: true })) {
    throw new PaymentRequestError(`${what} address ${text} has a wrong EIP-55 checksum`);
  }
  return getAddress(text);
}

/** An EIP-681 number that is a whole amount of base units, 1 to 2^256 - 1. */
function number(text: string): bigint {
  const match = NUMBER.exec(text);
  if (!match) throw new PaymentRequestError(`invalid amount ${JSON.stringify(text)}`);
  const [, whole, fraction = "", exponentText = "0"] = match;
  const exponent = Number(exponentText);
  if (fraction.length > exponent) throw new PaymentRequestError(`amount ${text} is not a whole number of base units`);
  const amount = BigInt(whole + fraction) * 10n ** BigInt(exponent - fraction.length);
  if (amount === 0n) throw new PaymentRequestError("the amount is zero");
  if (amount > MAX_UINT256) throw new PaymentRequestError("the amount is beyond uint256");
  return amount;
}
