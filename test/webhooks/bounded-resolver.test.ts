// The bounded DNS lookups of callback URLs (relayer/src/webhooks/bounded-resolver.ts): a few at a time, a
// deadline for each caller, one lookup for a name however many ask for it; with resolvers whose answers the
// test releases, and with the system's getaddrinfo.
import assert from "node:assert/strict";
import type { LookupAddress } from "node:dns";
import { describe, it } from "node:test";
import {
  LOOKUP_CONCURRENCY,
  LookupTimeoutError,
  type Resolver,
  boundedResolver,
  systemResolver,
} from "../../relayer/src/webhooks/bounded-resolver.ts";
import { UnsafeUrlError, checkCallbackUrl } from "../../relayer/src/webhooks/url-safety.ts";

/** A resolver whose lookups answer when the test says: `started` lists the names looked up, in order. */
function heldResolver() {
  const started: string[] = [];
  const pending = new Map<string, { resolve: (a: LookupAddress[]) => void; reject: (e: Error) => void }>();
  let running = 0;
  let mostAtOnce = 0;
  const resolver: Resolver = (hostname) => {
    started.push(hostname);
    running++;
    mostAtOnce = Math.max(mostAtOnce, running);
    return new Promise<LookupAddress[]>((resolve, reject) => pending.set(hostname, { resolve, reject })).finally(() => running--);
  };
  return {
    resolver,
    started,
    mostAtOnce: () => mostAtOnce,
    answer(hostname: string, address: string) {
      pending.get(hostname)!.resolve([{ address, family: 4 }]);
    },
    fail(hostname: string, code: string) {
      pending.get(hostname)!.reject(Object.assign(new Error(`getaddrinfo ${code} ${hostname}`), { code }));
    },
  };
}

const tick = () => new Promise((resolve) => setImmediate(resolve));
const settled = async <T>(promise: Promise<T>) => {
  let state = "pending";
  promise.then(
    () => (state = "resolved"),
    () => (state = "rejected"),
  );
  await tick();
  return state;
};

