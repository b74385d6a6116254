// Benchmark: end-to-end latency of a payment, on PostgreSQL and on PGlite. The whole system runs on loopback
// as in the end-to-end tests (a local Hardhat chain mining each transaction as it arrives, the device cloud,
// the indexer at its local settings, the relayer with all its workers, LOG_LEVEL=info); a webhook receiver
// in this process is subscribed to payment.succeeded. Payments are made one at a time (a random 0-100 ms
// pause before each, so they fall at random points of the pollers' cycles), each through one of two rails:
//
//   wallet-permit   the wallet signs the permit and submits payWithPermit itself (relayer queuing is not in
//                   the measured path): "submitted" is when this process sends the signed transaction
//   relayed-permit  the wallet signs the permit and POSTs it to /v1/orders/{id}/permit; the relayer checks,
//                   simulates, queues and sends payWithPermit: "submitted" is when the POST is sent
//
// For each payment, the times at which this process observes:
//   mined     the transaction's receipt (polled every 1 ms from the moment the transaction hash is known:
//             the block's own timestamp has a resolution of one second)
//   success   GET /v1/orders/{id} answering status "success" (polled every --poll-ms, default 5 ms)
//   sse       the payment.succeeded event on the order's event stream (opened before paying)
//   webhook   the payment.succeeded delivery, received and verified with sdk/src/webhooks.ts verifyWebhook
// each reported from mined and from submitted: p50, p90, p99, max.
//
//   node bench/e2e-latency.ts [--payments 200] [--warmup 5] [--db postgres|pglite|both]
//                             [--rails wallet-permit,relayed-permit] [--poll-ms 5]
import http from "node:http";
import type { AddressInfo } from "node:net";
import { setTimeout as sleep } from "node:timers/promises";
import type { z } from "@hono/zod-openapi";
import { type Address, type Hex, encodeFunctionData } from "viem";
import { paymentRouterAbi } from "../generated/abis.ts";
import { localAccount } from "../lib/sample-data.ts";
import type { LoginResponse } from "../relayer/src/v1/auth.schemas.ts";
import type { Order, RelayAccepted } from "../relayer/src/v1/orders.schemas.ts";
import type { Quote } from "../relayer/src/v1/quote.schemas.ts";
import type { CreatedWebhookSubscription } from "../relayer/src/v1/webhook-subscriptions.schemas.ts";
import { serverSentEvents } from "../sdk/src/event-stream.ts";
import { type OrderPermit, signOrderPermit } from "../sdk/src/payment-order.ts";
import { verifyWebhook } from "../sdk/src/webhooks.ts";
import { type Stack, startStack } from "../test/support/stack.ts";
import {
  type Headline,
  type Summary,
  type Target,
  benchDatabases,
  fmt,
  machine,
  machineInfo,
  onInterrupt,
  option,
  summarize,
  target,
  writeResult,
} from "./common.ts";

const payments = Number(option("payments", "200"));
const warmup = Number(option("warmup", "5"));
const pollMs = Number(option("poll-ms", "5"));
const rails = option("rails", "wallet-permit,relayed-permit")
  .split(",")
  .map((r) => r.trim()) as Rail[];
for (const rail of rails) {
  if (rail !== "wallet-permit" && rail !== "relayed-permit") throw new Error(`--rails: unknown rail ${rail}`);
}
type Rail = "wallet-permit" | "relayed-permit";
const WALLET_INDEX = 7;
const STAGES = ["mined", "success", "sse", "webhook"] as const;
type Stage = (typeof STAGES)[number];

/** A webhook receiver answering 204, verifying every delivery (both signature schemes) and waking whoever
 * waits for an order's payment.succeeded. */
