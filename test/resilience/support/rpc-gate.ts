// A JSON-RPC proxy on 127.0.0.1 in front of the chain that can hold back calls of chosen methods: a held
// call is never forwarded nor answered (its connection stays open), as if the node had stopped answering
// at that moment. Everything else is forwarded as is.
import { once } from "node:events";
import http from "node:http";
import type { AddressInfo } from "node:net";

export type RpcGate = {
  url: string;
  /** Holds the later calls of `method`, after letting `after` of them through (default 0). */
  hold(method: string, opts?: { after?: number }): void;
  /** Resolves with the first held call's params. */
  held(timeoutMs?: number): Promise<unknown[]>;
  close(): Promise<void>;
};

export async function startRpcGate(target: string): Promise<RpcGate> {
  const holding = new Map<string, { after: number; seen: number }>();
  const heldCalls: unknown[][] = [];
  const waiters: Array<(params: unknown[]) => void> = [];
  const open = new Set<http.ServerResponse>();

  const server = http.createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const body = Buffer.concat(chunks);
    let calls: Array<{ method?: string; params?: unknown[] }> = [];
    try {
      const parsed = JSON.parse(body.toString("utf8"));
      calls = Array.isArray(parsed) ? parsed : [parsed];
    } catch {
      // not JSON: forwarded as is
    }
    const hold = calls.find((call) => {
      const rule = call.method ? holding.get(call.method) : undefined;
      return rule !== undefined && rule.seen++ >= rule.after;
    });
    if (hold) {
      open.add(res);
      res.on("close", () => open.delete(res));
      heldCalls.push(hold.params ?? []);
      for (const wake of waiters.splice(0)) wake(hold.params ?? []);
      return;
    }
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
    hold: (method, opts = {}) => void holding.set(method, { after: opts.after ?? 0, seen: 0 }),
    held(timeoutMs = 30_000) {
      if (heldCalls.length > 0) return Promise.resolve(heldCalls[0]);
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`no call was held within ${timeoutMs} ms`)), timeoutMs);
        waiters.push((params) => {
          clearTimeout(timer);
          resolve(params);
        });
      });
    },
    async close() {
      for (const res of open) res.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
