// End to end, with CONFIRMATIONS=3: what a chain reorganisation does to a paid order, and when the device
// powers on. A wallet pays an order (its own payWithPermit: the relayer sends nothing it could send again);
// the order turns success, yet the device stays off while the payment is less than CONFIRMATIONS deep. A
// reorganisation (evm_snapshot before the payment, evm_revert, a longer fork without it) turns the order
// pending again and sends the `payment.reverted` webhook to a subscribed receiver, signed and matching its
// documented schema; the device never powered on for the removed payment. Paid anew and CONFIRMATIONS deep,
// the order's device powers on after payment.confirmed. The running totals (GET /v1/impact's region volume,
// the 30-day revenue overview's per-day rollups) count the payment, take it back out and count it again. A
// tenant that chose instant power-on (0 confirmations) gets its device on at payment.succeeded.
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { EVENT_CATALOGUE } from "../../relayer/src/webhooks/catalogue.ts";
import { oneDatabaseKind } from "../support/databases.ts";
import { type OrderBody, createOrder, pay, waitForOrder } from "../support/pay.ts";
import { type Stack, startStack } from "../support/stack.ts";
import { type Delivery, type WebhookReceiver, startWebhookReceiver } from "../support/webhook-receiver.ts";
import { login, sleep, subscribe } from "../webhooks/support.ts";

const CONFIRMATIONS = 3;
/** How long the device is watched for a power-on that must not happen (the power-on job runs within
 * milliseconds of being queued when nothing holds it back). */
const QUIET_MS = 4_000;

