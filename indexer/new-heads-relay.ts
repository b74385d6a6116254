// Ponder hears of new blocks from one `eth_subscribe("newHeads")` on the chain's WebSocket, and polls only once
// that connection has failed for good. A subscription that goes silent while its connection stays open (a node
// or a provider that drops notifications: a Hardhat node under load mined blocks it never announced) leaves
// live indexing behind until the next announced block: on an idle local chain, for ever.
//
// The relay sits between Ponder and the chain's WebSocket, in Ponder's process (ponder.config.ts). It passes
// every message on, and every `checkMs` while the subscription has been silent that long asks the chain, over
// the same upstream connection, for its latest block number. When a block the chain had at the previous check is still unannounced, it fetches the chain's
// latest block and announces it itself, on the subscription Ponder made; Ponder fetches any blocks in between (its missing-block
// path). The subscription's later announcement of a block already passed on is dropped: Ponder takes a head
// that is not above its own for a reorganisation. Any other head is passed on, a lower one too (a
// reorganisation to a shorter chain; should it be a block Ponder fetched itself in between, announced that
// late, Ponder reverts to its parent and indexes the same blocks again, the data unchanged). Ponder leaves
// such a head for the next block, so the relay counts it as unannounced: on an idle chain it is announced
// again at the next checks. A connection whose
// upstream leaves a check unanswered for five intervals is closed, and Ponder connects again. When the chain's
// WebSocket cannot be reached the relay refuses Ponder's connection (HTTP 502), so that Ponder counts the
// failure and falls back to polling as it would without it.
import http from "node:http";
import type { AddressInfo, Socket } from "node:net";
import { type RawData, WebSocket, WebSocketServer } from "ws";

/** How often the relay asks the chain for its latest block number while a newHeads subscription has been silent
 * that long (the default of PONDER_NEW_HEADS_CHECK_MS): a block left out is announced two to six seconds after
 * it was mined. (At this interval the checks cost an idle local Hardhat node about 0.1% of a core; the indexer's
 * share is within the noise of bench/idle-cpu.ts.) */
export const NEW_HEADS_CHECK_MS = 2_000;
/** The ids of the relay's own requests on the upstream connection (Ponder's are numbers): its checks of the
 * latest block number, and its requests for the block to announce. */
const OWN_ID_PREFIX = "new-heads-relay:";
const BLOCK_ID_PREFIX = `${OWN_ID_PREFIX}block:`;
/** After how many check intervals without an answer to its request the relay closes a connection. */
const UNANSWERED_CHECKS = 5;
/** How many of the hashes passed on a connection remembers, to drop repeats. */
const REMEMBERED_HEADS = 1_024;

export type NewHeadsRelayOptions = {
  /** The chain's ws(s):// URL. */
  upstream: string;
  checkMs?: number;
  /** Told when the relay announces a block the subscription did not: `missed` when the subscription had
   * announced an earlier block (else it had announced none yet: blocks mined before it was made). */
  onAnnounced?: (head: { number: bigint; hash: string; subscription: string; missed: boolean }) => void;
};

export type NewHeadsRelay = {
  /** ws://127.0.0.1:<port>: give it to Ponder as the chain's WebSocket. */
  url: string;
  close(): Promise<void>;
};

type Head = { number: bigint; hash: string };
type JsonRpcMessage = {
  id?: unknown;
  method?: unknown;
  params?: unknown;
  result?: unknown;
};

function parse(data: RawData): unknown {
  try {
    return JSON.parse(data.toString());
  } catch {
    return undefined;
  }
}

const messagesOf = (value: unknown): JsonRpcMessage[] =>
  (Array.isArray(value) ? value : [value]).filter((m): m is JsonRpcMessage => typeof m === "object" && m !== null);

/** A block header as a node returns it, or undefined. */
function headOf(value: unknown): Head | undefined {
  if (typeof value !== "object" || value === null) return undefined;
  const { number, hash } = value as { number?: unknown; hash?: unknown };
  if (typeof number !== "string" || typeof hash !== "string" || !/^0x[0-9a-fA-F]{1,64}$/.test(number)) return undefined;
  return { number: BigInt(number), hash };
}

