// Gauges read when Prometheus scrapes (prom-client collect() callbacks): the database's queues (webhook
// outbox, transactions in flight, anchoring backlog) in one query over partial indexes, the hot wallet's
// balances and the indexer's lag from the chain and the indexer, the database pool from the pool itself.
//
// A scrape must stay cheap and must not fail because a dependency does: each source is read at most once per
// SAMPLE_MS (the gauges it feeds share the read), within COLLECT_TIMEOUT_MS. When a read fails, the gauges it
// feeds answer NaN (labelled ones: no series) rather than a stale or made-up value, payg_collector_up says
// which source failed, and the failure is logged once at warn until the source reads again.
import { sql } from "drizzle-orm";
import { type Address, erc20Abi, formatEther, formatUnits } from "viem";
import { Gauge } from "prom-client";
import type { PaymentsChain } from "../chain/payments-chain.ts";
import type { Database } from "../db/client.ts";
import type { IndexerClient } from "../../../indexer/client.ts";
import type { Logger } from "../logger.ts";
import { withTimeLimit } from "../time-limit.ts";
import type { Metrics } from "./registry.ts";

const SAMPLE_MS = 1_000;
const COLLECT_TIMEOUT_MS = 2_000;

type Deps = { database: Database; chain: PaymentsChain; indexer: IndexerClient; logger: Logger };

/** A value read at scrape time, shared by the gauges it feeds; resolves undefined when the read failed. */
type Source<T> = { name: string; read(): Promise<T | undefined> };

