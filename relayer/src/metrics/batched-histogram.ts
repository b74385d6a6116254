// Observations of a prom-client histogram, handed over in batches. prom-client checks and hashes the labels
// of every observation and finds its bucket through decimal-string keys: cheap in a loop, but one such call
// in every HTTP request cost the relayer several microseconds a request (a tenth of the cheapest routes'
// time). Here an observation is one store into its series' array; the values go to prom-client in order,
// in one pass, when the array is full and before every scrape (the histogram's collect hook), so a scrape
// reads what observing each value on the spot would have given: the same counts, the same sums (a series'
// values are added in the order they came) and the series in the same order.
import type { Histogram } from "prom-client";

/** Observations a series keeps before handing them over. */
const BATCH_SIZE = 512;

export type Observer = { observe(value: number): void };

export type BatchedHistogram<T extends string> = {
  /** The observer of the series with these labels (what histogram.labels(labels) gives, batched). Make
   * each series once and keep it: every call makes a new batch. */
  series(labels: Partial<Record<T, string | number>>): Observer;
  /** Hands every pending observation to the histogram (call it from the histogram's collect hook). */
  flush(): void;
};

export function batchedHistogram<T extends string>(histogram: Histogram<T>): BatchedHistogram<T> {
  const flushes: Array<() => void> = [];
  return {
    series(labels) {
      const child = histogram.labels(labels);
      const values = new Float64Array(BATCH_SIZE);
      let pending = 0;
      let observed = false;
      const flush = () => {
        for (let i = 0; i < pending; i++) child.observe(values[i]);
        pending = 0;
      };
      flushes.push(flush);
      return {
        observe(value) {
          if (!Number.isFinite(value)) throw new TypeError(`Value is not a valid number: ${value}`);
          if (!observed) {
            // The first value goes straight in: the series then takes its place among the others in the
            // order series first appeared, as it would unbatched.
            observed = true;
            child.observe(value);
            return;
          }
          values[pending++] = value;
          if (pending === BATCH_SIZE) flush();
        },
      };
    },
    flush() {
      for (const flush of flushes) flush();
    },
  };
}
