// The public views of an order (its event stream, GET /v1/orders/{id}, its receipt) show no credential, and
// the event stream ends when nothing more is due: resumed with any Last-Event-ID, a finished order's stream
// closes at once and leaves the client's stream allowance as it was.
import assert from "node:assert/strict";
import http from "node:http";
import { describe, it } from "node:test";
import { parseEventBlock, type ServerSentEvent } from "../../../sdk/src/event-stream.ts";
import { createOrder, pay, waitForOrder } from "../../support/pay.ts";
import type { Stack } from "../../support/stack.ts";
import { send } from "./scopes.ts";

/** Far longer than any answer of a stream that is due to close takes, even on a loaded machine: a stream
 * still open then is one that would never have closed. */
const HANG_MS = 30_000;

type StreamResult = { status: number; events: ServerSentEvent[]; closed: boolean; text: string };

/** Reads an order's event stream from source address `from` until the server closes it (closed: true) or
 * HANG_MS pass (closed: false); `onEvent` sees each event as it arrives. */
function readStream(
  s: Stack,
  orderId: string,
  opts: { from: string; lastEventId?: string; onEvent?: (event: ServerSentEvent) => void },
): Promise<StreamResult> {
  return new Promise((resolve, reject) => {
    const headers: Record<string, string> = { accept: "text/event-stream" };
    if (opts.lastEventId !== undefined) headers["last-event-id"] = opts.lastEventId;
    const url = new URL(`/v1/orders/${orderId}/events`, s.relayerUrl);
    const request = http.request(url, { method: "GET", headers, localAddress: opts.from, agent: false }, (res) => {
      const events: ServerSentEvent[] = [];
      let text = "";
      let buffer = "";
      const timer = setTimeout(() => {
        request.destroy();
        resolve({ status: res.statusCode ?? 0, events, closed: false, text });
      }, HANG_MS);
      res.setEncoding("utf8");
      res.on("data", (chunk: string) => {
        text += chunk;
        buffer += chunk.replace(/\r\n?/g, "\n");
        let end: number;
        while ((end = buffer.indexOf("\n\n")) >= 0) {
          const event = parseEventBlock(buffer.slice(0, end));
          buffer = buffer.slice(end + 2);
          if (event && !event.comment) {
            events.push(event);
            opts.onEvent?.(event);
          }
        }
      });
      res.on("error", (error) => {
        clearTimeout(timer);
        reject(error);
      });
      res.on("end", () => {
        clearTimeout(timer);
        resolve({ status: res.statusCode ?? 0, events, closed: true, text });
      });
    });
    request.on("error", reject);
    request.end();
  });
}

async function paidOrder(s: Stack, rail: "relayed-permit" | "cash") {
  const order = await createOrder(s, "kiosk-nbo-001", "30m");
  const paid = await pay(s, order, rail);
  assert.equal(paid.status, 202, JSON.stringify(paid.body));
  await waitForOrder(s, order.id, (o) => o.status === "success" && o.device.poweredOnAt !== null, 30_000);
  return order;
}

