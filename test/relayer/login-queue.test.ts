// The sign-in's password checks under a flood (relayer/src/auth/passwords.ts, POST /v1/auth/login): scrypt at
// the default N=2^17, two at a time, at most PASSWORD_HASH_QUEUE waiting. Sign-ins for unknown emails from
// many client addresses (each its own loopback address, so the per-address limit does not stop them) fill
// the queue: the next ones get 503 with Retry-After at once; the flood's clients hang up and their waiting
// checks are dropped without being hashed (counted on /metrics); a real sign-in then gets through in
// seconds, and attempts for an account that were refused or abandoned unchecked do not count towards its
// lock (LOGIN_ACCOUNT_MAX_FAILURES, 10).
import assert from "node:assert/strict";
import http from "node:http";
import { after, before, describe, it } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";
import {
  MIN_SCRYPT_N,
  PasswordHashAbandonedError,
  PasswordHashBusyError,
  SCRYPT_PARAMS,
  passwordHashStats,
  passwordHasher,
} from "../../relayer/src/auth/passwords.ts";
import { type Stack, startStack } from "../support/stack.ts";

const QUEUE = 20;
const FLOOD = 60;

type Outcome = { status: number; retryAfter?: string; body: string } | { abandoned: true };

/** POST /v1/auth/login from `localAddress`; abort() hangs up. */
function signIn(relayerUrl: string, localAddress: string, email: string, password: string) {
  const controller = new AbortController();
  const url = new URL("/v1/auth/login", relayerUrl);
  const outcome = new Promise<Outcome>((resolve) => {
    const request = http.request(
      { host: url.hostname, port: url.port, path: url.pathname, method: "POST", localAddress, signal: controller.signal, agent: false },
      (response) => {
        let body = "";
        response.setEncoding("utf8");
        response.on("data", (chunk: string) => (body += chunk));
        response.on("end", () => resolve({ status: response.statusCode ?? 0, retryAfter: response.headers["retry-after"], body }));
        response.on("error", () => resolve({ abandoned: true }));
      },
    );
    request.on("error", () => resolve({ abandoned: true }));
    request.setHeader("content-type", "application/json");
    request.end(JSON.stringify({ email, password }));
  });
  return { outcome, abort: () => controller.abort() };
}

describe("the scrypt queue (in process)", () => {
  it("runs two hashes at once, refuses one beyond maxWaiting, and drops waiters whose signal fired unhashed", async () => {
    const hasher = passwordHasher({ ...SCRYPT_PARAMS, N: MIN_SCRYPT_N }, { maxWaiting: 3 });
    const stored = await hasher.hash("pw");
    const before = passwordHashStats();
    const controllers = Array.from({ length: 5 }, () => new AbortController());
    const checks = controllers.map((c) => hasher.check("pw", stored, { signal: c.signal }).catch((error: unknown) => error));
    assert.deepEqual([passwordHashStats().running, passwordHashStats().queued], [2, 3]);

    const refused = await hasher.check("pw", stored).catch((error: unknown) => error);
    assert.ok(refused instanceof PasswordHashBusyError, String(refused));
    assert.ok(Number.isInteger(refused.retryAfterSeconds) && refused.retryAfterSeconds >= 1);

    // The last two in line hang up; a caller whose signal fired before it asked is not queued at all.
    controllers[3].abort();
    controllers[4].abort();
    const gone = new AbortController();
    gone.abort();
    assert.ok(
      (await hasher.verify("pw", stored, { signal: gone.signal }).catch((error: unknown) => error)) instanceof PasswordHashAbandonedError,
    );

    const results = await Promise.all(checks);
    assert.deepEqual(results.slice(0, 3), [{ ok: true }, { ok: true }, { ok: true }]);
    for (const result of results.slice(3)) assert.ok(result instanceof PasswordHashAbandonedError, String(result));
    const after = passwordHashStats();
    assert.deepEqual(
      {
        running: after.running,
        queued: after.queued,
        computed: after.computed - before.computed,
        refused: after.refused - before.refused,
        abandoned: after.abandoned - before.abandoned,
      },
      { running: 0, queued: 0, computed: 3, refused: 1, abandoned: 3 },
    );
  });
});

