// The delivery policy: attempts, backoff, lease.
//
//   attempt 1   as soon as the event is committed (NOTIFY wakes the dispatcher)
//   attempt 2   WEBHOOK_RETRY_BASE_MS after attempt 1 failed         (default 1 min)
//   attempt 3   5 x that after attempt 2 failed                      (5 min)
//   attempt 4   25 x                                                 (25 min)
//   attempt 5   125 x                                                (~2 h; about 2.5 h after the event)
//
// each delay with +-20% random jitter (so endpoints coming back are not hit by every sender at once),
// capped at 6 h. After attempt 5 fails the delivery is failed; it can be redelivered by hand (one more
// attempt at once).
export const MAX_ATTEMPTS = 5;
export const BACKOFF_FACTOR = 5;
export const MAX_BACKOFF_MS = 6 * 3_600_000;
export const JITTER = 0.2;
/** How long past the attempt timeout a claimed delivery stays leased to the process that claimed it. */
export const LEASE_MARGIN_MS = 5_000;

/** Delay before the next attempt after `failedAttempts` failed attempts (1-based). */
export function retryDelayMs(failedAttempts: number, baseMs: number, random: () => number = Math.random): number {
  const nominal = Math.min(MAX_BACKOFF_MS, baseMs * BACKOFF_FACTOR ** Math.max(0, failedAttempts - 1));
  return Math.round(nominal * (1 - JITTER + random() * 2 * JITTER));
}

/** Whether an HTTP answer acknowledges a delivery. */
export const isAcknowledged = (status: number | null) => status !== null && status >= 200 && status < 300;
