// The relayer's Prometheus metrics, served by GET /metrics (metrics/route.ts). One registry per process,
// never prom-client's global one, so that several apps in one process (tests) do not collide.
//
// Counters and the request histogram are updated by the code that causes them (the HTTP middleware, the
// webhook dispatcher, the transaction sender, telemetry ingest). Gauges that describe state held elsewhere
// (the database's queues, the chain, the indexer) are read when Prometheus scrapes (metrics/collected.ts).
// Every name starts with payg_; labels only ever take values from small fixed sets (route templates, never
// raw paths), so the number of series stays bounded whatever the clients send.
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from "prom-client";
import { MAX_CONCURRENT as PASSWORD_HASH_CONCURRENCY, passwordHashStats } from "../auth/passwords.ts";
import { LOOKUP_CONCURRENCY, LOOKUP_TIMEOUT_MS, systemResolver } from "../webhooks/bounded-resolver.ts";
import { batchedHistogram } from "./batched-histogram.ts";

export const METRIC_PREFIX = "payg_";

/** How far the payment sync is behind the indexer, as the worker knows it (payments/payment-sync.ts). */
export type PaymentSyncLag = { blocks: number; seconds: number };

export function createMetrics() {
  const registry = new Registry();
  const registers = [registry];
  // Process figures (CPU, memory, event-loop delay, GC) under the same prefix.
  collectDefaultMetrics({ register: registry, prefix: METRIC_PREFIX });

  let paymentSyncLag: (() => PaymentSyncLag) | undefined;

  const httpRequestDuration: Histogram<"method" | "route" | "status"> = new Histogram({
    name: "payg_http_request_duration_seconds",
    help: "Time to answer an HTTP request (until the response starts: an event stream counts until its headers), by method, route template and status",
    labelNames: ["method", "route", "status"] as const,
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers,
    collect: (): void => httpRequests.flush(),
  });
  // One observation a request: batched (batched-histogram.ts).
  const httpRequests = batchedHistogram(httpRequestDuration);

  // The callback URLs' DNS lookups (webhooks/bounded-resolver.ts), read at each scrape.
  new Gauge({
    name: "payg_dns_lookups_running",
    help: `Callback URL DNS lookups running (each holds a thread of libuv's pool; at most ${LOOKUP_CONCURRENCY})`,
    registers,
    collect() {
      this.set(systemResolver.stats().running);
    },
  });
  new Gauge({
    name: "payg_dns_lookups_queued",
    help: `Callback URL DNS lookups waiting for one of the ${LOOKUP_CONCURRENCY} running at a time`,
    registers,
    collect() {
      this.set(systemResolver.stats().queued);
    },
  });
  new Counter({
    name: "payg_dns_lookup_timeouts_total",
    help: `Callback URL DNS lookups whose callers waited ${LOOKUP_TIMEOUT_MS / 1000} s in vain (a subscription refused, or a delivery attempt failed)`,
    registers,
    collect() {
      this.reset();
      this.inc(systemResolver.stats().timeouts);
    },
  });

  // The process's password hashes (auth/passwords.ts: sign-ins), read at each scrape.
  new Gauge({
    name: "payg_password_hashes_running",
    help: `Password hashes (scrypt) computing now (at most ${PASSWORD_HASH_CONCURRENCY})`,
    registers,
    collect() {
      this.set(passwordHashStats().running);
    },
  });
  new Gauge({
    name: "payg_password_hashes_queued",
    help: "Password hashes waiting for a scrypt slot (at most PASSWORD_HASH_QUEUE)",
    registers,
    collect() {
      this.set(passwordHashStats().queued);
    },
  });
  new Counter({
    name: "payg_password_hashes_total",
    help: "Password hashes by outcome: computed, refused (the queue was full: 503), abandoned (the client left while it waited: not computed)",
    labelNames: ["outcome"] as const,
    registers,
    collect() {
      const stats = passwordHashStats();
      this.reset();
      this.inc({ outcome: "computed" }, stats.computed);
      this.inc({ outcome: "refused" }, stats.refused);
      this.inc({ outcome: "abandoned" }, stats.abandoned);
    },
  });

  return {
    registry,

    /** payg_http_request_duration_seconds, observed through batches (flushed before every scrape). */
    httpRequests,

    webhookAttempts: new Counter({
      name: "payg_webhook_delivery_attempts_total",
      help: "Webhook delivery attempts by outcome: succeeded (2xx), retry (failed, another attempt is scheduled), failed (failed, no attempt left), gone (410: the subscription was disabled), lost (another process had taken the delivery over)",
      labelNames: ["outcome"] as const,
      registers,
    }),

    splitRecipientsMismatch: new Counter({
      name: "payg_split_recipients_mismatch_total",
      help: "Times a device's split was found paying recipients other than the device's payout parties (its payments are refused until resolved; payg_split_recipients_mismatched_devices counts those devices now)",
      registers,
    }),

    depositStray: new Counter({
      name: "payg_deposit_stray_total",
      help: "Token amounts found at an order's deposit address that the order will not take, by reason: paid (an overpayment, or a second payment), expired (a transfer after the order's expiry or cancellation). The operator sends them back with PaymentRouter.recoverDeposit",
      labelNames: ["reason"] as const,
      registers,
    }),

    splitUnrequestedProposals: new Counter({
      name: "payg_split_unrequested_proposals_total",
      help: "Recipient changes proposed on-chain for a device's split that are not the device's pending payout change (the asset owner can cancel them until the factory's delay ends)",
      registers,
    }),

    txFinished: new Counter({
      name: "payg_tx_finished_total",
      help: "Relayer transactions that reached a final state, by kind and status (mined, reverted, failed: would revert, or a nonce-gap filler whose nonce another transaction used)",
      labelNames: ["kind", "status"] as const,
      registers,
    }),

    txRevertedGas: new Counter({
      name: "payg_tx_reverted_gas_total",
      help: "Gas the hot wallet's transactions used in blocks where they reverted (paid for nothing), by kind",
      labelNames: ["kind"] as const,
      registers,
    }),

    txRevertedFees: new Counter({
      name: "payg_tx_reverted_fees_wei_total",
      help: "Fees in wei (gas used x effective gas price) the hot wallet paid for transactions that reverted, by kind",
      labelNames: ["kind"] as const,
      registers,
    }),

    txDropped: new Counter({
      name: "payg_tx_dropped_total",
      help: "Queued transactions the sender did not send because its last check before signing said they would revert (would_revert) or be mined after their order's voucher expired (expiring), by kind",
      labelNames: ["kind", "reason"] as const,
      registers,
    }),

    txRebroadcasts: new Counter({
      name: "payg_tx_rebroadcasts_total",
      help: "Signed transactions broadcast again because they were not mined in time (the same signed bytes; a fee bump is counted in payg_tx_replacements_total)",
      registers,
    }),

    txRequeued: new Counter({
      name: "payg_tx_requeued_total",
      help: "Sent transactions queued again for a new nonce because another transaction used theirs (none of their versions mined), by kind",
      labelNames: ["kind"] as const,
      registers,
    }),

    txReplacements: new Counter({
      name: "payg_tx_replacements_total",
      help: "Transactions replaced with the same nonce and higher fees because they stayed unmined for TX_REPLACE_AFTER_BLOCKS blocks, by kind",
      labelNames: ["kind"] as const,
      registers,
    }),

    telemetryReadings: new Counter({
      name: "payg_telemetry_readings_total",
      help: "Energy telemetry readings checked at ingest, by outcome (accepted: stored; rejected: refused by a rule); replays of an idempotent request are not counted again",
      labelNames: ["outcome"] as const,
      registers,
    }),

    telemetryBatches: new Counter({
      name: "payg_telemetry_batches_total",
      help: "Energy telemetry batches by the status of their answer (200, 401 signature_invalid, 404, 409 baseline_incomplete, 422 counter_regression); replays are not counted again",
      labelNames: ["status"] as const,
      registers,
    }),

    /** Reports the payment sync's lag from `read` (called at every scrape); the gauges exist only in a
     * process that runs the payment sync worker. */
    trackPaymentSync(read: () => PaymentSyncLag) {
      const first = paymentSyncLag === undefined;
      paymentSyncLag = read;
      if (!first) return;
      new Gauge({
        name: "payg_payment_sync_lag_blocks",
        help: "Blocks between the newest paid order the indexer announced and the payment sync's cursor (0: caught up)",
        registers,
        collect() {
          this.set(paymentSyncLag!().blocks);
        },
      });
      new Gauge({
        name: "payg_payment_sync_lag_seconds",
        help: "Seconds since the payment sync fell behind the indexer's paid orders (0: caught up)",
        registers,
        collect() {
          this.set(paymentSyncLag!().seconds);
        },
      });
    },
  };
}

export type Metrics = ReturnType<typeof createMetrics>;