describe("sign-in under a flood of password checks (pglite)", { concurrency: false }, () => {
  let stack: Stack;
  const other = { email: "other@login-queue.example", password: "other-password-123" };

  before(
    async () => {
      stack = await startStack({
        label: "login-queue",
        database: "pglite",
        indexer: false,
        // The production scrypt cost (the suites' default is 2^14): each check takes about half a second of a core.
        relayerEnv: { PASSWORD_SCRYPT_N: "131072", PASSWORD_HASH_QUEUE: String(QUEUE) },
        tenants: [{ tenant: { id: "tn_login_queue_other", name: "Other tenant" }, user: { ...other, name: "Other" } }],
      });
    },
    { timeout: 240_000 },
  );
  after(async () => {
    await stack?.stop();
  });

  /** The relayer's password-hash figures (GET /metrics). */
  async function hashStats() {
    const text = await (await fetch(`${stack.relayerUrl}/metrics`)).text();
    const read = (series: string) => {
      const line = text.split("\n").find((l) => l.startsWith(`${series} `));
      assert.ok(line, `${series} is on /metrics`);
      return Number(line.slice(series.length + 1));
    };
    return {
      running: read("payg_password_hashes_running"),
      queued: read("payg_password_hashes_queued"),
      computed: read('payg_password_hashes_total{outcome="computed"}'),
      refused: read('payg_password_hashes_total{outcome="refused"}'),
      abandoned: read('payg_password_hashes_total{outcome="abandoned"}'),
    };
  }

  async function waitFor<T>(what: string, read: () => Promise<T>, done: (value: T) => boolean, timeoutMs = 90_000): Promise<T> {
    const deadline = Date.now() + timeoutMs;
    let value = await read();
    while (!done(value)) {
      if (Date.now() > deadline) throw new Error(`${what}: still ${JSON.stringify(value)}`);
      await sleep(100);
      value = await read();
    }
    return value;
  }

  it(
    "answers 503 with Retry-After when the queue is full, hashes none of the abandoned attempts, then signs in",
    { timeout: 300_000 },
    async () => {
      const before = await hashStats();
      assert.deepEqual([before.running, before.queued], [0, 0]);
      type Stats = typeof before;
      /** Attempts that have reached the password check since `before`: hashed, hashing, waiting, refused, dropped. */
      const reached = (s: Stats) =>
        s.computed - before.computed + s.running + s.queued + (s.refused - before.refused) + (s.abandoned - before.abandoned);

      // The flood: unknown emails, one loopback address each. The queue fills up: two hashing, QUEUE waiting,
      // the next refused.
      const flood = Array.from({ length: FLOOD }, (_, i) =>
        signIn(stack.relayerUrl, `127.0.6.${i + 1}`, `nobody-${i}@flood.example`, "guessing-123"),
      );
      await waitFor("the flood to reach the queue", hashStats, (s) => s.refused > before.refused && reached(s) === FLOOD);

      // Ten attempts with a wrong password for another account while the queue is full: refused at once or
      // queued behind the flood, then abandoned. None is checked, so none counts as a failure of the account
      // (counted, the ten would lock it: the eleventh attempt would get 429).
      const blocked = Array.from({ length: 10 }, (_, i) => signIn(stack.relayerUrl, `127.0.7.${i + 1}`, other.email, "wrong-password"));
      await waitFor("the ten to reach the queue", hashStats, (s) => reached(s) === FLOOD + 10);

      // Every client still waiting hangs up.
      const atAbort = await hashStats();
      for (const attempt of [...blocked, ...flood]) attempt.abort();
      const outcomes = await Promise.all([...flood, ...blocked].map((a) => a.outcome));

      const answered = outcomes.filter((o): o is Extract<Outcome, { status: number }> => "status" in o);
      const refused = answered.filter((o) => o.status === 503);
      assert.ok(refused.length >= 1, `some attempts found the queue full: ${JSON.stringify(outcomes)}`);
      for (const response of refused) {
        assert.match(response.retryAfter ?? "", /^[1-9][0-9]*$/, "503 with a Retry-After in seconds");
        assert.equal(JSON.parse(response.body).error.code, "unavailable");
      }
      for (const outcome of answered)
        assert.ok([401, 503].includes(outcome.status), `an attempt answered ${outcome.status}: ${outcome.body}`);

      // A real sign-in, from an address of its own, gets through without waiting for the abandoned attempts: it is
      // hashed right after those that were running when the clients hung up.
      const started = performance.now();
      const answer = await signIn(stack.relayerUrl, "127.0.8.1", stack.sample.email, stack.sample.password).outcome;
      const seconds = (performance.now() - started) / 1000;
      assert.ok("status" in answer && answer.status === 200, `the real sign-in: ${JSON.stringify(answer)}`);
      const signedIn = await hashStats();
      console.log(`real sign-in after the flood: ${seconds.toFixed(2)} s`);
      // Hashed by then: those done before the clients hung up, those running then (two; two more for any that
      // started while the aborts were on their way), and the real sign-in's. Unbounded, the queue would have
      // hashed every waiting attempt first.
      const hashedBefore = atAbort.computed - before.computed;
      assert.ok(
        signedIn.computed - before.computed <= hashedBefore + atAbort.running + 2 + 1,
        `${signedIn.computed - before.computed} hashes before the real sign-in was answered (${hashedBefore} before the clients hung up)`,
      );
      assert.ok(seconds < 60, `the real sign-in took ${seconds.toFixed(1)} s`);

      // Once the queue is idle: every attempt was hashed, refused or dropped, the abandoned ones unhashed.
      const settled = await waitFor("the hashes to finish", hashStats, (s) => s.running === 0 && s.queued === 0);
      const computed = settled.computed - before.computed;
      const abandoned = settled.abandoned - before.abandoned;
      const refusedCount = settled.refused - before.refused;
      console.log(
        `flood of ${FLOOD} + 10: ${refusedCount} refused (503), ${abandoned} abandoned unhashed, ${computed} hashed (${hashedBefore} before the clients hung up, ${atAbort.queued} waiting then)`,
      );
      assert.ok(refusedCount >= refused.length, "each 503 seen is a refused hash");
      assert.ok(atAbort.queued >= 5, `the queue was still long when the clients hung up: ${atAbort.queued}`);
      assert.ok(abandoned >= atAbort.queued - 2, `the queued attempts were dropped: ${abandoned} of ${atAbort.queued}`);
      assert.equal(computed + abandoned + refusedCount, FLOOD + 10 + 1, "every attempt was hashed, refused or dropped");

      // The other account is not locked by the ten unchecked attempts with a wrong password.
      const again = await stack.api("POST", "/v1/auth/login", { body: other });
      assert.equal(again.status, 200, again.text);
    },
  );
});
