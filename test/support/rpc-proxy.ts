// A JSON-RPC proxy on 127.0.0.1 in front of the chain, for the faults a public RPC endpoint has:
// - `throttle`: while it is on, every request holding a call of a method it does not spare is answered HTTP
//   429 Too Many Requests, as a provider answers a client over its quota;
// - `hold`: a call of a chosen method is never forwarded nor answered (its connection stays open), as if the
//   node had stopped answering at that moment;
// - `lag`: while it is on, calls of chosen methods are answered `null` (no receipt, no transaction), as a node
//   a block or more behind the others of a load-balanced endpoint answers.
// Everything else is forwarded as is.
import { once } from "node:events";
import http from "node:http";
import type { AddressInfo } from "node:net";

export type RpcProxy = {
  url: string;
  /** Answers 429 for `ms` from now to every request holding a call of a method not in `spare`. */
  throttle(ms: number, opts?: { spare?: readonly string[] }): void;
  /** Holds the later calls of `method`, after letting `after` of them through (default 0). */
  hold(method: string, opts?: { after?: number }): void;
  /** Answers every call of `methods` with a null result until it is called again with none. */
  lag(methods: readonly string[]): void;
  /** Resolves with the first held call's params. */
  held(timeoutMs?: number): Promise<unknown[]>;
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
  const holding = new Map<string, { after: number; seen: number }>();
  const heldCalls: unknown[][] = [];
  let lagging = new Set<string>();
  const waiters: Array<(params: unknown[]) => void> = [];
  const open = new Set<http.ServerResponse>();

  const server = http.createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const body = Buffer.concat(chunks);
    let calls: Array<{ method?: unknown; params?: unknown[] }> = [];
    try {
      const parsed = JSON.parse(body.toString("utf8"));
      calls = Array.isArray(parsed) ? parsed : [parsed];
    } catch {
      // not JSON: forwarded as is
    }
    const methods = calls.map((call) => String(call.method));
    if (Date.now() < throttledUntil && methods.some((method) => !spared.has(method))) {
      refused++;
      res.writeHead(429, { "content-type": "application/json" });
      res.end(JSON.stringify({ jsonrpc: "2.0", id: null, error: { code: 429, message: "Too Many Requests" } }));
      return;
    }
    if (calls.length > 0 && methods.every((method) => lagging.has(method))) {
      const answers = calls.map((call) => ({ jsonrpc: "2.0", id: (call as { id?: unknown }).id ?? null, result: null }));
      res.writeHead(200, { "content-type": "application/json" });
      res.end(JSON.stringify(calls.length === 1 && !body.toString("utf8").trimStart().startsWith("[") ? answers[0] : answers));
      return;
    }
    const hold = calls.find((call) => {
      const rule = typeof call.method === "string" ? holding.get(call.method) : undefined;
      return rule !== undefined && rule.seen++ >= rule.after;
    });
    if (hold) {
      open.add(res);
      res.on("close", () => open.delete(res));
      heldCalls.push(hold.params ?? []);
      for (const wake of waiters.splice(0)) wake(hold.params ?? []);
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
    hold: (method, opts = {}) => void holding.set(method, { after: opts.after ?? 0, seen: 0 }),
    lag: (methods) => void (lagging = new Set(methods)),
    held(timeoutMs = 30_000) {
      if (heldCalls.length > 0) return Promise.resolve(heldCalls[0]!);
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`no call was held within ${timeoutMs} ms`)), timeoutMs);
        waiters.push((params) => {
          clearTimeout(timer);
          resolve(params);
        });
      });
    },
    get refused() {
      return refused;
    },
    forwarded,
    async close() {
      for (const res of open) res.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
