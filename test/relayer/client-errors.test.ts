// Requests Node's HTTP parser refuses (relayer/src/http/client-errors.ts): a real node:http server with the
// relayer's handler, raw requests over a socket. Each gets the envelope of the interface its request line
// names, a request id and a log line, and the connection is closed.
import assert from "node:assert/strict";
import { type Server, createServer } from "node:http";
import net, { type AddressInfo } from "node:net";
import { after, before, describe, it } from "node:test";
import { answerClientErrors } from "../../relayer/src/http/client-errors.ts";
import type { Logger } from "../../relayer/src/logger.ts";

const logged: Array<{ msg: string; fields?: Record<string, unknown> }> = [];
const logger: Logger = {
  debug: () => undefined,
  info: (msg, fields) => logged.push({ msg, fields }),
  warn: () => undefined,
  error: () => undefined,
  child: () => logger,
};

let server: Server;
let port: number;

before(async () => {
  server = createServer((_request, response) => response.end("ok"));
  answerClientErrors(server, logger);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  port = (server.address() as AddressInfo).port;
});
after(() => new Promise<void>((resolve) => server.close(() => resolve())));

/** Sends `raw` and reads everything until the server closes the connection. */
function exchange(raw: string): Promise<{ status: number; headers: Map<string, string>; body: string }> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, "127.0.0.1");
    let received = "";
    socket.setEncoding("latin1");
    socket.on("data", (chunk: string) => (received += chunk));
    socket.on("error", reject);
    socket.on("close", () => {
      const [head, body = ""] = received.split("\r\n\r\n", 2);
      const [statusLine, ...lines] = head.split("\r\n");
      const headers = new Map(
        lines.map((line) => [line.slice(0, line.indexOf(":")).toLowerCase(), line.slice(line.indexOf(":") + 1).trim()]),
      );
      resolve({ status: Number(statusLine.split(" ")[1]), headers, body });
    });
    socket.write(raw);
  });
}

const hugeHeader = `x-filler: ${"a".repeat(20_000)}\r\n`;

describe("requests the HTTP parser refuses", () => {
  it("headers over 16 KiB: 431 in the payment service's envelope, with its request id, logged", async () => {
    const answer = await exchange(`GET /v1/public/stats HTTP/1.1\r\nhost: x\r\n${hugeHeader}\r\n`);
    assert.equal(answer.status, 431);
    assert.equal(answer.headers.get("content-type"), "application/json");
    assert.equal(answer.headers.get("connection"), "close");
    const body = JSON.parse(answer.body);
    assert.equal(body.error.code, "headers_too_large");
    assert.match(body.requestId, /^req_/);
    assert.equal(answer.headers.get("x-request-id"), body.requestId);
    assert.equal(Number(answer.headers.get("content-length")), Buffer.byteLength(answer.body));
    assert.ok(logged.some((line) => line.fields?.requestId === body.requestId && line.fields?.status === 431));
  });

  it("under /energy/: the sandbox's envelope", async () => {
    const answer = await exchange(`POST /energy/v1/telemetry HTTP/1.1\r\nhost: x\r\n${hugeHeader}\r\n`);
    assert.equal(answer.status, 431);
    assert.deepEqual(JSON.parse(answer.body), {
      error: { svc_code: "invalid_request", message: "the request's headers exceed 16 KiB" },
      environment: "sandbox",
    });
  });

  it("a malformed request: 400 invalid_request", async () => {
    const answer = await exchange("GET /v1/health HTTP/1.1\r\nbad header line\r\n\r\n");
    assert.equal(answer.status, 400);
    assert.equal(JSON.parse(answer.body).error.code, "invalid_request");
  });

  it("a well-formed request still reaches the server", async () => {
    const answer = await exchange("GET /v1/health HTTP/1.1\r\nhost: x\r\nconnection: close\r\n\r\n");
    assert.equal(answer.status, 200);
    assert.equal(answer.body, "ok");
  });
});
