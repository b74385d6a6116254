// Benchmark: the webhook dispatcher of a real relayer process, on PostgreSQL and on PGlite. The relayer runs
// as in production (a child process with all its workers, LOG_LEVEL=info, WEBHOOK_CONCURRENCY at its
// default of 16) against a local chain and the device cloud (no indexer: nothing is paid here); one
// subscription points at a receiver in this process that verifies every delivery with sdk/src/webhooks.ts
// verifyWebhook (both signatures) and answers 204.
//
// Events are test pings (POST /v1/webhooks/subscriptions/{id}/test): the route writes the event to the
// outbox with the relayer's own code path (recordWebhookEvent in a transaction; NOTIFY at commit), and the
// dispatcher fans it out, claims and delivers it like any other event.
//
//   1. Burst: --events (5,000) pings queued as fast as --clients (16) concurrent clients can, the
//      dispatcher delivering meanwhile. Deliveries per second over the whole run (first ping sent to last
//      delivery received) and over the drain (after the last ping was queued); per event, the time from
//      its outbox write (the event's sentAt, ms) to its delivery received and verified: p50, p99, max.
//   2. Steady: pings at --rate per second (default: half the burst's delivery rate) for --seconds (10);
//      the same per-event latency, at a load the dispatcher keeps up with.
//
// The relayer's resident size (VmRSS, every 100 ms) is reported for each phase: peak and steady (median
// after the phase's first quarter).
//
//   node bench/webhook-dispatch.ts [--db postgres|pglite|both] [--events 5000] [--clients 16] [--rate R] [--seconds 10]
import http from "node:http";
import type { AddressInfo } from "node:net";
import { setTimeout as sleep } from "node:timers/promises";
import { verifyWebhook } from "../sdk/src/webhooks.ts";
import { type Stack, startStack } from "../test/support/stack.ts";
import {
  type Headline,
  type RssWindow,
  type Summary,
  benchDatabases,
  fmt,
  machine,
  machineInfo,
  onInterrupt,
  option,
  sampleRss,
  summarize,
  writeResult,
} from "./common.ts";

const eventCount = Number(option("events", "5000"));
const clients = Number(option("clients", "16"));
const steadySeconds = Number(option("seconds", "10"));
const fixedRate = option("rate", "");

