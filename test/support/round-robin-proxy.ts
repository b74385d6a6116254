// A round-robin HTTP load balancer on loopback, in front of several relayer processes (the scale-out test
// and benchmark): each request goes to the next backend in turn; one that refuses the connection (a stopped
// or killed process) is skipped for the next. Bodies stream both ways: the request body is piped to the
// backend once its connection is up (so a refused connection has consumed none of it and the next backend
// gets all of it), and the response is piped back as it arrives (server-sent events included). A backend
// that dies mid-response cuts the client's response off, as a real balancer would: the client reconnects.
//
// The backend sees the client's own loopback address (the proxy connects from it): the relayer's limits per
// client address apply to each client, not to the proxy as one client.
import http from "node:http";
import type { AddressInfo } from "node:net";

export type RoundRobinProxy = {
  url: string;
  port: number;
  /** Requests each backend answered (headers received), by backend URL. */
  answered(): Map<string, number>;
  close(): Promise<void>;
};

/** Hop-by-hop headers (RFC 9110 section 7.6.1): they describe one connection and are not forwarded. */
const HOP_BY_HOP = new Set(["connection", "keep-alive", "proxy-connection", "te", "trailer", "transfer-encoding", "upgrade"]);

function endToEnd(headers: http.IncomingHttpHeaders): http.OutgoingHttpHeaders {
  const out: http.OutgoingHttpHeaders = {};
  for (const [name, value] of Object.entries(headers)) if (value !== undefined && !HOP_BY_HOP.has(name)) out[name] = value;
  return out;
}

/** The client's IPv4 loopback address (IPv4-mapped form included), or undefined for any other. */
function loopbackOf(address: string | undefined): string | undefined {
  const plain = address?.startsWith("::ffff:") ? address.slice(7) : address;
  return plain && /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(plain) ? plain : undefined;
}

export async function startRoundRobinProxy(backends: string[]): Promise<RoundRobinProxy> {
  if (backends.length === 0) throw new Error("a round-robin proxy needs at least one backend");
  const targets = backends.map((b) => new URL(b));
  const answered = new Map<string, number>(targets.map((t) => [t.origin, 0]));
  const agent = new http.Agent({ keepAlive: true, maxSockets: Number.POSITIVE_INFINITY });
  let next = 0;

  const server = http.createServer((req, res) => {
    const first = next++ % targets.length;
    const localAddress = loopbackOf(req.socket.remoteAddress);

    const attempt = (tried: number) => {
      const target = targets[(first + tried) % targets.length];
      const upstream = http.request({
        host: target.hostname,
        port: target.port,
        method: req.method,
        path: req.url,
        headers: endToEnd(req.headers),
        agent,
        localAddress,
      });
      upstream.on("socket", (socket) => {
        // Send the body only once connected: a refused connection leaves it unread for the next backend.
        if (socket.connecting) socket.once("connect", () => req.pipe(upstream));
        else req.pipe(upstream);
      });
      upstream.on("response", (answer) => {
        answered.set(target.origin, (answered.get(target.origin) ?? 0) + 1);
        res.writeHead(answer.statusCode ?? 502, endToEnd(answer.headers));
        res.flushHeaders();
        answer.pipe(res);
        // The backend went away mid-response: cut the client off too (it sees an incomplete response).
        answer.on("aborted", () => res.destroy());
        answer.on("error", () => res.destroy());
      });
      upstream.on("error", (error: NodeJS.ErrnoException) => {
        if (error.code === "ECONNREFUSED" && tried + 1 < targets.length && !res.headersSent) {
          attempt(tried + 1);
          return;
        }
        if (res.headersSent) {
          res.destroy();
          return;
        }
        res.writeHead(502, { "content-type": "application/json" });
        res.end(JSON.stringify({ error: { code: "bad_gateway", message: `backend ${target.origin}: ${error.code ?? error.message}` } }));
      });
      // The client gave up (e.g. closed an event stream): stop the backend's side too.
      res.on("close", () => {
        if (!res.writableFinished) upstream.destroy();
      });
    };
    attempt(0);
  });
  server.keepAliveTimeout = 30_000;
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", resolve);
  });
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    answered: () => new Map(answered),
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      agent.destroy();
    },
  };
}
