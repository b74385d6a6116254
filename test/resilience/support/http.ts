// A raw HTTP client for the resilience suite (node:http, not fetch): the path and query go out exactly as
// written (no normalisation of `..` or percent-encoding), any header or body bytes can be sent, with a
// content-length or chunked, from a chosen loopback source address, with a time limit. Event streams are
// closed once their head has arrived. Every response is kept in a journal (for the secrets scan).
import http from "node:http";
import type { UncheckedJson } from "../../support/unchecked-json.ts";

const LARGE_BODY_BYTES = 256 * 1024;
const PIECE_BYTES = 64 * 1024;
const HEAD_ANSWER_MS = 1_000;
const PIECE_PAUSE_MS = 20;

export type RawRequest = {
  method: string;
  /** Path and query, sent as is. */
  path: string;
  headers?: Record<string, string>;
  body?: string | Buffer;
  /** Send the body chunked (no content-length). */
  chunked?: boolean;
  /** The connection's source address (127.0.0.x): per-client limits see each address as a client. */
  localAddress?: string;
  /** The whole exchange must end within this time (default 15 s). */
  timeoutMs?: number;
  /** For a large body with a content-length: how long to wait for an answer to the head alone before the
   * body goes out (default 1 s; a server refusing the size answers on the head). */
  headAnswerMs?: number;
};

export type RawResponse = {
  status: number;
  headers: http.IncomingHttpHeaders;
  text: string;
  /** The body parsed as JSON, or undefined. */
  json: UncheckedJson;
  ms: number;
  /** An event stream, closed after its head. */
  stream: boolean;
  /** Its place in the client's journal. */
  journalIndex: number;
};

export type JournalEntry = { at: number; method: string; path: string; status: number; headers: http.IncomingHttpHeaders; text: string };

export type HttpClient = {
  send(req: RawRequest): Promise<RawResponse>;
  /** Every response so far, in arrival order. */
  journal: JournalEntry[];
  close(): void;
};

/** A client of the server at `baseUrl` (http://127.0.0.1:port). */
export function httpClient(baseUrl: string | (() => string), opts: { keepJournal?: boolean } = {}): HttpClient {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 16 });
  const journal: JournalEntry[] = [];
  const base = () => new URL(typeof baseUrl === "string" ? baseUrl : baseUrl());

  /** One retry when a kept-alive connection turned out closed before the request went out (the server closes
   * idle connections; Node's documented remedy). */
  async function send(req: RawRequest): Promise<RawResponse> {
    try {
      return await attempt(req);
    } catch (error) {
      if ((error as { reusedSocket?: boolean }).reusedSocket) return attempt(req);
      throw error;
    }
  }

  function attempt(req: RawRequest): Promise<RawResponse> {
    const url = base();
    const started = performance.now();
    const headers: Record<string, string> = { ...req.headers };
    const body = req.body === undefined ? undefined : Buffer.isBuffer(req.body) ? req.body : Buffer.from(req.body, "utf8");
    if (body && !req.chunked) headers["content-length"] = String(body.length);
    if (body && req.chunked) headers["transfer-encoding"] = "chunked";
    return new Promise<RawResponse>((resolve, reject) => {
      let done = false;
      const finish = (error: Error | undefined, response?: RawResponse) => {
        if (done) return;
        done = true;
        clearTimeout(timer);
        if (error) reject(error);
        else resolve(response!);
      };
      const request = http.request({
        host: url.hostname,
        port: Number(url.port),
        method: req.method,
        path: req.path,
        headers,
        agent,
        localAddress: req.localAddress,
      });
      const timeoutMs = req.timeoutMs ?? 15_000;
      const timer = setTimeout(() => {
        request.destroy();
        finish(new Error(`${req.method} ${req.path.slice(0, 200)}: no complete answer within ${timeoutMs} ms`));
      }, timeoutMs);
      request.on("error", (error: NodeJS.ErrnoException) =>
        finish(
          Object.assign(new Error(`${req.method} ${req.path.slice(0, 200)}: ${error.message}`), {
            // EPIPE too: a large body still being written when the server's idle close of the kept-alive
            // connection arrives fails the write, not the read.
            reusedSocket:
              request.reusedSocket && (error.code === "ECONNRESET" || error.code === "EPIPE" || error.message === "socket hang up"),
          }),
        ),
      );
      request.on("response", (res) => {
        const status = res.statusCode ?? 0;
        const stream = /^text\/event-stream/.test(res.headers["content-type"] ?? "");
        const complete = (text: string) => {
          let json: UncheckedJson;
          try {
            json = JSON.parse(text);
          } catch {
            json = undefined;
          }
          const journalIndex = journal.length;
          if (opts.keepJournal !== false) {
            journal.push({ at: Date.now(), method: req.method, path: req.path, status, headers: res.headers, text });
          }
          const response: RawResponse = { status, headers: res.headers, text, json, ms: performance.now() - started, stream, journalIndex };
          finish(undefined, response);
        };
        if (stream) {
          // An event stream stays open: its head is the answer; the connection is not reused.
          res.destroy();
          complete("");
          return;
        }
        const chunks: Buffer[] = [];
        res.on("data", (chunk: Buffer) => chunks.push(chunk));
        res.on("end", () => complete(Buffer.concat(chunks).toString("utf8")));
        res.on("error", (error) => finish(error));
      });
      if (body && body.length > LARGE_BODY_BYTES) {
        // A large body goes out in pieces, and no more of it once the server has answered (it may answer
        // before reading it all, e.g. 413, and close: writing on would only reset the connection).
        // The head goes first: a server that refuses on the head alone answers before any of the body. A
        // chunked body (no size in the head) goes in paced pieces: a server that answers once it has read
        // past its limit does so before the next piece.
        let answered = false;
        const writeFrom = (offset: number) => {
          if (answered || done) return;
          if (offset >= body.length) return void request.end();
          const piece = body.subarray(offset, offset + PIECE_BYTES);
          request.write(piece, () => setTimeout(() => writeFrom(offset + piece.length), req.chunked ? PIECE_PAUSE_MS : 0));
        };
        const start = setTimeout(() => writeFrom(0), req.chunked ? 0 : (req.headAnswerMs ?? HEAD_ANSWER_MS));
        request.once("response", () => {
          answered = true;
          clearTimeout(start);
        });
        request.flushHeaders();
      } else {
        request.end(body);
      }
    });
  }

  return {
    send,
    journal,
    close: () => agent.destroy(),
  };
}

/** Loopback source addresses 127.0.0.2 ... 127.0.0.254, round robin (as bench/http-throughput.ts does for
 * rate-limited routes): many clients on one machine. */
export function loopbackAddresses() {
  let next = 0;
  return () => `127.0.0.${2 + (next++ % 253)}`;
}

/** Runs `tasks` with at most `concurrency` at a time; resolves when all are done. */
export async function pool<T>(items: T[], concurrency: number, fn: (item: T, index: number) => Promise<void>): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const index = next++;
      await fn(items[index], index);
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, items.length) }, worker));
}
