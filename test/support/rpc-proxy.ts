// A JSON-RPC proxy on 127.0.0.1 in front of the chain that can rate-limit its client: while `throttle` is
// on, every call (but the methods it spares) is answered HTTP 429 Too Many Requests, as a public RPC
// provider answers a client over its quota; everything else is forwarded as is.
import { once } from "node:events";
import http from "node:http";
import type { AddressInfo } from "node:net";

export type RpcProxy = {
  url: string;
  /** Answers 429 for `ms` from now to every request holding a call of a method not in `spare`. */
  throttle(ms: number, opts?: { spare?: readonly string[] }): void;
  /** Requests answered 429 so far. */
  readonly refused: number;
  /** Calls forwarded so far, by method. */
  readonly forwarded: ReadonlyMap<string, number>;
  close(): Promise<void>;
};

export async function startRpcProxy(target: string): Promise<RpcProxy> {
  let throttledUntil = 0;
  let spared = new Set<string>();
  let refused = 0;
  const forwarded = new Map<string, number>();

  const server = http.createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const body = Buffer.concat(chunks);
    let methods: string[] = [];
    try {
      const parsed = JSON.parse(body.toString("utf8")) as { method?: unknown } | Array<{ method?: unknown }>;
      methods = (Array.isArray(parsed) ? parsed : [parsed]).map((call) => String(call.method));
    } catch {
      // not JSON: forwarded as is
    }
    if (Date.now() < throttledUntil && methods.some((method) => !spared.has(method))) {
      refused++;
      res.writeHead(429, { "content-type": "application/json" });
      res.end(JSON.stringify({ jsonrpc: "2.0", id: null, error: { code: 429, message: "Too Many Requests" } }));
      return;
    }
    for (const method of methods) forwarded.set(method, (forwarded.get(method) ?? 0) + 1);
    try {
      const upstream = await fetch(target, { method: "POST", headers: { "content-type": "application/json" }, body });
      res.writeHead(upstream.status, { "content-type": "application/json" });
      res.end(Buffer.from(await upstream.arrayBuffer()));
    } catch {
      res.destroy();
    }
  });
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  const { port } = server.address() as AddressInfo;

  return {
    url: `http://127.0.0.1:${port}`,
    throttle(ms, opts = {}) {
      throttledUntil = Date.now() + ms;
      spared = new Set(opts.spare ?? []);
    },
    get refused() {
      return refused;
    },
    forwarded,
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
