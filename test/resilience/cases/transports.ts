// Stalled transports on every operation of both interfaces, each operation from a loopback address of its
// own (many source addresses at once): headers that never end, and a body that stops after a few bytes. With
// the relayer's default timeouts every such connection is answered (408 request_timeout, or the route's own
// answer when it answers before reading the body) and closed within seconds, never a 5xx, an error in the
// envelope of the interface the request names; the relayer keeps serving meanwhile.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { Stack } from "../../support/stack.ts";
import { type RawConnection, closeAll, firstResponse, openRaw } from "../../support/loopback-clients.ts";
import { answererOf, envelopeProblem } from "../support/envelope.ts";
import type { Fixtures } from "../support/fixtures.ts";
import type { RawResponse } from "../support/http.ts";

/** What the relayer's defaults allow a stalled connection, with room: the whole request's 30 s, Node's check of
 * it every second, the 2 s a connection closed on the relayer's side may linger. (Node's own defaults: 60 s
 * for headers, checked every 30 s, and 300 s for the whole request.) */
const CLOSED_WITHIN_MS = 45_000;

function asRaw(text: string): RawResponse {
  const answer = firstResponse(text);
  let json: RawResponse["json"];
  try {
    json = JSON.parse(answer.body);
  } catch {
    json = undefined;
  }
  return {
    status: answer.status,
    headers: Object.fromEntries(answer.headers),
    text: answer.body,
    json,
    ms: 0,
    stream: false,
    journalIndex: -1,
  };
}

export function transportCases(stack: () => Stack, fixtures: () => Fixtures) {
  describe("stalled transports", () => {
    it("every operation, from an address of its own: unfinished headers and a stalled body are answered and closed in seconds", async () => {
      const s = stack();
      const fx = fixtures();
      const port = Number(new URL(s.relayerUrl).port);
      const operations = fx.docs.operations.slice(0, 250);
      const cases: Array<{ what: string; path: string; kind: "headers" | "body"; connection: RawConnection }> = [];
      try {
        await Promise.all(
          operations.map(async (op, i) => {
            const path = `${op.base}${op.path.replace(/\{[^}]+\}/g, "x")}`;
            const localAddress = `127.0.2.${i + 1}`;
            const headers = await openRaw(port, localAddress, `${op.method} ${path} HTTP/1.1\r\nhost: relayer\r\naccept: */*\r\n`);
            cases.push({ what: `${op.id}: unfinished headers`, path, kind: "headers", connection: headers });
            const type = op.body?.contentType ?? "application/json";
            const body = await openRaw(
              port,
              localAddress,
              `${op.method} ${path} HTTP/1.1\r\nhost: relayer\r\ncontent-type: ${type}\r\ncontent-length: 200\r\n\r\n{"a":`,
            );
            cases.push({ what: `${op.id}: stalled body`, path, kind: "body", connection: body });
          }),
        );
        // The relayer serves others meanwhile.
        const health = await fetch(`${s.relayerUrl}/v1/health`, { signal: AbortSignal.timeout(20_000) });
        assert.equal(health.status, 200);

        const deadline = Date.now() + CLOSED_WITHIN_MS;
        while (cases.some((c) => !c.connection.closed()) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 200));
        const problems: string[] = [];
        for (const c of cases) {
          if (!c.connection.closed()) {
            problems.push(`${c.what}: still open after ${CLOSED_WITHIN_MS / 1000} s`);
            continue;
          }
          const res = asRaw(c.connection.received());
          if (res.status === 0) continue; // closed without an answer: nothing to hold it to
          // The readiness probe's documented 503 (its own body, not the error envelope): a dependency did not answer
          // within its 1 s check, as the chain's RPC may not on a loaded machine with these 500 connections open.
          if (c.path === "/v1/health/ready" && res.status === 503 && (res.json as { status?: unknown })?.status === "not_ready") continue;
          if (res.status >= 500) problems.push(`${c.what}: ${res.status} ${res.text.slice(0, 200)}`);
          if (c.kind === "headers" && res.status !== 408) problems.push(`${c.what}: ${res.status}, not 408`);
          // Unfinished headers: the request line is not known to be whole, the payment service's envelope
          // answers; a stalled body: the envelope of the interface the request names.
          const answerer = c.kind === "headers" ? "payments" : answererOf(fx.docs, c.path);
          const problem = res.status >= 400 ? envelopeProblem(fx.docs, answerer, res) : undefined;
          if (problem) problems.push(`${c.what}: ${res.status} ${problem}`);
        }
        assert.deepEqual(problems, []);
        assert.ok(
          cases.some((c) => c.kind === "body" && asRaw(c.connection.received()).status === 408),
          "some stalled body is answered 408",
        );
      } finally {
        closeAll(cases.map((c) => c.connection));
      }
    });
  });
}
