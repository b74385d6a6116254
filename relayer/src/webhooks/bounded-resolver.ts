// The DNS lookups of callback URLs (url-safety.ts: when a subscription is saved, and at each delivery's
// connection), bounded so that names whose DNS answers slowly cannot hurt the relayer.
//
// dns.lookup is the system's getaddrinfo (it reads /etc/hosts, the search domains and nsswitch, as every other
// program on the machine does), and it runs on libuv's thread pool: four threads, which file access and
// password hashing (auth/passwords.ts, at most two at once) share. A lookup holds its thread until the system
// resolver gives up, 5 s per attempt and name server by default. Unbounded, a few subscriptions to names under
// a zone whose name server never answers, saved or delivered to at once, would hold every thread: sign-ins,
// file reads and every other tenant's lookups would wait behind them. So:
//   - at most LOOKUP_CONCURRENCY lookups run at once (two threads stay for the rest); others wait their turn;
//   - a caller waits at most LOOKUP_TIMEOUT_MS, queued and running together, then gets an ETIMEOUT error (the
//     lookup itself keeps its slot until the system resolver answers: the thread is busy until then);
//   - callers asking for the same name while its lookup waits or runs share it, so one slow name takes one
//     slot however many deliveries or requests wait for it; a lookup all of whose callers gave up before
//     its turn is not run.
import { lookup as dnsLookup, type LookupAddress } from "node:dns";

/** Resolves a host name to every address it has. */
export type Resolver = (hostname: string) => Promise<LookupAddress[]>;

export const LOOKUP_CONCURRENCY = 2;
export const LOOKUP_TIMEOUT_MS = 5_000;

/** What a bounded resolver is doing (GET /metrics: payg_dns_lookups_running, payg_dns_lookups_queued,
 * payg_dns_lookup_timeouts_total). */
export type LookupStats = {
  /** Lookups holding a slot (a thread of libuv's pool each). */
  running: number;
  /** Lookups waiting for a slot. */
  queued: number;
  /** Callers that got ETIMEOUT since the process started. */
  timeouts: number;
};
export type BoundedResolver = Resolver & { stats(): LookupStats };

/** The error a caller gets when its lookup did not answer in time (code ETIMEOUT, as Node's resolver says). */
export class LookupTimeoutError extends Error {
  readonly code = "ETIMEOUT";
  constructor(hostname: string, timeoutMs: number) {
    super(`looking up ${hostname} took longer than ${timeoutMs} ms`);
    this.name = "LookupTimeoutError";
  }
}

/** `resolve` with at most `concurrency` lookups running at once, a deadline of `timeoutMs` for each caller,
 * and one lookup for all callers asking for the same name while it runs or waits (see the top of the file).
 * A lookup whose callers all gave up before its turn came is not run. */
export function boundedResolver(resolve: Resolver, opts: { concurrency: number; timeoutMs: number }): BoundedResolver {
  let running = 0;
  let timeouts = 0;
  const queue: Array<() => void> = [];
  /** The lookups queued or running, by name, with how many callers still wait for each. */
  const lookups = new Map<string, { answer: Promise<LookupAddress[]>; waiting: number }>();

  const release = () => {
    // Hand the slot to the next in line (running stays the same), or free it.
    const next = queue.shift();
    if (next) next();
    else running--;
  };

  const lookUp = (hostname: string) => {
    const lookup = { answer: Promise.resolve<LookupAddress[]>([]), waiting: 0 };
    lookup.answer = new Promise<void>((ready) => {
      if (running < opts.concurrency) {
        running++;
        ready();
      } else queue.push(ready);
    })
      .then(() => {
        if (lookup.waiting === 0) throw new LookupTimeoutError(hostname, opts.timeoutMs);
        return resolve(hostname);
      })
      .finally(() => {
        lookups.delete(hostname);
        release();
      });
    lookups.set(hostname, lookup);
    return lookup;
  };

  const bounded = (hostname: string) => {
    const lookup = lookups.get(hostname) ?? lookUp(hostname);
    lookup.waiting++;
    return new Promise<LookupAddress[]>((resolveCaller, rejectCaller) => {
      let done = false;
      const settle = () => {
        done = true;
        lookup.waiting--;
        clearTimeout(timer);
      };
      const timer = setTimeout(() => {
        settle();
        timeouts++;
        rejectCaller(new LookupTimeoutError(hostname, opts.timeoutMs));
      }, opts.timeoutMs);
      lookup.answer.then(
        (addresses) => {
          if (done) return;
          settle();
          resolveCaller(addresses);
        },
        (error: unknown) => {
          if (done) return;
          settle();
          rejectCaller(error);
        },
      );
    });
  };
  return Object.assign(bounded, { stats: (): LookupStats => ({ running, queued: queue.length, timeouts }) });
}

/** The system's getaddrinfo: every address of the name, in the order the system gives them. */
const getaddrinfoResolver: Resolver = (hostname) =>
  new Promise((resolve, reject) => {
    dnsLookup(hostname, { all: true, verbatim: true }, (error, addresses) => (error ? reject(error) : resolve(addresses)));
  });

/** The resolver of the relayer's callback URLs: getaddrinfo, bounded. */
export const systemResolver: BoundedResolver = boundedResolver(getaddrinfoResolver, {
  concurrency: LOOKUP_CONCURRENCY,
  timeoutMs: LOOKUP_TIMEOUT_MS,
});
