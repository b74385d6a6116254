// The new-heads relay between Ponder and the chain's WebSocket (indexer/new-heads-relay.ts), on a real Hardhat
// node: it passes requests, answers and the subscription's announcements on, and announces a new subscription
// the chain's head. Behind a node whose subscription stays silent (a stand-in WebSocket server that answers
// requests from the same Hardhat node and announces only what the test tells it to), it announces the blocks
// the subscription left out, drops later announcements of blocks it passed on, and passes on other heads, lower
// ones too (reorganisations), announces again the head of a reorganisation that is not above the last one once
// the chain stays idle, checks only while the subscription is silent, and closes a connection whose upstream
// stops answering, and the upstream of an upgrade the client gave up on. It refuses a connection it cannot
// relay.
import assert from "node:assert/strict";
import { once } from "node:events";
import net, { type AddressInfo } from "node:net";
import { after, before, describe, it } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";
import { WebSocket, WebSocketServer } from "ws";
import { rpc, startChain } from "../../lib/chain.ts";
import { type Service, freePort } from "../../lib/processes.ts";
import { readIndexerEnv } from "../../indexer/env.ts";
import { type NewHeadsRelay, startNewHeadsRelay } from "../../indexer/new-heads-relay.ts";

const CHECK_MS = 100;
/** On the real node: a notification the node sends late (a loaded machine) must not look left out. */
const REAL_NODE_CHECK_MS = 1_000;
type Block = { number: string; hash: string; parentHash: string; timestamp: string };
type Message = { id?: unknown; method?: string; result?: unknown; params?: { subscription: string; result: Block } };
type Announced = { number: bigint; hash: string; subscription: string; missed: boolean };

/** A client of the relay: every message it received, and requests by id. */
async function connect(url: string) {
  const socket = new WebSocket(url);
  const received: Message[] = [];
  socket.on("message", (data) => received.push(JSON.parse(data.toString()) as Message));
  await new Promise<void>((resolve, reject) => {
    socket.once("open", () => resolve());
    socket.once("error", reject);
  });
  let nextId = 1;
  const request = async (method: string, params: unknown[] = []) => {
    const id = nextId++;
    socket.send(JSON.stringify({ jsonrpc: "2.0", id, method, params }));
    for (let waited = 0; waited < 5_000; waited += 10) {
      const answer = received.find((m) => m.id === id);
      if (answer) return answer.result;
      await sleep(10);
    }
    throw new Error(`no answer to ${method}`);
  };
  const heads = (subscription: unknown) =>
    received.filter((m) => m.method === "eth_subscription" && m.params?.subscription === subscription).map((m) => m.params!.result);
  return { socket, received, request, heads, close: () => socket.close() };
}

async function waitFor<T>(what: string, probe: () => T | undefined, timeoutMs = 5_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(10);
  }
}

