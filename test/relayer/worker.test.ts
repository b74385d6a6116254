// relayer/src/jobs/worker.ts: the one worker abstraction every background loop of the relayer runs on. One
// tick at a time, wakes during a tick folded into one more tick, the delay each tick returns, errors, a
// clean stop, NOTIFY wake-ups and the lease, on an in-memory PGlite database; on PostgreSQL (unless
// TEST_DATABASES leaves it out), the wake-up when the database listener is back after a lost connection.
// Timing assertions are lower bounds only (a timer never fires early); "at once" is shown by a tick that
// comes although the alternative was a 60-second timer.
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";
import { sql } from "drizzle-orm";
import { type Database, openDatabase } from "../../relayer/src/db/client.ts";
import { migrate } from "../../relayer/src/db/migrate.ts";
import { createLease } from "../../relayer/src/jobs/lease.ts";
import { type TickContext, type WorkerOptions, createWorker } from "../../relayer/src/jobs/worker.ts";
import { createLogger } from "../../relayer/src/logger.ts";
import { selectedDatabaseKinds } from "../support/databases.ts";
import { relayerPostgres } from "../support/relayer-postgres.ts";

const LONG = 60_000;

/** A promise with its resolve function. */
function deferred<T = void>() {
  let resolve!: (value: T) => void;
  const promise = new Promise<T>((r) => (resolve = r));
  return { promise, resolve };
}

/** A worker whose ticks are recorded; `next(n)` resolves when the n-th tick (1-based) has started. */
function recorded(tick: (ctx: TickContext, n: number) => Promise<number>, opts: Partial<WorkerOptions> = {}) {
  const ticks: Array<{ at: number; reason: TickContext["reason"] }> = [];
  const waiting = new Map<number, () => void>();
  const worker = createWorker({
    name: "test",
    onError: (error) => assert.fail(error as Error),
    ...opts,
    tick: (ctx) => {
      ticks.push({ at: performance.now(), reason: ctx.reason });
      waiting.get(ticks.length)?.();
      return tick(ctx, ticks.length);
    },
  });
  const next = (n: number) => (ticks.length >= n ? Promise.resolve() : new Promise<void>((resolve) => waiting.set(n, resolve)));
  return { worker, ticks, next };
}

