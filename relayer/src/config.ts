// The relayer's configuration: environment variables only, validated at start-up. A bad or missing value
// stops the process with one message that names every problem.
import { z } from "zod";
import { MAX_SCRYPT_N, MIN_SCRYPT_N, SCRYPT_PARAMS, type ScryptParams } from "./auth/passwords.ts";
import { parseTrustedProxies } from "./http/client-address.ts";
import { parseHostEntry } from "./webhooks/host-entry.ts";

const privateKey = z
  .string()
  .regex(/^0x[0-9a-fA-F]{64}$/, "a 32-byte hex private key (0x followed by 64 hex digits)")
  .transform((value) => value as `0x${string}`);

/** Tier name to seconds. A Map: clients name the tier, and a plain object would also answer for names it
 * inherits (`constructor`, `__proto__`, `toString`). */
const durationList = z.string().transform((value, ctx) => {
  const tiers = new Map<string, number>();
  for (const part of value
    .split(",")
    .map((p) => p.trim())
    .filter(Boolean)) {
    const match = /^([a-z0-9_-]{1,32})=(\d+)$/.exec(part);
    if (!match) {
      ctx.addIssue({ code: "custom", message: `"${part}" is not name=seconds` });
      return z.NEVER;
    }
    tiers.set(match[1], Number(match[2]));
  }
  if (tiers.size === 0) {
    ctx.addIssue({ code: "custom", message: "at least one tier" });
    return z.NEVER;
  }
  return tiers as ReadonlyMap<string, number>;
});

/** WEBHOOK_ALLOWED_PRIVATE_HOSTS: comma-separated `host` (every port) or `host:port` (that port only)
 * entries; an IPv6 address takes brackets before a port (`[::1]:9000`). */
const allowedHostList = z.string().transform((value, ctx) => {
  const entries = value
    .split(",")
    .map((h) => h.trim().toLowerCase())
    .filter(Boolean);
  for (const entry of entries) {
    try {
      parseHostEntry(entry);
    } catch (error) {
      ctx.addIssue({ code: "custom", message: (error as Error).message });
      return z.NEVER;
    }
  }
  return entries;
});

/** TRUST_PROXY: the trusted reverse proxies (http/client-address.ts). */
const trustedProxyList = z.string().transform((value, ctx) => {
  try {
    return parseTrustedProxies(value);
  } catch (error) {
    ctx.addIssue({ code: "custom", message: (error as Error).message });
    return z.NEVER;
  }
});

/** RPC_URL: one JSON-RPC URL, or several separated by commas (tried in that order: the first that answers
 * serves each request). */
const rpcUrlList = z.string().superRefine((value, ctx) => {
  const urls = rpcUrls(value);
  if (urls.length === 0) ctx.addIssue({ code: "custom", message: "at least one URL" });
  urls.forEach((url, i) => {
    // Not echoed: an RPC URL often carries an API key.
    if (!z.url({ protocol: /^https?$/ }).safeParse(url).success) {
      ctx.addIssue({ code: "custom", message: `URL ${i + 1} of ${urls.length} is not an http(s) URL` });
    }
  });
});

/** The URLs of RPC_URL, in order. */
export function rpcUrls(value: string): string[] {
  return value
    .split(",")
    .map((url) => url.trim())
    .filter(Boolean);
}