async function startReceiver() {
  let secret = "";
  const latencies: number[] = [];
  let received = 0;
  let failures = 0;
  let first = 0;
  let last = 0;
  const seen = new Set<string>();
  let duplicates = 0;
  let waiter: { count: number; resolve: () => void } | undefined;
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      const body = Buffer.concat(chunks);
      try {
        const envelope = verifyWebhook<{ sentAt: string }>({ secret, body, headers: req.headers });
        verifyWebhook({ secret, body, headers: req.headers, scheme: "service" });
        const now = Date.now();
        res.writeHead(204).end();
        if (seen.has(envelope.id)) {
          duplicates++;
          return;
        }
        seen.add(envelope.id);
        received++;
        first ||= performance.now();
        last = performance.now();
        latencies.push(now - Date.parse(envelope.data.sentAt));
        if (waiter && received >= waiter.count) waiter.resolve();
      } catch (error) {
        failures++;
        res.writeHead(400).end();
        console.error(`delivery failed verification: ${(error as Error).message}`);
      }
    });
  });
  server.listen(0, "127.0.0.1");
  await new Promise((resolve) => server.once("listening", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/hooks`,
    setSecret: (s: string) => void (secret = s),
    /** Forgets what was received (a new phase). */
    reset() {
      latencies.length = 0;
      received = 0;
      first = 0;
      last = 0;
    },
    stats: () => ({ received, failures, duplicates, first, last, latencies: [...latencies] }),
    /** Resolves once `count` deliveries were received in this phase (or rejects after `timeoutMs`). */
    waitFor(count: number, timeoutMs: number): Promise<void> {
      if (received >= count) return Promise.resolve();
      return new Promise((resolve, reject) => {
        const timer = setTimeout(
          () => reject(new Error(`received ${received} of ${count} deliveries in ${timeoutMs / 1000} s`)),
          timeoutMs,
        );
        waiter = {
          count,
          resolve: () => {
            clearTimeout(timer);
            waiter = undefined;
            resolve();
          },
        };
      });
    },
    async close() {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

async function ping(stack: Stack, token: string, subscriptionId: string): Promise<void> {
  const response = await fetch(`${stack.relayerUrl}/v1/webhooks/subscriptions/${subscriptionId}/test`, {
    method: "POST",
    headers: { authorization: `Bearer ${token}` },
  });
  await response.arrayBuffer();
  if (response.status !== 202) throw new Error(`POST .../test answered ${response.status}`);
}

type Phase = {
  events: number;
  seconds: number;
  deliveriesPerSecond: number;
  latencyMs: Summary;
  relayerRss?: RssWindow;
};

const startedAt = new Date().toISOString();
const machineAtStart = machineInfo();
console.log(`webhook dispatch: ${fmt(eventCount)} test pings to one receiver answering 204; ${machine()}`);
const results: Record<
  string,
  { burst: Phase & { queueSeconds: number; drainDeliveriesPerSecond: number }; steady: Phase & { rate: number } }
> = {};
const headlines: Headline[] = [];

for (const kind of benchDatabases(["postgres", "pglite"])) {
  // The test-ping route's per-tenant limit is not what is measured here: lifted. One tenant sends every event, so
  // the dispatcher delivers them WEBHOOK_TENANT_CONCURRENCY (4) at a time, what one tenant gets in production.
  const stackStarting = startStack({
    label: `bench-webhooks-${kind}`,
    database: kind,
    indexer: false,
    relayerEnv: { WEBHOOK_TEST_PINGS_PER_MINUTE: "10000" },
  });
  const forget = onInterrupt(async () => (await stackStarting).stop());
  const stack = await stackStarting;
  const receiver = await startReceiver();
  try {
    const login = await stack.api("POST", "/v1/auth/login", { body: { email: stack.sample.email, password: stack.sample.password } });
    const token = login.body.accessToken as string;
    const subscription = await stack.api("POST", "/v1/webhooks/subscriptions", {
      token,
      body: { url: receiver.url, eventTypes: ["payment.succeeded"], description: "dispatch benchmark" },
    });
    if (subscription.status !== 201) throw new Error(`subscription: ${subscription.status} ${subscription.text}`);
    receiver.setSecret(subscription.body.secret);
    const subscriptionId = subscription.body.id as string;
    const rss = sampleRss(stack.relayer.process.pid!, 100);

    // Warm-up.
    await Promise.all(Array.from({ length: 50 }, () => ping(stack, token, subscriptionId)));
    await receiver.waitFor(50, 30_000);
    receiver.reset();

    // 1. Burst.
    rss.begin("burst");
    const started = performance.now();
    let sent = 0;
    await Promise.all(
      Array.from({ length: clients }, async () => {
        while (sent < eventCount) {
          sent++;
          await ping(stack, token, subscriptionId);
        }
      }),
    );
    const queued = performance.now();
    const deliveredAtQueued = receiver.stats().received;
    await receiver.waitFor(eventCount, 300_000);
    rss.end();
    const burstStats = receiver.stats();
    const total = (burstStats.last - started) / 1000;
    const drain = (burstStats.last - queued) / 1000;
    const burst = {
      events: eventCount,
      seconds: Math.round(total * 100) / 100,
      queueSeconds: Math.round(((queued - started) / 1000) * 100) / 100,
      deliveriesPerSecond: Math.round(eventCount / total),
      drainDeliveriesPerSecond: drain > 0 ? Math.round((eventCount - deliveredAtQueued) / drain) : Number.NaN,
      latencyMs: summarize(burstStats.latencies),
    };
    console.log(
      `  ${kind.padEnd(8)} burst: ${fmt(eventCount)} pings queued in ${burst.queueSeconds} s (${fmt(eventCount / burst.queueSeconds)}/s), ` +
        `all delivered after ${burst.seconds} s: ${fmt(burst.deliveriesPerSecond)} deliveries/s ` +
        `(${fmt(burst.drainDeliveriesPerSecond)}/s after the last was queued); outbox -> received p50 ${fmt(burst.latencyMs.p50)} ms, ` +
        `p99 ${fmt(burst.latencyMs.p99)} ms, max ${fmt(burst.latencyMs.max)} ms`,
    );

    // 2. Steady rate.
    await sleep(1_000);
    receiver.reset();
    const rate = fixedRate ? Number(fixedRate) : Math.max(10, Math.round(burst.deliveriesPerSecond / 2));
    const count = Math.round(rate * steadySeconds);
    rss.begin("steady");
    const steadyStart = performance.now();
    const inFlight: Array<Promise<void>> = [];
    for (let i = 0; i < count; i++) {
      const due = steadyStart + (i * 1000) / rate;
      const wait = due - performance.now();
      if (wait > 1) await sleep(wait);
      inFlight.push(ping(stack, token, subscriptionId));
    }
    await Promise.all(inFlight);
    await receiver.waitFor(count, 120_000);
    rss.end();
    const steadyStats = receiver.stats();
    const steadyTotal = (steadyStats.last - steadyStart) / 1000;
    const steady = {
      rate,
      events: count,
      seconds: Math.round(steadyTotal * 100) / 100,
      deliveriesPerSecond: Math.round(count / steadyTotal),
      latencyMs: summarize(steadyStats.latencies),
    };
    const windows = rss.stop();
    const burstRss = windows.find((w) => w.label === "burst");
    const steadyRss = windows.find((w) => w.label === "steady");
    console.log(
      `  ${kind.padEnd(8)} steady: ${fmt(rate)} pings/s for ${steadySeconds} s: outbox -> received p50 ${fmt(steady.latencyMs.p50)} ms, ` +
        `p99 ${fmt(steady.latencyMs.p99)} ms, max ${fmt(steady.latencyMs.max)} ms`,
    );
    console.log(
      `  ${kind.padEnd(8)} relayer RSS: burst steady ${fmt(burstRss?.steadyMiB ?? Number.NaN)} MiB, peak ${fmt(burstRss?.peakMiB ?? Number.NaN)} MiB; ` +
        `steady-rate phase steady ${fmt(steadyRss?.steadyMiB ?? Number.NaN)} MiB, peak ${fmt(steadyRss?.peakMiB ?? Number.NaN)} MiB`,
    );
    const final = receiver.stats();
    if (final.failures > 0) throw new Error(`${final.failures} deliveries failed verification`);
    results[kind] = { burst: { ...burst, relayerRss: burstRss }, steady: { ...steady, relayerRss: steadyRss } };
    headlines.push({
      label: `${kind} webhook dispatch, ${fmt(eventCount)} events`,
      value: `${fmt(burst.deliveriesPerSecond)} deliveries/s (drain ${fmt(burst.drainDeliveriesPerSecond)}/s); outbox -> received p50 ${fmt(burst.latencyMs.p50)} ms, p99 ${fmt(burst.latencyMs.p99)} ms`,
    });
    headlines.push({
      label: `${kind} webhook latency at ${fmt(rate)} events/s`,
      value: `p50 ${fmt(steady.latencyMs.p50)} ms, p99 ${fmt(steady.latencyMs.p99)} ms`,
    });
    headlines.push({
      label: `${kind} relayer RSS during dispatch`,
      value: `steady ${fmt(burstRss?.steadyMiB ?? Number.NaN)} MiB, peak ${fmt(burstRss?.peakMiB ?? Number.NaN)} MiB`,
    });
  } finally {
    await receiver.close();
    await stack.stop();
    forget();
  }
}
const file = await writeResult("webhook-dispatch", {
  startedAt,
  machine: machineAtStart,
  settings: { events: eventCount, clients, steadySeconds, webhookConcurrency: 16, relayerLogLevel: "info" },
  results,
  headlines,
});
console.log(`wrote ${file}`);
process.exit(0);