describe("worker", () => {
  it("runs one tick at a time; wakes during a tick fold into one more tick right after it, which knows it was woken", async () => {
    const gate = deferred();
    let concurrent = 0;
    let maxConcurrent = 0;
    let wokenSeen: boolean | undefined;
    const { worker, ticks, next } = recorded(async (ctx, n) => {
      maxConcurrent = Math.max(maxConcurrent, ++concurrent);
      if (n === 1) {
        await gate.promise;
        wokenSeen = ctx.woken();
      }
      concurrent--;
      return LONG;
    });
    await worker.start();
    await next(1);
    for (let i = 0; i < 5; i++) worker.wake();
    gate.resolve();
    await next(2);
    await sleep(100);
    await worker.stop();
    assert.equal(ticks.length, 2, "the first tick, then one for all five wakes");
    assert.deepEqual(
      ticks.map((t) => t.reason),
      ["timer", "wake"],
    );
    assert.equal(wokenSeen, true, "the first tick saw the wakes");
    assert.equal(maxConcurrent, 1);
  });

  it("waits the delay each tick returns: 0 is at once, 150 ms is no sooner, 60 s is not within the test", async () => {
    const delays = [0, 150, LONG];
    const { worker, ticks, next } = recorded(async (_ctx, n) => delays[n - 1] ?? LONG);
    await worker.start();
    await next(3); // the second tick came although the alternative was a 60 s timer
    await sleep(200);
    await worker.stop();
    assert.equal(ticks.length, 3, "no tick within the 60 s delay");
    assert.ok(ticks[2]!.at - ticks[1]!.at >= 145, `150 ms apart, not ${Math.round(ticks[2]!.at - ticks[1]!.at)} ms`);
    assert.deepEqual(
      ticks.map((t) => t.reason),
      ["timer", "timer", "timer"],
    );
  });

  it("waits firstDelayMs before the first tick, and a wake() before it runs one at once", async () => {
    const started = performance.now();
    const late = recorded(async () => LONG, { firstDelayMs: 120 });
    await late.worker.start();
    await late.next(1);
    await late.worker.stop();
    assert.ok(late.ticks[0]!.at - started >= 115);

    const woken = recorded(async () => LONG, { firstDelayMs: LONG });
    await woken.worker.start();
    woken.worker.wake();
    await woken.next(1);
    await woken.worker.stop();
    assert.deepEqual(
      woken.ticks.map((t) => t.reason),
      ["wake"],
    );
  });

  it("stop() resolves once the tick in progress has finished, tells the tick, runs onStop, and nothing ticks afterwards", async () => {
    const gate = deferred();
    const events: string[] = [];
    let stoppingSeen: boolean | undefined;
    const { worker, ticks, next } = recorded(
      async (ctx) => {
        await gate.promise;
        stoppingSeen = ctx.stopping();
        events.push("tick finished");
        return 0; // more work: would tick again at once
      },
      { onStop: async () => void events.push("onStop") },
    );
    await worker.start();
    await next(1);
    const stopped = worker.stop().then(() => events.push("stopped"));
    await sleep(50);
    assert.deepEqual(events, [], "stop() waits for the tick");
    gate.resolve();
    await stopped;
    assert.deepEqual(events, ["tick finished", "onStop", "stopped"]);
    assert.equal(stoppingSeen, true);
    assert.equal(worker.isStopped(), true);
    worker.wake();
    await sleep(50);
    assert.equal(ticks.length, 1);
  });

  it("does nothing on wake() before start()", async () => {
    const { worker, ticks } = recorded(async () => LONG);
    worker.wake();
    await sleep(30);
    assert.equal(ticks.length, 0);
    assert.equal(worker.isStopped(), true);
  });

  it("hands a failing tick to onError, waits the delay it returns, and goes on", async () => {
    const errors: unknown[] = [];
    const { worker, ticks, next } = recorded(
      async (_ctx, n) => {
        if (n === 1) throw new Error("boom");
        return LONG;
      },
      {
        onError: (error) => {
          errors.push(error);
          return 100;
        },
      },
    );
    await worker.start();
    await next(2);
    await worker.stop();
    assert.equal(errors.length, 1);
    assert.equal((errors[0] as Error).message, "boom");
    assert.ok(ticks[1]!.at - ticks[0]!.at >= 95, "the error's delay");
  });

  it("goes on after a tick whose onError throws too, a second later", async () => {
    const { worker, ticks, next } = recorded(
      async (_ctx, n) => {
        if (n === 1) throw new Error("boom");
        return LONG;
      },
      {
        onError: () => {
          throw new Error("the logger failed");
        },
      },
    );
    await worker.start();
    await next(2);
    await worker.stop();
    assert.ok(ticks[1]!.at - ticks[0]!.at >= 995);
  });

  describe("with a database", () => {
    let database: Database;
    const logger = createLogger("error");

    before(async () => {
      database = await openDatabase({ kind: "pglite", directory: "memory://" }, logger);
      await migrate(database);
    });
    after(() => database?.close());

    it("wakes on a NOTIFY on one of its channels, after onNotify has seen it", async () => {
      const notified: string[] = [];
      const { worker, ticks, next } = recorded(async () => LONG, {
        wakeOn: {
          database,
          channels: ["worker_test_a", "worker_test_b"],
          onNotify: (channel, payload) => notified.push(`${channel}:${payload}`),
        },
      });
      await worker.start();
      await next(1);
      await database.db.execute(sql`select pg_notify('worker_test_b', 'hello')`);
      await next(2);
      await worker.stop();
      assert.deepEqual(notified, ["worker_test_b:hello"]);
      assert.deepEqual(
        ticks.map((t) => t.reason),
        ["timer", "wake"],
      );
    });

    it("ticks only in the process holding the lease; the other retries after retryMs and takes over once the holder stops", async () => {
      const leaseRow = async () =>
        (await database.db.execute(sql`select value from sync_state where name = 'worker_test_lease'`)) as unknown as { rows: unknown[] };
      const ran: string[] = [];
      let lostByB = 0;
      const make = (name: string, onLost?: () => void) =>
        createWorker({
          name,
          tick: async () => {
            ran.push(name);
            return 50;
          },
          onError: (error) => assert.fail(error as Error),
          lease: { lease: createLease(database.db, "worker_test_lease", 30_000), retryMs: 40, onLost },
        });
      const a = make("a");
      const b = make("b", () => lostByB++);
      await a.start();
      while (!ran.includes("a")) await sleep(10);
      await b.start();
      while (lostByB < 3) await sleep(10); // b found the lease held, and retried after retryMs
      assert.ok(!ran.includes("b"), "b never ticks while a holds the lease");

      await a.stop();
      const afterStop = ran.length;
      while (!ran.slice(afterStop).includes("b")) await sleep(10);
      assert.ok(!ran.slice(afterStop).includes("a"), "a stopped");
      assert.equal((await leaseRow()).rows.length, 1, "b holds the lease now");
      await b.stop();
      assert.equal((await leaseRow()).rows.length, 0, "a clean stop releases the lease");
    });

    it("takes over a lease whose holder stopped renewing it, once it has run out", async () => {
      const dead = createLease(database.db, "worker_test_expiring", 200);
      // The lease runs out 200 ms after the database's clock when it was taken, which is no earlier than this.
      const taken = performance.now();
      assert.equal(await dead.hold(), true); // a holder that then dies without releasing
      const ran: number[] = [];
      const worker = createWorker({
        name: "successor",
        tick: async () => {
          ran.push(performance.now());
          return LONG;
        },
        onError: (error) => assert.fail(error as Error),
        lease: { lease: createLease(database.db, "worker_test_expiring", 30_000), retryMs: 30 },
      });
      await worker.start();
      while (ran.length === 0) await sleep(10);
      await worker.stop();
      // Measured from before the lease was taken (not from the worker's start, which a loaded host may reach late
      // in the lease's life); 5 ms for the two clocks' rounding.
      assert.ok(ran[0]! - taken >= 195, "not before the dead holder's lease ran out");
    });
  });

  describe("on PostgreSQL", { skip: !selectedDatabaseKinds().includes("postgres") && "TEST_DATABASES leaves PostgreSQL out" }, () => {
    const postgres = relayerPostgres("worker");

    it("wakes when the database listener is back after it lost its connection (notifications may have been missed meanwhile)", async () => {
      const channel = `worker_test_reconnect_${process.pid}`;
      const notified: Array<string | undefined> = [];
      const { worker, ticks, next } = recorded(async () => LONG, {
        wakeOn: { database: postgres.database(), channels: [channel], onNotify: (_channel, payload) => notified.push(payload) },
      });
      await worker.start();
      await next(1);
      assert.equal(await postgres.terminateConnections(`listen "${channel}"`), 1, "the listener's connection was found");
      // The listener reconnects after a second; without the wake-up the next tick would be a minute away.
      const woken = await Promise.race([next(2).then(() => true), sleep(10_000).then(() => false)]);
      await worker.stop();
      assert.ok(woken, "a tick within 10 s of the listener's loss");
      assert.deepEqual(notified, [undefined]);
      assert.deepEqual(
        ticks.map((t) => t.reason),
        ["timer", "wake"],
      );
    });
  });
});
