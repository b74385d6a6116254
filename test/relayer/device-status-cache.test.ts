// GET /v1/devices/{id}/status is public and each answer used to be one call to the device cloud: one address
// could make thousands of calls a second. The device cloud's answer is now shared per device for
// DEVICE_STATUS_TTL_MS (one call at a time per device, however many requests wait for it) and the route is
// rate-limited per client address. First the cache itself (relayer/src/devices/device-cloud.ts), then the
// route end to end: the relayer reaches the device-cloud simulator through a proxy here that counts the calls
// per path.
import assert from "node:assert/strict";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { after, before, describe, it } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";
import { type DeviceCloudStatus, createDeviceStatusCache } from "../../relayer/src/devices/device-cloud.ts";
import { DEVICE_STATUS_TTL_MS } from "../../relayer/src/v1/devices.ts";
import { type Stack, startStack } from "../support/stack.ts";

function statusOf(deviceId: string, online = true): DeviceCloudStatus {
  return { deviceId, online, poweredOn: false, powerW: 100, session: null, lifetimeEnergyWh: 0 };
}

/** A device cloud in the test process: answers when `release` is called, counts calls per device. */
function pendingCloud() {
  const calls = new Map<string, number>();
  const waiting: Array<{ id: string; resolve: (s: DeviceCloudStatus | undefined) => void; reject: (e: Error) => void }> = [];
  return {
    calls,
    fetch(id: string): Promise<DeviceCloudStatus | undefined> {
      calls.set(id, (calls.get(id) ?? 0) + 1);
      return new Promise((resolve, reject) => waiting.push({ id, resolve, reject }));
    },
    release(answer: (id: string) => DeviceCloudStatus | undefined | Error) {
      for (const w of waiting.splice(0)) {
        const a = answer(w.id);
        if (a instanceof Error) w.reject(a);
        else w.resolve(a);
      }
    },
  };
}

describe("device status cache", () => {
  it("makes one device-cloud call for any number of concurrent requests for a device, and shares the answer", async () => {
    const cloud = pendingCloud();
    const cache = createDeviceStatusCache((id) => cloud.fetch(id), { ttlMs: 60_000, maxEntries: 100 });
    const asks = [...Array.from({ length: 500 }, () => cache.get("a")), ...Array.from({ length: 5 }, () => cache.get("b"))];
    assert.deepEqual(
      [...cloud.calls],
      [
        ["a", 1],
        ["b", 1],
      ],
    );
    cloud.release((id) => statusOf(id));
    const answers = await Promise.all(asks);
    assert.ok(answers.slice(0, 500).every((a) => a.status?.deviceId === "a" && a.checkedAt === answers[0]!.checkedAt));
    assert.equal(answers[500]!.status?.deviceId, "b");
    // Answered: later requests within the time to live are served from it.
    const again = await cache.get("a");
    assert.equal(again.checkedAt, answers[0]!.checkedAt);
    assert.deepEqual(
      [...cloud.calls],
      [
        ["a", 1],
        ["b", 1],
      ],
    );
  });

  it("calls again once the answer is older than its time to live; keeps 'unknown device' like any answer", async () => {
    let calls = 0;
    const cache = createDeviceStatusCache(
      async (id) => {
        calls++;
        return id === "ghost" ? undefined : statusOf(id, calls % 2 === 1);
      },
      { ttlMs: 150, maxEntries: 100 },
    );
    const first = await cache.get("a");
    assert.equal((await cache.get("a")).checkedAt, first.checkedAt);
    assert.equal(calls, 1);
    await sleep(250);
    const second = await cache.get("a");
    assert.equal(calls, 2);
    assert.ok(second.checkedAt > first.checkedAt);
    assert.equal(second.status?.online, false, "the new answer, not the old one");
    assert.equal((await cache.get("ghost")).status, undefined);
    assert.equal((await cache.get("ghost")).status, undefined);
    assert.equal(calls, 3);
  });

  it("does not keep a failure: every request that shared the failed call gets it, the next one calls again", async () => {
    const cloud = pendingCloud();
    const cache = createDeviceStatusCache((id) => cloud.fetch(id), { ttlMs: 60_000, maxEntries: 100 });
    const asks = Array.from({ length: 10 }, () =>
      cache.get("a").then(
        () => "ok",
        (e: Error) => e.message,
      ),
    );
    cloud.release(() => new Error("device cloud down"));
    assert.deepEqual(
      await Promise.all(asks),
      Array.from({ length: 10 }, () => "device cloud down"),
    );
    assert.equal(cloud.calls.get("a"), 1);
    const next = cache.get("a");
    assert.equal(cloud.calls.get("a"), 2);
    cloud.release((id) => statusOf(id));
    assert.equal((await next).status?.deviceId, "a");
  });

  it("holds at most maxEntries devices, dropping the oldest", async () => {
    let calls = 0;
    const cache = createDeviceStatusCache(
      async (id) => {
        calls++;
        return statusOf(id);
      },
      { ttlMs: 60_000, maxEntries: 3 },
    );
    for (const id of ["a", "b", "c", "d", "e"]) await cache.get(id);
    assert.equal(cache.size, 3);
    assert.equal(calls, 5);
    await cache.get("e"); // held
    assert.equal(calls, 5);
    await cache.get("a"); // dropped: called again
    assert.equal(calls, 6);
    assert.equal(cache.size, 3);
  });
});

