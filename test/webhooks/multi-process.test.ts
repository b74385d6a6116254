// Two relayer processes on one PostgreSQL deliver webhooks together: every event is fanned out once and
// every attempt is made once (FOR UPDATE SKIP LOCKED and a lease), whichever process takes it; a device
// change seen by both processes' watchers is one event.
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { withPostgres } from "../support/databases.ts";
import { payOrder } from "../support/pay.ts";
import { type Stack, startStack } from "../support/stack.ts";
import { type WebhookReceiver, startWebhookReceiver } from "../support/webhook-receiver.ts";
import { deliveryLog, login, sendTest, sleep, subscribe } from "./support.ts";

describe("webhook delivery with two relayer processes on one PostgreSQL", { concurrency: false }, () => {
  let stack: Stack;
  let second: { url: string };
  let receiver: WebhookReceiver;
  let token: string;

  before(
    async () => {
      receiver = await startWebhookReceiver();
      stack = await startStack({
        label: "webhooks-pg",
        database: "postgres",
        relayerEnv: {
          WEBHOOK_RETRY_BASE_MS: "20",
          WEBHOOK_TIMEOUT_MS: "1500",
          WEBHOOK_CONCURRENCY: "4",
          DEVICE_STATUS_POLL_MS: "150",
          // 60 test pings at once (the route's per-tenant limit is tested in tenant-fairness.test.ts).
          WEBHOOK_TEST_PINGS_PER_MINUTE: "1000",
        },
      });
      second = await stack.startExtraRelayer();
      token = await login(stack);
    },
    { timeout: 240_000 },
  );
  after(async () => {
    await stack?.stop();
    await receiver?.close();
  });

  async function query<T>(text: string): Promise<T[]> {
    const db = stack.relayerOptions.database;
    assert.equal(db.kind, "postgres");
    if (db.kind !== "postgres") return [];
    return withPostgres(db.url, async (client) => {
      await client.query(`set search_path to "${db.schema}"`);
      return (await client.query(text)).rows as T[];
    });
  }

  it("makes every attempt once: 60 events, each failing once then succeeding, across both processes", async () => {
    const sub = await subscribe(stack, token, receiver, "/many", ["*"]);
    // The first attempt of every delivery fails, the second succeeds: both claims are contended.
    receiver.respond("/many", (d, previous) => (previous.some((p) => p.envelope?.id === d.envelope?.id) ? 200 : 500));
    const relayers = [stack.relayerUrl, second.url];
    const pings = await Promise.all(Array.from({ length: 60 }, (_, i) => sendTest(stack, token, sub.id, relayers[i % 2])));
    assert.equal(new Set(pings).size, 60);
    const { order } = await payOrder(stack, { until: "powered_on" });

    const deadline = Date.now() + 30_000;
    let log = await deliveryLog(stack, token, sub.id);
    const isDone = () =>
      log.filter((d) => d.eventType === "test.ping" && d.status === "succeeded").length === 60 &&
      ["payment.succeeded", "payment.confirmed", "payment.split", "split.settled", "revenue.recorded", "device.powered_on"].every((t) =>
        log.some((d) => d.eventType === t && d.status === "succeeded"),
      );
    while (!isDone() && Date.now() < deadline) {
      await sleep(200);
      log = await deliveryLog(stack, token, sub.id);
    }
    assert.ok(isDone(), `not all delivered: ${JSON.stringify(log.filter((d) => d.status !== "succeeded"))}`);
    // Events can still come after the ones awaited (the device's session ends a moment after it powered on:
    // device.powered_off): read the log again until it stops growing and every delivery in it has succeeded,
    // so that it and what the receiver got cover the same events.
    const settleBy = Date.now() + 15_000;
    for (let length = -1; (log.length !== length || log.some((d) => d.status !== "succeeded")) && Date.now() < settleBy;) {
      length = log.length;
      await sleep(500);
      log = await deliveryLog(stack, token, sub.id);
    }

    const got = receiver.deliveries("/many");
    const byId = new Map<string, number[]>();
    for (const d of got) {
      assert.ok(d.standardOk && d.serviceOk, d.verifyError);
      byId.set(d.envelope!.id, [...(byId.get(d.envelope!.id) ?? []), d.answered ?? 0]);
    }
    for (const [id, answers] of byId) assert.deepEqual(answers, [500, 200], `delivery ${id}`);
    assert.equal(byId.size, log.length, "one delivery per event");
    assert.ok(log.every((d) => d.attempts === 2 && d.attemptLog.length === 2));
    assert.ok(
      log.some((d) => d.eventType === "payment.succeeded" && got.find((g) => g.envelope!.id === d.id)!.envelope!.data.orderId === order.id),
    );

    // Each (delivery, attempt) is one row, and both processes made attempts.
    const perAttempt = await query<{ n: string }>(
      "select count(*) as n from webhook_attempts group by delivery_id, attempt having count(*) > 1",
    );
    assert.deepEqual(perAttempt, []);
    const workers = await query<{ worker: string; n: string }>("select worker, count(*) as n from webhook_attempts group by worker");
    console.error(`# attempts per process: ${workers.map((w) => `${w.worker}=${w.n}`).join(", ")}`);
    assert.equal(workers.length, 2, "both relayer processes delivered");
    const fannedTwice = await query<{ n: string }>(
      "select count(*) as n from webhook_deliveries group by event_id, subscription_id having count(*) > 1",
    );
    assert.deepEqual(fannedTwice, []);
  });

  it("records a device change once although both processes watch the device cloud", async () => {
    const sub = await subscribe(stack, token, receiver, "/devices", ["device.*"]);
    const device = stack.sample.devices[3].id;
    const put = (online: boolean) =>
      fetch(`${stack.deviceCloudUrl}/sim/devices/${device}`, {
        method: "PUT",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ online }),
      });
    await put(false);
    await receiver.waitFor((d) => d.path === "/devices" && d.envelope?.type === "device.offline", 10_000, "device.offline");
    await put(true);
    await receiver.waitFor((d) => d.path === "/devices" && d.envelope?.type === "device.online", 10_000, "device.online");
    await sleep(1_000);
    const changes = receiver.deliveries("/devices").filter((d) => d.envelope?.data?.deviceId === device);
    assert.deepEqual(
      changes.map((d) => d.envelope!.type),
      ["device.offline", "device.online"],
    );
    const events = await query<{ type: string; data: unknown; created_at: Date }>(
      `select type, data, created_at from webhook_events where type in ('device.offline', 'device.online') and data->>'deviceId' = '${device}' order by created_at`,
    );
    assert.deepEqual(
      events.map((e) => e.type),
      ["device.offline", "device.online"],
      JSON.stringify(events),
    );
    const log = await deliveryLog(stack, token, sub.id);
    assert.equal(log.filter((d) => d.eventType === "device.offline" || d.eventType === "device.online").length, 2);
  });
});
