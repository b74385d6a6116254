// Requests Node's HTTP parser refuses before any route sees them (headers over its 16 KiB limit, a malformed
// request line or header, a client too slow to send its headers or its body): answered in the envelope of the
// interface the request line names (the sandbox's under /energy/, the payment service's elsewhere) with a
// request id, and logged, instead of Node's bare status line. The connection is closed after the answer, as
// Node does.
import type { Server } from "node:http";
import type { Socket } from "node:net";
import { STATUS_CODES } from "node:http";
import { sandboxErrorBody } from "../energy/routes/envelope.ts";
import { newId } from "../ids.ts";
import type { Logger } from "../logger.ts";

type ParserError = Error & { code?: string; rawPacket?: Buffer };

/** The status and the payment service's error code for a parser error. */
function classify(error: ParserError): { status: 400 | 408 | 431; code: string; message: string } {
  if (error.code === "HPE_HEADER_OVERFLOW")
    return { status: 431, code: "headers_too_large", message: "the request's headers exceed 16 KiB" };
  if (error.code === "ERR_HTTP_REQUEST_TIMEOUT")
    return { status: 408, code: "request_timeout", message: "the request (its headers or its body) did not arrive in time" };
  return { status: 400, code: "invalid_request", message: "the request is not well-formed HTTP/1.1" };
}

/** Whether the request line the parser saw names a sandbox route (`<method> /energy/...`). */
function isSandboxRequest(raw: Buffer | undefined): boolean {
  if (!raw) return false;
  const line = raw.subarray(0, 64).toString("latin1");
  const space = line.indexOf(" ");
  return space > 0 && line.startsWith("/energy/", space + 1);
}

/** The raw HTTP/1.1 response for `error`, and its request id. */
export function clientErrorResponse(error: ParserError): { requestId: string; status: number; text: string } {
  const { status, code, message } = classify(error);
  const requestId = newId("req");
  const body = JSON.stringify(
    isSandboxRequest(error.rawPacket) ? sandboxErrorBody("invalid_request", message) : { error: { code, message }, requestId },
  );
  const text =
    `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\n` +
    "content-type: application/json\r\n" +
    `content-length: ${Buffer.byteLength(body)}\r\n` +
    `x-request-id: ${requestId}\r\n` +
    "connection: close\r\n\r\n" +
    body;
  return { requestId, status, text };
}

/** Answers the parser's refusals on `server` (see the top of this file). */
export function answerClientErrors(server: Server, logger: Logger): void {
  server.on("clientError", (error: ParserError, socket: Socket) => {
    // The client went away, or the response of an earlier request on this connection has started: nothing
    // can be answered (the same test as Node's own handler, which reads the socket's current response).
    const current = (socket as Socket & { _httpMessage?: { headersSent?: boolean } })._httpMessage;
    if (error.code === "ECONNRESET" || !socket.writable || current?.headersSent) {
      socket.destroy();
      return;
    }
    const { requestId, status, text } = clientErrorResponse(error);
    socket.end(text);
    logger.info("request refused by the HTTP parser", { requestId, status, reason: error.code ?? "unknown" });
  });
}