describe(`payments undone by a reorganisation, power-on after CONFIRMATIONS (${oneDatabaseKind()})`, { timeout: 300_000 }, () => {
  let stack: Stack;
  let receiver: WebhookReceiver;

  before(
    async () => {
      receiver = await startWebhookReceiver();
      stack = await startStack({
        label: "reorg-truth",
        database: oneDatabaseKind(),
        relayerEnv: { CONFIRMATIONS: String(CONFIRMATIONS), STATS_CACHE_MS: "0" },
      });
      await subscribe(stack, await login(stack), receiver, "/events", ["payment.*", "device.*"]);
      // The relayer creates the devices' splits when it starts, and counts its own transactions mined only
      // CONFIRMATIONS deep: blocks are mined on the otherwise idle chain until every split is created.
      const deadline = Date.now() + 120_000;
      for (;;) {
        const devices = await stack.api("GET", "/v1/devices", { token: stack.sample.developerKey });
        const waiting = (devices.body.data as Array<{ payout: { splitStatus: string } }>).filter((d) => d.payout.splitStatus !== "created");
        if (devices.status === 200 && waiting.length === 0) break;
        if (Date.now() > deadline) throw new Error(`splits not created: ${devices.text}`);
        await stack.chain.rpc("evm_mine");
        await sleep(500);
      }
    },
    { timeout: 240_000 },
  );
  after(async () => {
    await stack?.stop();
    await receiver?.close();
  });

  const deliveriesOf = (type: string, orderId: string) =>
    receiver
      .deliveries("/events")
      .filter((d) => d.envelope?.type === type && (d.envelope.data as { orderId?: string }).orderId === orderId);
  const waitForDelivery = (type: string, orderId: string) =>
    receiver.waitFor(
      (d) => d.envelope?.type === type && (d.envelope.data as { orderId?: string }).orderId === orderId,
      60_000,
      `${type} of ${orderId}`,
    );
  const blockNumber = async () => BigInt(await stack.chain.rpc<string>("eth_blockNumber"));
  async function mine(count: number) {
    for (let i = 0; i < count; i++) await stack.chain.rpc("evm_mine");
  }
  /** The device cloud's session of the order (its id is the order's), or null: the device never powered on for it. */
  async function session(order: OrderBody) {
    const response = await fetch(`${stack.deviceCloudUrl}/devices/${order.deviceId}/sessions/${order.id}`);
    return response.status === 404 ? null : ((await response.json()) as { sessionId: string });
  }
  async function assertStaysOff(order: OrderBody, why: string) {
    await sleep(QUIET_MS);
    const read = await stack.api("GET", `/v1/orders/${order.id}`);
    assert.equal(read.body.device.poweredOnAt, null, why);
    assert.equal(await session(order), null, `${why}: the device cloud has no session`);
    assert.equal(deliveriesOf("device.powered_on", order.id).length, 0, why);
  }
  /** Signed, and its data exactly the catalogue's (the OpenAPI document's) schema of payment.reverted. */
  function assertDocumentedReverted(delivery: Delivery) {
    assert.ok(delivery.standardOk && delivery.serviceOk, "signed");
    assert.equal(delivery.headers["x-service-event"], "payment.reverted");
    const parsed = EVENT_CATALOGUE["payment.reverted"].data.strict().safeParse(delivery.envelope!.data);
    assert.ok(parsed.success, `payment.reverted matches its schema: ${JSON.stringify(parsed.error?.issues)}`);
  }

  it("keeps the device off until the payment is CONFIRMATIONS deep, then powers it on after payment.confirmed", async () => {
    const order = await createOrder(stack, stack.sample.devices[0].id, "30m");
    const { hash } = await pay(stack, order, "wallet-permit");
    await waitForOrder(stack, order.id, (o) => o.status === "success", 60_000);
    await waitForDelivery("payment.succeeded", order.id);
    await assertStaysOff(order, "paid but not CONFIRMATIONS deep: no power-on");
    assert.equal(deliveriesOf("payment.confirmed", order.id).length, 0);

    await mine(CONFIRMATIONS);
    const confirmed = await waitForDelivery("payment.confirmed", order.id);
    assert.equal((confirmed.envelope!.data as { transactionHash: string }).transactionHash, hash);
    const on = await waitForOrder(stack, order.id, (o) => o.device.poweredOnAt !== null, 60_000);
    assert.ok(on.device.poweredOnAt);
    assert.ok(await session(order), "the device cloud powered the device on");
    await waitForDelivery("device.powered_on", order.id);
  });

  /** GET /v1/impact's volume (micro-USD) of the region of `deviceId` (statistics uncached in this stack). */
  async function regionVolume(deviceId: string): Promise<number> {
    const device = stack.sample.devices.find((d) => d.id === deviceId)!;
    const impact = await stack.api("GET", "/v1/impact");
    const region = (impact.body.regions as Array<{ region: string; volumeUsd: number }>).find((r) => r.region === device.region)!;
    return Math.round(region.volumeUsd * 1e6);
  }

  /** GET /v1/revenue/overview?range=30d (read from the per-day rollups): the tenant's paid orders and gross
   * (micro-USD) in the window, and those of `deviceId`. */
  async function overview30d(deviceId: string) {
    const response = await stack.api("GET", "/v1/revenue/overview?range=30d", { token: await login(stack) });
    assert.equal(response.status, 200, response.text);
    const body = response.body as { totals: Bucket; byDevice: Array<Bucket & { deviceId: string }> };
    const device = body.byDevice.find((d) => d.deviceId === deviceId);
    const micros = (usd: number) => Math.round(usd * 1e6);
    return {
      orders: body.totals.orders,
      micros: micros(body.totals.grossUsd),
      deviceOrders: device?.orders ?? 0,
      deviceMicros: micros(device?.grossUsd ?? 0),
    };
  }
  type Bucket = { orders: number; grossUsd: number };

  it("sends payment.reverted when a reorganisation removes a payment, and the device never powered on for it", async () => {
    const order = await createOrder(stack, stack.sample.devices[1].id, "30m");
    const volumeBefore = await regionVolume(order.deviceId);
    const revenueBefore = await overview30d(order.deviceId);
    const amount = Math.round((order.amountUsd as number) * 1e6);
    const revenuePaid = {
      orders: revenueBefore.orders + 1,
      micros: revenueBefore.micros + amount,
      deviceOrders: revenueBefore.deviceOrders + 1,
      deviceMicros: revenueBefore.deviceMicros + amount,
    };
    const snapshot = await stack.chain.rpc<string>("evm_snapshot");
    const { hash } = await pay(stack, order, "wallet-permit");
    const paidBlock = await blockNumber();
    const paid = await waitForOrder(stack, order.id, (o) => o.status === "success", 60_000);
    assert.equal(paid.payment.transactionHash, hash);
    for (const type of ["payment.succeeded", "payment.split"]) await waitForDelivery(type, order.id);
    await assertStaysOff(order, "paid but not CONFIRMATIONS deep: no power-on");
    // The running totals count the payment's volume in the device's region...
    assert.equal(await regionVolume(order.deviceId), volumeBefore + Math.round((order.amountUsd as number) * 1e6));
    assert.deepEqual(await overview30d(order.deviceId), revenuePaid, "the revenue overview counts the payment");

    // The block with the payment is replaced by a longer fork without it (fewer blocks than CONFIRMATIONS on
    // top of the old payment's height, so nothing on the new fork confirms it either).
    assert.equal(await stack.chain.rpc("evm_revert", [snapshot]), true);
    await mine(Number(paidBlock - (await blockNumber())) + 1);
    assert.ok((await blockNumber()) > paidBlock);

    const reverted = await waitForDelivery("payment.reverted", order.id);
    assertDocumentedReverted(reverted);
    const data = reverted.envelope!.data as Record<string, unknown>;
    assert.equal(data.transactionHash, hash);
    assert.equal(data.blockNumber, Number(paidBlock));
    assert.equal(data.reason, "chain_reorganisation");
    assert.equal(data.devicePoweredOn, false);
    assert.equal(data.rail, "permit");
    assert.equal(data.deviceId, order.deviceId);
    const pending = await waitForOrder(stack, order.id, (o) => o.status === "pending", 60_000);
    assert.equal(pending.payment, null);
    await assertStaysOff(order, "the removed payment never powered the device on");
    assert.equal(deliveriesOf("payment.confirmed", order.id).length, 0, "the removed payment was never confirmed");
    // ...and take it back out with the payment the reorganisation removed.
    assert.equal(await regionVolume(order.deviceId), volumeBefore);
    assert.deepEqual(await overview30d(order.deviceId), revenueBefore, "the revenue overview no longer counts it");

    // Paid anew on the new fork and CONFIRMATIONS deep: the device powers on once.
    const { hash: again } = await pay(stack, order, "wallet-permit");
    await waitForOrder(stack, order.id, (o) => o.status === "success" && o.payment.transactionHash === again, 60_000);
    await mine(CONFIRMATIONS);
    await waitForOrder(stack, order.id, (o) => o.device.poweredOnAt !== null, 60_000);
    await waitForDelivery("device.powered_on", order.id);
    assert.equal(deliveriesOf("payment.reverted", order.id).length, 1);
    assert.equal(
      await regionVolume(order.deviceId),
      volumeBefore + Math.round((order.amountUsd as number) * 1e6),
      "counted once more, paid anew",
    );
    assert.deepEqual(await overview30d(order.deviceId), revenuePaid, "in the revenue overview too");
  });

  it("powers on at payment.succeeded for a tenant that chose 0 confirmations", async () => {
    // The sample tenant's own setting (the seed sets it; POWER_ON_AT_ZERO_CONFIRMATIONS stays false).
    await stack.seed({ tenant: { id: stack.sample.tenantId, name: "Sunbeam Energy (sample)", powerOnAtZeroConfirmations: true } });
    const order = await createOrder(stack, stack.sample.devices[2].id, "30m");
    const head = await blockNumber();
    await pay(stack, order, "wallet-permit");
    const on = await waitForOrder(stack, order.id, (o) => o.status === "success" && o.device.poweredOnAt !== null, 60_000);
    assert.ok(on.device.poweredOnAt);
    assert.equal(await blockNumber(), head + 1n, "no block on top of the payment: powered on at 0 confirmations");
    assert.equal(deliveriesOf("payment.confirmed", order.id).length, 0);
  });
});
