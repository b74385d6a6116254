// A time limit on a promise, for reads that must answer fast whatever a dependency does (readiness checks,
// metrics read at scrape time). The work itself is not cancelled: only the wait for it ends.

export class TimeLimitExceeded extends Error {}

/** `work`, or a TimeLimitExceeded rejection after `ms`. */
export function withTimeLimit<T>(work: PromiseLike<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const limit = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new TimeLimitExceeded(`${what} did not answer within ${ms} ms`)), ms);
  });
  return Promise.race([Promise.resolve(work), limit]).finally(() => clearTimeout(timer));
}
