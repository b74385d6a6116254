// The SDK's EIP-712 typed data (sdk/src/payment-order.ts): the order's types are the router's struct, the
// API's strings become typed values (bigint amounts, checked addresses), and a signature made from an order's
// paymentDetails is the one the token and the router check (recovered here with viem).
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { recoverTypedDataAddress } from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { paymentRouterAbi } from "../../generated/abis.ts";
import {
  orderDigest,
  orderPermitTypedData,
  paymentOrderOf,
  paymentOrderTypes,
  receiveAuthorizationTypedData,
  signOrderAuthorization,
  signOrderPermit,
} from "../../sdk/src/payment-order.ts";

const account = privateKeyToAccount(`0x${"42".repeat(32)}`);
const router = "0x1111111111111111111111111111111111111111";
const apiOrder = {
  orderId: "7",
  deviceId: `0x${"ab".repeat(32)}`,
  token: "0x2222222222222222222222222222222222222222",
  split: "0x3333333333333333333333333333333333333333",
  amount: "500000",
  expiry: "1767225600",
};

describe("sdk/src/payment-order.ts", () => {
  it("PaymentOrder's types are the router's payWithPermit order struct, field for field", () => {
    const fn = paymentRouterAbi.find((item) => item.type === "function" && item.name === "payWithPermit");
    assert.ok(fn && fn.type === "function");
    const components = (fn.inputs[0] as unknown as { components: ReadonlyArray<{ name: string; type: string }> }).components;
    assert.deepEqual(
      paymentOrderTypes.PaymentOrder.map(({ name, type }) => ({ name, type })),
      components.map(({ name, type }) => ({ name, type })),
    );
  });

  it("turns the API's order into the router's (bigints, checked hex) and refuses malformed fields by name", () => {
    assert.deepEqual(paymentOrderOf(apiOrder), { ...apiOrder, orderId: 7n, amount: 500_000n, expiry: 1_767_225_600n });
    assert.throws(() => paymentOrderOf({ ...apiOrder, amount: "-1" }), /order\.amount is not a decimal unsigned integer/);
    assert.throws(() => paymentOrderOf({ ...apiOrder, token: "0x1234" }), /order\.token is not a 20-byte hex address/);
    assert.throws(() => paymentOrderOf({ ...apiOrder, deviceId: "0xabc" }), /order\.deviceId is not hex bytes/);
  });

  it("signs the order's permit with the owner and nonce added; the signature recovers to the account", async () => {
    const deadline = BigInt(orderDigest(84532, router, paymentOrderOf(apiOrder)));
    const permit = {
      domain: { name: "USD Coin", version: "2", chainId: 84532, verifyingContract: apiOrder.token },
      message: { spender: router, value: apiOrder.amount, deadline: deadline.toString() },
    };
    const typed = orderPermitTypedData(permit, account.address, 3n);
    assert.deepEqual(typed.message, { owner: account.address, spender: router, value: 500_000n, nonce: 3n, deadline });
    const signature = await signOrderPermit(account, permit, 3n);
    assert.equal(await recoverTypedDataAddress({ ...typed, signature }), account.address);
    assert.throws(
      () => orderPermitTypedData({ ...permit, message: { ...permit.message, value: "1e6" } }, account.address, 0n),
      /permit\.message\.value/,
    );
  });

  it("signs the receive authorization bound to the order: to the router, before its expiry, its digest as nonce", async () => {
    const order = paymentOrderOf(apiOrder);
    const tokenDomain = { name: "USD Coin", version: "2", chainId: 84532, verifyingContract: apiOrder.token };
    const signature = await signOrderAuthorization(account, { chainId: 84532, router, order, tokenDomain });
    const typed = receiveAuthorizationTypedData({
      tokenDomain: { ...tokenDomain, verifyingContract: apiOrder.token as `0x${string}` },
      from: account.address,
      to: router,
      value: 500_000n,
      validAfter: 0n,
      validBefore: 1_767_225_600n,
      nonce: orderDigest(84532, router, order),
    });
    assert.equal(await recoverTypedDataAddress({ ...typed, signature }), account.address);
    // Another router (another digest) does not recover to the account with this signature.
    const other = {
      ...typed,
      message: { ...typed.message, nonce: orderDigest(84532, "0x4444444444444444444444444444444444444444", order) },
    };
    assert.notEqual(await recoverTypedDataAddress({ ...other, signature }), account.address);
  });
});