/** An HTTP proxy in front of the device cloud counting the requests per method and path. */
async function countingProxy(target: () => string) {
  const counts = new Map<string, number>();
  const server = http.createServer((req, res) => {
    const key = `${req.method} ${req.url}`;
    counts.set(key, (counts.get(key) ?? 0) + 1);
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      const body = chunks.length > 0 ? Buffer.concat(chunks) : undefined;
      fetch(`${target()}${req.url}`, {
        method: req.method,
        headers: req.headers["content-type"] ? { "content-type": req.headers["content-type"] } : undefined,
        body: req.method === "GET" || req.method === "HEAD" ? undefined : body,
      })
        .then(async (upstream) => {
          res.writeHead(upstream.status, { "content-type": upstream.headers.get("content-type") ?? "application/json" });
          res.end(Buffer.from(await upstream.arrayBuffer()));
        })
        .catch(() => {
          res.writeHead(502);
          res.end();
        });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    count: (key: string) => counts.get(key) ?? 0,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

describe("GET /v1/devices/{id}/status through the relayer", { concurrency: false }, () => {
  let stack: Stack;
  let proxy: Awaited<ReturnType<typeof countingProxy>>;
  const device = "kiosk-nbo-002";

  before(
    async () => {
      stack = await startStack({ label: "status-cache", database: "pglite", indexer: false });
      proxy = await countingProxy(() => stack.deviceCloudUrl);
      // The device answers after 8 s, so that concurrent requests find the call still under way even where a
      // loaded 2-core machine spreads a burst of 40 over several seconds; the relayer waits up to 20 s for it.
      await fetch(`${stack.deviceCloudUrl}/sim/devices/${device}`, {
        method: "PUT",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ latencyMs: 8_000 }),
      });
      await stack.restartRelayer({ env: { DEVICE_CLOUD_URL: proxy.url, DEVICE_CLOUD_TIMEOUT_MS: "20000" } });
    },
    { timeout: 240_000 },
  );
  after(async () => {
    await stack?.stop();
    await proxy?.close();
  });

  it("answers a burst of concurrent requests for one device with one device-cloud call", async () => {
    const path = `GET /devices/${device}`;
    const responses = await Promise.all(Array.from({ length: 40 }, () => stack.api("GET", `/v1/devices/${device}/status`)));
    assert.deepEqual(
      responses.map((r) => r.status),
      responses.map(() => 200),
    );
    const checked = new Set(responses.map((r) => r.body.checkedAt as string));
    // 40 requests from one client arrive within the 8 s the device takes to answer (or, later, within the
    // answer's time to live): they share its one call. Before the cache, each one made its own.
    assert.equal(proxy.count(path), 1, `device-cloud calls: ${proxy.count(path)}`);
    assert.equal(checked.size, 1, "one answer, shared");
    assert.ok(responses.every((r) => r.body.deviceId === device && r.body.online === true));

    // Once the answer is older than its time to live, the next request asks the device cloud again.
    await sleep(DEVICE_STATUS_TTL_MS + 500);
    const later = await stack.api("GET", `/v1/devices/${device}/status`);
    assert.equal(later.status, 200);
    assert.equal(proxy.count(path), 2);
    assert.ok(Date.parse(later.body.checkedAt) > Date.parse([...checked][0]!), "a fresh answer");
  });

  it("rate-limits one client address: 429 rate_limited with retry-after once its burst is spent", async () => {
    const path = `GET /devices/${device}`;
    const before = proxy.count(path);
    const responses = await Promise.all(Array.from({ length: 150 }, () => stack.api("GET", `/v1/devices/${device}/status`)));
    const limited = responses.filter((r) => r.status === 429);
    assert.ok(limited.length > 0, "some requests of the burst are refused");
    assert.ok(limited.every((r) => r.body.error?.code === "rate_limited" && Number(r.headers.get("retry-after")) >= 1));
    assert.ok(
      responses.every((r) => r.status === 200 || r.status === 429),
      `statuses: ${[...new Set(responses.map((r) => r.status))].join(", ")}`,
    );
    assert.ok(proxy.count(path) - before <= 2, `device-cloud calls: ${proxy.count(path) - before}`);
  });
});
