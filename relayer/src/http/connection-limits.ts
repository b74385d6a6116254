// Connection admission and the HTTP server's timeouts: what keeps one host, or many, from taking the API down
// by holding connections open.
//
// - Per client: at most `perClient` open connections from one address (an IPv6 client: its /64, see
//   client-address.ts); one more is closed at accept, before a byte is read (no HTTP answer: the client is
//   already holding its share). Trusted proxies (TRUST_PROXY) are exempt: they carry everyone's requests.
// - Per process: at most `max` open connections. At the cap, a newcomer whose client holds fewer connections
//   than the client holding the most (less one) takes the place of one of that client's connections (an idle
//   one if it has any, else its oldest), so a crowd of stalled connections cannot lock out a client that holds
//   few; otherwise the newcomer is answered 503 with retry-after in the envelope of the interface it asked for,
//   on a connection closed right after (a few such connections at once, `max` / 100 + 16; beyond, closed at
//   accept).
// - Timeouts (Node's own, checked every second rather than every 30 s): headers, the whole request, kept-alive
//   idle connections, requests per connection; and one of this module's: the body of a request must keep
//   arriving (no piece for `bodyProgressMs`: 408 request_timeout and the connection closed).
// - A connection whose answer has been sent and closed on our side (408, 431, 503, `connection: close`) is
//   destroyed a moment later if the client does not close it: a client that never reads nor closes does not
//   keep its descriptor.
import { readFileSync } from "node:fs";
import type { IncomingMessage, Server, ServerOptions, ServerResponse } from "node:http";
import type { Socket } from "node:net";
import type { HttpBindings } from "@hono/node-server";
import { sandboxErrorBody } from "../energy/routes/envelope.ts";
import { newId } from "../ids.ts";
import type { Logger } from "../logger.ts";
import { type ClientNetwork, addressGroup, isTrustedProxy, normalizeAddress } from "./client-address.ts";
import { clientErrorResponse } from "./client-errors.ts";

/** Seconds a client refused for capacity is asked to wait. */
export const OVERLOADED_RETRY_AFTER_SECONDS = 2;
/** How long a connection closed on our side may linger before it is destroyed. */
const CLOSE_GRACE_MS = 2_000;
/** How often refusals are summed up in the log (one line, not one a connection). */
const LOG_EVERY_MS = 10_000;

export type ConnectionLimitsOptions = {
  /** Open connections of the process. */
  max: number;
  /** Open connections of one client address (IPv6: /64). */
  perClient: number;
  /** Time between two pieces of a request's body. */
  bodyProgressMs: number;
  network: ClientNetwork;
  logger: Logger;
};

/** The HTTP server options of the timeouts (config: HTTP_*_TIMEOUT_MS). */
export function serverTimeouts(config: {
  HTTP_HEADERS_TIMEOUT_MS: number;
  HTTP_REQUEST_TIMEOUT_MS: number;
  HTTP_KEEP_ALIVE_TIMEOUT_MS: number;
}): ServerOptions {
  const headersTimeout = config.HTTP_HEADERS_TIMEOUT_MS;
  return {
    headersTimeout,
    // Node requires the whole request's time limit to be at least the headers' one.
    requestTimeout: Math.max(headersTimeout, config.HTTP_REQUEST_TIMEOUT_MS),
    keepAliveTimeout: config.HTTP_KEEP_ALIVE_TIMEOUT_MS,
    // Node looks for expired headers and requests this often (its default, 30 s, adds up to 30 s to both).
    connectionsCheckingInterval: Math.min(1_000, headersTimeout),
  };
}

/** HTTP_MAX_CONNECTIONS's default: 80% of the process's open-file limit (the rest for the database, the chain
 * and files), at most 10,000; 4,096 where the limit cannot be read. */
export function defaultMaxConnections(): number {
  try {
    const match = /^Max open files\s+(\d+)/m.exec(readFileSync("/proc/self/limits", "utf8"));
    if (match) return Math.max(16, Math.min(10_000, Math.floor(Number(match[1]) * 0.8)));
  } catch {
    // not Linux
  }
  return 4_096;
}

/** The 503 of a connection over the process's cap, in the envelope of the interface the path names. */
export function overloadedResponse(path: string): Response {
  const requestId = newId("req");
  const message = "the server is at its connection limit; retry later";
  const body = path.startsWith("/energy/")
    ? sandboxErrorBody("service_unavailable", message)
    : { error: { code: "unavailable", message }, requestId };
  return new Response(JSON.stringify(body), {
    status: 503,
    headers: {
      "content-type": "application/json",
      "retry-after": String(OVERLOADED_RETRY_AFTER_SECONDS),
      "x-request-id": requestId,
      connection: "close",
    },
  });
}

type Fetch = (request: Request, env: HttpBindings) => unknown;

export type ConnectionLimits = {
  /** Applies the limits to `server`: call before it accepts anything. */
  attach(server: Server): void;
  /** Wraps the server's fetch: a connection admitted over the cap is answered overloadedResponse(). */
  guard<F extends Fetch>(fetch: F): F;
};

/** The connection caps and the body-progress timeout (see the top of this file), for one server: its fetch
 * goes through guard(), and attach() is called before it accepts anything; the timeouts of serverTimeouts()
 * go to its constructor. */
