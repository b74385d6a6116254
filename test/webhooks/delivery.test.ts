// Webhook delivery end to end, on the embedded PGlite: the whole system (chain, device cloud, indexer,
// relayer) and a real HTTP receiver on loopback that verifies every delivery's signatures with
// sdk/src/webhooks.ts. Every event type comes from the real flow: a paid order, a device going offline and
// online, a customer's ticket, an order left to expire, the Send test route. Then the delivery policy:
// retries with backoff and the same id, exactly 5 attempts, a timeout, 410, redelivery by hand, and a
// relayer killed with SIGKILL between a payment and its delivery.
import assert from "node:assert/strict";
import { createHmac } from "node:crypto";
import { after, before, describe, it } from "node:test";
import type { z } from "@hono/zod-openapi";
import { EVENT_CATALOGUE, EVENT_TYPES } from "../../relayer/src/webhooks/catalogue.ts";
import { type OrderBody, createOrder, payOrder, waitForOrder } from "../support/pay.ts";
import { type Stack, startStack } from "../support/stack.ts";
import { type Delivery, type WebhookReceiver, startWebhookReceiver } from "../support/webhook-receiver.ts";
import { deliveryLog, login, sendTest, sleep, subscribe, waitForDelivery } from "./support.ts";

const TIMEOUT_MS = 1_500;
const RETRY_BASE_MS = 20;

