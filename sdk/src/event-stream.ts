// Reading an order's event stream (GET /v1/orders/{id}/events, Server-Sent Events) with fetch, without an
// EventSource polyfill:
//
//   const response = await fetch(`${base}/v1/orders/${id}/events`, { headers: { accept: "text/event-stream" } });
//   for await (const event of serverSentEvents(response.body!)) {
//     if (event.event === "payment.succeeded") break; // breaking out closes the connection
//   }
//
// Parsing follows the HTML standard's event stream format: fields `id`, `event`, `data` (several data lines
// are joined with "\n"), one optional space after the colon, events separated by a blank line, CR LF or LF
// line ends. A block of comment lines only (the service's keep-alive) is yielded as `comment: true`, so a
// reader can see that the connection is alive. Depends on nothing but the web streams of Node 18+ and browsers.

export type ServerSentEvent = {
  /** The `id` field (the service's event id; send it back as Last-Event-ID to resume). */
  id?: string;
  /** The `event` field: "message" when absent, "comment" for a comment-only block. */
  event: string;
  data: string;
  comment: boolean;
};

/** Parses one event block (the text between two blank lines), or undefined for an empty block. */
export function parseEventBlock(block: string): ServerSentEvent | undefined {
  const lines = block.split("\n").filter((line) => line.length > 0);
  if (lines.length === 0) return undefined;
  if (lines.every((line) => line.startsWith(":"))) return { event: "comment", data: lines.join("\n"), comment: true };
  const event: ServerSentEvent = { event: "message", data: "", comment: false };
  const data: string[] = [];
  for (const line of lines) {
    if (line.startsWith(":")) continue;
    const colon = line.indexOf(":");
    const field = colon < 0 ? line : line.slice(0, colon);
    let value = colon < 0 ? "" : line.slice(colon + 1);
    if (value.startsWith(" ")) value = value.slice(1);
    if (field === "id") event.id = value;
    else if (field === "event") event.event = value;
    else if (field === "data") data.push(value);
  }
  event.data = data.join("\n");
  return event;
}

/** The events of a `text/event-stream` body, in order, as they arrive. The generator ends when the stream
 * ends; leaving it early (break, return, a throw) cancels the body, which closes the connection. */
export async function* serverSentEvents(body: ReadableStream<Uint8Array>): AsyncGenerator<ServerSentEvent> {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  let buffer = "";
  let finished = false;
  let carriage = false; // a chunk ended with CR: it may be the first half of CR LF
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) {
        finished = true;
        return;
      }
      let text: string = (carriage ? "\r" : "") + decoder.decode(value, { stream: true });
      carriage = text.endsWith("\r");
      if (carriage) text = text.slice(0, -1);
      buffer += text.replace(/\r\n?/g, "\n");
      let end: number;
      while ((end = buffer.indexOf("\n\n")) >= 0) {
        const event = parseEventBlock(buffer.slice(0, end));
        buffer = buffer.slice(end + 2);
        if (event) yield event;
      }
    }
  } finally {
    if (!finished) await reader.cancel().catch(() => undefined);
    reader.releaseLock();
  }
}
