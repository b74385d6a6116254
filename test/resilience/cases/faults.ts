// Faults. SIGKILL of the relayer while a relayed payment's transaction is being broadcast, and while it
// waits for its receipt: after the restart the order is paid by that one transaction (exactly one
// payWithPermit for the order on chain, the hot wallet's nonce up by one). SIGKILL while a burst of webhook
// deliveries is in flight: every event arrives, only attempts in flight are repeated, with their ids. The
// relayer's database cut off under load (PostgreSQL, through the stack's TCP proxy; the shared server is
// never touched): requests fail cleanly and quickly, the relayer stays up, and everything recovers by
// itself. The chain's RPC cut off from the relayer and the indexer: reads keep being served, payments
// answer 503, and orders recover when it returns. (test/webhooks/delivery.test.ts covers a kill during one
// hanging attempt; test/energy/anchoring.test.ts a kill during telemetry ingest.)
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { type Address, type Hex, createPublicClient, decodeFunctionData, http } from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { paymentRouterAbi } from "../../../generated/abis.ts";
import { type OrderBody, createOrder, pay, readEventStream, waitForOrder } from "../../support/pay.ts";
import { LOCAL_ACCOUNT_INDEX, localAccount, localStablecoin, localStablecoinAbi } from "../../support/local-chain.ts";
import { createPayments } from "../../support/payments.ts";
import type { Stack } from "../../support/stack.ts";
import { envelopeProblem } from "../support/envelope.ts";
import type { Fixtures } from "../support/fixtures.ts";
import { type RawResponse, loopbackAddresses } from "../support/http.ts";
import { startRpcProxy } from "../../support/rpc-proxy.ts";
import { waitUntil } from "../../../lib/processes.ts";
import { createIndexerClient } from "../../../indexer/client.ts";

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** The chain as the test sees it (straight to the node, never through the stack's proxy). */
function chainOf(s: Stack) {
  const client = createPublicClient({ transport: http(s.chain.rpcUrl, { retryCount: 0 }) });
  const relayer = privateKeyToAccount(s.relayerOptions.relayerPrivateKey).address.toLowerCase() as Address;
  const router = s.chain.record.contracts.PaymentRouter!.address.toLowerCase();
  return {
    client,
    relayer,
    nonce: (blockTag: "latest" | "pending" = "latest") => client.getTransactionCount({ address: relayer, blockTag }),
    /** The relayer's transactions in blocks after `fromBlock`, and those of them paying `orderId` with a
     * permit. */
    async relayerTransactions(fromBlock: bigint, orderId: bigint) {
      const latest = await client.getBlockNumber({ cacheTime: 0 });
      const all: Array<{ hash: Hex; payWithPermitOfOrder: boolean }> = [];
      for (let n = fromBlock + 1n; n <= latest; n++) {
        const block = await client.getBlock({ blockNumber: n, includeTransactions: true });
        for (const tx of block.transactions) {
          if (tx.from.toLowerCase() !== relayer) continue;
          let ofOrder = false;
          if (tx.to?.toLowerCase() === router) {
            const call = decodeFunctionData({ abi: paymentRouterAbi, data: tx.input });
            ofOrder = call.functionName === "payWithPermit" && (call.args[0] as { orderId: bigint }).orderId === orderId;
          }
          all.push({ hash: tx.hash, payWithPermitOfOrder: ofOrder });
        }
      }
      return all;
    },
  };
}

export function faultCases(stack: () => Stack, fixtures: () => Fixtures, opts: { database: string }) {
  describe("faults", () => {
    /** Waits for `orders` to be paid, and checks that one relayer transaction paid each, with nothing
     * else sent from the hot wallet. */
    async function assertPaidOnce(s: Stack, orders: OrderBody[], fromBlock: bigint, nonceBefore: number) {
      const chain = chainOf(s);
      for (const order of orders) {
        const paid = await waitForOrder(s, order.id, (o) => o.status === "success" && o.relay?.status === "mined", 60_000);
        const txs = await chain.relayerTransactions(fromBlock, BigInt(order.paymentDetails.order.orderId));
        const ofOrder = txs.filter((tx) => tx.payWithPermitOfOrder);
        assert.equal(ofOrder.length, 1, `exactly one payWithPermit for order ${order.id}: ${JSON.stringify(txs)}`);
        assert.equal(paid.payment.transactionHash, ofOrder[0].hash, "the order was paid by that transaction");
        assert.equal(paid.relay.transactionHash, ofOrder[0].hash, "the relayer's stored transaction is the one mined");
      }
      const txs = await chain.relayerTransactions(fromBlock, -1n);
      assert.equal(txs.length, orders.length, `the hot wallet sent nothing else: ${JSON.stringify(txs)}`);
      assert.equal((await chain.nonce()) - nonceBefore, orders.length, "the hot wallet's nonce moved once per order");
      assert.equal(await chain.nonce("pending"), await chain.nonce(), "nothing else is pending");
    }

    it(
      "pays each relayed permit once when the relayer is killed (SIGKILL) with one transaction being broadcast and another waiting for its receipt",
      { timeout: 120_000 },
      async () => {
        const s = stack();
        const chain = chainOf(s);
        // Blocks are mined on request only, and the relayer's RPC goes through a rpcProxy: the first transaction
        // reaches the node and waits there for its receipt; the second is signed and stored, and its
        // broadcast is held; then the process dies. The two permits come from two wallets (a wallet's second
        // permit would reuse the token nonce of its first, still unmined): the spare account gets some of the
        // stablecoin.
        const spare = LOCAL_ACCOUNT_INDEX.spare;
        await createPayments(s.chain)
          .wallet(LOCAL_ACCOUNT_INDEX.admin)
          .writeContract({
            address: localStablecoin(s.chain.record),
            abi: localStablecoinAbi,
            functionName: "mint",
            args: [localAccount(spare).address, 10_000_000n],
          });
        const rpcProxy = await startRpcProxy(s.chain.rpcUrl);
        await s.chain.rpc("evm_setAutomine", [false]);
        try {
          await s.restartRelayer({ env: { RPC_URL: rpcProxy.url } });
          const fromBlock = await chain.client.getBlockNumber({ cacheTime: 0 });
          const nonceBefore = await chain.nonce();
          rpcProxy.hold("eth_sendRawTransaction", { after: 1 });
          const awaitingReceipt = await createOrder(s, s.sample.devices[1].id, "30m");
          const beingBroadcast = await createOrder(s, s.sample.devices[1].id, "1h");
          assert.equal((await pay(s, awaitingReceipt, "relayed-permit")).status, 202);
          await waitForOrder(s, awaitingReceipt.id, (o) => o.relay?.status === "sent", 20_000);
          // "sent" is stored before the broadcast (so that a crash cannot lose a signed transaction): the
          // transaction reaches the node's pool a moment later.
          await waitUntil(
            "the first transaction to wait in the node's pool",
            async () => (await chain.nonce("pending")) === nonceBefore + 1,
            {
              timeoutMs: 20_000,
              intervalMs: 25,
            },
          );
          assert.equal((await pay(s, beingBroadcast, "relayed-permit", spare)).status, 202);
          await rpcProxy.held(20_000);
          const killedAt = Date.now();
          await s.restartRelayer({ kill: true });
          await rpcProxy.close();
          // The restarted relayer takes the sender's lease when the dead one's runs out, finds both stored
          // transactions unmined and broadcasts the same signed bytes again; then a block is mined.
          await sleep(Math.max(0, killedAt + 17_000 - Date.now()));
          assert.ok((await chain.nonce("pending")) <= nonceBefore + 2, "at most the two stored transactions are pending");
          await s.chain.rpc("evm_mine");
          await s.chain.rpc("evm_setAutomine", [true]);
          await assertPaidOnce(s, [awaitingReceipt, beingBroadcast], fromBlock, nonceBefore);
        } finally {
          await s.chain.rpc("evm_setAutomine", [true]);
          await rpcProxy.close();
        }
      },
    );

    it(
      "delivers every webhook event after the relayer is killed (SIGKILL) with a burst of deliveries in flight: only those are repeated, with their ids",
      { timeout: 120_000 },
      async () => {
        const s = stack();
        const fx = fixtures();
        const { receiver, a } = fx;
        const path = "/burst";
        const created = await fx.call("POST", "/v1/webhooks/subscriptions", {
          token: a.jwt,
          body: { url: receiver.url(path), eventTypes: ["ticket.created"], description: "burst" },
        });
        assert.equal(created.status, 201, created.text);
        receiver.setSecret(path, created.json.secret);
        // Each attempt is answered 300 ms after it arrives: many are in flight at any moment.
        receiver.respond(path, async () => {
          await sleep(300);
          return 200;
        });
        const events: string[] = [];
        for (let i = 0; i < 40; i++) {
          const ping = await fx.call("POST", `/v1/webhooks/subscriptions/${created.json.id}/test`, { token: a.jwt });
          assert.equal(ping.status, 202, ping.text);
          events.push(ping.json.eventId);
        }
        const deadline = Date.now() + 20_000;
        while (receiver.deliveries(path).length < 8 && Date.now() < deadline) await sleep(10);
        const killedAt = Date.now();
        // Attempts the killed process sent arrive until it is gone (SIGKILL takes effect a moment after it is
        // sent, longer on a busy machine), and this process reads them when its event loop gets to them: all have
        // arrived by the time the next relayer is up, seconds later (with, perhaps, the next one's first ones).
        await s.restartRelayer({ kill: true });
        const restartedAt = Date.now();
        const beforeKill = receiver.deliveries(path).filter((d) => d.receivedAt <= killedAt);
        assert.ok(beforeKill.length >= 8 && beforeKill.length < 40, `${beforeKill.length} attempts had arrived at the kill`);
        const sentByKilled = receiver.deliveries(path).filter((d) => d.receivedAt <= restartedAt);

        // Every event's delivery succeeds, in the delivery log and at the receiver.
        let log: Array<{
          id: string;
          eventId: string;
          status: string;
          attempts: number;
          attemptLog: Array<{ statusCode: number | null; error: string | null }>;
        }> = [];
        for (let i = 0; i < 600; i++) {
          log = (await fx.call("GET", `/v1/webhooks/subscriptions/${created.json.id}/deliveries?limit=100`, { token: a.jwt })).json.data;
          if (log.length === 40 && log.every((d) => d.status === "succeeded")) break;
          await sleep(100);
        }
        assert.deepEqual(new Set(log.map((d) => d.eventId)), new Set(events), "one delivery per event");
        assert.ok(
          log.every((d) => d.status === "succeeded"),
          JSON.stringify(log.filter((d) => d.status !== "succeeded")),
        );
        const received = receiver.deliveries(path);
        assert.ok(
          received.every((d) => d.standardOk && d.serviceOk),
          "every attempt is signed",
        );
        const byId = new Map<string, number>();
        for (const d of received) byId.set(d.envelope!.id, (byId.get(d.envelope!.id) ?? 0) + 1);
        assert.deepEqual(new Set(byId.keys()), new Set(log.map((d) => d.id)), "every delivery id arrived");
        // A delivery arrives more than once only where the relayer could not know that an attempt had arrived:
        // the attempt was in flight when its process was killed (then the killed process had sent it), or the
        // relayer gave up waiting for the answer (WEBHOOK_TIMEOUT_MS, which a loaded machine can exceed). The
        // delivery log says which, for every attempt.
        const interrupted = /the relayer stopped during the attempt/;
        const timedOut = /timed out after/;
        const inFlight = new Set(sentByKilled.map((d) => d.envelope!.id));
        for (const [id, arrivals] of byId) {
          if (arrivals === 1) continue;
          const entry = log.find((d) => d.id === id)!;
          const attempts = JSON.stringify(entry.attemptLog);
          assert.ok(arrivals <= entry.attemptLog.length, `${id} arrived ${arrivals} times in ${entry.attemptLog.length} attempts`);
          assert.ok(
            entry.attemptLog.slice(0, -1).every((x) => interrupted.test(x.error ?? "") || timedOut.test(x.error ?? "")),
            `${id}: only attempts in flight at the kill, or that timed out, are repeated: ${attempts}`,
          );
          assert.equal(entry.attemptLog.at(-1)!.statusCode, 200, attempts);
          const killed = entry.attemptLog.filter((x) => interrupted.test(x.error ?? "")).length;
          assert.ok(killed <= 1, `${id}: one kill interrupts an attempt once: ${attempts}`);
          if (killed === 1) assert.ok(inFlight.has(id), `${id}: interrupted by the kill, so sent by the killed process`);
        }
        await fx.call("DELETE", `/v1/webhooks/subscriptions/${created.json.id}`, { token: a.jwt });
      },
    );

    if (opts.database === "postgres") {
      it(
        "fails requests cleanly while the database is cut off under load (503 in the envelope, no hang, no crash) and recovers by itself",
        { timeout: 120_000 },
        async (t) => {
          const s = stack();
          const fx = fixtures();
          const proxy = s.databaseProxy!;
          const { a } = fx;
          const address = loopbackAddresses();
          const routes: Array<{ name: string; api: "payments" | "energy"; send: () => Promise<RawResponse> }> = [
            {
              name: "GET /v1/devices",
              api: "payments",
              send: () => fx.client.send({ method: "GET", path: "/v1/devices", headers: { authorization: `Bearer ${a.developerKey}` } }),
            },
            {
              name: "GET /v1/orders/{id}",
              api: "payments",
              send: () => fx.client.send({ method: "GET", path: `/v1/orders/${a.orderId}` }),
            },
            {
              name: "GET /v1/webhooks/subscriptions",
              api: "payments",
              send: () =>
                fx.client.send({ method: "GET", path: "/v1/webhooks/subscriptions", headers: { authorization: `Bearer ${a.jwt}` } }),
            },
            {
              name: "POST /v1/quote",
              api: "payments",
              send: () =>
                fx.client.send({
                  method: "POST",
                  path: "/v1/quote",
                  headers: { "content-type": "application/json" },
                  body: JSON.stringify({ deviceId: a.deviceId, chain: "local", token: "USDC", tier: "1h" }),
                  localAddress: address(),
                }),
            },
            {
              name: "GET /energy/v1/devices/{id}",
              api: "energy",
              send: () =>
                fx.client.send({
                  method: "GET",
                  path: `/energy/v1/devices/${fx.energy.deviceId}`,
                  headers: { authorization: `Bearer ${fx.energy.token}` },
                }),
            },
          ];
          type Sample = { route: string; at: number; status: number | null; ms: number; problem?: string };
          const samples: Sample[] = [];
          let stopAt = Number.POSITIVE_INFINITY;
          const loop = async (route: (typeof routes)[number]) => {
            while (Date.now() < stopAt) {
              const at = Date.now();
              try {
                const res = await route.send();
                const problem =
                  res.status >= 500 && res.status !== 503
                    ? `status ${res.status}: ${res.text.slice(0, 200)}`
                    : res.status >= 400
                      ? envelopeProblem(fx.docs, route.api, res)
                      : undefined;
                samples.push({ route: route.name, at, status: res.status, ms: Date.now() - at, problem });
              } catch (error) {
                samples.push({ route: route.name, at, status: null, ms: Date.now() - at, problem: (error as Error).message });
              }
              await sleep(25);
            }
          };
          const load = Promise.all([...routes, ...routes].map(loop));
          await sleep(1_500);
          const cutAt = Date.now();
          await proxy.refuse();
          await sleep(6_000);
          const restoredAt = Date.now();
          await proxy.accept();
          // Until every route has answered 2xx for two seconds in a row (at most 20 s).
          let recoveredAt: number | undefined;
          while (recoveredAt === undefined && Date.now() - restoredAt < 20_000) {
            await sleep(200);
            const now = Date.now();
            const healthy = routes.every((route) => {
              const recent = samples.filter((x) => x.route === route.name && x.at > restoredAt && x.at > now - 2_000);
              return recent.length > 0 && recent.every((x) => x.status !== null && x.status < 300);
            });
            if (healthy && now - restoredAt >= 2_000) recoveredAt = now - 2_000;
          }
          stopAt = Date.now();
          await load;

          const during = samples.filter((x) => x.at >= cutAt && x.at < restoredAt);
          const problems = samples.filter((x) => x.problem).map((x) => `${x.route} at +${x.at - cutAt} ms: ${x.problem}`);
          assert.deepEqual(problems.slice(0, 20), [], "every answer is below 500 or a 503, in the envelope");
          assert.ok(during.filter((x) => x.status === 503).length >= routes.length, "the outage was seen (503s during it)");
          const slowest = Math.max(...samples.map((x) => x.ms));
          assert.ok(slowest < 5_000, `no request took 5 s or more (slowest ${slowest} ms)`);
          assert.equal(s.relayer.process.exitCode, null, "the relayer kept running");
          assert.ok(recoveredAt !== undefined, "every route answers 2xx again for two seconds within 20 s of the restore");
          const recovered = Math.max(0, recoveredAt - restoredAt);
          const statuses = (list: Sample[]) => [...new Set(list.map((x) => x.status))].sort().join(",");
          t.diagnostic(
            `database outage: ${samples.length} requests; during the 6 s outage: ${during.length} (statuses ${statuses(during)}); ` +
              `all routes healthy ${recovered} ms after the restore; slowest answer ${slowest} ms`,
          );

          // The background work recovers too: a payment is relayed, followed on its event stream (woken by
          // the database's notifications) and announced to a webhook subscriber.
          const order = await createOrder(s, s.sample.devices[3].id, "30m");
          const events = readEventStream(`${s.relayerUrl}/v1/orders/${order.id}/events`, {
            until: (e) => e.event === "payment.succeeded",
            timeoutMs: 30_000,
          });
          await sleep(200);
          const relayed = await pay(s, order, "relayed-permit");
          assert.equal(relayed.status, 202, JSON.stringify(relayed.body));
          const paid = await waitForOrder(s, order.id, (o) => o.status === "success", 30_000);
          const succeededAt = Date.now();
          const streamed = await events;
          assert.ok(
            streamed.some((e) => e.event === "payment.succeeded"),
            JSON.stringify(streamed.map((e) => e.event)),
          );
          assert.ok(
            Date.now() - succeededAt < 3_000,
            `the event stream was woken at once (${Date.now() - succeededAt} ms after the order was paid)`,
          );
          assert.equal(paid.status, "success");
          const ping = await fx.call("POST", `/v1/webhooks/subscriptions/${a.subscriptionId}/test`, { token: a.jwt });
          assert.equal(ping.status, 202, ping.text);
          await fx.receiver.waitFor(
            (d) => (d.envelope?.data as { subscriptionId?: string })?.subscriptionId === a.subscriptionId && d.receivedAt > restoredAt,
            15_000,
            "a webhook after the outage",
          );
        },
      );
    }

    it(
      "an indexer restarted on its kept data takes no payment back: while it re-indexes its last blocks the paid order stays paid, nothing is reverted",
      { timeout: 180_000 },
      async () => {
        const s = stack();
        const order = await createOrder(s, s.sample.devices[0].id, "30m");
        await pay(s, order, "wallet-permit");
        await waitForOrder(s, order.id, (o) => o.status === "success", 60_000);
        const orderId = BigInt(order.paymentDetails.order.orderId);
        const indexer = createIndexerClient(s.indexerUrl);
        // Ponder restarted on its data reverts the rows above its safe checkpoint (the last 30 blocks of a local
        // chain) and indexes those blocks again when the next one comes, or when the new-heads relay announces
        // the chain's head to its new subscription (two to four seconds after it is made); its latest checkpoint
        // still shows the old progress. No block is mined meanwhile (automine off: a transaction the relayer
        // sends on its own waits in the pool).
        await s.chain.rpc("evm_setAutomine", [false]);
        try {
          await s.restartIndexer({ catchUp: false });
          assert.deepEqual(await indexer.ordersByIds([orderId]), [], "the restarted indexer has not re-indexed the order yet");
          // The relayer's payment sync reads the indexer again once its live query reconnects (within seconds).
          const until = Date.now() + 6_000;
          while (Date.now() < until) {
            assert.equal((await waitForOrder(s, order.id, () => true, 5_000)).status, "success", "the order stays paid");
            await sleep(100);
          }
        } finally {
          await s.chain.rpc("evm_setAutomine", [true]);
        }
        await s.chain.rpc("evm_mine");
        await waitUntil("the indexer to index the order again", async () => (await indexer.ordersByIds([orderId])).length === 1, {
          timeoutMs: 30_000,
          intervalMs: 100,
        });
        await sleep(2_000);
        assert.equal((await waitForOrder(s, order.id, () => true, 5_000)).status, "success");
        assert.doesNotMatch(s.relayer.recentOutput(), /payment removed by a chain reorganisation/);
      },
    );

    it(
      "keeps serving reads while the chain's RPC is cut off from the relayer and the indexer; payments answer 503; orders recover when it returns",
      { timeout: 180_000 },
      async () => {
        const s = stack();
        const fx = fixtures();
        const proxy = s.chainProxy!;
        const { a } = fx;
        const refusedFirst = await createOrder(s, s.sample.devices[2].id, "30m");
        const paidMeanwhile = await createOrder(s, s.sample.devices[2].id, "1h");
        const reads: Array<[string, string?]> = [
          [`/v1/orders/${refusedFirst.id}`],
          ["/v1/devices", a.developerKey],
          ["/v1/revenue/splits", a.developerKey],
          [`/v1/participants/${a.participant.id}/earnings`, a.developerKey],
          ["/v1/public/stats"],
          ["/v1/impact"],
          ["/v1/revenue/overview", a.jwt],
          [`/energy/v1/projects/${fx.energy.projectId}`, fx.energy.token],
          [`/energy/v1/evidence/${fx.energy.evidenceRef}`, fx.energy.token],
        ];
        await proxy.refuse();
        try {
          const started = Date.now();
          for (const [path, token] of reads) {
            const res = await fx.client.send({ method: "GET", path, headers: token ? { authorization: `Bearer ${token}` } : {} });
            assert.equal(res.status, 200, `${path} during the RPC outage: ${res.text.slice(0, 200)}`);
          }
          const quote = await fx.call("POST", "/v1/quote", { body: { deviceId: a.deviceId, chain: "local", token: "USDC", tier: "1h" } });
          assert.ok(quote.status === 201 || quote.status === 503, `a quote: ${quote.status} ${quote.text}`);
          // The relayer cannot check or send a payment: 503 in the envelope, at once.
          const relayed = await pay(s, refusedFirst, "relayed-permit");
          assert.equal(relayed.status, 503, JSON.stringify(relayed.body));
          assert.equal(relayed.body.error.code, "unavailable");
          assert.ok(Date.now() - started < 10_000, `the outage answers came quickly (${Date.now() - started} ms)`);
          // A wallet pays another order on the chain itself meanwhile.
          await pay(s, paidMeanwhile, "wallet-permit");
          await sleep(2_000);
          assert.equal(
            (await fx.call("GET", `/v1/orders/${paidMeanwhile.id}`)).json.status,
            "pending",
            "not seen while the RPC is cut off",
          );
          assert.equal(s.relayer.process.exitCode, null);
          assert.equal(s.indexer?.process.exitCode, null, "the indexer kept running");
        } finally {
          await proxy.accept();
        }
        // Back: the order paid meanwhile is picked up, and the refused permit goes through when sent again.
        await waitForOrder(s, paidMeanwhile.id, (o) => o.status === "success", 90_000);
        const retried = await pay(s, refusedFirst, "relayed-permit");
        assert.equal(retried.status, 202, JSON.stringify(retried.body));
        await waitForOrder(s, refusedFirst.id, (o) => o.status === "success", 60_000);
      },
    );
  });
}
