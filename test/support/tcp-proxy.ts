// A TCP proxy on 127.0.0.1 in front of a service (e.g. between the indexer and the chain's JSON-RPC), which
// can be switched to refuse connections: `refuse()` stops listening and cuts every open connection, so
// clients get ECONNREFUSED or a reset; `accept()` listens again on the same port.
import net from "node:net";

export type TcpProxy = {
  /** The proxy's port on 127.0.0.1. */
  port: number;
  /** `http://127.0.0.1:<port>`. */
  url: string;
  /** Connections accepted so far. */
  readonly connections: number;
  /** Stop listening and destroy every open connection. */
  refuse(): Promise<void>;
  /** Listen again (on the same port). */
  accept(): Promise<void>;
  close(): Promise<void>;
};

/** Starts a proxy to `target` (host:port, or an http URL whose host and port are used). */
export async function startTcpProxy(target: string | { host: string; port: number }, port = 0): Promise<TcpProxy> {
  const to =
    typeof target === "string"
      ? (() => {
          const url = new URL(target.includes("://") ? target : `tcp://${target}`);
          return { host: url.hostname, port: Number(url.port) };
        })()
      : target;
  const sockets = new Set<net.Socket>();
  let connections = 0;

  const server = net.createServer((client) => {
    connections++;
    const upstream = net.connect(to);
    sockets.add(client);
    sockets.add(upstream);
    const drop = () => {
      client.destroy();
      upstream.destroy();
      sockets.delete(client);
      sockets.delete(upstream);
    };
    client.on("error", drop).on("close", drop);
    upstream.on("error", drop).on("close", drop);
    client.pipe(upstream);
    upstream.pipe(client);
  });

  const listen = (p: number) =>
    new Promise<number>((resolve, reject) => {
      server.once("error", reject);
      server.listen(p, "127.0.0.1", () => {
        server.off("error", reject);
        resolve((server.address() as net.AddressInfo).port);
      });
    });
  const stopListening = () =>
    new Promise<void>((resolve) => {
      if (!server.listening) return resolve();
      server.close(() => resolve());
      for (const socket of sockets) socket.destroy();
      sockets.clear();
    });

  const boundPort = await listen(port);
  return {
    port: boundPort,
    url: `http://127.0.0.1:${boundPort}`,
    get connections() {
      return connections;
    },
    refuse: stopListening,
    async accept() {
      if (!server.listening) await listen(boundPort);
    },
    close: stopListening,
  };
}
