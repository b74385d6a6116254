// Several relayer processes on one PostgreSQL schema behind a round-robin proxy (the scale-out test and
// benchmark), and wallets paying through it as integrators' clients would: quote, order, the wallet's
// permit relayed by POST /v1/orders/{id}/permit, the order followed on its event stream until the device is
// on. Every process runs the same configuration and keys, its workers included; the first is the stack's
// own relayer (startStack), the others start on the same database.
//
// Each wallet talks to the proxy from a loopback address of its own (127.0.3.1 onwards), and the proxy
// connects to the relayer from it: the relayer's limits per client address apply per wallet. A client
// retries what a load balancer in front of a failing process answers (502, a connection cut mid-request)
// and what a limit answers (429, after retry-after); the relayer's routes used here are idempotent for a
// retry (an order per quote, a transaction per order).
import { readFile } from "node:fs/promises";
import http from "node:http";
import os from "node:os";
import path from "node:path";
import { Readable } from "node:stream";
import { setTimeout as sleep } from "node:timers/promises";
import { type Address, type Hex, createPublicClient, http as viemHttp, parseAbi } from "viem";
import type { Service } from "../../lib/processes.ts";
import { startRelayer } from "../../lib/relayer.ts";
import { localAccount } from "../../lib/sample-data.ts";
import { type ServerSentEvent, serverSentEvents } from "../../sdk/src/event-stream.ts";
import { signOrderPermit } from "../../sdk/src/payment-order.ts";
import { withPostgres } from "./databases.ts";
import { LOCAL_ACCOUNT_INDEX, localStablecoin, localStablecoinAbi } from "./local-chain.ts";
import { createPayments } from "./payments.ts";
import { type RoundRobinProxy, startRoundRobinProxy } from "./round-robin-proxy.ts";
import { type Stack, startStack } from "./stack.ts";
import type { UncheckedJson } from "./unchecked-json.ts";

/** The first local node account no role of the LocalStack deployment or the sample tenants uses (0-12 are
 * taken: lib/sample-data.ts, test/support/local-chain.ts). Accounts past the node's 20 funded ones have no
 * ether, which a relayed permit does not need. */
export const FIRST_FREE_ACCOUNT = 13;

export type ClusterMember = {
  url: string;
  service: Service;
  logFile: string;
  /** How the process names itself in webhook_attempts.worker (host:pid). */
  worker: string;
};

export type RelayerCluster = {
  stack: Stack;
  members: ClusterMember[];
  proxy: RoundRobinProxy;
  /** A query on the relayers' schema. */
  query<T>(text: string, values?: unknown[]): Promise<T[]>;
  /** The member holding the transaction sender's lease now, or undefined while no process holds it. */
  txSenderHolder(): Promise<ClusterMember | undefined>;
  stop(): Promise<void>;
};

const workerName = (service: Service) => `${os.hostname()}:${service.process.pid}`;

export async function startRelayerCluster(opts: {
  label: string;
  processes: number;
  relayerEnv?: NodeJS.ProcessEnv;
}): Promise<RelayerCluster> {
  const stack = await startStack({ label: opts.label, database: "postgres", relayerEnv: { WORKERS: "true", ...opts.relayerEnv } });
  const members: ClusterMember[] = [
    { url: stack.relayerUrl, service: stack.relayer, logFile: stack.relayerOptions.logFile!, worker: workerName(stack.relayer) },
  ];
  let proxy: RoundRobinProxy | undefined;
  const stop = async () => {
    await proxy?.close();
    for (const member of members.slice(1)) await member.service.stop();
    await stack.stop();
  };
  try {
    const logDir = path.dirname(stack.relayerOptions.logFile!);
    for (let i = 1; i < opts.processes; i++) {
      const logFile = path.join(logDir, `${stack.chain.deploymentId}.relayer-${i + 1}.log`);
      const started = await startRelayer({ ...stack.relayerOptions, logFile });
      members.push({ url: started.url, service: started.service, logFile, worker: workerName(started.service) });
    }
    proxy = await startRoundRobinProxy(members.map((m) => m.url));
  } catch (error) {
    await stop();
    throw error;
  }
  const db = stack.relayerOptions.database;
  if (db.kind !== "postgres") throw new Error("a relayer cluster needs PostgreSQL");
  const query = <T>(text: string, values: unknown[] = []) =>
    withPostgres(db.url, async (client) => {
      await client.query(`set search_path to "${db.schema}"`);
      return (await client.query(text, values)).rows as T[];
    });

  return {
    stack,
    members,
    proxy,
    query,
    async txSenderHolder() {
      const [lease] = await query<{ value: string }>("select value from sync_state where name = 'tx_sender_lease'");
      if (!lease || (JSON.parse(lease.value) as { until: number }).until < Date.now()) return undefined;
      // The lease names a random owner id; the process holding it is the one sending transactions now (only
      // the holder sends: relayer/src/chain/tx-sender.ts).
      const counts = async () => Promise.all(members.map((m) => transactionsSent(m)));
      const before = await counts();
      await sleep(1_000);
      const after = await counts();
      const sending = members.filter((_, i) => after[i] > before[i]);
      return sending.length === 1 ? sending[0] : undefined;
    },
    stop,
  };
}

