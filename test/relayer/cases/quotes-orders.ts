// POST /v1/quote, POST /v1/orders, GET /v1/orders/{id}: the price is locked by the server.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { type Address, type Hex, createPublicClient, http, recoverTypedDataAddress } from "viem";
import { paymentRouterAbi } from "../../../generated/abis.ts";
import { localAccount } from "../../../lib/sample-data.ts";
import { orderTypedData } from "../../../sdk/src/payment-order.ts";
import type { Stack } from "../../support/stack.ts";
import { expectError } from "./expect.ts";

const quoteBody = { deviceId: "kiosk-nbo-001", chain: "local", token: "USDC", tier: "1h" };

export function quoteOrderCases(stack: () => Stack) {
  describe("quotes", () => {
    it("prices a session from the device's tier and locks it for the quote's lifetime", async () => {
      const s = stack();
      const before = Date.now();
      const quote = await s.api("POST", "/v1/quote", { body: quoteBody });
      assert.equal(quote.status, 201);
      assert.match(quote.body.quoteId, /^qt_[0-9A-Z]{26}$/);
      assert.equal(quote.body.amountUsd, 0.5);
      assert.equal(quote.body.tokenAmount, "500000");
      assert.equal(quote.body.tokenDecimals, 6);
      assert.equal(quote.body.durationSeconds, 3600);
      const ttl = Date.parse(quote.body.expiresAt) - before;
      assert.ok(ttl > 290_000 && ttl <= 301_000, `quote lifetime ${ttl} ms`);
    });

    it("answers an unknown device with 404 and unknown chain, token or tier with 422 naming the field", async () => {
      const s = stack();
      expectError(await s.api("POST", "/v1/quote", { body: { ...quoteBody, deviceId: "nope-1" } }), 404, "not_found");
      for (const [field, value] of [
        ["chain", "ethereum"],
        ["token", "DAI"],
        ["tier", "7d"],
      ] as const) {
        const response = await s.api("POST", "/v1/quote", { body: { ...quoteBody, [field]: value } });
        expectError(response, 422, "invalid_parameters");
        assert.equal(response.body.error.details[0].path, field);
      }
      const notOffered = await s.api("POST", "/v1/quote", { body: { ...quoteBody, deviceId: "charger-los-001", tier: "24h" } });
      expectError(notOffered, 422, "invalid_parameters");
      assert.match(notOffered.body.error.message, /offers the tiers: 30m, 1h, 4h/);
    });

    it("answers tiers named like what every object inherits with 422, like any unknown tier", async () => {
      const s = stack();
      for (const tier of ["constructor", "__proto__", "toString", "hasOwnProperty", "valueOf"]) {
        const response = await s.api("POST", "/v1/quote", { body: { ...quoteBody, tier } });
        expectError(response, 422, "invalid_parameters");
        assert.equal(response.body.error.details[0].path, "tier", tier);
        assert.match(response.body.error.message, /tier must be one of: 30m, 1h, 4h, 24h/);
      }
    });

    it("answers a body built to make an escape scanner backtrack at once, without holding up other requests", async () => {
      const s = stack();
      // \u and then 256 Ki backslashes (not JSON: 400). The guard that looks for \u0000 and unpaired surrogates
      // in JSON bodies used to take time quadratic in such a run, a minute or more for this body, during which
      // the relayer answered nothing. Bounds are generous: the body now takes milliseconds.
      const body = `{"deviceId":"kiosk-nbo-001","chain":"local","token":"USDC","tier":"\\u${"\\".repeat(256 * 1024)}"}`;
      const timed = async <T>(request: Promise<T>) => {
        const started = performance.now();
        const response = await request;
        return { response, ms: performance.now() - started };
      };
      const hostile = timed(s.api("POST", "/v1/quote", { body }));
      await new Promise((resolve) => setTimeout(resolve, 50));
      const health = await timed(s.api("GET", "/v1/health"));
      const refused = await hostile;
      expectError(refused.response, 400, "invalid_body");
      assert.ok(refused.ms < 10_000, `the body was answered after ${Math.round(refused.ms)} ms`);
      assert.equal(health.response.status, 200);
      assert.ok(health.ms < 10_000, `GET /v1/health waited ${Math.round(health.ms)} ms`);
      // An odd run before u0000 is an escaped NUL, refused; an even one is text.
      const nul = await s.api("POST", "/v1/quote", { body: `{"tier":"${"\\".repeat(256 * 1024 + 1)}u0000"}` });
      expectError(nul, 422, "invalid_parameters");
      assert.match(nul.body.error.message, /NUL/);
      const text = await s.api("POST", "/v1/quote", { body: `{"tier":"${"\\".repeat(256 * 1024)}u0000"}` });
      expectError(text, 422, "invalid_parameters");
      assert.doesNotMatch(text.body.error.message, /NUL/);
    });

    it("rejects missing, extra and mistyped fields with 422 and a body that is not JSON with 400", async () => {
      const s = stack();
      expectError(await s.api("POST", "/v1/quote", { body: {} }), 422, "invalid_parameters");
      expectError(await s.api("POST", "/v1/quote", { body: { ...quoteBody, amountUsd: 0.01 } }), 422, "invalid_parameters");
      expectError(await s.api("POST", "/v1/quote", { body: { ...quoteBody, tier: 1 } }), 422, "invalid_parameters");
      expectError(await s.api("POST", "/v1/quote", { body: "[1,2", headers: { "content-type": "application/json" } }), 400, "invalid_body");
    });
  });

  describe("orders", () => {
    async function quote(s: Stack, body = quoteBody) {
      const response = await s.api("POST", "/v1/quote", { body });
      assert.equal(response.status, 201, response.text);
      return response.body;
    }

    it("creates a pending order whose voucher the quote signer signed for this router and chain", async () => {
      const s = stack();
      const q = await quote(s);
      const order = await s.api("POST", "/v1/orders", {
        body: { deviceId: q.deviceId, chain: "local", token: "USDC", amountUsd: 0.5, quoteId: q.quoteId },
      });
      assert.equal(order.status, 201);
      assert.equal(order.headers.get("location"), `/v1/orders/${order.body.id}`);
      assert.equal(order.body.status, "pending");
      assert.equal(order.body.amountUsd, 0.5);
      const details = order.body.paymentDetails;
      assert.equal(details.chainId, 31337);
      assert.equal(details.router.toLowerCase(), s.chain.record.contracts.PaymentRouter.address.toLowerCase());
      assert.equal(details.amount, "500000");
      assert.equal(details.order.amount, "500000");
      assert.equal(Number(details.order.expiry) * 1000, Date.parse(order.body.expiresAt) - (Date.parse(order.body.expiresAt) % 1000));

      const message = {
        orderId: BigInt(details.order.orderId),
        deviceId: details.order.deviceId as Hex,
        token: details.order.token as Address,
        split: details.order.split as Address,
        amount: BigInt(details.order.amount),
        expiry: BigInt(details.order.expiry),
      };
      const signer = await recoverTypedDataAddress({
        ...orderTypedData(31337, details.router, message),
        signature: details.voucherSignature,
      });
      assert.equal(signer, localAccount(1).address, "signed by the quote signer");

      const client = createPublicClient({ transport: http(s.chain.rpcUrl) });
      const digest = await client.readContract({
        address: details.router,
        abi: paymentRouterAbi,
        functionName: "hashOrder",
        args: [message],
      });
      assert.equal(details.permit.message.deadline, BigInt(digest).toString(), "the permit is bound to this order");
      assert.equal(details.permit.domain.verifyingContract.toLowerCase(), details.token.address.toLowerCase());
      assert.equal(details.relay.url, `${s.relayerUrl}/v1/orders/${order.body.id}/permit`);
      assert.equal(details.scanToPay.uri, `${s.relayerUrl}/pay/${order.body.id}`);

      const read = await s.api("GET", `/v1/orders/${order.body.id}`);
      assert.equal(read.status, 200);
      assert.equal(read.body.status, "pending");
      assert.equal(read.body.payment, null);
    });

    it("returns the same order when the same quote is ordered again", async () => {
      const s = stack();
      const q = await quote(s);
      const body = { deviceId: q.deviceId, chain: "local", token: "USDC", amountUsd: 0.5, quoteId: q.quoteId };
      const first = await s.api("POST", "/v1/orders", { body });
      const again = await s.api("POST", "/v1/orders", { body: { ...body, amountUsd: 0.5 } });
      assert.equal(first.status, 201);
      assert.equal(again.status, 200);
      assert.equal(again.body.id, first.body.id);
    });

    it("refuses an amount, device, chain or token that differs from the quote (the client cannot change the price)", async () => {
      const s = stack();
      const q = await quote(s);
      const base = { deviceId: q.deviceId, chain: "local", token: "USDC", amountUsd: 0.5, quoteId: q.quoteId };
      const cheaper = await s.api("POST", "/v1/orders", { body: { ...base, amountUsd: 0.01 } });
      expectError(cheaper, 422, "invalid_parameters");
      assert.deepEqual(
        cheaper.body.error.details.map((d: { path: string }) => d.path),
        ["amountUsd"],
      );
      const otherDevice = await s.api("POST", "/v1/orders", { body: { ...base, deviceId: "kiosk-nbo-002" } });
      expectError(otherDevice, 422, "invalid_parameters");
      assert.deepEqual(
        otherDevice.body.error.details.map((d: { path: string }) => d.path),
        ["deviceId"],
      );
      expectError(await s.api("POST", "/v1/orders", { body: { ...base, token: "DAI" } }), 422, "invalid_parameters");
      expectError(await s.api("POST", "/v1/orders", { body: { ...base, amountUsd: -1 } }), 422, "invalid_parameters");
      expectError(await s.api("POST", "/v1/orders", { body: { ...base, amountUsd: "0.5" } }), 422, "invalid_parameters");
    });

    it("names in the 422's message the field that differs from the quote, not the amount lock", async () => {
      const s = stack();
      const q = await quote(s);
      const base = { deviceId: q.deviceId, chain: "local", token: "USDC", amountUsd: 0.5, quoteId: q.quoteId };
      const otherDevice = await s.api("POST", "/v1/orders", { body: { ...base, deviceId: "kiosk-nbo-002" } });
      expectError(otherDevice, 422, "invalid_parameters");
      assert.match(otherDevice.body.error.message, /\bdeviceId\b/);
      assert.ok(otherDevice.body.error.message.includes(q.deviceId), otherDevice.body.error.message);
      assert.doesNotMatch(otherDevice.body.error.message, /amount/);
      const cheaper = await s.api("POST", "/v1/orders", { body: { ...base, token: "DAI", amountUsd: 0.01 } });
      expectError(cheaper, 422, "invalid_parameters");
      assert.match(cheaper.body.error.message, /\btoken\b.*\bamountUsd\b.*the amount is locked by the server/);
    });

    it("answers an unknown quote, and an unknown order id of any shape, with 404 on every order route", async () => {
      const s = stack();
      const body = { deviceId: "kiosk-nbo-001", chain: "local", token: "USDC", amountUsd: 0.5, quoteId: "qt_00000000000000000000000000" };
      expectError(await s.api("POST", "/v1/orders", { body }), 404, "not_found");
      const permit = { owner: `0x${"11".repeat(20)}`, signature: `0x${"22".repeat(65)}` };
      for (const id of ["ord_00000000000000000000000000", "ord_x", "nope", "constructor", "__proto__", "ORD_%20", "o".repeat(300)]) {
        expectError(await s.api("GET", `/v1/orders/${id}`), 404, "not_found");
        expectError(await s.api("GET", `/v1/orders/${id}/receipt`), 404, "not_found");
        expectError(await s.api("GET", `/v1/orders/${id}/events`), 404, "not_found");
        expectError(await s.api("POST", `/v1/orders/${id}/permit`, { body: permit }), 404, "not_found");
        expectError(await s.api("POST", `/v1/orders/${id}/cash`, { token: s.sample.agentKey }), 404, "not_found");
      }
      // A device id of a shape no device has is unknown too.
      const ticket = { category: "other", message: "Nothing works." };
      for (const id of ["no-such-device", "a%20b", "-x", "__proto__"]) {
        expectError(await s.api("POST", `/v1/devices/${id}/tickets`, { body: ticket }), 404, "not_found");
      }
    });

    it("has no receipt while unpaid: 409 order_unpaid", async () => {
      const s = stack();
      const q = await quote(s);
      const order = await s.api("POST", "/v1/orders", {
        body: { deviceId: q.deviceId, chain: "local", token: "USDC", amountUsd: 0.5, quoteId: q.quoteId },
      });
      expectError(await s.api("GET", `/v1/orders/${order.body.id}/receipt`), 409, "order_unpaid");
    });
  });
}