describe("webhook delivery (pglite)", { concurrency: false }, () => {
  let stack: Stack;
  let receiver: WebhookReceiver;
  let token: string;
  let otherToken: string;
  let all: { id: string; secret: string };
  let payments: { id: string };
  let unpaid: OrderBody;

  before(
    async () => {
      receiver = await startWebhookReceiver();
      stack = await startStack({
        label: "webhooks",
        database: "pglite",
        relayerEnv: {
          WEBHOOK_RETRY_BASE_MS: String(RETRY_BASE_MS),
          WEBHOOK_TIMEOUT_MS: String(TIMEOUT_MS),
          DEVICE_STATUS_POLL_MS: "200",
          ORDER_TTL_SECONDS: "30",
          EXPIRY_GRACE_SECONDS: "1",
        },
      });
      await stack.seed({
        tenant: { id: "tn_webhooks_other", name: "Other tenant" },
        user: { email: "other@webhooks.example", password: "other-password-123", name: "Other" },
      });
      token = await login(stack);
      otherToken = await login(stack, "other@webhooks.example", "other-password-123");
      all = await subscribe(stack, token, receiver, "/all", ["*"]);
      payments = await subscribe(stack, token, receiver, "/payments", ["payment.*"]);
      // Left unpaid: it expires while the other tests run (payment.expired).
      unpaid = await createOrder(stack, stack.sample.devices[2].id, "30m");
    },
    { timeout: 240_000 },
  );
  after(async () => {
    await stack?.stop();
    await receiver?.close();
  });

  /** Every delivery seen so far carries both valid signatures and its documented data. */
  function assertWellFormed(d: Delivery) {
    assert.ok(d.standardOk, `webhook-signature of ${d.envelope?.type} ${d.envelope?.id}: ${d.verifyError}`);
    assert.ok(d.serviceOk, `x-service-signature of ${d.envelope?.type} ${d.envelope?.id}: ${d.verifyError}`);
    assert.equal(d.headers["content-type"], "application/json");
    const envelope = d.envelope!;
    assert.deepEqual(Object.keys(envelope), ["type", "data", "id"]);
    assert.equal(d.headers["x-service-event"], envelope.type);
    assert.equal(d.headers["webhook-id"], envelope.id);
    assert.match(envelope.id, /^msg_[0-9A-Z]{26}$/);
    const entry = EVENT_CATALOGUE[envelope.type as keyof typeof EVENT_CATALOGUE];
    assert.ok(entry, `${envelope.type} is a documented event type`);
    const parsed = entry.data.strict().safeParse(envelope.data);
    assert.ok(
      parsed.success,
      `${envelope.type} data matches its schema: ${JSON.stringify(parsed.error?.issues)} in ${JSON.stringify(envelope.data)}`,
    );
  }

  const ofType =
    (path: string, type: string, match: (data: Record<string, unknown>) => boolean = () => true) =>
    (d: Delivery) =>
      d.path === path && d.envelope?.type === type && match(d.envelope.data);

  it("refuses unsafe callback URLs and invalid event types, and needs the portal JWT or a developer key", async () => {
    for (const url of [
      "https://10.0.0.1/hook",
      "http://example.com/hook",
      "https://169.254.169.254/",
      "https://user:pw@example.com/hook",
      "https://printer.local/x",
    ]) {
      const response = await stack.api("POST", "/v1/webhooks/subscriptions", { token, body: { url, eventTypes: ["payment.succeeded"] } });
      assert.equal(response.status, 422, `${url}: ${response.text}`);
      assert.equal(response.body.error.details[0].path, "url");
    }
    const badType = await stack.api("POST", "/v1/webhooks/subscriptions", {
      token,
      body: { url: receiver.url("/x"), eventTypes: ["payment.nope"] },
    });
    assert.equal(badType.status, 422);
    const family = await stack.api("POST", "/v1/webhooks/subscriptions", {
      token,
      body: { url: receiver.url("/x"), eventTypes: ["payment"] },
    });
    assert.equal(family.status, 422, "a family is written payment.*");
    assert.equal((await stack.api("GET", "/v1/webhooks/subscriptions")).status, 401);
    // A developer key manages subscriptions too (test/webhooks/subscriptions-by-api-key.test.ts); an agent key may not.
    assert.equal((await stack.api("GET", "/v1/webhooks/subscriptions", { token: stack.sample.developerKey })).status, 200);
    assert.equal((await stack.api("GET", "/v1/webhooks/subscriptions", { token: stack.sample.agentKey })).status, 403);
  });

  it("accepts every event name of the interface in a subscription, test.ping included", async () => {
    const ping = await stack.api("POST", "/v1/webhooks/subscriptions", {
      token,
      body: { url: receiver.url("/ping"), eventTypes: ["test.ping", "test.*"] },
    });
    assert.equal(ping.status, 201, ping.text);
    receiver.setSecret("/ping", ping.body.secret);
    assert.deepEqual(ping.body.eventTypes, ["test.ping", "test.*"]);
    const updated = await stack.api("PATCH", `/v1/webhooks/subscriptions/${ping.body.id}`, {
      token,
      body: { eventTypes: [...EVENT_TYPES] },
    });
    assert.equal(updated.status, 200, updated.text);
    assert.deepEqual([...updated.body.eventTypes].sort(), [...EVENT_TYPES].sort());
    assert.equal((await stack.api("DELETE", `/v1/webhooks/subscriptions/${ping.body.id}`, { token })).status, 204);
    const types = await stack.api("GET", "/v1/webhooks/event-types");
    assert.ok(
      types.body.data.every((t: { subscribable: boolean }) => t.subscribable),
      "every type can be subscribed to",
    );
    assert.ok(types.body.families.includes("test.*"));
  });

  it("answers an unknown subscription or delivery id of any shape with 404", async () => {
    for (const id of ["whs_00000000000000000000000000", "whs_x", "constructor", "__proto__"]) {
      assert.equal((await stack.api("GET", `/v1/webhooks/subscriptions/${id}`, { token })).status, 404, id);
      assert.equal((await stack.api("POST", `/v1/webhooks/subscriptions/${id}/test`, { token })).status, 404, id);
    }
    for (const id of ["msg_00000000000000000000000000", "msg_x", "toString"]) {
      assert.equal((await stack.api("GET", `/v1/webhooks/deliveries/${id}`, { token })).status, 404, id);
      assert.equal((await stack.api("POST", `/v1/webhooks/deliveries/${id}/redeliver`, { token })).status, 404, id);
    }
  });

  it("delivers every event of a paid order, signed, with the same data as the order and the chain", async () => {
    const started = Date.now();
    const { order } = await payOrder(stack, { until: "powered_on" });
    const match = (data: Record<string, unknown>) => data.orderId === order.id;
    const succeeded = await receiver.waitFor(ofType("/all", "payment.succeeded", match), 20_000, "payment.succeeded");
    const latency = succeeded.receivedAt - started;
    for (const type of [
      "payment.confirmed",
      "payment.split",
      "split.settled",
      "revenue.recorded",
      "device.powered_on",
      "device.session_ended",
    ]) {
      await receiver.waitFor(ofType("/all", type, match), 20_000, type);
    }
    const data = succeeded.envelope!.data;
    assert.equal(data.transactionHash, order.payment.transactionHash);
    assert.equal(data.rail, "authorization", "the SDK paid on the EIP-3009 rail the local stack's USDC offers");
    assert.equal(data.amountUsd, order.amountUsd);
    // The catalogue's shape of split.settled (the last test checks every delivery's data against it).
    const settled = (await receiver.waitFor(ofType("/all", "split.settled", match))).envelope!.data as z.output<
      (typeof EVENT_CATALOGUE)["split.settled"]["data"]
    >;
    assert.match(settled.ref, /^0x[0-9a-f]{64}$/);
    assert.equal(settled.transactionHash, order.payment.transactionHash);
    assert.equal(
      settled.legs.reduce((n: bigint, l: { amount: string }) => n + BigInt(l.amount), 0n),
      BigInt(settled.gross),
      "the legs add up to the gross",
    );
    assert.deepEqual(
      settled.legs.map((l: { leg: string }) => l.leg),
      ["assetOwner", "operator", "protocol"],
    );

    // The family subscription got the payment.* events of the order, and only those.
    for (const type of ["payment.succeeded", "payment.confirmed", "payment.split"]) {
      await receiver.waitFor(ofType("/payments", type, match), 20_000, `${type} at /payments`);
    }
    assert.ok(receiver.deliveries("/payments").every((d) => d.envelope!.type.startsWith("payment.")));

    // An independent check of the legacy signature: HMAC-SHA256 of the raw bytes, keyed with the secret.
    const expected = createHmac("sha256", all.secret).update(succeeded.body).digest("hex");
    assert.equal(succeeded.headers["x-service-signature"], `sha256=${expected}`);
    console.error(
      `# payment.succeeded arrived ${latency} ms after the permit was posted (at ${new Date(succeeded.receivedAt).toISOString()})`,
    );
  });

  it("delivers device.offline and device.online when the device cloud reports a change", async () => {
    const device = stack.sample.devices[1].id;
    const put = (online: boolean) =>
      fetch(`${stack.deviceCloudUrl}/sim/devices/${device}`, {
        method: "PUT",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ online }),
      });
    await put(false);
    const offline = await receiver.waitFor(
      ofType("/all", "device.offline", (d) => d.deviceId === device),
      10_000,
      "device.offline",
    );
    await put(true);
    const online = await receiver.waitFor(
      ofType("/all", "device.online", (d) => d.deviceId === device),
      10_000,
      "device.online",
    );
    assert.equal(online.envelope!.data.previousChangeAt, offline.envelope!.data.observedAt);
    await sleep(600);
    assert.equal(
      receiver.deliveries("/all").filter((d) => d.envelope?.type.startsWith("device.o") && d.envelope.data.deviceId === device).length,
      2,
      "one event per change",
    );
  });

  it("records a customer's ticket and delivers ticket.created", async () => {
    const device = stack.sample.devices[0].id;
    const response = await stack.api("POST", `/v1/devices/${device}/tickets`, {
      body: { category: "no_power", message: "Paid but the socket is dead.", contact: "+254 700 000000" },
    });
    assert.equal(response.status, 201, response.text);
    assert.match(response.body.id, /^tkt_[0-9A-Z]{26}$/);
    const ticket = await receiver.waitFor(
      ofType("/all", "ticket.created", (d) => d.ticketId === response.body.id),
      10_000,
      "ticket.created",
    );
    assert.deepEqual(
      { ...ticket.envelope!.data, createdAt: undefined },
      {
        ticketId: response.body.id,
        deviceId: device,
        orderId: null,
        category: "no_power",
        message: "Paid but the socket is dead.",
        contact: "+254 700 000000",
        createdAt: undefined,
      },
    );
    assert.equal(
      (await stack.api("POST", "/v1/devices/no-such-device/tickets", { body: { category: "other", message: "x" } })).status,
      404,
    );
    assert.equal((await stack.api("POST", `/v1/devices/${device}/tickets`, { body: { category: "other", message: "" } })).status, 422);
  });

  it("sends test.ping to the tested subscription only", async () => {
    const eventId = await sendTest(stack, token, all.id);
    const ping = await receiver.waitFor(
      ofType("/all", "test.ping", (d) => d.subscriptionId === all.id),
      10_000,
      "test.ping",
    );
    const log = await waitForDelivery(stack, token, all.id, (d) => d.eventId === eventId && d.status === "succeeded");
    assert.equal(log.id, ping.envelope!.id);
    await sleep(300);
    assert.ok(!receiver.deliveries("/payments").some((d) => d.envelope?.type === "test.ping"));
  });

  it("retries a failing endpoint with backoff and the same id: three 500s, then 200 on the 4th attempt", async () => {
    const sub = await subscribe(stack, token, receiver, "/flaky", ["ticket.created"]);
    receiver.respond("/flaky", (_d, previous) => (previous.length < 3 ? 500 : 200));
    const eventId = await sendTest(stack, token, sub.id);
    const done = await waitForDelivery(stack, token, sub.id, (d) => d.eventId === eventId && d.status === "succeeded");
    const got = receiver.deliveries("/flaky");
    assert.equal(got.length, 4);
    assert.ok(got.every((d) => d.standardOk && d.serviceOk));
    assert.deepEqual(new Set(got.map((d) => d.envelope!.id)), new Set([done.id]));
    assert.deepEqual(new Set(got.map((d) => d.headers["webhook-id"])), new Set([done.id]));
    assert.ok(
      got.every((d) => d.body.equals(got[0].body)),
      "the same bytes on every attempt",
    );
    assert.deepEqual(
      done.attemptLog.map((a) => a.statusCode),
      [500, 500, 500, 200],
    );
    assert.equal(done.attempts, 4);
    // Backoff: base x 5^(n-1), +-20%.
    const gaps = got.slice(1).map((d, i) => d.receivedAt - got[i].receivedAt);
    gaps.forEach((gap, i) => assert.ok(gap >= RETRY_BASE_MS * 5 ** i * 0.8 - 5, `gap ${i + 1} ${gap} ms`));
    assert.ok(gaps[2] > gaps[0], `exponential: ${gaps}`);
  });

  it("gives up after exactly 5 attempts, then redelivers by hand with the same id", async () => {
    const sub = await subscribe(stack, token, receiver, "/down", ["ticket.created"]);
    let status = 503;
    receiver.respond("/down", () => status);
    const eventId = await sendTest(stack, token, sub.id);
    const failed = await waitForDelivery(stack, token, sub.id, (d) => d.eventId === eventId && d.status === "failed", 20_000);
    await sleep(1_000);
    const got = receiver.deliveries("/down");
    assert.equal(got.length, 5, "exactly 5 attempts");
    assert.deepEqual(new Set(got.map((d) => d.envelope!.id)), new Set([failed.id]));
    assert.deepEqual(
      failed.attemptLog.map((a) => a.statusCode),
      [503, 503, 503, 503, 503],
    );
    assert.equal(failed.lastError, "HTTP 503");
    // The subscription's counts (the dispatcher's counters) follow the delivery: failed, then succeeded.
    const counts = async () => (await stack.api("GET", `/v1/webhooks/subscriptions/${sub.id}`, { token })).body.deliveries;
    const failedCounts = await counts();
    assert.deepEqual({ ...failedCounts, lastActivityAt: undefined }, { pending: 0, succeeded: 0, failed: 1, lastActivityAt: undefined });
    assert.ok(failedCounts.lastActivityAt >= failed.attemptLog[4].finishedAt!, JSON.stringify(failedCounts));

    status = 200;
    const redelivered = await stack.api("POST", `/v1/webhooks/deliveries/${failed.id}/redeliver`, { token });
    assert.equal(redelivered.status, 202, redelivered.text);
    const done = await waitForDelivery(stack, token, sub.id, (d) => d.id === failed.id && d.status === "succeeded");
    assert.equal(done.attempts, 6);
    assert.equal(receiver.deliveries("/down").length, 6);
    assert.equal(receiver.deliveries("/down")[5].envelope!.id, failed.id);
    const doneCounts = await counts();
    assert.deepEqual({ ...doneCounts, lastActivityAt: undefined }, { pending: 0, succeeded: 1, failed: 0, lastActivityAt: undefined });
    assert.ok(doneCounts.lastActivityAt > failedCounts.lastActivityAt);

    const detail = await stack.api("GET", `/v1/webhooks/deliveries/${failed.id}`, { token });
    assert.equal(detail.status, 200);
    assert.deepEqual(detail.body.payload, JSON.parse(receiver.deliveries("/down")[5].body.toString()));
    // Another tenant sees none of it.
    assert.equal((await stack.api("GET", `/v1/webhooks/deliveries/${failed.id}`, { token: otherToken })).status, 404);
    assert.equal((await stack.api("POST", `/v1/webhooks/deliveries/${failed.id}/redeliver`, { token: otherToken })).status, 404);
    assert.equal((await stack.api("GET", `/v1/webhooks/subscriptions/${sub.id}`, { token: otherToken })).status, 404);
    assert.deepEqual((await stack.api("GET", "/v1/webhooks/subscriptions", { token: otherToken })).body.data, []);
  });

  it("counts an attempt without an answer within WEBHOOK_TIMEOUT_MS as failed", async () => {
    const sub = await subscribe(stack, token, receiver, "/slow", ["ticket.created"]);
    receiver.respond("/slow", (_d, previous) => (previous.length === 0 ? "hang" : 204));
    const eventId = await sendTest(stack, token, sub.id);
    const done = await waitForDelivery(stack, token, sub.id, (d) => d.eventId === eventId && d.status === "succeeded", 15_000);
    assert.equal(done.attemptLog[0].statusCode, null);
    assert.match(done.attemptLog[0].error ?? "", new RegExp(`timed out after ${TIMEOUT_MS} ms`));
    assert.ok((done.attemptLog[0].durationMs ?? 0) >= TIMEOUT_MS);
    assert.equal(done.attemptLog[1].statusCode, 204);
    receiver.releaseHanging();
  });

  it("disables the subscription when the endpoint answers 410 Gone", async () => {
    const sub = await subscribe(stack, token, receiver, "/gone", ["ticket.created"]);
    receiver.respond("/gone", () => 410);
    const eventId = await sendTest(stack, token, sub.id);
    await waitForDelivery(stack, token, sub.id, (d) => d.eventId === eventId && d.status === "failed");
    const after410 = await stack.api("GET", `/v1/webhooks/subscriptions/${sub.id}`, { token });
    assert.equal(after410.body.status, "disabled");
    assert.equal(after410.body.deliveries.failed, 1);
    assert.equal(after410.body.deliveries.pending, 0);
    assert.match(after410.body.disabledReason, /410/);
    assert.equal(receiver.deliveries("/gone").length, 1);
    assert.equal((await stack.api("POST", `/v1/webhooks/subscriptions/${sub.id}/test`, { token })).status, 409);
    const enabled = await stack.api("PATCH", `/v1/webhooks/subscriptions/${sub.id}`, {
      token,
      body: { status: "active", eventTypes: ["device.*"] },
    });
    assert.equal(enabled.status, 200, enabled.text);
    assert.equal(enabled.body.status, "active");
    assert.deepEqual(enabled.body.eventTypes, ["device.*"]);
    const disabled = await stack.api("PATCH", `/v1/webhooks/subscriptions/${sub.id}`, { token, body: { status: "disabled" } });
    assert.equal(disabled.body.status, "disabled");
    assert.match(disabled.body.disabledReason, /disabled by dev@sunbeam\.example/);
  });

  it("still delivers a payment's event after the relayer is killed (SIGKILL) between the payment and its delivery", async () => {
    const sub = await subscribe(stack, token, receiver, "/crash", ["payment.succeeded"]);
    receiver.respond("/crash", (_d, previous) => (previous.length === 0 ? "hang" : 200));
    const { created } = await payOrder(stack, { until: "submitted" });
    const first = await receiver.waitFor(
      (d) => d.path === "/crash" && d.envelope?.data?.orderId === created.id,
      30_000,
      "the first attempt",
    );
    await stack.restartRelayer({ kill: true });
    const second = await receiver.waitFor((d) => d.path === "/crash" && d.n === 2, 30_000, "the attempt after the restart");
    assert.equal(second.envelope!.id, first.envelope!.id);
    assert.ok(second.standardOk && second.serviceOk);
    const log = await waitForDelivery(stack, token, sub.id, (d) => d.id === first.envelope!.id && d.status === "succeeded");
    assert.equal(log.attemptLog[0].statusCode, null);
    assert.match(log.attemptLog[0].error ?? "", /the relayer stopped during the attempt/);
    assert.equal(log.attemptLog[1].statusCode, 200);
    await waitForOrder(stack, created.id, (o) => o.status === "success");
    // The other subscriptions' events of that payment arrive too, once each.
    await receiver.waitFor(
      ofType("/all", "revenue.recorded", (d) => d.orderId === created.id),
      30_000,
      "revenue.recorded after the restart",
    );
  });

  it("delivers payment.expired for the order left unpaid", async () => {
    const expired = await receiver.waitFor(
      ofType("/payments", "payment.expired", (d) => d.orderId === unpaid.id),
      60_000,
      "payment.expired",
    );
    assert.equal(expired.envelope!.data.deviceId, stack.sample.devices[2].id);
    await receiver.waitFor(
      ofType("/all", "payment.expired", (d) => d.orderId === unpaid.id),
      10_000,
    );
  });

  it("every delivery was signed and matched its documented schema; each id arrived at one endpoint", async () => {
    const seen = receiver.deliveries().filter((d) => d.envelope);
    for (const d of seen) assertWellFormed(d);
    const types = new Set(receiver.deliveries("/all").map((d) => d.envelope!.type));
    // payment.reverted needs a chain reorganisation: test/relayer/reorg-truth.test.ts delivers it.
    const missing = EVENT_TYPES.filter((t) => !types.has(t) && t !== "device.power_on_failed" && t !== "payment.reverted");
    assert.deepEqual(missing, [], "every event type was delivered from the real flow");
    const byId = new Map<string, Set<string>>();
    for (const d of seen) byId.set(d.envelope!.id, (byId.get(d.envelope!.id) ?? new Set()).add(d.path));
    assert.ok([...byId.values()].every((paths) => paths.size === 1));
    // Apart from the retry, timeout and crash tests, each delivery arrived once.
    for (const path of ["/all", "/payments"]) {
      const ids = receiver.deliveries(path).map((d) => d.envelope!.id);
      const log = await deliveryLog(stack, token, path === "/all" ? all.id : payments.id);
      assert.ok(
        log.every((d) => d.status === "succeeded"),
        `${path}: ${JSON.stringify(log.filter((d) => d.status !== "succeeded"))}`,
      );
      // Its counts agree with its log (the whole log when it fits the page of 100).
      const { body: view } = await stack.api("GET", `/v1/webhooks/subscriptions/${path === "/all" ? all.id : payments.id}`, { token });
      assert.deepEqual([view.deliveries.pending, view.deliveries.failed], [0, 0], path);
      if (log.length < 100) assert.equal(view.deliveries.succeeded, log.length, path);
      const retried = new Set(log.filter((d) => d.attempts > 1).map((d) => d.id));
      assert.equal(
        ids.filter((id) => !retried.has(id)).length,
        new Set(ids.filter((id) => !retried.has(id))).size,
        `${path}: no duplicates`,
      );
    }
  });

  it("documents every event under `webhooks` in the OpenAPI document, with the subscription routes", async () => {
    const doc = await stack.api("GET", "/v1/openapi.json");
    assert.deepEqual(Object.keys(doc.body.webhooks).sort(), [...EVENT_TYPES].sort());
    const ping = doc.body.webhooks["test.ping"].post;
    assert.ok(ping.requestBody.content["application/json"].schema);
    // What a subscription may list is an enum, so generated clients know it: *, each family, each type.
    const create = doc.body.components.schemas.CreateWebhookSubscription;
    const allowed = create.properties.eventTypes.items.enum;
    assert.ok(Array.isArray(allowed), JSON.stringify(create.properties.eventTypes));
    const families = [...new Set(EVENT_TYPES.map((t) => `${t.split(".")[0]}.*`))];
    assert.deepEqual([...allowed].sort(), ["*", ...families, ...EVENT_TYPES].sort());
    assert.deepEqual(doc.body.components.schemas.UpdateWebhookSubscription.properties.eventTypes.items.enum, allowed);
    for (const path of [
      "/webhooks/subscriptions",
      "/webhooks/subscriptions/{id}",
      "/webhooks/subscriptions/{id}/test",
      "/webhooks/subscriptions/{id}/deliveries",
      "/webhooks/deliveries/{id}",
      "/webhooks/deliveries/{id}/redeliver",
      "/webhooks/event-types",
      "/devices/{id}/tickets",
      "/revenue/overview",
    ]) {
      assert.ok(doc.body.paths[path], `${path} is documented`);
    }
    const types = await stack.api("GET", "/v1/webhooks/event-types");
    assert.equal(types.body.delivery.maxAttempts, 5);
    assert.equal(types.body.delivery.timeoutMs, TIMEOUT_MS);
  });
});