async function transactionsSent(member: ClusterMember): Promise<number> {
  const text = await readFile(member.logFile, "utf8").catch(() => "");
  return text.split('"msg":"transaction sent"').length - 1;
}

// ---- Clients ----------------------------------------------------------------------------------------------

export type Wallet = { index: number; address: Address; account: ReturnType<typeof localAccount>; from: string };

/** `count` wallets from the first free local account on, each with a loopback source address of its own. */
export function testWallets(count: number, first = FIRST_FREE_ACCOUNT): Wallet[] {
  return Array.from({ length: count }, (_, i) => {
    const account = localAccount(first + i);
    return { index: first + i, address: account.address, account, from: `127.0.${3 + Math.floor(i / 254)}.${1 + (i % 254)}` };
  });
}

/** Mints `amount` of the stablecoin (base units) to every wallet, from the admin account (its owner). */
export async function fundWallets(stack: Stack, wallets: Wallet[], amount: bigint): Promise<void> {
  const payments = createPayments(stack.chain);
  const admin = payments.wallet(LOCAL_ACCOUNT_INDEX.admin);
  const token = localStablecoin(stack.chain.record);
  for (const wallet of wallets) {
    await admin.writeContract({ address: token, abi: localStablecoinAbi, functionName: "mint", args: [wallet.address, amount] });
  }
}

export type Answer = { status: number; headers: http.IncomingHttpHeaders; body: UncheckedJson; text: string };

const agent = new http.Agent({ keepAlive: true, maxSockets: Number.POSITIVE_INFINITY });

/** One JSON request to `baseUrl` from the loopback address `from`. */
export function request(
  baseUrl: string,
  method: string,
  route: string,
  opts: { body?: unknown; from?: string; headers?: Record<string, string> } = {},
): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const headers: Record<string, string> = { ...opts.headers };
    const body = opts.body === undefined ? undefined : JSON.stringify(opts.body);
    if (body !== undefined) headers["content-type"] = "application/json";
    const req = http.request(new URL(route, baseUrl), { method, headers, agent, localAddress: opts.from }, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (chunk: Buffer) => chunks.push(chunk));
      res.on("error", reject);
      res.on("aborted", () => reject(Object.assign(new Error("response cut off"), { code: "ECONNRESET" })));
      res.on("end", () => {
        const text = Buffer.concat(chunks).toString("utf8");
        let parsed: unknown = text;
        try {
          parsed = JSON.parse(text);
        } catch {
          // not JSON
        }
        resolve({ status: res.statusCode ?? 0, headers: res.headers, body: parsed as UncheckedJson, text });
      });
    });
    req.on("error", reject);
    req.end(body);
  });
}

/** A request retried while the answer is one a client should retry: 429 (after retry-after), 502/503 or a
 * connection cut (a process behind the proxy died), for up to `timeoutMs`. */
export async function requestRetrying(
  baseUrl: string,
  method: string,
  route: string,
  opts: { body?: unknown; from?: string; timeoutMs?: number } = {},
): Promise<Answer & { retries: number }> {
  const deadline = Date.now() + (opts.timeoutMs ?? 60_000);
  for (let retries = 0; ; retries++) {
    let answer: Answer | undefined;
    try {
      answer = await request(baseUrl, method, route, opts);
      if (answer.status !== 429 && answer.status !== 502 && answer.status !== 503) return { ...answer, retries };
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code !== "ECONNRESET" && code !== "ECONNREFUSED" && code !== "EPIPE") throw error;
    }
    if (Date.now() > deadline)
      throw new Error(`${method} ${route}: still ${answer?.status ?? "failing"} after ${retries} retries: ${answer?.text ?? ""}`);
    const wait = answer?.status === 429 ? Number(answer.headers["retry-after"] ?? "1") * 1000 : 200;
    await sleep(wait);
  }
}

const tokenAbi = parseAbi(["function nonces(address) view returns (uint256)"]);

