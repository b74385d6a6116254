// relayer/src/jobs/wake-loop.ts: the loop the job runner and the anchor worker share.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";
import { createWakeLoop } from "../../relayer/src/jobs/wake-loop.ts";

describe("wake loop", () => {
  it("runs one tick at a time; wakes during a tick fold into one more tick right after it", async () => {
    let ticks = 0;
    let concurrent = 0;
    let maxConcurrent = 0;
    const loop = createWakeLoop({
      tick: async () => {
        ticks++;
        maxConcurrent = Math.max(maxConcurrent, ++concurrent);
        await sleep(30);
        concurrent--;
      },
      idleMs: 60_000,
      onError: (error) => assert.fail(error as Error),
    });
    loop.start();
    await sleep(5);
    for (let i = 0; i < 5; i++) loop.wake();
    await sleep(100);
    assert.equal(ticks, 2, "the first tick, then one for all five wakes");
    assert.equal(maxConcurrent, 1);
    await loop.stop();
  });

  it("follows a tick that reports more work at once, polls after idleMs otherwise, and keeps going after an error", async () => {
    const at: number[] = [];
    const errors: unknown[] = [];
    const started = performance.now();
    const loop = createWakeLoop({
      tick: async () => {
        at.push(performance.now() - started);
        if (at.length === 2) throw new Error("boom");
        return at.length < 2; // more work after the first tick only
      },
      idleMs: 150,
      onError: (error) => errors.push(error),
    });
    loop.start();
    await sleep(250);
    await loop.stop();
    assert.equal(errors.length, 1);
    assert.equal(at.length, 3, `ticks at ${at.map(Math.round).join(", ")} ms`);
    assert.ok(at[1]! - at[0]! < 50, "more work: the next tick at once");
    assert.ok(at[2]! - at[1]! >= 140, "then the poll interval");
  });

  it("stop waits for the tick in progress and nothing ticks afterwards", async () => {
    let ticks = 0;
    let finished = false;
    const loop = createWakeLoop({
      tick: async () => {
        ticks++;
        await sleep(40);
        finished = true;
        return true;
      },
      idleMs: 10,
      onError: () => undefined,
    });
    loop.start();
    await sleep(5);
    await loop.stop();
    assert.equal(finished, true);
    assert.equal(loop.isStopped(), true);
    loop.wake();
    await sleep(60);
    assert.equal(ticks, 1);
  });
});
