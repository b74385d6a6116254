// relayer/src/metrics/batched-histogram.ts: a scrape reads the same histogram whether the values went to
// prom-client one by one or through the batches (several full batches, and a partial one flushed by the
// scrape itself).
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { Histogram, Registry } from "prom-client";
import { batchedHistogram } from "../../relayer/src/metrics/batched-histogram.ts";

const labelNames = ["method", "route", "status"] as const;

function histogram(registry: Registry, collect?: () => void) {
  return new Histogram({
    name: "test_duration_seconds",
    help: "test",
    labelNames,
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers: [registry],
    collect,
  });
}

describe("batched histogram", () => {
  it("scrapes exactly as observing each value directly, pending values included", async () => {
    const direct = new Registry();
    const directHistogram = histogram(direct);
    const batchedRegistry = new Registry();
    const batched = batchedHistogram(histogram(batchedRegistry, () => batched.flush()));

    const labels = [
      { method: "GET", route: "/v1/public/stats", status: "200" },
      { method: "POST", route: "/v1/quote", status: "422" },
    ];
    const series = labels.map((l) => batched.series(l));
    let seed = 7;
    const random = () => ((seed = (seed * 16807) % 2147483647) / 2147483647) * 3;
    // Enough values for several full batches of the first series, and a partial batch of each.
    for (let i = 0; i < 2_345; i++) {
      const value = random();
      const which = i % 5 === 0 ? 1 : 0;
      directHistogram.labels(labels[which]).observe(value);
      series[which].observe(value);
    }
    const expected = await direct.metrics();
    assert.match(expected, /test_duration_seconds_count\{method="GET",route="\/v1\/public\/stats",status="200"\} 1876/);
    assert.equal(await batchedRegistry.metrics(), expected);

    // Values observed after a scrape appear in the next one.
    directHistogram.labels(labels[1]).observe(0.2);
    series[1].observe(0.2);
    assert.equal(await batchedRegistry.metrics(), await direct.metrics());
  });

  it("refuses a value that is not a finite number, as prom-client does", () => {
    const batched = batchedHistogram(histogram(new Registry()));
    assert.throws(() => batched.series({ method: "GET", route: "/", status: "200" }).observe(Number.NaN), TypeError);
  });
});