export type PreparedPayment = {
  wallet: Wallet;
  orderId: string;
  /** The order's key on the router (PaymentOrder.orderId). */
  onchainId: bigint;
  permit: { owner: Address; signature: Hex };
};

/** A client of the cluster: pays orders through `baseUrl` (the proxy) and follows their event streams. */
export function createPayer(stack: Stack, baseUrl: string) {
  const publicClient = createPublicClient({ transport: viemHttp(stack.chain.rpcUrl) });

  /** Quote and order `tier` on `deviceId`, and the wallet's permit for it (its token nonce as it is now:
   * one payment of a wallet at a time). */
  async function prepare(wallet: Wallet, deviceId: string, tier = "1h"): Promise<PreparedPayment> {
    const from = wallet.from;
    const quote = await requestRetrying(baseUrl, "POST", "/v1/quote", { from, body: { deviceId, chain: "local", token: "USDC", tier } });
    if (quote.status !== 201) throw new Error(`quote: ${quote.status} ${quote.text}`);
    const order = await requestRetrying(baseUrl, "POST", "/v1/orders", {
      from,
      body: { deviceId, chain: "local", token: "USDC", amountUsd: quote.body.amountUsd, quoteId: quote.body.quoteId },
    });
    // 200: a retry after a cut connection found the order its first try made.
    if (order.status !== 201 && order.status !== 200) throw new Error(`order: ${order.status} ${order.text}`);
    const details = order.body.paymentDetails;
    const nonce = await publicClient.readContract({
      address: details.token.address,
      abi: tokenAbi,
      functionName: "nonces",
      args: [wallet.address],
    });
    const signature = await signOrderPermit(wallet.account, details.permit, nonce);
    return { wallet, orderId: order.body.id, onchainId: BigInt(details.order.orderId), permit: { owner: wallet.address, signature } };
  }

  /** POST /v1/orders/{id}/permit; resolves when the relayer accepted it (202). */
  async function submit(payment: PreparedPayment): Promise<void> {
    const answer = await requestRetrying(baseUrl, "POST", `/v1/orders/${payment.orderId}/permit`, {
      from: payment.wallet.from,
      body: payment.permit,
    });
    if (answer.status !== 202) throw new Error(`permit of ${payment.orderId}: ${answer.status} ${answer.text}`);
  }

  return { prepare, submit, follow: (orderId: string, opts: FollowOptions = {}) => followOrder(baseUrl, orderId, opts) };
}

export type FollowOptions = {
  from?: string;
  /** Last-Event-ID of the first request (none: the stream starts with the order's state). */
  lastEventId?: string;
  /** Called with each event as it arrives. */
  onEvent?(event: ServerSentEvent): void;
  timeoutMs?: number;
};

/** Reads an order's event stream until the relayer closes it (after the order's terminal event: nothing
 * more is due), reconnecting with Last-Event-ID when the connection is cut (the process serving it died);
 * returns every event received, state events included. */
export async function followOrder(baseUrl: string, orderId: string, opts: FollowOptions = {}): Promise<ServerSentEvent[]> {
  const deadline = Date.now() + (opts.timeoutMs ?? 120_000);
  const events: ServerSentEvent[] = [];
  let lastId = opts.lastEventId;
  while (Date.now() < deadline) {
    const done = await new Promise<boolean>((resolve) => {
      const headers: Record<string, string> = { accept: "text/event-stream" };
      if (lastId !== undefined) headers["last-event-id"] = lastId;
      const timer = setTimeout(() => req.destroy(), Math.max(1, deadline - Date.now()));
      const req = http.request(
        new URL(`/v1/orders/${orderId}/events`, baseUrl),
        { headers, agent: false, localAddress: opts.from },
        (res) => {
          if (res.statusCode !== 200) {
            res.resume();
            clearTimeout(timer);
            setTimeout(() => resolve(false), res.statusCode === 429 ? 1_000 : 200);
            return;
          }
          void (async () => {
            let closed = false;
            try {
              for await (const event of serverSentEvents(Readable.toWeb(res) as ReadableStream<Uint8Array>)) {
                if (event.comment) continue;
                events.push(event);
                opts.onEvent?.(event);
                if (event.id) lastId = event.id;
              }
              closed = true; // ended by the relayer, not cut off
            } catch {
              // cut off: reconnect below
            }
            clearTimeout(timer);
            resolve(closed);
          })();
        },
      );
      req.on("error", () => {
        clearTimeout(timer);
        setTimeout(() => resolve(false), 200);
      });
      req.end();
    });
    if (done) return events;
  }
  throw new Error(`the event stream of ${orderId} did not close; got ${events.map((e) => e.event).join(", ")}`);
}
