// GET /v1/revenue/splits, GET /v1/participants/{id}/earnings, GET /v1/public/stats, GET /v1/impact.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { createOrder, pay, waitForOrder } from "../../support/pay.ts";
import type { Stack } from "../../support/stack.ts";
import { expectError } from "./expect.ts";
import { getAddress } from "viem";

async function paidOrder(s: Stack, deviceId: string, tier: string) {
  const order = await createOrder(s, deviceId, tier);
  await pay(s, order, "relayed-permit");
  return waitForOrder(s, order.id, (o) => o.status === "success" && o.device.poweredOnAt !== null);
}

export function revenueCases(stack: () => Stack, other: () => { key: string; participantId: string }) {
  describe("revenue and earnings", () => {
    it("lists the tenant's settlements newest first, with legs summing to the gross, in pages", async () => {
      const s = stack();
      const a = await paidOrder(s, "charger-los-001", "30m");
      const b = await paidOrder(s, "charger-los-001", "1h");
      const page = await s.api("GET", "/v1/revenue/splits?limit=1&deviceId=charger-los-001", { token: s.sample.developerKey });
      assert.equal(page.status, 200);
      assert.equal(page.body.data.length, 1);
      assert.equal(page.body.data[0].orderId, b.id);
      const next = await s.api("GET", `/v1/revenue/splits?limit=1&deviceId=charger-los-001&cursor=${page.body.nextCursor}`, {
        token: s.sample.developerKey,
      });
      assert.equal(next.body.data[0].orderId, a.id);
      for (const item of [...page.body.data, ...next.body.data]) {
        const sum = item.legs.reduce((n: bigint, l: { amount: string }) => n + BigInt(l.amount), 0n);
        assert.equal(sum, BigInt(item.gross));
        assert.deepEqual(
          item.legs.map((l: { leg: string }) => l.leg),
          ["assetOwner", "operator", "protocol"],
        );
        assert.equal(item.token.symbol, "USDC");
      }
      assert.equal(page.body.data[0].gross, "700000");
      assert.equal(page.body.data[0].grossUsd, 0.7);
      assert.equal(page.body.data[0].legs[0].recipient, getAddress(s.sample.participants[0].address), "EIP-55 checksummed");
    });

    it("shows another tenant none of this tenant's splits and rejects bad queries", async () => {
      const s = stack();
      const theirs = await s.api("GET", "/v1/revenue/splits", { token: other().key });
      assert.equal(theirs.status, 200);
      assert.deepEqual(theirs.body.data, []);
      expectError(await s.api("GET", "/v1/revenue/splits"), 401, "unauthorized");
      expectError(await s.api("GET", "/v1/revenue/splits?limit=abc", { token: s.sample.developerKey }), 422, "invalid_parameters");
      expectError(
        await s.api("GET", "/v1/revenue/splits?cursor=ord_00000000000000000000000000", { token: s.sample.developerKey }),
        422,
        "invalid_parameters",
      );
    });

    it("reports a participant's earnings by id or by address, equal to the on-chain legs it received", async () => {
      const s = stack();
      const [owner] = s.sample.participants;
      const byId = await s.api("GET", `/v1/participants/${owner.id}/earnings`, { token: s.sample.developerKey });
      assert.equal(byId.status, 200);
      const byAddress = await s.api("GET", `/v1/participants/${owner.address}/earnings`, { token: s.sample.developerKey });
      assert.deepEqual(byAddress.body, byId.body);
      // One entry per token the owner was paid in (USDC; USDT where a device of its was paid in USDT).
      const usdc = byId.body.earnings.find((e: { token: { symbol: string } }) => e.token.symbol === "USDC");
      assert.ok(usdc, JSON.stringify(byId.body.earnings));
      assert.equal(usdc.withdrawn, "0");
      assert.equal(usdc.claimable, usdc.credited);
      assert.equal(usdc.byLeg.assetOwner, usdc.credited);

      const splits = await s.api("GET", "/v1/revenue/splits?limit=100", { token: s.sample.developerKey });
      // The sample devices belong to several asset owners: this one's legs are those naming it.
      const fromSplits = splits.body.data
        .filter(
          (item: { token: { symbol: string }; legs: Array<{ recipient: string }> }) =>
            item.token.symbol === "USDC" && item.legs[0].recipient.toLowerCase() === owner.address.toLowerCase(),
        )
        .reduce((n: bigint, item: { legs: Array<{ amount: string }> }) => n + BigInt(item.legs[0].amount), 0n);
      assert.ok(fromSplits > 0n, "the owner was paid");
      assert.equal(BigInt(usdc.credited), fromSplits, "credited = sum of the USDC asset-owner legs naming the owner");
    });

    it("answers another tenant's participant and an id of any other shape with 404", async () => {
      const s = stack();
      expectError(
        await s.api("GET", `/v1/participants/${other().participantId}/earnings`, { token: s.sample.developerKey }),
        404,
        "not_found",
      );
      expectError(await s.api("GET", `/v1/participants/${s.sample.participants[0].id}/earnings`, { token: other().key }), 404, "not_found");
      expectError(await s.api("GET", "/v1/participants/abc/earnings", { token: s.sample.developerKey }), 404, "not_found");
      expectError(await s.api("GET", `/v1/participants/${s.sample.participants[0].id}/earnings`), 401, "unauthorized");
    });
  });

  describe("public statistics and impact", () => {
    it("has exactly the fields of the interface, and they move with a payment and its metered session", async () => {
      const s = stack();
      const before = await s.api("GET", "/v1/public/stats");
      assert.equal(before.status, 200);
      assert.deepEqual(Object.keys(before.body).sort(), ["co2AvoidedKg", "devices", "energyKwh", "onchainVolumeUsd", "powerSessions"]);
      assert.deepEqual(Object.keys(before.body.devices).sort(), ["online", "total"]);
      assert.equal(before.body.devices.total, s.sample.devices.length + 1, "every registered device, all tenants");

      // One hour at 120 W is 0.12 kWh; the simulator runs 3,600 times faster than real time.
      const order = await paidOrder(s, "kiosk-nbo-002", "1h");
      await new Promise((resolve) => setTimeout(resolve, 5_500)); // stats are cached 5 s; the session lasts 1 s
      const after = await s.api("GET", "/v1/public/stats");
      assert.equal(after.body.powerSessions, before.body.powerSessions + 1);
      assert.equal(Math.round((after.body.onchainVolumeUsd - before.body.onchainVolumeUsd) * 1e6), 500_000);
      const receipt = await s.api("GET", `/v1/orders/${order.id}/receipt`);
      const sessionWh = receipt.body.device.energyWh;
      assert.ok(sessionWh >= 110 && sessionWh <= 125, `session energy ${sessionWh} Wh`);
      // Other sessions of earlier tests may have ended in the meantime too: at least this one was added.
      const energy = Math.round((after.body.energyKwh - before.body.energyKwh) * 1000);
      assert.ok(energy >= sessionWh, `energy grew by ${energy} Wh`);
      assert.equal(Math.round(after.body.co2AvoidedKg * 1000), Math.round(after.body.energyKwh * 0.8 * 1000));
      assert.ok(after.headers.get("cache-control")?.includes("max-age=5"));
    });

    it("breaks impact down by region, with totals that add up", async () => {
      const s = stack();
      const impact = await s.api("GET", "/v1/impact");
      assert.equal(impact.status, 200);
      const regions = impact.body.regions.map((r: { region: string }) => r.region);
      assert.deepEqual(regions, ["KE-30", "NG-LA", "TZ-02", "UG-102"]);
      const sum = (key: string) => impact.body.regions.reduce((n: number, r: Record<string, number>) => n + r[key], 0);
      assert.equal(impact.body.powerSessions, sum("powerSessions"));
      assert.equal(impact.body.activeDevices, sum("activeDevices"));
      assert.ok(impact.body.regions.find((r: { region: string }) => r.region === "KE-30").powerSessions > 0);
      // Neither route takes a query parameter (the same 422 as every route's validation; an empty query is none).
      const refused = await s.api("GET", "/v1/impact?region=KE-30");
      expectError(refused, 422, "invalid_parameters");
      assert.deepEqual(refused.body.error.details, [{ message: 'Unrecognized key: "region"' }]);
      expectError(await s.api("GET", "/v1/public/stats?window=7d"), 422, "invalid_parameters");
      assert.equal((await s.api("GET", "/v1/public/stats?")).status, 200);
    });
  });
}
