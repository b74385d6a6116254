// GET /v1/devices, GET /v1/devices/{id} (tenant-scoped) and GET /v1/devices/{id}/status (public, proxied).
import assert from "node:assert/strict";
import { before, describe, it } from "node:test";
import { keccak256, toHex } from "viem";
import type { Stack } from "../../support/stack.ts";
import { expectError } from "./expect.ts";

export const OTHER_TENANT = {
  tenant: { id: "tn_other", name: "Other fleet" },
  apiKeys: [
    { name: "other key", role: "developer" },
    { name: "other agent key", role: "agent" },
  ],
  devices: [{ id: "other-001", name: "Other device", deviceClass: "solar-kiosk", region: "UG-102", tiers: { "1h": 600_000 } }],
  participants: [{ name: "Other owner", address: "0x000000000000000000000000000000000000dEaD" }],
};

export function deviceCases(stack: () => Stack, other: () => { key: string; participantId: string }) {
  describe("devices", () => {
    it("lists the tenant's devices in pages, by id, and filters by region and class", async () => {
      const s = stack();
      const first = await s.api("GET", "/v1/devices?limit=2", { token: s.sample.developerKey });
      assert.equal(first.status, 200);
      assert.equal(first.body.data.length, 2);
      const second = await s.api("GET", `/v1/devices?limit=2&cursor=${first.body.nextCursor}`, { token: s.sample.developerKey });
      const third = await s.api("GET", `/v1/devices?limit=2&cursor=${second.body.nextCursor}`, { token: s.sample.developerKey });
      const ids = [...first.body.data, ...second.body.data, ...third.body.data].map((d: { id: string }) => d.id);
      assert.deepEqual(ids, s.sample.devices.map((d) => d.id).sort());
      assert.equal(third.body.nextCursor, null);
      assert.ok(!(ids as string[]).includes("other-001"), "another tenant's device is not listed");

      const kenya = await s.api("GET", "/v1/devices?region=KE-30", { token: s.sample.developerKey });
      assert.deepEqual(
        kenya.body.data.map((d: { id: string }) => d.id),
        ["kiosk-nbo-001", "kiosk-nbo-002"],
      );
      const chargers = await s.api("GET", "/v1/devices?deviceClass=ebike-charger", { token: s.sample.developerKey });
      assert.deepEqual(
        chargers.body.data.map((d: { region: string }) => d.region),
        ["NG-LA", "NG-LA"],
      );
    });

    it("returns one device with its priced tiers and its on-chain id", async () => {
      const s = stack();
      const device = await s.api("GET", "/v1/devices/kiosk-nbo-001", { token: s.sample.developerKey });
      assert.equal(device.status, 200);
      assert.equal(device.body.chainDeviceId, keccak256(toHex("kiosk-nbo-001")));
      assert.deepEqual(device.body.tiers[0], { tier: "30m", durationSeconds: 1800, priceUsd: 0.3 });
      assert.deepEqual(
        device.body.tiers.map((t: { tier: string }) => t.tier),
        ["30m", "1h", "4h", "24h"],
      );
    });

    it("answers another tenant's device with 404, as if it did not exist", async () => {
      const s = stack();
      expectError(await s.api("GET", "/v1/devices/other-001", { token: s.sample.developerKey }), 404, "not_found");
      expectError(await s.api("GET", "/v1/devices/kiosk-nbo-001", { token: other().key }), 404, "not_found");
      const theirs = await s.api("GET", "/v1/devices/other-001", { token: other().key });
      assert.equal(theirs.status, 200);
    });

    it("needs an API key and validates the query and the id", async () => {
      const s = stack();
      expectError(await s.api("GET", "/v1/devices"), 401, "unauthorized");
      expectError(await s.api("GET", "/v1/devices/kiosk-nbo-001"), 401, "unauthorized");
      expectError(await s.api("GET", "/v1/devices?limit=0", { token: s.sample.developerKey }), 422, "invalid_parameters");
      expectError(await s.api("GET", "/v1/devices?limit=101", { token: s.sample.developerKey }), 422, "invalid_parameters");
      expectError(await s.api("GET", "/v1/devices?color=red", { token: s.sample.developerKey }), 422, "invalid_parameters");
      // An id of any shape is looked up: one that names no device is 404, like any unknown id.
      expectError(await s.api("GET", "/v1/devices/%27%3B%20drop%20table", { token: s.sample.developerKey }), 404, "not_found");
    });
  });

  describe("device status (public)", () => {
    before(async () => {
      // The cold room answers slower than the relayer waits (DEVICE_CLOUD_TIMEOUT_MS=500 in this stack).
      const s = stack();
      await fetch(`${s.deviceCloudUrl}/sim/devices/cold-dar-001`, {
        method: "PUT",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ latencyMs: 1_500 }),
      });
      await fetch(`${s.deviceCloudUrl}/sim/devices/charger-los-002`, {
        method: "PUT",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ online: false }),
      });
    });

    it("proxies the live state without a key", async () => {
      const s = stack();
      const online = await s.api("GET", "/v1/devices/kiosk-nbo-002/status");
      assert.equal(online.status, 200);
      assert.equal(online.body.online, true);
      assert.equal(online.body.deviceId, "kiosk-nbo-002");
      const offline = await s.api("GET", "/v1/devices/charger-los-002/status");
      assert.equal(offline.body.online, false);
    });

    it("answers 504 device_timeout when the device cloud is slower than the timeout", async () => {
      const s = stack();
      const started = Date.now();
      expectError(await s.api("GET", "/v1/devices/cold-dar-001/status"), 504, "device_timeout");
      assert.ok(Date.now() - started < 1_400, "the relayer gave up at its timeout");
    });

    it("answers 404 for a device that is not registered, whatever the shape of its id", async () => {
      const s = stack();
      expectError(await s.api("GET", "/v1/devices/no-such-device/status"), 404, "not_found");
      for (const id of ["a%20b", "-x", "constructor", "__proto__", "x".repeat(300)]) {
        expectError(await s.api("GET", `/v1/devices/${id}/status`), 404, "not_found");
      }
    });
  });
}
