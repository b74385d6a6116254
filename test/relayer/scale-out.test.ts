// Scale-out: three relayer processes on one PostgreSQL schema (same configuration and keys, workers on in
// all) behind a round-robin proxy, one chain, one indexer, a webhook receiver subscribed to every event.
// Once the wallets are funded the chain mines a block every 500 ms, as a public chain does. 50 wallets pay
// 100 orders through the proxy (quote, order, relayed permit, the order followed on its event stream); then
// 50 more payments are submitted at once and the process sending the hot wallet's transactions is killed
// (SIGKILL) while they are in flight: the two others take its leases over when they expire and finish its
// work. Each time, over every order: one payment on-chain (the router's OrderPaid events) and one relayer
// transaction; every order paid and its device on; each of its events recorded once and delivered once (by
// webhook-id: the receiver always answers 2xx, so a delivery arrives again only after an attempt the relayer
// saw fail, or one the killed process had under way, as the dispatcher documents); the order's event stream
// complete whichever process serves it, followed live and read again from the start (Last-Event-ID 0).
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";
import { createPublicClient, http as viemHttp } from "viem";
import { paymentRouterAbi } from "../../generated/abis.ts";
import type { ServerSentEvent } from "../../sdk/src/event-stream.ts";
import { selectedDatabaseKinds } from "../support/databases.ts";
import {
  type ClusterMember,
  type PreparedPayment,
  type RelayerCluster,
  type Wallet,
  createPayer,
  followOrder,
  fundWallets,
  startRelayerCluster,
  testWallets,
} from "../support/relayer-cluster.ts";
import { type WebhookReceiver, startWebhookReceiver } from "../support/webhook-receiver.ts";
import { login, subscribe } from "../webhooks/support.ts";

/** Wallets paying at once. (100 made the file the run's largest, 83 CPU s and 176 s on a 2-core host, with
 * three relayers claiming the same queues either way: 50 payments at once already share blocks, leases and
 * webhook claims among the three.) */
const WALLETS = 50;
/** Orders a wallet pays, one after the other: the second permit is signed with the token nonce the first used
 * up. (Three rounds made the file the run's largest, 124 CPU s, and tried no case two do not.) */
const ROUNDS = 2;
/** The chain's block interval once the wallets are funded (they are funded on an automining chain). */
const BLOCK_MS = 500;
/** What an order's stream shows from its start, once paid by a relayed permit and its device on. */
const ORDER_HISTORY = ["order.created", "payment.submitted", "payment.succeeded", "split.settled", "device.powered_on"];
/** The same, live from before the payment: the order's state first. */
const LIVE = ["payment.submitted", "payment.succeeded", "split.settled", "device.powered_on"];

type Paid = PreparedPayment & { live: ServerSentEvent[] };

const skip = selectedDatabaseKinds().includes("postgres") ? false : "TEST_DATABASES leaves PostgreSQL out";