/** Relays one client connection to its own upstream connection. */
function relay(client: WebSocket, upstream: WebSocket, opts: NewHeadsRelayOptions) {
  const checkMs = opts.checkMs ?? NEW_HEADS_CHECK_MS;
  /** Ids of the client's eth_subscribe("newHeads") requests awaiting their answer. */
  const subscribing = new Set<unknown>();
  let subscription: string | undefined;
  /** The last head passed to the client, and the hashes of those before it (oldest first). */
  let delivered: Head | undefined;
  const passed = new Set<string>();
  /** When the client was last told of a head (or subscribed): the relay checks only after checkMs of silence. */
  let heardAt = Date.now();
  const pass = (head: Head) => {
    // A head not above the last one is a reorganisation: Ponder reverts to the common ancestor and leaves the
    // head itself for the next block, which an idle chain does not bring. Counted as told only up to its
    // parent, so that the checks announce the chain's head again.
    const reorganisation = delivered !== undefined && head.number <= delivered.number;
    delivered = reorganisation ? { number: head.number - 1n, hash: head.hash } : head;
    heardAt = Date.now();
    passed.add(head.hash);
    if (passed.size > REMEMBERED_HEADS) passed.delete(passed.values().next().value!);
  };
  /** The chain's latest block at the previous check, when the client had not been told of it. */
  let unannounced: bigint | undefined;
  let ownRequests = 0;
  let checking = false;
  let checkSentAt = 0;

  client.on("message", (data, isBinary) => {
    for (const m of messagesOf(parse(data))) {
      const params = Array.isArray(m.params) ? m.params : [];
      if (m.method === "eth_subscribe" && params[0] === "newHeads") subscribing.add(m.id);
      if (m.method === "eth_unsubscribe" && params[0] === subscription) subscription = undefined;
    }
    if (upstream.readyState === WebSocket.OPEN) upstream.send(data, { binary: isBinary });
  });

  upstream.on("message", (data, isBinary) => {
    const parsed = parse(data);
    const message = Array.isArray(parsed) ? undefined : messagesOf(parsed)[0];
    if (message && typeof message.id === "string" && message.id.startsWith(OWN_ID_PREFIX)) {
      checking = false;
      if (message.id.startsWith(BLOCK_ID_PREFIX)) announce(message.result);
      else if (typeof message.result === "string" && /^0x[0-9a-fA-F]{1,64}$/.test(message.result)) check(BigInt(message.result));
      return;
    }
    if (message && subscribing.has(message.id) && typeof message.result === "string") {
      subscribing.delete(message.id);
      subscription = message.result;
      heardAt = Date.now();
      delivered = undefined;
      passed.clear();
      unannounced = undefined;
    }
    if (message?.method === "eth_subscription") {
      const params = message.params as { subscription?: unknown; result?: unknown } | undefined;
      const head = params?.subscription === subscription ? headOf(params?.result) : undefined;
      if (head && passed.has(head.hash)) return; // passed on already
      if (head) pass(head);
    }
    if (client.readyState === WebSocket.OPEN) client.send(data, { binary: isBinary });
  });

  const request = (id: string, method: string, params: unknown[]) => {
    checking = true;
    checkSentAt = Date.now();
    ownRequests += 1;
    upstream.send(JSON.stringify({ jsonrpc: "2.0", id: `${id}${ownRequests}`, method, params }));
  };

  /** With the chain's latest block number: when the client has not been told of a block the chain had at the
   * previous check, asks for the latest block to announce it. */
  function check(latest: bigint) {
    if (subscription === undefined) return;
    const told = delivered?.number ?? -1n;
    if (unannounced !== undefined && unannounced > told && latest > told) {
      unannounced = undefined;
      if (upstream.readyState === WebSocket.OPEN) request(BLOCK_ID_PREFIX, "eth_getBlockByNumber", ["latest", false]);
      return;
    }
    unannounced = latest > told ? latest : undefined;
  }

  /** Announces the chain's latest block, unless the client was told of it (or a later one) meanwhile. */
  function announce(block: unknown) {
    const latest = headOf(block);
    if (!latest || subscription === undefined || latest.number <= (delivered?.number ?? -1n)) return;
    const missed = delivered !== undefined;
    pass(latest);
    const announcement = { jsonrpc: "2.0", method: "eth_subscription", params: { subscription, result: block } };
    if (client.readyState === WebSocket.OPEN) client.send(JSON.stringify(announcement));
    opts.onAnnounced?.({ ...latest, subscription, missed });
  }

  const timer = setInterval(() => {
    if (subscription === undefined || upstream.readyState !== WebSocket.OPEN) return;
    if (checking) {
      // A connection that answers nothing is as silent as the subscription: close it; Ponder connects again
      // (and, if the chain's WebSocket cannot be reached by then, is refused and falls back to polling).
      if (Date.now() - checkSentAt > checkMs * UNANSWERED_CHECKS) upstream.terminate();
      return;
    }
    // While the subscription announces blocks, Ponder fetches any it left out between them: no check needed
    // (with a provider, each costs a request of its quota).
    if (Date.now() - heardAt < checkMs) return;
    request(OWN_ID_PREFIX, "eth_blockNumber", []);
  }, checkMs);
  timer.unref();

  const end = () => {
    clearInterval(timer);
    if (client.readyState === WebSocket.OPEN || client.readyState === WebSocket.CONNECTING) client.close();
    if (upstream.readyState === WebSocket.OPEN || upstream.readyState === WebSocket.CONNECTING) upstream.close();
  };
  client.on("close", end);
  upstream.on("close", end);
  client.on("error", () => client.terminate());
  upstream.on("error", () => upstream.terminate());
}

/** Starts the relay on 127.0.0.1 (a free port). The server does not keep the process alive. */
export async function startNewHeadsRelay(opts: NewHeadsRelayOptions): Promise<NewHeadsRelay> {
  const sockets = new WebSocketServer({ noServer: true });
  const server = http.createServer((_req, res) => {
    res.writeHead(426, { "content-type": "text/plain", connection: "close" }).end("WebSocket only\n");
  });
  server.on("upgrade", (req: http.IncomingMessage, socket: Socket, head: Buffer) => {
    socket.on("error", () => socket.destroy());
    const upstream = new WebSocket(opts.upstream);
    const refuse = () => {
      if (!socket.destroyed) socket.end("HTTP/1.1 502 Bad Gateway\r\nConnection: close\r\nContent-Length: 0\r\n\r\n");
    };
    upstream.once("error", refuse);
    upstream.once("open", () => {
      upstream.off("error", refuse);
      if (socket.destroyed) return upstream.close();
      // `ws` may end the upgrade without calling back (a half-closed socket, a server closing): the upstream
      // connection then goes with the socket.
      let relayed = false;
      socket.once("close", () => {
        if (!relayed) upstream.terminate();
      });
      sockets.handleUpgrade(req, socket, head, (client) => {
        relayed = true;
        relay(client, upstream, opts);
      });
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => resolve());
  });
  server.unref();
  const { port } = server.address() as AddressInfo;
  return {
    url: `ws://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        for (const client of sockets.clients) client.terminate();
        sockets.close();
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
