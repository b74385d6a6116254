// sdk/src/event-stream.ts: the SSE reader integrators use for GET /v1/orders/{id}/events (the end-to-end suites
// read the service's own streams with it; this covers the format's corners the service does not produce).
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { parseEventBlock, serverSentEvents } from "../../sdk/src/event-stream.ts";

/** A body that delivers `chunks` one read at a time, and records whether it was cancelled. */
function body(chunks: string[]) {
  const encoder = new TextEncoder();
  let cancelled = false;
  let i = 0;
  const stream = new ReadableStream<Uint8Array>({
    pull(controller) {
      if (i < chunks.length) controller.enqueue(encoder.encode(chunks[i++]));
      else controller.close();
    },
    cancel() {
      cancelled = true;
    },
  });
  return { stream, cancelled: () => cancelled, read: () => i };
}

async function all(chunks: string[]) {
  const events = [];
  for await (const event of serverSentEvents(body(chunks).stream)) events.push(event);
  return events;
}

describe("sdk/src/event-stream.ts", () => {
  it("parses id, event and data, with or without the space after the colon, and defaults the type to message", () => {
    assert.deepEqual(parseEventBlock('id: 7\nevent: payment.succeeded\ndata: {"a":1}'), {
      id: "7",
      event: "payment.succeeded",
      data: '{"a":1}',
      comment: false,
    });
    assert.deepEqual(parseEventBlock("data:x"), { event: "message", data: "x", comment: false });
    // Only one leading space is stripped; several data lines are joined with a line feed.
    assert.deepEqual(parseEventBlock("data:  two\ndata: lines"), { event: "message", data: " two\nlines", comment: false });
    assert.equal(parseEventBlock(""), undefined);
  });

  it("yields a comment-only block as a comment, and skips comments inside an event", () => {
    assert.deepEqual(parseEventBlock(": keep-alive"), { event: "comment", data: ": keep-alive", comment: true });
    assert.deepEqual(parseEventBlock(": note\nevent: state\ndata: {}"), { event: "state", data: "{}", comment: false });
  });

  it("reassembles events split across reads anywhere, CR LF included, and ends with the stream", async () => {
    const text = 'id: 1\r\nevent: state\r\ndata: {}\r\n\r\n: ping\r\n\r\nid: 2\r\nevent: payment.succeeded\r\ndata: {"ok":true}\r\n\r\n';
    const expected = [
      { id: "1", event: "state", data: "{}", comment: false },
      { event: "comment", data: ": ping", comment: true },
      { id: "2", event: "payment.succeeded", data: '{"ok":true}', comment: false },
    ];
    assert.deepEqual(await all([text]), expected);
    // Every split point, CR | LF ones included: the same events.
    for (let cut = 1; cut < text.length; cut++) {
      assert.deepEqual(await all([text.slice(0, cut), text.slice(cut)]), expected, `split at ${cut}`);
    }
    // One character per read.
    assert.deepEqual(await all([...text]), expected);
    // An unfinished last event (no blank line) is not yielded.
    assert.deepEqual(await all(["event: a\ndata: 1\n\nevent: b\ndata: 2\n"]), [{ event: "a", data: "1", comment: false }]);
  });

  it("cancels the body when the reader leaves early, and not when the stream ended by itself", async () => {
    const early = body(["event: a\ndata: 1\n\n", "event: b\ndata: 2\n\n", "event: c\ndata: 3\n\n"]);
    for await (const event of serverSentEvents(early.stream)) if (event.event === "a") break;
    assert.equal(early.cancelled(), true);
    assert.ok(early.read() < 3, "the rest of the stream was not read");

    const whole = body(["event: a\ndata: 1\n\n"]);
    for await (const _ of serverSentEvents(whole.stream)) void _;
    assert.equal(whole.cancelled(), false);
  });
});