export function connectionLimits(opts: ConnectionLimitsOptions): ConnectionLimits {
  const groups = new Map<string, Set<Socket>>();
  /** The groups (not trusted proxies) by how many connections each holds, and the largest count. */
  const byCount = new Map<number, Set<string>>();
  let mostHeld = 0;
  const groupOf = new WeakMap<Socket, string>();
  const overCap = new Set<Socket>();
  /** Connections of trusted proxies: counted in `open`, in no group. */
  const exempt = new Set<Socket>();
  const busy = new WeakSet<Socket>();
  const overCapMax = Math.floor(opts.max / 100) + 16;
  let open = 0;

  const refusals = new Map<string, number>();
  let logTimer: NodeJS.Timeout | undefined;
  const refused = (reason: string) => {
    refusals.set(reason, (refusals.get(reason) ?? 0) + 1);
    logTimer ??= setTimeout(() => {
      logTimer = undefined;
      opts.logger.warn("connections refused or closed at the connection limits", {
        ...Object.fromEntries(refusals),
        open,
        max: opts.max,
        perClient: opts.perClient,
      });
      refusals.clear();
    }, LOG_EVERY_MS).unref();
  };

  const moveCount = (group: string, from: number, to: number) => {
    const before = byCount.get(from);
    before?.delete(group);
    if (before?.size === 0) byCount.delete(from);
    if (to > 0) {
      let after = byCount.get(to);
      if (!after) byCount.set(to, (after = new Set()));
      after.add(group);
    }
    if (to > mostHeld) mostHeld = to;
    while (mostHeld > 0 && !byCount.has(mostHeld)) mostHeld--;
  };

  const track = (socket: Socket, group: string | undefined) => {
    open++;
    if (group === undefined) return;
    groupOf.set(socket, group);
    let sockets = groups.get(group);
    if (!sockets) groups.set(group, (sockets = new Set()));
    sockets.add(socket);
    moveCount(group, sockets.size - 1, sockets.size);
  };

  const untrack = (socket: Socket) => {
    if (overCap.delete(socket)) return;
    if (!groupOf.has(socket) && !exempt.has(socket)) return;
    open--;
    if (exempt.delete(socket)) return;
    const group = groupOf.get(socket) as string;
    groupOf.delete(socket);
    const sockets = groups.get(group);
    if (!sockets?.delete(socket)) return;
    if (sockets.size === 0) groups.delete(group);
    moveCount(group, sockets.size + 1, sockets.size);
  };

  /** Closes a connection of the client holding the most: an idle one if it has one, else its oldest. */
  const evictFromLargest = () => {
    const group = byCount.get(mostHeld)?.values().next().value;
    const sockets = group === undefined ? undefined : groups.get(group);
    if (!sockets) return;
    let victim: Socket | undefined;
    for (const socket of sockets) {
      if (!busy.has(socket)) {
        victim = socket;
        break;
      }
      victim ??= socket;
    }
    if (!victim) return;
    untrack(victim);
    victim.destroy();
    refused("evicted");
  };

  const destroyAfterGrace = (socket: Socket) => {
    setTimeout(() => socket.destroy(), CLOSE_GRACE_MS).unref();
  };

  const onConnection = (socket: Socket) => {
    const peer = socket.remoteAddress;
    if (peer === undefined) {
      socket.destroy(); // already gone
      return;
    }
    socket.once("close", () => untrack(socket));
    socket.once("finish", () => destroyAfterGrace(socket));
    const address = normalizeAddress(peer);
    const trusted = isTrustedProxy(opts.network, address);
    const group = trusted ? undefined : addressGroup(address);
    const held = group === undefined ? 0 : (groups.get(group)?.size ?? 0);
    if (held >= opts.perClient) {
      refused("perClient");
      socket.destroy();
      return;
    }
    if (open >= opts.max) {
      if (mostHeld > held + 1) {
        evictFromLargest();
      } else if (overCap.size < overCapMax) {
        overCap.add(socket);
        refused("overCapAnswered503");
        return;
      } else {
        refused("overCap");
        socket.destroy();
        return;
      }
    }
    if (trusted) {
      exempt.add(socket);
      open++;
    } else {
      track(socket, group);
    }
  };

  const onRequest = (req: IncomingMessage, res: ServerResponse) => {
    const socket = req.socket;
    busy.add(socket);
    res.once("close", () => busy.delete(socket));
    if (req.complete || ((req.headers["content-length"] ?? "0") === "0" && req.headers["transfer-encoding"] === undefined)) return;
    watchBodyProgress(req, res, socket);
  };

  const watchBodyProgress = (req: IncomingMessage, res: ServerResponse, socket: Socket) => {
    let seen = socket.bytesRead;
    const timer = setInterval(() => {
      if (req.complete || res.headersSent || socket.destroyed) {
        clearInterval(timer);
        return;
      }
      // Nothing new, though the handler is reading (what is buffered is below the stream's mark): the client
      // stalled.
      const progressed = socket.bytesRead !== seen;
      seen = socket.bytesRead;
      if (progressed || req.readableLength >= req.readableHighWaterMark) return;
      clearInterval(timer);
      refused("bodyStalled");
      const rawPacket = Buffer.from(`${req.method} ${req.url ?? "/"}`, "latin1");
      const timeout = Object.assign(new Error("the request's body stopped arriving"), { code: "ERR_HTTP_REQUEST_TIMEOUT", rawPacket });
      const { requestId, status, text } = clientErrorResponse(timeout);
      socket.end(text);
      opts.logger.info("request refused: its body stopped arriving", { requestId, status });
    }, opts.bodyProgressMs);
    timer.unref();
    res.once("close", () => clearInterval(timer));
  };

  return {
    attach(server) {
      server.on("connection", onConnection);
      server.on("request", onRequest);
    },
    guard<F extends Fetch>(fetch: F): F {
      return ((request: Request, env: HttpBindings) =>
        overCap.has(env.incoming.socket) ? overloadedResponse(new URL(request.url).pathname) : fetch(request, env)) as F;
    },
  };
}