describe("bounded DNS lookups", () => {
  it("runs at most `concurrency` lookups at once; the others start as slots free, in order", async () => {
    const held = heldResolver();
    const resolve = boundedResolver(held.resolver, { concurrency: 2, timeoutMs: 10_000 });
    const answers = ["a.example", "b.example", "c.example", "d.example"].map((name) => resolve(name));
    await tick();
    assert.deepEqual(held.started, ["a.example", "b.example"]);
    assert.deepEqual(resolve.stats(), { running: 2, queued: 2, timeouts: 0 });
    held.answer("b.example", "203.0.113.2");
    assert.deepEqual(await answers[1], [{ address: "203.0.113.2", family: 4 }]);
    await tick();
    assert.deepEqual(held.started, ["a.example", "b.example", "c.example"]);
    held.fail("a.example", "ENOTFOUND");
    await assert.rejects(answers[0], { code: "ENOTFOUND" });
    await tick();
    assert.deepEqual(held.started, ["a.example", "b.example", "c.example", "d.example"]);
    held.answer("c.example", "203.0.113.3");
    held.answer("d.example", "203.0.113.4");
    assert.deepEqual(await Promise.all(answers.slice(2)), [
      [{ address: "203.0.113.3", family: 4 }],
      [{ address: "203.0.113.4", family: 4 }],
    ]);
    assert.equal(held.mostAtOnce(), 2);
    assert.deepEqual(resolve.stats(), { running: 0, queued: 0, timeouts: 0 });
  });

  it("gives a caller ETIMEOUT after the deadline, queued or running; a slow lookup keeps its slot until it answers, one nobody waits for is skipped", async () => {
    const held = heldResolver();
    // The deadline leaves the steps after the time-outs (a few event-loop turns until `next` is answered) ample
    // room on a loaded machine.
    const resolve = boundedResolver(held.resolver, { concurrency: 1, timeoutMs: 300 });
    const slow = resolve("slow.example");
    const queued = resolve("queued.example");
    const startedAt = Date.now();
    await assert.rejects(slow, (error: Error) => error instanceof LookupTimeoutError && (error as LookupTimeoutError).code === "ETIMEOUT");
    await assert.rejects(queued, LookupTimeoutError);
    assert.deepEqual(resolve.stats(), { running: 1, queued: 1, timeouts: 2 });
    assert.ok(Date.now() - startedAt >= 290, `waited ${Date.now() - startedAt} ms`);
    // The slow lookup still holds the only slot: a new name waits for it.
    const next = resolve("next.example");
    await tick();
    assert.deepEqual(held.started, ["slow.example"]);
    held.answer("slow.example", "203.0.113.9");
    await tick();
    // Nobody waits for the queued name any more: its lookup is skipped, the new name's runs.
    assert.deepEqual(held.started, ["slow.example", "next.example"]);
    held.answer("next.example", "203.0.113.11");
    assert.deepEqual(await next, [{ address: "203.0.113.11", family: 4 }]);
    assert.deepEqual(resolve.stats(), { running: 0, queued: 0, timeouts: 2 });
  });

  it("shares one running lookup among the callers asking for the same name, and looks it up again afterwards", async () => {
    const held = heldResolver();
    const resolve = boundedResolver(held.resolver, { concurrency: 2, timeoutMs: 10_000 });
    const callers = Array.from({ length: 5 }, () => resolve("same.example"));
    const other = resolve("other.example");
    await tick();
    assert.deepEqual(held.started, ["same.example", "other.example"]);
    held.answer("same.example", "203.0.113.5");
    for (const caller of callers) assert.deepEqual(await caller, [{ address: "203.0.113.5", family: 4 }]);
    assert.equal(await settled(other), "pending");
    const again = resolve("same.example");
    await tick();
    assert.deepEqual(held.started, ["same.example", "other.example", "same.example"]);
    held.answer("same.example", "203.0.113.6");
    held.answer("other.example", "203.0.113.7");
    assert.deepEqual(await again, [{ address: "203.0.113.6", family: 4 }]);
    assert.deepEqual(await other, [{ address: "203.0.113.7", family: 4 }]);
  });

  it("refuses a callback URL whose name does not answer in time, naming the timeout", async () => {
    const held = heldResolver();
    const resolve = boundedResolver(held.resolver, { concurrency: 1, timeoutMs: 100 });
    await assert.rejects(
      checkCallbackUrl("https://hooks.slow-dns.example/in", { allowedPrivateHosts: [] }, resolve),
      (error: Error) => error instanceof UnsafeUrlError && /hooks\.slow-dns\.example does not resolve \(ETIMEOUT\)/.test(error.message),
    );
    held.answer("hooks.slow-dns.example", "203.0.113.8");
  });

  it("refuses a callback when one of the relayer's own endpoints does not resolve in time to be told apart", async () => {
    const held = heldResolver();
    const resolve = boundedResolver(held.resolver, { concurrency: 2, timeoutMs: 1_000 });
    const policy = { allowedPrivateHosts: ["hooks.example.com"], ownEndpoints: [{ hostname: "db.example.net", port: 5432 }] };
    const checking = checkCallbackUrl("http://hooks.example.com:5432/in", policy, resolve);
    await tick();
    held.answer("hooks.example.com", "10.0.0.5");
    await assert.rejects(
      checking,
      (error: Error) =>
        error instanceof UnsafeUrlError &&
        /db\.example\.net, one of the relayer's own endpoints, did not resolve in time/.test(error.message),
    );
    // Not cached: once the endpoint's name answers (elsewhere), the same callback is told apart from it.
    held.answer("db.example.net", "10.0.0.6");
    const again = checkCallbackUrl("http://hooks.example.com:5432/in", policy, resolve);
    await tick();
    held.answer("hooks.example.com", "10.0.0.5");
    await tick();
    held.answer("db.example.net", "10.0.0.6");
    assert.equal((await again).hostname, "hooks.example.com");
    assert.equal(held.started.filter((name) => name === "db.example.net").length, 2, "the endpoint looked up again");
  });

  it("the relayer's resolver is the system's getaddrinfo, bounded", async () => {
    assert.ok(LOOKUP_CONCURRENCY >= 1 && LOOKUP_CONCURRENCY <= 2, "leaves libuv's pool threads for file access and hashing");
    const loopback = await systemResolver("localhost");
    assert.ok(loopback.length > 0 && loopback.every((a) => a.address === "127.0.0.1" || a.address === "::1"), JSON.stringify(loopback));
    await assert.rejects(
      systemResolver("no-such-host.invalid"),
      (error: NodeJS.ErrnoException) => error.code === "ENOTFOUND" || error.code === "EAI_AGAIN",
    );
  });
});