export function orderStreamCases(stack: () => Stack) {
  describe("order event streams: resumption and what they show", () => {
    it(
      "closes a paid order's stream resumed past its last event at once, answered from the start; 25 in a row from one address never hit 429",
      { timeout: 600_000 },
      async () => {
        const s = stack();
        const order = await paidOrder(s, "relayed-permit");
        const from = "127.0.98.1";
        const all = await readStream(s, order.id, { from, lastEventId: "0" });
        assert.ok(all.closed, "the stream from the first event closes after the terminal event");
        const types = all.events.map((e) => e.event);
        assert.equal(types.at(-1), "device.powered_on", types.join(", "));
        const lastId = all.events.at(-1)!.id!;

        for (let i = 0; i < 25; i++) {
          const resumed = await readStream(s, order.id, { from, lastEventId: "999999" });
          assert.equal(resumed.status, 200, `request ${i + 1}: ${resumed.text}`);
          assert.ok(resumed.closed, `request ${i + 1}: the stream resumed past the order's last event did not close`);
          // An id this order's stream never sent: the client cannot know what it missed, so it gets the state.
          assert.deepEqual(
            resumed.events.map((e) => e.event),
            ["state"],
            `request ${i + 1}`,
          );
          assert.equal(JSON.parse(resumed.events[0].data).status, "success");
          assert.equal(resumed.events[0].id, lastId, "the state carries the id of the order's last event");
        }
        // Resumed at the terminal event itself: nothing is due, the stream closes empty.
        const atEnd = await readStream(s, order.id, { from, lastEventId: lastId });
        assert.equal(atEnd.status, 200);
        assert.ok(atEnd.closed, "the stream resumed at the terminal event did not close");
        assert.deepEqual(atEnd.events, []);
        // And the address still has its whole allowance: a stream of an order still pending opens.
        const pending = await createOrder(s, "kiosk-nbo-001", "30m");
        const streams: Array<Promise<StreamResult>> = [];
        const opened: Array<Promise<void>> = [];
        for (let i = 0; i < 20; i++) {
          opened.push(
            new Promise<void>((resolve) => {
              streams.push(readStream(s, pending.id, { from, onEvent: (e) => e.event === "state" && resolve() }));
            }),
          );
        }
        await Promise.all(opened);
        const over = await send(s, { method: "GET", path: `/v1/orders/${pending.id}/events`, from });
        assert.equal(over.status, 429, "the 21st open stream of the address is refused");
        // The 20 streams end with the order: pay it.
        await pay(s, pending, "relayed-permit");
        for (const result of await Promise.all(streams)) {
          assert.ok(result.closed);
          assert.equal(result.events.at(-1)?.event, "device.powered_on");
        }
      },
    );

    it(
      "answers a pending order's stream resumed past its last event from the start, and closes it after the terminal event",
      { timeout: 120_000 },
      async () => {
        const s = stack();
        const order = await createOrder(s, "kiosk-nbo-001", "30m");
        let first: () => void = () => undefined;
        const started = new Promise<void>((resolve) => (first = resolve));
        const streaming = readStream(s, order.id, { from: "127.0.98.2", lastEventId: "999999", onEvent: () => first() });
        await started;
        await pay(s, order, "relayed-permit");
        const result = await streaming;
        assert.ok(result.closed, "the stream did not close after the terminal event");
        const types = result.events.map((e) => e.event);
        assert.equal(types[0], "state", types.join(", "));
        assert.equal(JSON.parse(result.events[0].data).status, "pending");
        assert.deepEqual(types.slice(1), ["payment.submitted", "payment.succeeded", "split.settled", "device.powered_on"]);
      },
    );

    it(
      "refuses an unparsable, negative or oversized Last-Event-ID with 422 at once, without using up the client's streams",
      { timeout: 120_000 },
      async () => {
        const s = stack();
        const order = await createOrder(s, "kiosk-nbo-001", "30m");
        const from = "127.0.98.3";
        // (Leading and trailing blanks are not the header's: HTTP strips them.)
        const bad = ["-1", "abc", "1.5", "1e3", "0x10", "+7", "12345678901234567890", "", "7 8", "³"];
        for (let i = 0; i < 25; i++) {
          const value = bad[i % bad.length];
          const res = await send(s, {
            method: "GET",
            path: `/v1/orders/${order.id}/events`,
            headers: { "last-event-id": value },
            from,
            timeoutMs: HANG_MS,
          });
          assert.equal(res.status, 422, `Last-Event-ID ${JSON.stringify(value)}: ${res.text}`);
          assert.equal(res.json.error.code, "invalid_parameters");
        }
        let opened: () => void = () => undefined;
        const open = new Promise<void>((resolve) => (opened = resolve));
        const streaming = readStream(s, order.id, { from, onEvent: () => opened() });
        await open;
        await pay(s, order, "relayed-permit");
        const result = await streaming;
        assert.ok(result.closed);
        assert.equal(result.events.at(-1)?.event, "device.powered_on");
      },
    );

    it(
      "shows no API key id on the public routes of a cash order: its event stream, the order and its receipt",
      { timeout: 120_000 },
      async () => {
        const s = stack();
        const me = await s.api("GET", "/v1/auth/me", { token: s.sample.agentKey });
        assert.equal(me.status, 200);
        const agentKeyId: string = me.body.apiKey.id;
        const order = await createOrder(s, "kiosk-nbo-001", "30m");
        let first: () => void = () => undefined;
        const started = new Promise<void>((resolve) => (first = resolve));
        const live = readStream(s, order.id, { from: "127.0.98.4", onEvent: () => first() });
        await started;
        const cash = await pay(s, order, "cash");
        assert.equal(cash.status, 202, JSON.stringify(cash.body));
        const streamed = await live;
        assert.ok(streamed.closed);
        const replayed = await readStream(s, order.id, { from: "127.0.98.4", lastEventId: "0" });
        assert.ok(replayed.closed);
        for (const result of [streamed, replayed]) {
          const submitted = result.events.find((e) => e.event === "payment.submitted");
          assert.ok(submitted, result.events.map((e) => e.event).join(", "));
          assert.deepEqual(JSON.parse(submitted.data), { rail: "cash" });
        }
        const paid = await waitForOrder(s, order.id, (o) => o.status === "success" && o.device.poweredOnAt !== null, 30_000);
        assert.equal(paid.payment.rail, "cash");
        const receipt = await s.api("GET", `/v1/orders/${order.id}/receipt`);
        assert.equal(receipt.status, 200);
        const orderRes = await s.api("GET", `/v1/orders/${order.id}`);
        for (const [what, text] of [
          ["the live stream", streamed.text],
          ["the replayed stream", replayed.text],
          ["the order", orderRes.text],
          ["the receipt", receipt.text],
        ]) {
          assert.ok(!text.includes(agentKeyId), `${what} shows the agent's key id`);
          assert.ok(!/key_[0-9A-Z]{26}/.test(text), `${what} shows an API key id`);
          assert.ok(!text.includes(s.sample.agentKey), `${what} shows the agent's key`);
        }
      },
    );
  });
}
