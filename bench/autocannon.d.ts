// The part of autocannon's programmatic API the benchmarks use (the package ships no types).
declare module "autocannon" {
  type Histogram = {
    average: number;
    mean: number;
    stddev: number;
    min: number;
    max: number;
    total: number;
    p50: number;
    p90: number;
    p99: number;
    p99_9?: number;
    [percentile: string]: number | undefined;
  };
  export type Result = {
    url: string;
    connections: number;
    duration: number;
    start: Date;
    finish: Date;
    errors: number;
    timeouts: number;
    mismatches: number;
    non2xx: number;
    resets: number;
    "2xx": number;
    "4xx": number;
    "5xx": number;
    statusCodeStats: Record<string, { count: number }>;
    latency: Histogram;
    requests: Histogram & { sent: number };
    throughput: Histogram;
  };
  export type Options = {
    url: string;
    connections?: number;
    duration?: number;
    amount?: number;
    method?: string;
    headers?: Record<string, string>;
    body?: string;
    timeout?: number;
    pipelining?: number;
    reconnectRate?: number;
    workers?: number;
    title?: string;
    requests?: Array<{ setupRequest?: (request: { path?: string; [key: string]: unknown }) => { path?: string; [key: string]: unknown } }>;
  };
  function autocannon(options: Options): Promise<Result> & { stop(): void };
  export default autocannon;
}