async function startReceiver() {
  let secret = "";
  const waiting = new Map<string, (at: number) => void>();
  const early = new Map<string, number>();
  let failures = 0;
  let deliveries = 0;
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      const body = Buffer.concat(chunks);
      deliveries++;
      try {
        const envelope = verifyWebhook<{ orderId: string }>({ secret, body, headers: req.headers });
        verifyWebhook({ secret, body, headers: req.headers, scheme: "service" });
        const at = performance.now();
        res.writeHead(204).end();
        if (envelope.type !== "payment.succeeded") return;
        const wake = waiting.get(envelope.data.orderId);
        if (wake) wake(at);
        else early.set(envelope.data.orderId, at);
      } catch (error) {
        failures++;
        console.error(`webhook verification failed: ${(error as Error).message}`);
        res.writeHead(400).end();
      }
    });
  });
  server.listen(0, "127.0.0.1");
  await new Promise((resolve) => server.once("listening", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/payg`,
    setSecret: (s: string) => void (secret = s),
    failures: () => failures,
    deliveries: () => deliveries,
    /** Resolves with the time the order's payment.succeeded was received and verified. */
    arrival(orderId: string): Promise<number> {
      const seen = early.get(orderId);
      if (seen !== undefined) return Promise.resolve(seen);
      return new Promise((resolve) => waiting.set(orderId, resolve));
    },
    async close() {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

/** An order's event stream: resolves `opened` on the first event (state: the stream is subscribed) and
 * `succeeded` with the arrival time of payment.succeeded. */
function openStream(url: string) {
  const controller = new AbortController();
  let opened!: () => void;
  let succeeded!: (at: number) => void;
  let failed!: (error: Error) => void;
  const openedP = new Promise<void>((resolve) => (opened = resolve));
  const succeededP = new Promise<number>((resolve, reject) => {
    succeeded = resolve;
    failed = reject;
  });
  succeededP.catch(() => undefined); // awaited later; a failure before then (the run stopped) is not unhandled
  void (async () => {
    const response = await fetch(url, { signal: controller.signal, headers: { accept: "text/event-stream" } });
    if (!response.ok || !response.body) throw new Error(`event stream answered ${response.status}`);
    for await (const { event } of serverSentEvents(response.body)) {
      if (event === "state") opened();
      if (event === "payment.succeeded") succeeded(performance.now());
    }
    throw new Error("the event stream closed before payment.succeeded");
  })().catch((error: Error) => {
    if (error.name !== "AbortError") failed(error);
  });
  return { opened: openedP, succeeded: succeededP, close: () => controller.abort() };
}

/** A JSON request; `T` is the body of the success answer (a route's response schema), to read once the
 * status says success. */
async function json<T>(url: string, init: RequestInit = {}): Promise<{ status: number; body: T }> {
  const response = await fetch(url, init);
  const text = await response.text();
  return { status: response.status, body: (text ? JSON.parse(text) : undefined) as T };
}

async function rpc<T>(url: string, method: string, params: unknown[]): Promise<T> {
  const { body } = await json<{ result?: T; error?: { message: string } }>(url, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method, params }),
  });
  if (body.error) throw new Error(`${method}: ${body.error.message}`);
  return body.result as T;
}

function waitForReceipt(rpcUrl: string, hash: Hex): Promise<{ at: number; status: string; blockNumber: number }> {
  const receipt = pollReceipt(rpcUrl, hash);
  receipt.catch(() => undefined); // awaited later; a failure before then must not count as unhandled
  return receipt;
}

async function pollReceipt(rpcUrl: string, hash: Hex): Promise<{ at: number; status: string; blockNumber: number }> {
  const started = performance.now();
  for (;;) {
    const receipt = await rpc<{ status: Hex; blockNumber: Hex } | null>(rpcUrl, "eth_getTransactionReceipt", [hash]);
    if (receipt) {
      return { at: performance.now(), status: receipt.status === "0x1" ? "success" : "reverted", blockNumber: Number(receipt.blockNumber) };
    }
    if (performance.now() - started > 30_000) throw new Error(`no receipt for ${hash} in 30 s`);
    await sleep(1);
  }
}

type Sample = { rail: Rail; submitted: number; times: Record<Stage, number> };

/** The relayer's order as this benchmark reads it: the response schema, with the hex strings the schema
 * validates typed as viem's Hex and Address. */
type OrderBody = z.output<typeof Order> & {
  paymentDetails?: {
    router: Address;
    token: { address: Address };
    order: { deviceId: Hex; token: Address; split: Address };
    voucherSignature: Hex;
    permit: OrderPermit;
  };
  relay: { transactionHash: Hex | null } | null;
};

/** The least time between two permits of the relayed rail (the relay route's rate limit is 5 a second). */
const RELAY_SPACING_MS = 250;

async function runRail(stack: Stack, rail: Rail, receiver: Awaited<ReturnType<typeof startReceiver>>, count: number): Promise<Sample[]> {
  const base = stack.relayerUrl;
  const wallet = localAccount(WALLET_INDEX);
  const rpcUrl = stack.chain.rpcUrl;
  const chainId = stack.chain.record.chainId;
  let permitNonce: bigint | undefined;
  let txNonce = Number(await rpc<Hex>(rpcUrl, "eth_getTransactionCount", [wallet.address, "pending"]));
  const devices = stack.sample.devices;
  const samples: Sample[] = [];
  let lastRelayedAt = -Infinity;

  for (let i = 0; i < count; i++) {
    const deviceId = devices[i % devices.length].id;
    const quote = await json<z.output<typeof Quote>>(`${base}/v1/quote`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ deviceId, chain: "local", token: "USDC", tier: "1h" }),
    });
    if (quote.status !== 201) throw new Error(`quote: ${quote.status} ${JSON.stringify(quote.body)}`);
    const created = await json<OrderBody>(`${base}/v1/orders`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ deviceId, chain: "local", token: "USDC", amountUsd: quote.body.amountUsd, quoteId: quote.body.quoteId }),
    });
    if (created.status !== 201) throw new Error(`order: ${created.status} ${JSON.stringify(created.body)}`);
    const order = created.body;
    const details = order.paymentDetails;
    if (!details) throw new Error(`order ${order.id}: no paymentDetails`);

    if (permitNonce === undefined) {
      permitNonce = BigInt(
        await rpc<Hex>(rpcUrl, "eth_call", [
          { to: details.token.address, data: `0x7ecebe00${wallet.address.slice(2).toLowerCase().padStart(64, "0")}` },
          "latest",
        ]),
      );
    }
    const signature = await signOrderPermit(wallet, details.permit, permitNonce);
    let raw: Hex | undefined;
    if (rail === "wallet-permit") {
      const o = details.order;
      raw = await wallet.signTransaction({
        chainId,
        type: "eip1559",
        to: details.router,
        data: encodeFunctionData({
          abi: paymentRouterAbi,
          functionName: "payWithPermit",
          args: [
            {
              orderId: BigInt(o.orderId),
              deviceId: o.deviceId,
              token: o.token,
              split: o.split,
              amount: BigInt(o.amount),
              expiry: BigInt(o.expiry),
            },
            details.voucherSignature,
            wallet.address,
            signature,
          ],
        }),
        gas: 300_000n,
        nonce: txNonce,
        maxFeePerGas: 100_000_000_000n,
        maxPriorityFeePerGas: 1_000_000_000n,
      });
    }

    const stream = openStream(`${base}/v1/orders/${order.id}/events`);
    await stream.opened;
    const webhook = receiver.arrival(order.id);
    // The relay route allows one client 5 permits a second after a burst of 30 (relayer/src/v1/orders.ts); on
    // a fast machine a payment takes less than 200 ms, so the relayed rail keeps its permits 250 ms apart
    // (before the random pause) instead of measuring 429s.
    if (rail === "relayed-permit") await sleep(Math.max(0, lastRelayedAt + RELAY_SPACING_MS - performance.now()));
    await sleep(Math.random() * 100);

    const submitted = performance.now();
    let hash: Hex | undefined;
    let mined: Promise<{ at: number; status: string }> | undefined;
    if (rail === "wallet-permit") {
      hash = await rpc<Hex>(rpcUrl, "eth_sendRawTransaction", [raw]);
      mined = waitForReceipt(rpcUrl, hash);
    } else {
      lastRelayedAt = performance.now();
      const relayed = await json<z.output<typeof RelayAccepted> & { transactionHash: Hex | null }>(`${base}/v1/orders/${order.id}/permit`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ owner: wallet.address, signature }),
      });
      if (relayed.status !== 202) throw new Error(`permit: ${relayed.status} ${JSON.stringify(relayed.body)}`);
      if (relayed.body.transactionHash) {
        hash = relayed.body.transactionHash;
        mined = waitForReceipt(rpcUrl, hash!);
      }
    }
    // GET /v1/orders/{id} until success; on the relayed rail it also reveals the relayer's transaction hash.
    let success = 0;
    while (!success) {
      const read = await json<OrderBody>(`${base}/v1/orders/${order.id}`);
      if (read.status !== 200) throw new Error(`GET order: ${read.status}`);
      if (!mined && read.body.relay?.transactionHash) {
        hash = read.body.relay.transactionHash;
        mined = waitForReceipt(rpcUrl, hash!);
      }
      if (read.body.relay?.status === "failed" || read.body.relay?.status === "reverted") {
        throw new Error(`the relayer's transaction failed: ${read.body.relay.error}`);
      }
      if (read.body.status === "success") success = performance.now();
      else if (performance.now() - submitted > 30_000) throw new Error(`order ${order.id} not success in 30 s`);
      else await sleep(pollMs);
    }
    const receipt = await mined!;
    if (receipt.status !== "success") throw new Error(`transaction ${hash} reverted`);
    const timeout = (what: string) =>
      sleep(30_000).then(() => {
        throw new Error(`${what} of order ${order.id} not received in 30 s`);
      });
    const [sse, hook] = await Promise.all([
      Promise.race([stream.succeeded, timeout("payment.succeeded on the event stream")]),
      Promise.race([webhook, timeout("the payment.succeeded webhook")]),
    ]);
    stream.close();
    permitNonce++;
    if (rail === "wallet-permit") txNonce++;
    samples.push({ rail, submitted, times: { mined: receipt.at, success, sse, webhook: hook } });
    if ((i + 1) % 25 === 0) process.stdout.write(`  ${rail}: ${i + 1}/${count}\r`);
  }
  return samples;
}