describe("the new-heads relay", () => {
  let chain: Service;
  let rpcUrl: string;
  let wsUrl: string;
  const relays: NewHeadsRelay[] = [];
  const announced: Announced[] = [];
  const startRelay = async (upstream: string, checkMs = CHECK_MS) => {
    const relay = await startNewHeadsRelay({ upstream, checkMs, onAnnounced: (head) => announced.push(head) });
    relays.push(relay);
    return relay;
  };
  const latest = () => rpc<Block>(rpcUrl, "eth_getBlockByNumber", ["latest", false]);
  const mine = () => rpc(rpcUrl, "evm_mine");

  before(async () => {
    const port = await freePort();
    ({ service: chain, rpcUrl } = await startChain({ port }));
    wsUrl = `ws://127.0.0.1:${port}`;
  });
  after(async () => {
    for (const relay of relays) await relay.close();
    await chain?.stop();
  });

  it("passes requests, answers and the subscription's announcements on, and tells a new subscription the chain's head", async () => {
    const relay = await startRelay(wsUrl, REAL_NODE_CHECK_MS);
    const client = await connect(relay.url);
    try {
      assert.equal(await client.request("eth_chainId"), "0x7a69");
      const subscription = await client.request("eth_subscribe", ["newHeads"]);
      assert.match(String(subscription), /^0x[0-9a-f]+$/);

      // Nothing was announced since the subscription was made: after two checks the relay announces the head.
      const head = await latest();
      const [first] = await waitFor(
        "the head announced",
        () => (client.heads(subscription).length > 0 ? client.heads(subscription) : undefined),
        15_000,
      );
      assert.equal(first.hash, head.hash);
      assert.deepEqual(announced.at(-1), { number: BigInt(head.number), hash: head.hash, subscription, missed: false });

      // Blocks mined now are announced by the node's subscription, each once, in order; the relay adds none.
      const before = announced.length;
      const mined: Block[] = [];
      for (let i = 0; i < 3; i++) {
        await mine();
        mined.push(await latest());
        await sleep(50);
      }
      await waitFor("three more heads", () => (client.heads(subscription).length >= 4 ? true : undefined));
      await sleep(REAL_NODE_CHECK_MS * 3);
      assert.deepEqual(
        client.heads(subscription).map((b) => b.hash),
        [head.hash, ...mined.map((b) => b.hash)],
      );
      assert.equal(announced.length, before, "the relay announced nothing itself");
      // Its own requests and their answers stay between it and the node.
      assert.ok(client.received.every((m) => m.id === undefined || typeof m.id === "number"));
    } finally {
      client.close();
    }
  });

  describe("behind a subscription that stays silent", () => {
    let silent: WebSocketServer;
    /** The stand-in node's connections from the relay. */
    const upstreams = new Set<WebSocket>();
    const SUBSCRIPTION = "0x5113e7";
    /** Whether the stand-in answers the relay's checks (eth_blockNumber). */
    let answerChecks = true;
    /** The relay's checks (eth_blockNumber) the stand-in has received. */
    let checks = 0;
    /** Connections the stand-in has accepted. */
    let opened = 0;
    const announce = (block: Block) => {
      for (const socket of upstreams) {
        socket.send(JSON.stringify({ jsonrpc: "2.0", method: "eth_subscription", params: { subscription: SUBSCRIPTION, result: block } }));
      }
    };

    before(async () => {
      silent = new WebSocketServer({ host: "127.0.0.1", port: 0 });
      await new Promise<void>((resolve) => silent.once("listening", () => resolve()));
      silent.on("connection", (socket) => {
        opened++;
        upstreams.add(socket);
        socket.on("close", () => upstreams.delete(socket));
        socket.on("message", async (data) => {
          const request = JSON.parse(data.toString()) as { id: unknown; method: string; params: unknown[] };
          if (request.method === "eth_blockNumber") checks++;
          if (request.method === "eth_blockNumber" && !answerChecks) return;
          const result = request.method === "eth_subscribe" ? SUBSCRIPTION : await rpc(rpcUrl, request.method, request.params);
          socket.send(JSON.stringify({ jsonrpc: "2.0", id: request.id, result }));
        });
      });
    });
    after(() => new Promise<void>((resolve) => silent.close(() => resolve())));

    it("closes a connection whose upstream leaves its check unanswered (five intervals)", async () => {
      const relay = await startRelay(`ws://127.0.0.1:${(silent.address() as AddressInfo).port}`);
      const client = await connect(relay.url);
      answerChecks = false;
      try {
        assert.equal(await client.request("eth_subscribe", ["newHeads"]), SUBSCRIPTION);
        const openedAt = Date.now();
        const closedAt = await Promise.race([
          new Promise<number>((resolve) => client.socket.once("close", () => resolve(Date.now()))),
          sleep(10_000).then(() => Number.NaN),
        ]);
        const after = closedAt - openedAt;
        assert.ok(after >= CHECK_MS * 5 && after < CHECK_MS * 5 + 5_000, `closed ${after} ms after the subscription`);
      } finally {
        answerChecks = true;
        client.close();
      }
    });

    it("announces the blocks the subscription left out, drops later announcements of blocks passed on, and passes reorganisations on", async () => {
      const relay = await startRelay(`ws://127.0.0.1:${(silent.address() as AddressInfo).port}`);
      const client = await connect(relay.url);
      try {
        assert.equal(await client.request("eth_subscribe", ["newHeads"]), SUBSCRIPTION);
        const start = await latest();
        await waitFor("the head announced", () => (client.heads(SUBSCRIPTION).length === 1 ? true : undefined));
        assert.equal(client.heads(SUBSCRIPTION)[0].hash, start.hash);

        // The node announces one of two new blocks; the relay announces the other.
        await mine();
        const one = await latest();
        announce(one);
        await mine();
        const two = await latest();
        await waitFor("the left-out block announced", () => (client.heads(SUBSCRIPTION).length === 3 ? true : undefined));
        assert.deepEqual(
          client.heads(SUBSCRIPTION).map((b) => b.hash),
          [start.hash, one.hash, two.hash],
        );
        assert.deepEqual(announced.at(-1), { number: BigInt(two.number), hash: two.hash, subscription: SUBSCRIPTION, missed: true });

        // Three blocks at once, none announced: the relay announces the newest (Ponder fetches the ones between).
        for (let i = 0; i < 3; i++) await mine();
        const five = await latest();
        await waitFor("the newest block announced", () => (client.heads(SUBSCRIPTION).length === 4 ? true : undefined));
        assert.equal(client.heads(SUBSCRIPTION)[3].hash, five.hash);

        // The node's late announcements of blocks passed on already are dropped.
        announce(two);
        announce(five);
        // A head at the same height with another hash, and a lower head never passed on (reorganisations, the
        // second to a shorter chain), are passed on.
        const reorganised = { ...five, hash: `0x${"ab".repeat(32)}` };
        announce(reorganised);
        const shorter = { ...two, hash: `0x${"cd".repeat(32)}` };
        announce(shorter);
        await waitFor("the reorganised heads", () => (client.heads(SUBSCRIPTION).length === 6 ? true : undefined));
        // Those two were the stand-in's inventions: the node's head is still `five`, which the relay announces
        // again once it sees the client told of a lower one.
        await waitFor("the node's head announced again", () => (client.heads(SUBSCRIPTION).length === 7 ? true : undefined));
        await sleep(CHECK_MS * 3);
        assert.deepEqual(
          client.heads(SUBSCRIPTION).map((b) => b.hash),
          [start.hash, one.hash, two.hash, five.hash, reorganised.hash, shorter.hash, five.hash],
        );
      } finally {
        client.close();
      }
    });

    it("closes the upstream connection of an upgrade the client gave up on before it was relayed (a half-closed socket)", async () => {
      const relay = await startRelay(`ws://127.0.0.1:${(silent.address() as AddressInfo).port}`);
      await waitFor("no connection left from the tests before", () => (upstreams.size === 0 ? true : undefined));
      const openedBefore = opened;
      const socket = net.connect(Number(new URL(relay.url).port), "127.0.0.1");
      await once(socket, "connect");
      socket.on("error", () => undefined);
      // The request, then the client's end of the connection closed at once: by the time the chain's
      // WebSocket is open the socket can no longer be upgraded, and `ws` drops it without calling back.
      socket.end(
        "GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n" +
          "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n",
      );
      await waitFor("the upstream connection made", () => (opened > openedBefore ? true : undefined));
      await waitFor("the upstream connection closed", () => (upstreams.size === 0 ? true : undefined));
      socket.destroy();
    });

    it("asks nothing while the subscription announces blocks, and starts its checks once it has been silent for the interval", async () => {
      const relay = await startRelay(`ws://127.0.0.1:${(silent.address() as AddressInfo).port}`, 2_000);
      const client = await connect(relay.url);
      try {
        assert.equal(await client.request("eth_subscribe", ["newHeads"]), SUBSCRIPTION);
        // A block every 100 ms or so for five seconds, announced by the node: two and a half check intervals
        // (the default two seconds here, so that a loaded host's pauses between blocks do not pass for silence).
        const before = checks;
        const until = Date.now() + 5_000;
        while (Date.now() < until) {
          await mine();
          announce(await latest());
          await sleep(100);
        }
        assert.equal(checks, before, "no check while blocks are announced");
        await waitFor("a check once silent", () => (checks > before ? true : undefined), 10_000);
      } finally {
        client.close();
      }
    });

    it("announces again, on an idle chain, a reorganisation's head that is not above the last (Ponder leaves it for the next block)", async () => {
      const relay = await startRelay(`ws://127.0.0.1:${(silent.address() as AddressInfo).port}`);
      const client = await connect(relay.url);
      try {
        assert.equal(await client.request("eth_subscribe", ["newHeads"]), SUBSCRIPTION);
        const snapshot = await rpc<string>(rpcUrl, "evm_snapshot");
        await mine();
        const first = await latest();
        await waitFor("the head announced", () => (client.heads(SUBSCRIPTION).some((b) => b.hash === first.hash) ? true : undefined));
        // The chain reorganises to another block at the same height, which the node announces; no block follows.
        await rpc(rpcUrl, "evm_revert", [snapshot]);
        await rpc(rpcUrl, "evm_setNextBlockTimestamp", [Number(BigInt(first.timestamp)) + 5]);
        await mine();
        const other = await latest();
        assert.equal(other.number, first.number);
        assert.notEqual(other.hash, first.hash);
        announce(other);
        const times = () => client.heads(SUBSCRIPTION).filter((b) => b.hash === other.hash).length;
        await waitFor("the reorganisation's head announced again", () => (times() === 2 ? true : undefined));
        await sleep(CHECK_MS * 5);
        assert.equal(times(), 2, "once again, not over and over");
      } finally {
        client.close();
      }
    });
  });

  it("checks after PONDER_NEW_HEADS_CHECK_MS of silence (2000 by default), from 100 to 600000", () => {
    assert.equal(readIndexerEnv({}).newHeadsCheckMs, 2_000);
    assert.equal(readIndexerEnv({ PONDER_NEW_HEADS_CHECK_MS: "15000" }).newHeadsCheckMs, 15_000);
    for (const bad of ["99", "600001", "1.5", "soon"]) {
      assert.throws(
        () => readIndexerEnv({ PONDER_NEW_HEADS_CHECK_MS: bad }),
        /PONDER_NEW_HEADS_CHECK_MS must be an integer from 100 to 600000/,
        bad,
      );
    }
  });

  it("refuses a connection when the chain's WebSocket cannot be reached (502), so that Ponder falls back to polling", async () => {
    const relay = await startRelay(`ws://127.0.0.1:${await freePort()}`);
    const socket = new WebSocket(relay.url);
    const status = await new Promise<number | undefined>((resolve) => {
      socket.once("unexpected-response", (_req, res) => resolve(res.statusCode));
      socket.once("open", () => resolve(undefined));
      socket.once("error", () => resolve(undefined));
    });
    socket.terminate();
    assert.equal(status, 502);
  });
});
