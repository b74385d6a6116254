// The SDK's EIP-681 payment requests (sdk/src/payment-request.ts): what formatPaymentRequest writes parses back to
// the same request, the forms EIP-681 allows for a transfer's amount are read exactly, and everything else is
// refused with a PaymentRequestError rather than guessed at.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { getAddress } from "viem";
import { MAX_PAYMENT_REQUEST_LENGTH, PaymentRequestError, formatPaymentRequest, parsePaymentRequest } from "../../sdk/src/index.ts";

const token = getAddress("0x036cbd53842c5426634e7929541ec2318f3dcf7e");
const to = getAddress("0x5b38da6a701c568545dcfcb03fcb875f56beddc4");
const uri = (params: string, target = `${token}@84532`) => `ethereum:${target}/transfer?${params}`;

describe("sdk/src/payment-request.ts", () => {
  it("parses what formatPaymentRequest writes, with checksummed addresses and a bigint amount", () => {
    const request = { token, chainId: 84532, to, amount: 500_000n };
    const text = formatPaymentRequest(request);
    assert.equal(text, `ethereum:${token}@84532/transfer?address=${to}&uint256=500000`);
    assert.deepEqual(parsePaymentRequest(text), request);
    assert.deepEqual(parsePaymentRequest(text, { chainId: 84532, token: token.toLowerCase() as `0x${string}` }), request);
  });

  it("reads lower-case addresses, the pay- prefix, parameters in either order and EIP-681's exponent notation", () => {
    const lower = uri(`uint256=2.5e6&address=${to.toLowerCase()}`, `pay-${token.toLowerCase()}@1`);
    assert.deepEqual(parsePaymentRequest(lower), { token, chainId: 1, to, amount: 2_500_000n });
    assert.equal(parsePaymentRequest(uri(`address=${to}&uint256=1e18`)).amount, 10n ** 18n);
    assert.equal(parsePaymentRequest(uri(`address=${to}&uint256=${(1n << 256n) - 1n}`)).amount, (1n << 256n) - 1n);
  });

  const refused: Array<[string, string]> = [
    ["another scheme", `bitcoin:${token}@1/transfer?address=${to}&uint256=1`],
    ["no chain id", `ethereum:${token}/transfer?address=${to}&uint256=1`],
    ["a chain id with a leading zero", uri(`address=${to}&uint256=1`, `${token}@01`)],
    ["chain id zero", uri(`address=${to}&uint256=1`, `${token}@0`)],
    ["a chain id beyond a safe integer", uri(`address=${to}&uint256=1`, `${token}@9007199254740993`)],
    ["an ENS name as token", uri(`address=${to}&uint256=1`, "usdc.eth@1")],
    ["an ENS name as recipient", uri("address=shop.eth&uint256=1")],
    ["a wrong checksum", uri(`address=${to.replace("B38", "b38")}&uint256=1`)],
    ["a short address", uri(`address=${to.slice(0, 41)}&uint256=1`)],
    ["a plain ether payment", `ethereum:${to}@1?value=1`],
    ["another function", uri(`address=${to}&uint256=1`).replace("/transfer", "/approve")],
    ["no amount", uri(`address=${to}`)],
    ["no recipient", uri("uint256=1")],
    ["a parameter twice", uri(`address=${to}&address=${to}&uint256=1`)],
    ["an unknown parameter", uri(`address=${to}&uint256=1&gas=21000`)],
    ["an empty parameter", uri(`address=${to}&&uint256=1`)],
    ["amount zero", uri(`address=${to}&uint256=0`)],
    ["a fraction of a base unit", uri(`address=${to}&uint256=2.55e1`)],
    ["a negative amount", uri(`address=${to}&uint256=-1`)],
    ["a hex amount", uri(`address=${to}&uint256=0x10`)],
    ["an amount beyond uint256", uri(`address=${to}&uint256=${1n << 256n}`)],
    ["a huge exponent", uri(`address=${to}&uint256=1e9999`)],
    ["an overlong request", uri(`address=${to}&uint256=${"1".repeat(MAX_PAYMENT_REQUEST_LENGTH)}`)],
  ];
  for (const [what, text] of refused) {
    it(`refuses ${what}`, () => {
      assert.throws(() => parsePaymentRequest(text), PaymentRequestError);
    });
  }

  it("refuses a request for another chain or token than expected", () => {
    const text = formatPaymentRequest({ token, chainId: 84532, to, amount: 1n });
    assert.throws(() => parsePaymentRequest(text, { chainId: 8453 }), /chain 84532, not 8453/);
    assert.throws(() => parsePaymentRequest(text, { token: to }), PaymentRequestError);
  });

  it("formats only what it could parse back", () => {
    assert.throws(() => formatPaymentRequest({ token, chainId: 0, to, amount: 1n }), PaymentRequestError);
    assert.throws(() => formatPaymentRequest({ token, chainId: 1, to, amount: 0n }), PaymentRequestError);
  });
});
