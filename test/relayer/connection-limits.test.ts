// Connection admission and timeouts end to end (relayer/src/http/connection-limits.ts): stalled connections
// from one loopback address and from many (127.0.0.0/8 all reaches the relayer) are held to the per-client
// and per-process caps, while /v1/health and order reads from another address still answer within a second;
// a connection over the cap gets 503 with retry-after in the envelope; the process-wide cap of order event
// streams answers 503; then, with short timeouts, trickled headers, a stalled body and a body trickled past
// the request's time limit are each answered 408 and closed in seconds, even when the client never closes.
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { type DatabaseKind, oneDatabaseKind } from "../support/databases.ts";
import { type RawConnection, closeAll, firstResponse, loopbackAddresses, openMany, openRaw } from "../support/loopback-clients.ts";
import { createOrder } from "../support/pay.ts";
import { type Stack, startStack } from "../support/stack.ts";

const MAX_CONNECTIONS = 1000;
const PER_CLIENT = 40;
const STREAMS_PER_CLIENT = 5;
const STREAMS_MAX = 8;

/** A POST whose body never comes: headers and 10 of 1,000 bytes. */
const STALLED_POST = `POST /v1/orders HTTP/1.1\r\nhost: relayer\r\ncontent-type: application/json\r\ncontent-length: 1000\r\n\r\n{"device":`;

const port = (stack: Stack) => Number(new URL(stack.relayerUrl).port);

