// Raw TCP clients from many loopback addresses, to act as many hosts: Linux routes all of 127.0.0.0/8 to the
// loopback interface, so a socket bound to 127.0.0.2..127.0.0.254 reaches a server on 127.0.0.1 from that
// address. Each connection records when the server closed it and what it answered.
import net from "node:net";

export type RawConnection = {
  localAddress: string;
  socket: net.Socket;
  /** Everything the server sent. */
  received(): string;
  /** Whether the server has closed the connection (its end: the client saw the end of the stream or a reset). */
  closed(): boolean;
  /** Resolves when the connection is closed. */
  whenClosed: Promise<void>;
};

/** Opens a connection from `localAddress` and writes `raw` (nothing more is sent). The client closes nothing
 * itself (allowHalfOpen): when the server ends the connection this side stays open, as a client that never
 * closes would. */
export function openRaw(port: number, localAddress: string, raw: string): Promise<RawConnection> {
  return new Promise((resolve) => {
    const socket = net.connect({ port, host: "127.0.0.1", localAddress, allowHalfOpen: true });
    let data = "";
    let isClosed = false;
    socket.setEncoding("latin1");
    socket.on("data", (chunk: string) => (data += chunk));
    socket.on("error", () => undefined);
    const whenClosed = new Promise<void>((done) => {
      const closed = () => {
        isClosed = true;
        done();
      };
      socket.once("end", closed);
      socket.once("close", closed);
    });
    const connection: RawConnection = { localAddress, socket, received: () => data, closed: () => isClosed, whenClosed };
    socket.once("connect", () => {
      socket.write(raw);
      resolve(connection);
    });
    socket.once("close", () => resolve(connection));
  });
}

/** Opens `perAddress` connections from each of `addresses`, `batch` at a time. */
export async function openMany(port: number, addresses: string[], perAddress: number, raw: string, batch = 200): Promise<RawConnection[]> {
  const plan = addresses.flatMap((address) => Array.from({ length: perAddress }, () => address));
  const opened: RawConnection[] = [];
  for (let i = 0; i < plan.length; i += batch) {
    opened.push(...(await Promise.all(plan.slice(i, i + batch).map((address) => openRaw(port, address, raw)))));
  }
  return opened;
}

/** The loopback addresses 127.0.0.`from` to 127.0.0.`to`. */
export function loopbackAddresses(from: number, to: number): string[] {
  return Array.from({ length: to - from + 1 }, (_, i) => `127.0.0.${from + i}`);
}

/** The status line's code and the body of the first response in `text` (0 when none arrived). */
export function firstResponse(text: string): { status: number; headers: Map<string, string>; body: string } {
  const end = text.indexOf("\r\n\r\n");
  if (!text.startsWith("HTTP/1.1 ") || end < 0) return { status: 0, headers: new Map(), body: "" };
  const [statusLine, ...lines] = text.slice(0, end).split("\r\n");
  const headers = new Map(lines.map((line) => [line.slice(0, line.indexOf(":")).toLowerCase(), line.slice(line.indexOf(":") + 1).trim()]));
  return { status: Number(statusLine.split(" ")[1]), headers, body: text.slice(end + 4) };
}

/** Destroys every connection. */
export function closeAll(connections: RawConnection[]): void {
  for (const c of connections) c.socket.destroy();
}