export const configSchema = z.object({
  HOST: z.string().default("127.0.0.1"),
  PORT: z.coerce.number().int().min(0).max(65_535).default(8787),
  /** Base URL integrators and wallets reach this service at (used in scan-to-pay links). */
  PUBLIC_BASE_URL: z.url().optional(),
  /** PostgreSQL connection string; when absent the embedded PGlite database in PGLITE_DIR is used. */
  DATABASE_URL: z.string().optional(),
  /** PostgreSQL schema of this deployment's tables. */
  DATABASE_SCHEMA: z
    .string()
    .regex(/^[a-z_][a-z0-9_]{0,62}$/, "a lower-case SQL identifier")
    .default("relayer"),
  PGLITE_DIR: z.string().default(".local/relayer-db"),
  /** Ignition deployment whose contracts this relayer pays through (generated/deployments/<id>.json). */
  DEPLOYMENT: z.string().default("chain-31337"),
  /** How long to wait at start for that deployment's record to appear (0: it must exist): a relayer started
   * beside the deployment (`npm start` on a new chain) loads itself and opens its database meanwhile. */
  DEPLOYMENT_WAIT_SECONDS: z.coerce.number().int().min(0).max(3_600).default(0),
  /** The `chain` value clients send in quotes and orders for this deployment's chain. */
  CHAIN_NAME: z
    .string()
    .regex(/^[a-z0-9-]{1,32}$/)
    .default("local"),
  /** The chain's JSON-RPC: one URL, or a comma-separated list used in order (the next one when a URL fails).
   * A URL answering 429 or 5xx is retried with a backoff before the next one is tried. */
  RPC_URL: rpcUrlList.default("http://127.0.0.1:8545"),
  INDEXER_URL: z.url().default("http://127.0.0.1:42069"),
  DEVICE_CLOUD_URL: z.url().default("http://127.0.0.1:8789"),
  DEVICE_CLOUD_TIMEOUT_MS: z.coerce.number().int().positive().default(2_000),
  /** Signs price-locked orders (vouchers); needs the router's quote-signer role; sends no transaction. */
  QUOTE_SIGNER_PRIVATE_KEY: privateKey,
  /** The relayer's hot wallet: pays gas for relayed permits and pays cash orders from its float (agent role). */
  RELAYER_PRIVATE_KEY: privateKey,
  /** HMAC key of the portal's JWTs. */
  JWT_SECRET: z.string().min(32, "at least 32 characters"),
  JWT_TTL_SECONDS: z.coerce.number().int().min(60).max(86_400).default(900),
  /** Failed sign-ins one account (email, known or not) may have in LOGIN_ACCOUNT_WINDOW_SECONDS, counted in
   * the database across client addresses and relayer processes; beyond that POST /v1/auth/login answers 429
   * for that email until the window, which starts at its first failure, is over. */
  LOGIN_ACCOUNT_MAX_FAILURES: z.coerce.number().int().min(1).max(1_000).default(10),
  LOGIN_ACCOUNT_WINDOW_SECONDS: z.coerce.number().int().min(60).max(86_400).default(900),
  QUOTE_TTL_SECONDS: z.coerce.number().int().min(5).max(3_600).default(300),
  ORDER_TTL_SECONDS: z.coerce.number().int().min(5).max(86_400).default(900),
  /** Blocks on top of a payment's block before payment.confirmed fires (0: at once). */
  CONFIRMATIONS: z.coerce.number().int().min(0).max(1_000).default(0),
  /** Power a paid device on at payment.succeeded, before its payment is CONFIRMATIONS deep (a reorganisation
   * can then undo a payment whose session already started). Default false: power-on waits for
   * payment.confirmed. A tenant's own setting (tenants.power_on_at_zero_confirmations) overrides it. */
  POWER_ON_AT_ZERO_CONFIRMATIONS: z
    .enum(["true", "false"])
    .default("false")
    .transform((v) => v === "true"),
  /** Cash the relayer pays from its float on one agent key's confirmations, and on all of one tenant's
   * agent keys together, in any 24 hours (USD); a confirmation that would go over is 422
   * cash_limit_exceeded. */
  CASH_DAILY_LIMIT_USD_PER_KEY: z.coerce.number().min(0).max(1_000_000_000).default(200),
  CASH_DAILY_LIMIT_USD_PER_TENANT: z.coerce.number().min(0).max(1_000_000_000).default(1_000),
  /** Seconds after a device's payout parties change during which the cash rail refuses the device's orders
   * (409 payout_change_pending): a changed recipient cannot be paid from the relayer's float at once. */
  PAYOUT_CHANGE_DELAY_SECONDS: z.coerce.number().int().min(0).max(2_592_000).default(86_400),
  /** Seconds past an order's expiry before it is marked expired (allows for clock skew with the chain). */
  EXPIRY_GRACE_SECONDS: z.coerce.number().int().min(0).max(3_600).default(5),
  /** Session tiers clients may quote: name=seconds, comma-separated. */
  TIERS: durationList.prefault("30m=1800,1h=3600,4h=14400,24h=86400"),
  /** kg of CO2 avoided per kWh delivered (default: a small diesel generator displaced). */
  CO2_KG_PER_KWH: z.coerce.number().min(0).max(10).default(0.8),
  STATS_CACHE_MS: z.coerce.number().int().min(0).max(600_000).default(5_000),
  /** Callback hosts allowed even though they are private or loopback addresses (and over plain http):
   * `host` allows every port, `host:port` that port only, e.g. `127.0.0.1:8790,localhost:8790,[::1]:8790`.
   * The relayer's own endpoints (HOST:PORT, PUBLIC_BASE_URL, RPC_URL, INDEXER_URL, DEVICE_CLOUD_URL, the
   * database) are refused whatever this lists. */
  WEBHOOK_ALLOWED_PRIVATE_HOSTS: allowedHostList.prefault(""),
  /** Key material the webhook signing secrets are encrypted with at rest (AES-256-GCM, key derived with
   * HKDF-SHA256). Changing it makes the stored secrets unreadable: every subscription then needs a new one. */
  WEBHOOK_SECRET_KEY: z
    .string({ error: "required: at least 32 characters of random key material" })
    .min(32, "at least 32 characters of random key material"),
  /** Seconds the secret a rotation replaced (POST /v1/webhooks/subscriptions/{id}/rotate-secret) still
   * signs deliveries: webhook-signature carries a signature with each secret, x-service-signature keeps the
   * old one until then. 0: the new secret alone at once; at most 30 days. */
  WEBHOOK_SECRET_GRACE_SECONDS: z.coerce.number().int().min(0).max(2_592_000).default(86_400),
  /** Days a webhook event is kept (GET /v1/events), with its deliveries and their attempts; at least 30. */
  WEBHOOK_EVENT_RETENTION_DAYS: z.coerce.number().int().min(30).max(3_650).default(30),
  /** Time limit of one webhook delivery attempt (DNS, connect, request and response), in ms. */
  WEBHOOK_TIMEOUT_MS: z.coerce.number().int().min(100).max(60_000).default(10_000),
  /** Backoff after the n-th failed attempt: WEBHOOK_RETRY_BASE_MS x 5^(n-1), +-20% jitter (1 min, 5 min,
   * 25 min, ~2 h by default). */
  WEBHOOK_RETRY_BASE_MS: z.coerce.number().int().min(10).max(3_600_000).default(60_000),
  /** Webhook deliveries one relayer process makes at the same time. */
  WEBHOOK_CONCURRENCY: z.coerce.number().int().min(1).max(256).default(16),
  /** Of those, the most one tenant's deliveries may take at once (each process): a tenant whose receivers
   * are slow or never answer holds at most this many slots, the others stay for the other tenants. */
  WEBHOOK_TENANT_CONCURRENCY: z.coerce.number().int().min(1).max(256).default(4),
  /** Test pings (POST /v1/webhooks/subscriptions/{id}/test) a tenant may send: a burst of this many, then
   * this many a minute (each relayer process); beyond that 429 rate_limited. */
  WEBHOOK_TEST_PINGS_PER_MINUTE: z.coerce.number().int().min(1).max(10_000).default(10),
  /** How often the device cloud is polled for devices going online or offline (device.online/offline). */
  DEVICE_STATUS_POLL_MS: z.coerce.number().int().min(50).max(3_600_000).default(10_000),
  /** How often the deposit watcher reads the balances of pending orders' deposit addresses (the transfer rail:
   * a wallet paid from the order's EIP-681 request), in ms. */
  DEPOSIT_WATCH_INTERVAL_MS: z.coerce.number().int().min(100).max(600_000).default(3_000),
  /** Hours after an order is paid or expires during which the deposit watcher still reads its deposit address,
   * to report tokens sent there that the order will not take (payg_deposit_stray_total; the operator recovers
   * them with PaymentRouter.recoverDeposit). */
  DEPOSIT_STRAY_WATCH_HOURS: z.coerce.number().int().min(0).max(8_760).default(72),
  /** Seconds after ingest at which the energy sandbox confirms a telemetry batch's anomaly score. */
  ENERGY_ANOMALY_CONFIRM_SECONDS: z.coerce.number().int().min(0).max(86_400).default(300),
  /** Telemetry batches one sandbox client may send: a burst of ENERGY_INGEST_BURST, then
   * ENERGY_INGEST_PER_SECOND a second (per relayer process); beyond that 429 rate_limited. */
  ENERGY_INGEST_BURST: z.coerce.number().int().min(1).max(100_000).default(200),
  ENERGY_INGEST_PER_SECOND: z.coerce.number().min(0.01).max(100_000).default(100),
  /** Blocks a sent transaction may stay unmined before the sender replaces it (same nonce, fees raised by at
   * least 12.5% and at least to the network's current suggestion). */
  TX_REPLACE_AFTER_BLOCKS: z.coerce.number().int().min(1).max(10_000).default(3),
  /** The highest maxFeePerGas, in gwei, the sender ever signs: fee bumps stop there (the transaction then
   * waits for the base fee to fall back). */
  TX_MAX_FEE_PER_GAS_GWEI: z.coerce.number().positive().max(1_000_000).default(500),
  /** How long the transaction sender's lease lasts unless renewed: with several relayer processes, one
   * sends the hot wallet's transactions and renews the lease each tick; if it dies, another takes over once
   * the lease has run out. Shorter fails over sooner; keep it well above the RPC's response time. */
  TX_SENDER_LEASE_SECONDS: z.coerce.number().int().min(2).max(600).default(15),
  /** A relayed payment is refused (409 order_expiring), and dropped by the sender before it is signed, when
   * its voucher expires before the chain's block this many blocks after the next one (chain time). */
  RELAY_EXPIRY_MARGIN_BLOCKS: z.coerce.number().int().min(0).max(1_000).default(2),
  /** The chain's block time in seconds, for that margin; unset: measured from the latest blocks' timestamps. */
  CHAIN_BLOCK_SECONDS: z.coerce.number().int().min(1).max(3_600).optional(),
  /** Reverted relayed transactions allowed per payer wallet, and per tenant (its orders' payments and
   * cancellations), in RELAY_REVERT_WINDOW_SECONDS; past that their relays are refused with 429
   * too_many_reverts. */
  RELAY_PAYER_MAX_REVERTS: z.coerce.number().int().min(1).max(1_000_000).default(3),
  RELAY_TENANT_MAX_REVERTS: z.coerce.number().int().min(1).max(1_000_000).default(20),
  RELAY_REVERT_WINDOW_SECONDS: z.coerce.number().int().min(60).max(604_800).default(3_600),
  /** Order cancellations, and payout-party changes, one tenant may ask for (each sends a transaction from the
   * hot wallet): a burst of this many, then this many a minute, per relayer process; beyond that 429. */
  TENANT_CHAIN_WRITES_PER_MINUTE: z.coerce.number().int().min(1).max(100_000).default(10),
  /** scrypt's N for new password hashes (a power of two, 2^14 to 2^20; default 2^17, OWASP's minimum). Below
   * the default only for test suites that sign in hundreds of times: the relayer warns at start-up. A stored
   * hash with a larger N is kept; one with a smaller N is replaced at the next sign-in. */
  PASSWORD_SCRYPT_N: z.coerce
    .number()
    .int()
    .min(MIN_SCRYPT_N)
    .max(MAX_SCRYPT_N)
    .refine((n) => (n & (n - 1)) === 0, "a power of two")
    .default(SCRYPT_PARAMS.N),
  /** Password hashes that may wait for one of the two scrypt slots of a process (sign-ins); beyond that
   * POST /v1/auth/login answers 503 with Retry-After at once. A waiting sign-in whose client hangs up leaves
   * the queue unhashed. At N=2^17 a hash takes about half a second of a core: 16 waiting is about 4 s. */
  PASSWORD_HASH_QUEUE: z.coerce.number().int().min(1).max(10_000).default(16),
  LOG_LEVEL: z.enum(["debug", "info", "warn", "error"]).default("info"),
  /** Bearer token GET /metrics requires from any address. Unset: /metrics answers only requests from the
   * loopback interface that carry no forwarding header (404 to any other). */
  METRICS_TOKEN: z.string().min(16, "at least 16 characters").optional(),
  /** GET /v1/health/ready reports the indexer `degraded` (still ready) when it is more than this many blocks
   * behind the chain head. */
  READY_INDEXER_MAX_LAG_BLOCKS: z.coerce.number().int().min(0).max(1_000_000).default(20),
  /** Reverse proxies whose forwarding header names the client (http/client-address.ts): comma-separated
   * addresses, CIDR blocks and the names `loopback` and `private`. Empty: the socket's peer is the client. */
  TRUST_PROXY: trustedProxyList.prefault(""),
  /** The header TRUST_PROXY's proxies write; the other one is ignored. */
  TRUST_PROXY_HEADER: z.enum(["x-forwarded-for", "forwarded"]).default("x-forwarded-for"),
  /** Open HTTP connections of the process (unset: 80% of the open-file limit, at most 10,000). At the cap a
   * newcomer takes the place of a connection of the client holding the most; when no client holds more than
   * it would, it is answered 503 with retry-after. */
  HTTP_MAX_CONNECTIONS: z.coerce.number().int().min(16).max(1_000_000).optional(),
  /** Open HTTP connections of one client address (an IPv6 client: its /64); more are closed at accept.
   * Trusted proxies (TRUST_PROXY) are exempt. */
  HTTP_MAX_CONNECTIONS_PER_CLIENT: z.coerce.number().int().min(1).max(1_000_000).default(256),
  /** Time a client has to send a request's headers; the whole request (headers and body); between two
   * pieces of a request's body; an idle kept-alive connection's life. */
  HTTP_HEADERS_TIMEOUT_MS: z.coerce.number().int().min(100).max(600_000).default(10_000),
  HTTP_REQUEST_TIMEOUT_MS: z.coerce.number().int().min(100).max(3_600_000).default(30_000),
  HTTP_BODY_PROGRESS_TIMEOUT_MS: z.coerce.number().int().min(100).max(600_000).default(10_000),
  HTTP_KEEP_ALIVE_TIMEOUT_MS: z.coerce.number().int().min(100).max(600_000).default(5_000),
  /** Requests one kept-alive connection may carry before it is closed. */
  HTTP_MAX_REQUESTS_PER_CONNECTION: z.coerce.number().int().min(1).max(1_000_000).default(1_000),
  /** Order event streams (GET /v1/orders/{id}/events) open at once: per client (429 beyond) and in the
   * process (503 beyond). */
  ORDER_EVENT_STREAMS_PER_CLIENT: z.coerce.number().int().min(1).max(100_000).default(20),
  ORDER_EVENT_STREAMS_MAX: z.coerce.number().int().min(1).max(1_000_000).default(2_000),
  /** Run the background workers (payment sync, transaction sender, webhook dispatcher). */
  WORKERS: z
    .enum(["true", "false"])
    .default("true")
    .transform((v) => v === "true"),
});

export type Config = z.infer<typeof configSchema> & {
  publicBaseUrl: string;
  /** The scrypt parameters of new password hashes: SCRYPT_PARAMS with PASSWORD_SCRYPT_N. */
  passwordScrypt: Readonly<ScryptParams>;
};

/** Parses `env`; throws one error listing every invalid variable. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const result = configSchema.safeParse(env);
  if (!result.success) {
    const problems = result.error.issues.map((issue) => `  ${issue.path.join(".")}: ${issue.message}`);
    throw new Error(`invalid relayer configuration:\n${problems.join("\n")}`);
  }
  const config = result.data;
  const publicBaseUrl = (config.PUBLIC_BASE_URL ?? `http://${config.HOST}:${config.PORT}`).replace(/\/$/, "");
  return { ...config, publicBaseUrl, passwordScrypt: { ...SCRYPT_PARAMS, N: config.PASSWORD_SCRYPT_N } };
}