export function registerCollectedGauges(metrics: Metrics, deps: Deps) {
  const registers = [metrics.registry];
  const logger = deps.logger.child({ component: "metrics" });
  const up = new Map<string, number>();
  const sources: Array<Source<unknown>> = [];

  function source<T>(name: string, read: () => Promise<T>): Source<T> {
    let last: { at: number; value: Promise<T | undefined> } | undefined;
    let failing = false;
    const s: Source<T> = {
      name,
      read() {
        if (last && Date.now() - last.at < SAMPLE_MS) return last.value;
        const value = withTimeLimit(read(), COLLECT_TIMEOUT_MS, `metrics source ${name}`).then(
          (v) => {
            if (failing) logger.info("metrics source reads again", { source: name });
            failing = false;
            up.set(name, 1);
            return v;
          },
          (error: unknown) => {
            if (!failing)
              logger.warn("metrics source failed; its gauges are empty until it reads again", {
                source: name,
                error: (error as Error).message,
              });
            failing = true;
            up.set(name, 0);
            return undefined;
          },
        );
        last = { at: Date.now(), value };
        return value;
      },
    };
    sources.push(s as Source<unknown>);
    return s;
  }

  /** A gauge set from one field of a source (NaN when the source failed). */
  function gauge<T>(name: string, help: string, from: Source<T>, value: (v: T) => number) {
    new Gauge({
      name,
      help,
      registers,
      async collect() {
        const v = await from.read();
        this.set(v === undefined ? Number.NaN : value(v));
      },
    });
  }

  // --- The database's queues: one round trip, every count over a partial index. ---
  const queues = source("database", async () => {
    const result = await deps.database.db.execute(sql`
      select
        (select count(*) from webhook_deliveries where status = 'pending') as deliveries_pending,
        (select extract(epoch from now() - min(created_at)) from webhook_deliveries where status = 'pending') as delivery_oldest_age,
        (select extract(epoch from now() - min(next_attempt_at)) from webhook_deliveries where status = 'pending') as delivery_overdue,
        (select count(*) from webhook_events where dispatched_at is null) as events_undispatched,
        (select count(*) from chain_transactions where status = 'queued') as tx_queued,
        (select count(*) from chain_transactions where status = 'sent') as tx_sent,
        (select extract(epoch from now() - min(created_at)) from chain_transactions where status in ('queued', 'sent')) as tx_oldest_age,
        (select count(*) from energy_batches where attestation_status = 'pending' and merkle_root is null)
          + (select count(*) from chain_transactions where kind = 'anchor' and status in ('queued', 'sent')) as anchoring_backlog,
        (select count(*) from devices where (pending_asset_owner is not null or split_status = 'mismatch') and split_status = 'mismatch')
          as splits_mismatched,
        (select count(*) from devices where (pending_asset_owner is not null or split_status = 'mismatch') and pending_asset_owner is not null)
          as payout_changes_pending`);
    const [row] = (result as unknown as { rows: Array<Record<string, string | number | null>> }).rows;
    const n = (key: string) => Number(row[key] ?? 0);
    return {
      deliveriesPending: n("deliveries_pending"),
      deliveryOldestAge: Math.max(0, n("delivery_oldest_age")),
      deliveryOverdue: Math.max(0, n("delivery_overdue")),
      eventsUndispatched: n("events_undispatched"),
      txQueued: n("tx_queued"),
      txSent: n("tx_sent"),
      txOldestAge: Math.max(0, n("tx_oldest_age")),
      anchoringBacklog: n("anchoring_backlog"),
      splitsMismatched: n("splits_mismatched"),
      payoutChangesPending: n("payout_changes_pending"),
    };
  });
  gauge(
    "payg_webhook_deliveries_pending",
    "Webhook deliveries not finished (waiting for an attempt, a retry, or in flight)",
    queues,
    (q) => q.deliveriesPending,
  );
  gauge(
    "payg_webhook_oldest_pending_age_seconds",
    "Age of the oldest unfinished webhook delivery (0: none); retries back off up to about 2 h by design",
    queues,
    (q) => q.deliveryOldestAge,
  );
  gauge(
    "payg_webhook_overdue_seconds",
    "How long the most overdue webhook delivery has been due without being attempted (0: none; a working dispatcher keeps it near 0)",
    queues,
    (q) => q.deliveryOverdue,
  );
  gauge("payg_webhook_events_undispatched", "Outbox events not yet fanned out to their subscriptions", queues, (q) => q.eventsUndispatched);
  new Gauge({
    name: "payg_tx_pending",
    help: "Relayer transactions not final, by status (queued: not sent yet; sent: waiting to be mined)",
    labelNames: ["status"] as const,
    registers,
    async collect() {
      const q = await queues.read();
      this.reset();
      if (!q) return;
      this.set({ status: "queued" }, q.txQueued);
      this.set({ status: "sent" }, q.txSent);
    },
  });
  gauge("payg_tx_oldest_pending_age_seconds", "Age of the oldest relayer transaction not final (0: none)", queues, (q) => q.txOldestAge);
  gauge(
    "payg_anchoring_backlog_batches",
    "Attested telemetry batches not anchored yet (no Merkle root yet, or their anchor transaction not final)",
    queues,
    (q) => q.anchoringBacklog,
  );

  gauge(
    "payg_split_recipients_mismatched_devices",
    "Devices whose split pays recipients other than their payout parties (their quotes and orders are refused: 409 split_recipients_mismatch)",
    queues,
    (q) => q.splitsMismatched,
  );
  gauge(
    "payg_payout_changes_pending",
    "Payout changes of devices with a split, waiting for the split manager to propose and execute them (npm run splits)",
    queues,
    (q) => q.payoutChangesPending,
  );

  // --- The hot wallet: gas, and the float cash orders are paid from. ---
  const account = deps.chain.relayerAccount.address;
  const wallet = source("hot_wallet", async () => {
    const tokens = [...(await deps.chain.stablecoins()).values()];
    const [wei, ...floats] = await Promise.all([
      deps.chain.publicClient.getBalance({ address: account }),
      ...tokens.map((t) =>
        deps.chain.publicClient.readContract({ address: t.address as Address, abi: erc20Abi, functionName: "balanceOf", args: [account] }),
      ),
    ]);
    return {
      ether: Number(formatEther(wei)),
      floats: tokens.map((t, i) => ({ token: t.symbol, amount: Number(formatUnits(floats[i], t.decimals)) })),
    };
  });
  gauge(
    "payg_hot_wallet_gas_balance_ether",
    "Native balance of the relayer's hot wallet, in ether (it pays the gas of every relayer transaction)",
    wallet,
    (w) => w.ether,
  );
  new Gauge({
    name: "payg_agent_float_balance",
    help: "Stablecoin balance of the relayer's hot wallet, in whole tokens: the float cash orders are paid from",
    labelNames: ["token"] as const,
    registers,
    async collect() {
      const w = await wallet.read();
      this.reset();
      for (const f of w?.floats ?? []) this.set({ token: f.token }, f.amount);
    },
  });

  // --- The indexer's lag behind the chain head. ---
  const indexer = source("indexer", async () => {
    const [indexed, head] = await Promise.all([
      deps.indexer.indexedBlock(),
      // eth_blockNumber itself: viem's getBlockNumber() would answer from its cache.
      deps.chain.publicClient.request({ method: "eth_blockNumber" }).then((hex) => Number(BigInt(hex))),
    ]);
    return { indexed, head };
  });
  gauge(
    "payg_indexer_lag_blocks",
    "Blocks between the chain head (eth_blockNumber) and the latest block the indexer has indexed",
    indexer,
    (i) => Math.max(0, i.head - i.indexed),
  );

  // --- The database pool (PostgreSQL; PGlite has one connection and no pool: no gauges). ---
  const poolUse = deps.database.poolUse?.bind(deps.database);
  if (poolUse) {
    new Gauge({
      name: "payg_db_pool_connections",
      help: "PostgreSQL pool connections by state (total: open; idle: open and unused)",
      labelNames: ["state"] as const,
      registers,
      collect() {
        const use = poolUse();
        this.set({ state: "total" }, use.total);
        this.set({ state: "idle" }, use.idle);
      },
    });
    new Gauge({
      name: "payg_db_pool_waiting_queries",
      help: "Queries waiting for a PostgreSQL pool connection (all connections busy)",
      registers,
      collect() {
        this.set(poolUse().waiting);
      },
    });
  }

  new Gauge({
    name: "payg_collector_up",
    help: "Whether the last read of a scrape-time source succeeded (1) or failed (0): database, hot_wallet, indexer",
    labelNames: ["collector"] as const,
    registers,
    async collect() {
      await Promise.all(sources.map((s) => s.read()));
      for (const s of sources) this.set({ collector: s.name }, up.get(s.name) ?? 0);
    },
  });
}