/** Waits until `check` holds (every 100 ms, up to `timeoutMs`). */
async function until(what: string, check: () => boolean, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** Times GET `path` from 127.0.0.1 on a new connection, five times; every answer must be 200. */
async function probe(stack: Stack, path: string): Promise<number[]> {
  const times: number[] = [];
  for (let i = 0; i < 5; i++) {
    const started = performance.now();
    const response = await fetch(`${stack.relayerUrl}${path}`, { headers: { connection: "close" }, signal: AbortSignal.timeout(20_000) });
    await response.arrayBuffer();
    times.push(performance.now() - started);
    assert.equal(response.status, 200, `${path} answered ${response.status}`);
  }
  return times;
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
const openOnes = (connections: RawConnection[]) => connections.filter((c) => !c.closed());

const database = oneDatabaseKind();
describe(`connection limits on ${database}`, { concurrency: false, timeout: 600_000 }, () => {
  let stack: Stack;
  let orderId: string;

  before(async () => {
    stack = await startStack({
      label: `connection-limits-${database}`,
      database: database as DatabaseKind,
      indexer: false,
      relayerEnv: {
        HTTP_MAX_CONNECTIONS: String(MAX_CONNECTIONS),
        HTTP_MAX_CONNECTIONS_PER_CLIENT: String(PER_CLIENT),
        // Long enough that nothing stalled is timed out while the caps are tested.
        HTTP_HEADERS_TIMEOUT_MS: "120000",
        HTTP_REQUEST_TIMEOUT_MS: "120000",
        HTTP_BODY_PROGRESS_TIMEOUT_MS: "120000",
        ORDER_EVENT_STREAMS_PER_CLIENT: String(STREAMS_PER_CLIENT),
        ORDER_EVENT_STREAMS_MAX: String(STREAMS_MAX),
      },
    });
    orderId = (await createOrder(stack)).id as string;
  });
  after(async () => {
    await stack?.stop();
  });

  it("one host: connections past its cap are closed at accept; health and order reads still answer", async () => {
    const attacker = await openMany(port(stack), ["127.0.0.2"], 5 * PER_CLIENT, STALLED_POST);
    try {
      await until("the relayer to close what is over the per-client cap", () => openOnes(attacker).length <= PER_CLIENT);
      // The admitted ones are held (no timeout is near): exactly the cap stays open.
      await new Promise((resolve) => setTimeout(resolve, 1_000));
      assert.equal(openOnes(attacker).length, PER_CLIENT);
      // Closed at accept: no answer was written to them.
      assert.ok(attacker.filter((c) => c.closed()).every((c) => c.received() === ""));
      const health = await probe(stack, "/v1/health");
      const order = await probe(stack, `/v1/orders/${orderId}`);
      console.log(`# one host, ${attacker.length} stalled: health ${health.map(Math.round)} ms, order ${order.map(Math.round)} ms`);
      assert.ok(median(health) < 1_000 && median(order) < 1_000, `health ${health}, order ${order}`);
    } finally {
      closeAll(attacker);
    }
  });

  it("many hosts: 3,000 stalled connections from 150 addresses are held to the process's cap; health and order reads still answer", async () => {
    const attackers = await openMany(port(stack), loopbackAddresses(10, 159), 20, STALLED_POST);
    try {
      await until("the relayer to hold no more than its cap", () => openOnes(attackers).length <= MAX_CONNECTIONS);
      const health = await probe(stack, "/v1/health");
      const order = await probe(stack, `/v1/orders/${orderId}`);
      console.log(`# 150 hosts, ${attackers.length} stalled: health ${health.map(Math.round)} ms, order ${order.map(Math.round)} ms`);
      assert.ok(median(health) < 1_000 && median(order) < 1_000, `health ${health}, order ${order}`);
      // Answered over the cap (503) connections are closed too; what stays open is within the cap.
      await new Promise((resolve) => setTimeout(resolve, 3_000));
      assert.ok(openOnes(attackers).length <= MAX_CONNECTIONS, `${openOnes(attackers).length} open`);

      // The probes' places (each took one and closed it) are taken again: the relayer is at its cap.
      attackers.push(...(await openMany(port(stack), loopbackAddresses(160, 169), 3, STALLED_POST)));
      await new Promise((resolve) => setTimeout(resolve, 1_000));
      assert.ok(openOnes(attackers).length <= MAX_CONNECTIONS, `${openOnes(attackers).length} open`);
      // A client holding as many as anyone gets no one's place: 503 with retry-after, in the envelope.
      const held = new Map<string, number>();
      for (const c of openOnes(attackers)) held.set(c.localAddress, (held.get(c.localAddress) ?? 0) + 1);
      const [busiest] = [...held.entries()].sort((a, b) => b[1] - a[1])[0];
      const extra = await openRaw(port(stack), busiest, "GET /v1/health HTTP/1.1\r\nhost: relayer\r\n\r\n");
      await until("the answer over the cap", () => extra.closed() || firstResponse(extra.received()).status !== 0);
      const answer = firstResponse(extra.received());
      assert.equal(answer.status, 503, extra.received());
      assert.equal(answer.headers.get("retry-after"), "2");
      assert.equal(answer.headers.get("connection"), "close");
      assert.equal(JSON.parse(answer.body).error.code, "unavailable");
      await until("the over-cap connection to be closed", () => extra.closed());
    } finally {
      closeAll(attackers);
    }
  });

  it("order event streams: the per-client cap answers 429, the process's cap 503, both with retry-after", async () => {
    const request = `GET /v1/orders/${orderId}/events HTTP/1.1\r\nhost: relayer\r\naccept: text/event-stream\r\n\r\n`;
    const statusOf = async (connections: RawConnection[]) => {
      await until("every stream's answer", () => connections.every((c) => c.closed() || firstResponse(c.received()).status !== 0));
      return connections.map((c) => firstResponse(c.received()));
    };
    const held: RawConnection[] = [];
    /** Opens `n` streams from `address`, one after the other, each answered before the next: their statuses. */
    const open = async (address: string, n: number) => {
      const answers = [];
      for (let i = 0; i < n; i++) {
        const [connection] = await openMany(port(stack), [address], 1, request);
        held.push(connection);
        answers.push((await statusOf([connection]))[0]);
      }
      return answers;
    };
    try {
      const first = await open("127.0.0.200", STREAMS_PER_CLIENT + 1);
      assert.deepEqual(
        first.map((a) => a.status),
        [...Array(STREAMS_PER_CLIENT).fill(200), 429],
      );
      assert.ok(Number(first[STREAMS_PER_CLIENT].headers.get("retry-after")) > 0);
      const second = await open("127.0.0.201", STREAMS_MAX - STREAMS_PER_CLIENT);
      assert.deepEqual(
        second.map((a) => a.status),
        Array(STREAMS_MAX - STREAMS_PER_CLIENT).fill(200),
      );
      const [refused] = await open("127.0.0.202", 1);
      assert.equal(refused.status, 503);
      assert.ok(Number(refused.headers.get("retry-after")) > 0);
      assert.equal(JSON.parse(refused.body).error.code, "unavailable");
    } finally {
      closeAll(held);
    }
    // Closed streams no longer count (once the relayer has seen them close).
    const later: RawConnection[] = [];
    try {
      const deadline = Date.now() + 30_000;
      for (;;) {
        const [connection] = await openMany(port(stack), ["127.0.0.202"], 1, request);
        later.push(connection);
        const [answer] = await statusOf([connection]);
        if (answer.status === 200) break;
        assert.ok(Date.now() < deadline, `a stream is still refused (${answer.status}) after the others closed`);
        await new Promise((resolve) => setTimeout(resolve, 200));
      }
    } finally {
      closeAll(later);
    }
  });

  it("timeouts of seconds: trickled headers, a stalled body and a body trickled past the request's limit are answered 408 and closed", async () => {
    await stack.restartRelayer({
      env: {
        HTTP_HEADERS_TIMEOUT_MS: "1000",
        HTTP_BODY_PROGRESS_TIMEOUT_MS: "1000",
        HTTP_REQUEST_TIMEOUT_MS: "3000",
      },
    });
    const headers = await openRaw(port(stack), "127.0.0.3", "GET /v1/health HTTP/1.1\r\nhost: relayer\r\n");
    const body = await openRaw(port(stack), "127.0.0.4", STALLED_POST);
    const trickle = await openRaw(port(stack), "127.0.0.5", STALLED_POST);
    const connections = [headers, body, trickle];
    const started = Date.now();
    // Progress on both trickles every 300 ms: never idle for a second, never done.
    const ticker = setInterval(() => {
      if (!headers.closed()) headers.socket.write("x-trickle: 1\r\n");
      if (!trickle.closed()) trickle.socket.write("1");
    }, 300);
    try {
      // Node's defaults would hold these 60 and 300 seconds; the client never closes (allowHalfOpen).
      await until("every connection closed by the relayer", () => connections.every((c) => c.closed()), 20_000);
      const seconds = (Date.now() - started) / 1000;
      console.log(`# trickled headers, stalled body, trickled body: all closed within ${seconds.toFixed(1)} s`);
      for (const c of connections) {
        const answer = firstResponse(c.received());
        assert.equal(answer.status, 408, c.received());
        assert.equal(JSON.parse(answer.body).error.code, "request_timeout");
      }
    } finally {
      clearInterval(ticker);
      closeAll(connections);
    }
    // The relayer still serves.
    assert.equal((await stack.api("GET", `/v1/orders/${orderId}`)).status, 200);
  });
});