type RailResult = { fromMined: Record<Stage, Summary>; fromSubmitted: Record<Stage, Summary> };

function analyse(samples: Sample[]): RailResult {
  const fromMined = {} as Record<Stage, Summary>;
  const fromSubmitted = {} as Record<Stage, Summary>;
  for (const stage of STAGES) {
    fromMined[stage] = summarize(samples.map((s) => s.times[stage] - s.times.mined));
    fromSubmitted[stage] = summarize(samples.map((s) => s.times[stage] - s.submitted));
  }
  return { fromMined, fromSubmitted };
}

const startedAt = new Date().toISOString();
const machineAtStart = machineInfo();
console.log(`end-to-end payment latency: ${payments} payments per rail (+${warmup} warm-up); ${machine()}`);
const results: Record<string, Record<string, RailResult & { samples: number }>> = {};
const headlines: Headline[] = [];
const targets: Target[] = [];
for (const kind of benchDatabases(["postgres", "pglite"])) {
  const stackStarting = startStack({ label: `bench-e2e-${kind}`, database: kind });
  const forget = onInterrupt(async () => (await stackStarting).stop());
  const stack = await stackStarting;
  const receiver = await startReceiver();
  try {
    const login = await json<z.output<typeof LoginResponse>>(`${stack.relayerUrl}/v1/auth/login`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ email: stack.sample.email, password: stack.sample.password }),
    });
    const subscription = await json<z.output<typeof CreatedWebhookSubscription>>(`${stack.relayerUrl}/v1/webhooks/subscriptions`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${login.body.accessToken}` },
      body: JSON.stringify({ url: receiver.url, eventTypes: ["payment.succeeded"], description: "e2e latency benchmark" }),
    });
    if (subscription.status !== 201) throw new Error(`subscription: ${subscription.status} ${JSON.stringify(subscription.body)}`);
    receiver.setSecret(subscription.body.secret);

    results[kind] = {};
    for (const rail of rails) {
      const samples = (await runRail(stack, rail, receiver, warmup + payments)).slice(warmup);
      const r = analyse(samples);
      results[kind][rail] = { ...r, samples: samples.length };
      console.log(`\n${kind} ${rail} (n=${samples.length})                      p50      p90      p99      max  ms`);
      for (const [from, table] of [
        ["mined", r.fromMined],
        ["submitted", r.fromSubmitted],
      ] as const) {
        for (const stage of STAGES) {
          if (from === "mined" && stage === "mined") continue;
          const s = table[stage];
          console.log(
            `  ${`${from} -> ${stage}`.padEnd(36)} ${fmt(s.p50).padStart(7)}  ${fmt(s.p90).padStart(7)}  ${fmt(s.p99).padStart(7)}  ${fmt(s.max).padStart(7)}`,
          );
        }
      }
      const hook = r.fromMined.webhook;
      headlines.push({
        label: `${kind} ${rail}: mined -> webhook verified`,
        value: `p50 ${fmt(hook.p50)} ms, p99 ${fmt(hook.p99)} ms (n=${hook.n})`,
        target: "p50 <= 250 ms, p99 <= 1,000 ms",
        met: hook.p50 <= 250 && hook.p99 <= 1_000,
      });
      headlines.push({
        label: `${kind} ${rail}: mined -> order reads success / SSE`,
        value: `p50 ${fmt(r.fromMined.success.p50)} / ${fmt(r.fromMined.sse.p50)} ms, p99 ${fmt(r.fromMined.success.p99)} / ${fmt(r.fromMined.sse.p99)} ms`,
      });
      targets.push(target(`${kind} ${rail} mined->webhook p50`, hook.p50, "atMost", 250, "ms"));
      targets.push(target(`${kind} ${rail} mined->webhook p99`, hook.p99, "atMost", 1_000, "ms"));
    }
    if (receiver.failures() > 0) throw new Error(`${receiver.failures()} webhook deliveries failed verification`);
  } finally {
    await receiver.close();
    await stack.stop();
    forget();
  }
}
console.log("\ntargets (webhook, from mined): p50 <= 250 ms, p99 <= 1,000 ms");
for (const t of targets)
  console.log(
    `  ${t.met ? "met   " : "MISSED"} ${t.name}: ${fmt(t.value)} ${t.unit} (${t.kind === "atMost" ? "<=" : ">="} ${fmt(t.limit)})`,
  );
const file = await writeResult("e2e-latency", {
  startedAt,
  machine: machineAtStart,
  settings: { payments, warmup, pollMs, rails, webhookEvents: ["payment.succeeded"], relayerLogLevel: "info" },
  results,
  headlines,
  targets,
});
console.log(`wrote ${file}`);
process.exit(0);
