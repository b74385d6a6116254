// A JSON-RPC proxy on 127.0.0.1 in front of the chain that estimates gas against the latest block, as some
// public RPC providers do: every eth_estimateGas call is forwarded with the block tag `latest`, whatever tag
// the caller sent or left out. The node itself estimates against its pending block (the transactions in its
// pool included); behind this proxy, a transaction that only fails after another one still in the pool is
// mined estimates as if it would succeed. Everything else is forwarded as is.
import { once } from "node:events";
import http from "node:http";
import type { AddressInfo } from "node:net";

export type LatestStateRpcProxy = {
  url: string;
  /** eth_estimateGas calls rewritten so far. */
  readonly estimates: number;
  close(): Promise<void>;
};

type Call = { method?: unknown; params?: unknown };

function atLatest(call: Call): Call {
  if (call.method !== "eth_estimateGas" || !Array.isArray(call.params) || call.params.length === 0) return call;
  return { ...call, params: [call.params[0], "latest"] };
}

export async function startLatestStateRpcProxy(target: string): Promise<LatestStateRpcProxy> {
  let estimates = 0;
  const server = http.createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    let body = Buffer.concat(chunks);
    try {
      const parsed = JSON.parse(body.toString("utf8")) as Call | Call[];
      const calls = Array.isArray(parsed) ? parsed : [parsed];
      const rewritten = calls.map(atLatest);
      const changed = rewritten.filter((call, i) => call !== calls[i]).length;
      if (changed > 0) {
        estimates += changed;
        body = Buffer.from(JSON.stringify(Array.isArray(parsed) ? rewritten : rewritten[0]));
      }
    } catch {
      // not JSON: forwarded as is
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
    get estimates() {
      return estimates;
    },
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
