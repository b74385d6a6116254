// Anomaly scores of telemetry: each reading's interval power (the energy since the previous reading of
// the same meter epoch, per hour: Wh -> W) is compared with the device's history, kept as running
// statistics (Welford: count, mean, sum of squared deviations) on the device's record.
//
//   z     = |p - mean| / max(std, 5% of |mean|, 1 W)      (0 with fewer than MIN_HISTORY samples)
//   score = min(1, max(z over the batch) / 6)             (0.5 is three standard deviations)
//
// At ingest each reading is scored against the history before it (provisional). The confirmation worker
// later scores the batch's readings again against the device's history at that time (confirmed).

export type PowerStats = { samples: number; mean: number; m2: number };

export const MIN_HISTORY = 8;
export const Z_AT_SCORE_ONE = 6;

/** The standard deviation the z-score divides by (floored so that a flat history does not explode). */
export function scale(stats: PowerStats): number {
  const std = stats.samples > 1 ? Math.sqrt(stats.m2 / (stats.samples - 1)) : 0;
  return Math.max(std, 0.05 * Math.abs(stats.mean), 1);
}

export function zScore(stats: PowerStats, powerW: number): number {
  if (stats.samples < MIN_HISTORY) return 0;
  return Math.abs(powerW - stats.mean) / scale(stats);
}

/** The statistics with one more sample. */
export function withSample(stats: PowerStats, powerW: number): PowerStats {
  const samples = stats.samples + 1;
  const delta = powerW - stats.mean;
  const mean = stats.mean + delta / samples;
  return { samples, mean, m2: stats.m2 + delta * (powerW - mean) };
}

/** The batch score of its largest z, rounded to 4 decimals. */
export function anomalyScore(maxZ: number): number {
  return Math.round(Math.min(1, maxZ / Z_AT_SCORE_ONE) * 10_000) / 10_000;
}

/** Statistics of a history given as count, mean and standard deviation (sample data). */
export function statsOf(samples: number, meanW: number, stdW: number): PowerStats {
  return { samples, mean: meanW, m2: samples > 1 ? stdW * stdW * (samples - 1) : 0 };
}