describe("three relayer processes on one PostgreSQL behind a round-robin proxy", { skip, concurrency: false }, () => {
  let cluster: RelayerCluster;
  let receiver: WebhookReceiver;
  let wallets: Wallet[];
  let payer: ReturnType<typeof createPayer>;
  let subscriptionId: string;
  const paid: Paid[] = [];

  before(
    async () => {
      receiver = await startWebhookReceiver();
      cluster = await startRelayerCluster({
        label: "scale-out",
        processes: 3,
        // A delivery the killed process had claimed is free again 5 s + the lease margin (5 s) later.
        relayerEnv: { WEBHOOK_TIMEOUT_MS: "5000", WEBHOOK_CONCURRENCY: "8" },
      });
      const token = await login(cluster.stack);
      subscriptionId = (await subscribe(cluster.stack, token, receiver, "/all", ["*"])).id;
      wallets = testWallets(WALLETS);
      await fundWallets(cluster.stack, wallets, 100_000_000n);
      payer = createPayer(cluster.stack, cluster.proxy.url);
      // From here the chain mines a block every BLOCK_MS, whatever is pending, as a public chain does: the
      // payments of one moment share blocks (the indexer, the payment sync and the sender see several per
      // block), and the chain, the indexer and the relayers handle a block every 500 ms instead of one a payment.
      await cluster.stack.chain.rpc("evm_setAutomine", [false]);
      await cluster.stack.chain.rpc("evm_setIntervalMining", [BLOCK_MS]);
    },
    { timeout: 300_000 },
  );
  after(async () => {
    await cluster?.stop();
    await receiver?.close();
  });

  const deviceFor = (n: number) => cluster.stack.sample.devices[n % cluster.stack.sample.devices.length].id;

  /** Pays the prepared order: its stream is opened (through the proxy) before the permit is submitted. */
  async function payFollowing(payment: PreparedPayment, submit: () => Promise<void>): Promise<Paid> {
    let opened: () => void = () => undefined;
    const first = new Promise<void>((resolve) => (opened = resolve));
    const live = followOrder(cluster.proxy.url, payment.orderId, {
      from: payment.wallet.from,
      onEvent: () => opened(),
      timeoutMs: 240_000,
    });
    await Promise.race([first, live]); // a stream that fails before its first event fails here
    await submit();
    return { ...payment, live: await live };
  }

  it(
    `pays ${WALLETS * ROUNDS} orders from ${WALLETS} wallets through the proxy: each paid once, every webhook delivered once, every stream complete`,
    { timeout: 600_000 },
    async () => {
      await Promise.all(
        wallets.map(async (wallet, w) => {
          // A wallet pays one order at a time: each permit is signed with the wallet's token nonce as it is.
          for (let round = 0; round < ROUNDS; round++) {
            const payment = await payer.prepare(wallet, deviceFor(w + round));
            paid.push(await payFollowing(payment, () => payer.submit(payment)));
          }
        }),
      );
      await assertAllPaidOnce(paid);
      const answered = cluster.proxy.answered();
      assert.ok(
        [...answered.values()].every((n) => n > 0),
        `every process answered requests: ${JSON.stringify([...answered])}`,
      );
      const workers = await cluster.query<{ worker: string }>("select distinct worker from webhook_attempts");
      assert.equal(workers.length, 3, `every process delivered webhooks: ${workers.map((w) => w.worker).join(", ")}`);
    },
  );

  it(
    `finishes the work of the process sending transactions, killed with ${WALLETS} payments in flight: nothing lost or doubled`,
    { timeout: 600_000 },
    async () => {
      const batch = await Promise.all(wallets.map((wallet, w) => payer.prepare(wallet, deviceFor(w))));
      const submitted: Array<Promise<void>> = [];
      const paying = batch.map((payment) =>
        payFollowing(payment, () => {
          const accepted = payer.submit(payment);
          submitted.push(accepted);
          return accepted;
        }),
      );
      const allPaid = Promise.all(paying);
      allPaid.catch(() => undefined); // awaited below; a failure before then ends the wait at once
      // Wait for every permit to be accepted (queued), then kill the process holding the sender's lease.
      while (submitted.length < batch.length) await Promise.race([sleep(20), allPaid]);
      await Promise.all(submitted);
      let holder: ClusterMember | undefined;
      for (let i = 0; i < 20 && !holder; i++) holder = await cluster.txSenderHolder();
      assert.ok(holder, "a process holds the transaction sender's lease and sends");
      const [pendingAtKill] = await cluster.query<{ queued: string; sent: string; unpaid: string }>(
        `select count(*) filter (where t.status = 'queued') as queued, count(*) filter (where t.status = 'sent') as sent,
              count(*) filter (where o.status = 'pending') as unpaid
         from orders o left join chain_transactions t on t.ref = o.id where o.id = any($1)`,
        [batch.map((p) => p.orderId)],
      );
      await holder.service.kill();
      console.error(
        `# killed ${holder.worker} (tx sender) with ${pendingAtKill.unpaid} of ${batch.length} orders unpaid: ` +
          `${pendingAtKill.queued} transactions queued, ${pendingAtKill.sent} sent`,
      );
      assert.ok(Number(pendingAtKill.queued) + Number(pendingAtKill.sent) > 0, "the killed process had transactions to send or watch");

      paid.push(...(await allPaid));
      await assertAllPaidOnce(paid, holder);
    },
  );

  /** The assertions over every order paid so far; `killed`: the process killed meanwhile. */
  async function assertAllPaidOnce(payments: Paid[], killed?: ClusterMember) {
    const ids = payments.map((p) => p.orderId);
    assert.equal(new Set(ids).size, payments.length);

    // On-chain: one OrderPaid per order, and no other payment.
    const client = createPublicClient({ transport: viemHttp(cluster.stack.chain.rpcUrl) });
    const logs = await client.getContractEvents({
      address: cluster.stack.chain.record.contracts.PaymentRouter!.address,
      abi: paymentRouterAbi,
      eventName: "OrderPaid",
      fromBlock: 0n,
    });
    const paidOnChain = new Map<bigint, number>();
    for (const log of logs) paidOnChain.set(log.args.orderId!, (paidOnChain.get(log.args.orderId!) ?? 0) + 1);
    for (const p of payments) assert.equal(paidOnChain.get(p.onchainId), 1, `order ${p.orderId} paid on-chain once`);
    assert.equal(logs.length, payments.length, "no payment on-chain beyond one per order");

    // The relayer: one transaction per order, mined (recorded once the sender has seen its receipt, which
    // may come after the indexer reported the payment); every order paid and its device on.
    const transactions = () =>
      cluster.query<{ ref: string; n: string; status: string }>(
        "select ref, count(*) as n, string_agg(status, ',') as status from chain_transactions where ref = any($1) group by ref",
        [ids],
      );
    let txs = await transactions();
    for (let waited = 0; waited < 30_000 && txs.some((tx) => tx.status === "sent"); waited += 250) {
      await sleep(250);
      txs = await transactions();
    }
    assert.equal(txs.length, payments.length, "a relayer transaction for every order");
    for (const tx of txs) assert.deepEqual([tx.n, tx.status], ["1", "mined"], `order ${tx.ref}`);
    const orders = await cluster.query<{ id: string; status: string; on: boolean }>(
      "select id, status, powered_on_at is not null as on from orders where id = any($1)",
      [ids],
    );
    assert.deepEqual(
      orders.filter((o) => o.status !== "success" || !o.on),
      [],
      "every order paid and powered on",
    );

    // The streams, followed live through the proxy (reconnecting after a cut with Last-Event-ID).
    for (const p of payments) {
      const types = p.live.map((e) => e.event);
      assert.equal(types[0], "state", `order ${p.orderId}: ${types.join(", ")}`);
      assert.deepEqual(
        types.filter((t) => t !== "state"),
        LIVE,
        `order ${p.orderId}: ${types.join(", ")}`,
      );
    }
    // Read again from the start, each request to the next process: the whole history, in order.
    const sample = payments.filter((_, i) => i % 10 === 0);
    for (const p of sample) {
      const events = await followOrder(cluster.proxy.url, p.orderId, { lastEventId: "0", timeoutMs: 20_000 });
      assert.deepEqual(
        events.map((e) => e.event),
        ORDER_HISTORY,
        `order ${p.orderId}`,
      );
      const eventIds = events.map((e) => Number(e.id));
      assert.deepEqual(
        [...eventIds].sort((a, b) => a - b),
        eventIds,
        `order ${p.orderId}: ids increase`,
      );
    }

    // Webhooks: wait until every order's last event (its session's end, after the power-on) is recorded,
    // the outbox fanned out and every delivery done; then compare the events, the deliveries and what the
    // receiver got.
    const ORDER_WEBHOOKS = [
      "payment.succeeded",
      "payment.confirmed",
      "payment.split",
      "split.settled",
      "revenue.recorded",
      "device.powered_on",
      "device.session_ended",
    ];
    const deadline = Date.now() + 120_000;
    let state = { ended: -1, open: -1 };
    while (Date.now() < deadline) {
      const [row] = await cluster.query<{ ended: string; open: string }>(
        `select (select count(*) from webhook_events where type = 'device.session_ended' and data->>'orderId' = any($1)) as ended,
                (select count(*) from webhook_events where dispatched_at is null) +
                (select count(*) from webhook_deliveries where status <> 'succeeded') as open`,
        [ids],
      );
      state = { ended: Number(row.ended), open: Number(row.open) };
      if (state.ended >= payments.length && state.open === 0) break;
      await sleep(250);
    }
    assert.deepEqual(state, { ended: payments.length, open: 0 }, "every session ended, every event fanned out and delivered");
    await sleep(500);

    const recorded = await cluster.query<{ order_id: string; type: string; n: string }>(
      "select data->>'orderId' as order_id, type, count(*) as n from webhook_events where data->>'orderId' = any($1) group by 1, 2",
      [ids],
    );
    const perOrder = new Map(recorded.map((r) => [`${r.order_id} ${r.type}`, Number(r.n)]));
    for (const p of payments) {
      assert.deepEqual(
        ORDER_WEBHOOKS.map((t) => perOrder.get(`${p.orderId} ${t}`)),
        ORDER_WEBHOOKS.map(() => 1),
        `events of ${p.orderId}`,
      );
    }
    assert.equal(
      recorded.reduce((sum, r) => sum + Number(r.n), 0),
      payments.length * ORDER_WEBHOOKS.length,
      "no other event of these orders",
    );
    const undelivered = await cluster.query<{ id: string; type: string }>(
      `select e.id, e.type from webhook_events e where e.type <> 'test.ping'
          and not exists (select 1 from webhook_deliveries d where d.event_id = e.id and d.subscription_id = $1)`,
      [subscriptionId],
    );
    assert.deepEqual(undelivered, [], "a delivery for every event");
    const deliveries = await cluster.query<{ id: string }>("select id from webhook_deliveries where subscription_id = $1", [
      subscriptionId,
    ]);
    const [{ n: fannedTwice }] = await cluster.query<{ n: string }>(
      "select count(*) as n from (select 1 from webhook_deliveries group by event_id, subscription_id having count(*) > 1) t",
    );
    assert.equal(fannedTwice, "0", "one delivery per event");

    const received = new Map<string, number>();
    for (const d of receiver.deliveries("/all")) {
      assert.ok(d.standardOk && d.serviceOk, d.verifyError);
      received.set(d.envelope!.id, (received.get(d.envelope!.id) ?? 0) + 1);
    }
    assert.deepEqual(
      deliveries.map((d) => d.id).filter((id) => !received.has(id)),
      [],
      "every delivery reached the receiver",
    );
    assert.equal(received.size, deliveries.length, "the receiver got nothing else");
    // A delivery may reach the receiver again only after an attempt that failed as the relayer saw it (its
    // time limit ran out before the answer came: the machine is loaded), or one the killed process had
    // under way (started, never recorded); and never more often than it was attempted.
    const twice = [...received].filter(([, n]) => n > 1).map(([id]) => id);
    if (twice.length > 0) {
      const attempts = await cluster.query<{
        delivery_id: string;
        worker: string;
        status_code: number | null;
        error: string | null;
        finished: boolean;
      }>(
        "select delivery_id, worker, status_code, error, finished_at is not null as finished from webhook_attempts where delivery_id = any($1) order by attempt",
        [twice],
      );
      const unexplained = twice.filter((id) => {
        const own = attempts.filter((a) => a.delivery_id === id);
        const failedOrCut = own.some(
          (a) =>
            (a.finished && (a.error !== null || a.status_code === null || a.status_code >= 300)) ||
            (!a.finished && a.worker === killed?.worker),
        );
        return !failedOrCut || received.get(id)! > own.length;
      });
      const detail = attempts.filter((a) => unexplained.includes(a.delivery_id));
      assert.deepEqual(unexplained, [], `deliveries received more than once without a failed attempt: ${JSON.stringify(detail)}`);
      console.error(`# ${twice.length} deliveries arrived again after a failed or cut-off attempt (same webhook-id)`);
    }
  }
});
