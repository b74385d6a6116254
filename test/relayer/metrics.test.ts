// Operability end to end: GET /metrics and GET /v1/health/ready against a running stack. Each metric is
// shown to move when what it counts happens (a request, a webhook attempt, a relayed payment, a cash
// payment, a transaction the chain does not mine, a telemetry batch, the chain going away and coming back,
// and on PostgreSQL the relayer's database going away while a payment is indexed); readiness answers 200
// with every check ok and 503 when the chain's RPC is cut off; /metrics is refused to a request that does
// not look local, and with METRICS_TOKEN set takes only that token; the example alert rules (ops/) use only
// metric names /metrics exposes.
import assert from "node:assert/strict";
import { readFile } from "node:fs/promises";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import { parse } from "yaml";
import { repoRoot } from "../../ignition/deployment-records.ts";
import { accessToken, meter, postBatch, waitFor } from "../energy/helpers.ts";
import { type DatabaseKind, oneDatabaseKind } from "../support/databases.ts";
import { createOrder, pay, waitForOrder } from "../support/pay.ts";
import { type Stack, startStack } from "../support/stack.ts";
import { type WebhookReceiver, startWebhookReceiver } from "../support/webhook-receiver.ts";
import { login, sendTest, subscribe } from "../webhooks/support.ts";

/** One sample of the exposition: its name, labels and value. */
type Sample = { name: string; labels: Record<string, string>; value: number };

/** Parses the Prometheus text format as prom-client writes it (label values hold no `",` sequence here). */
function parseExposition(text: string): { samples: Sample[]; families: Map<string, string> } {
  const samples: Sample[] = [];
  const families = new Map<string, string>();
  for (const line of text.split("\n")) {
    if (line.startsWith("# TYPE ")) {
      const [name, type] = line.slice("# TYPE ".length).split(" ");
      families.set(name, type);
      continue;
    }
    if (line === "" || line.startsWith("#")) continue;
    const space = line.lastIndexOf(" ");
    const series = line.slice(0, space);
    const value = Number(line.slice(space + 1));
    const brace = series.indexOf("{");
    const name = brace === -1 ? series : series.slice(0, brace);
    const labels: Record<string, string> = {};
    if (brace !== -1) {
      for (const pair of series.slice(brace + 1, -1).split('",')) {
        if (!pair) continue;
        const eq = pair.indexOf("=");
        labels[pair.slice(0, eq)] = pair.slice(eq + 2).replace(/"$/, "");
      }
    }
    samples.push({ name, labels, value });
  }
  return { samples, families };
}

/** Every metric name a scrape may show: the families, with a histogram's and a summary's series names. */
function exposedNames(families: Map<string, string>): Set<string> {
  const names = new Set<string>();
  for (const [name, type] of families) {
    names.add(name);
    if (type === "histogram") for (const s of ["_bucket", "_sum", "_count"]) names.add(name + s);
    if (type === "summary") for (const s of ["_sum", "_count"]) names.add(name + s);
  }
  return names;
}

/** Metric names a PromQL expression reads (identifiers that are not functions, keywords, label names or
 * parts of strings, matchers and durations). */
function metricNamesIn(expr: string): string[] {
  const KEYWORDS = new Set(["by", "without", "on", "ignoring", "group_left", "group_right", "and", "or", "unless", "bool", "offset"]);
  const GROUPING = new Set(["by", "without", "on", "ignoring", "group_left", "group_right"]);
  const stripped = expr
    .replace(/"(?:[^"\\]|\\.)*"/g, '""')
    .replace(/\{[^}]*\}/g, " ")
    .replace(/\[[^\]]*\]/g, " ");
  const names: string[] = [];
  const token = /\d+(?:\.\d+)?(?:e[+-]?\d+)?|[A-Za-z_:][A-Za-z0-9_:]*|\(|\)|[^\sA-Za-z0-9_:()]+/g;
  const tokens = stripped.match(token) ?? [];
  for (let i = 0; i < tokens.length; i++) {
    const t = tokens[i];
    if (!/^[A-Za-z_:]/.test(t)) continue;
    if (GROUPING.has(t) && tokens[i + 1] === "(") {
      while (i < tokens.length && tokens[i] !== ")") i++; // the label list
      continue;
    }
    // A keyword, a function, or an aggregation (`sum (...)`, `sum by (label) (...)`).
    if (KEYWORDS.has(t) || tokens[i + 1] === "(" || tokens[i + 1] === "by" || tokens[i + 1] === "without") continue;
    if (t === "Inf" || t === "NaN") continue;
    names.push(t);
  }
  return names;
}

const database = oneDatabaseKind();
describe(`metrics and readiness on ${database}`, { concurrency: false, timeout: 600_000 }, () => {
  let stack: Stack;
  let receiver: WebhookReceiver;

  before(
    async () => {
      stack = await startStack({
        label: `metrics-${database}`,
        database: database as DatabaseKind,
        chainProxy: true,
        databaseProxy: database === "postgres",
      });
      receiver = await startWebhookReceiver();
    },
    { timeout: 240_000 },
  );
  after(async () => {
    await receiver?.close();
    await stack?.stop();
  });

  async function scrape(headers: Record<string, string> = {}) {
    const response = await stack.api("GET", "/metrics", { headers });
    assert.equal(response.status, 200, response.text);
    return parseExposition(response.text);
  }

  /** The value of the series `name` with exactly `labels` (0 when the series does not exist yet). */
  async function value(name: string, labels: Record<string, string> = {}): Promise<number> {
    const { samples } = await scrape();
    const wanted = Object.entries(labels);
    const found = samples.find(
      (s) => s.name === name && wanted.every(([k, v]) => s.labels[k] === v) && Object.keys(s.labels).length === wanted.length,
    );
    return found?.value ?? 0;
  }

  /** Scrapes until `name{labels}` satisfies `ok` (gauges read at scrape time are shared for 1 s). */
  function waitForValue(name: string, labels: Record<string, string>, ok: (v: number) => boolean, what: string, timeoutMs = 30_000) {
    return waitFor(
      what,
      async () => {
        const v = await value(name, labels);
        return ok(v) ? { v } : undefined;
      },
      timeoutMs,
      200,
    ).then((r) => r.v);
  }

  it("exposes the Prometheus text format with the payg_ metrics", async () => {
    const response = await fetch(`${stack.relayerUrl}/metrics`);
    assert.equal(response.status, 200);
    assert.match(response.headers.get("content-type") ?? "", /^text\/plain; version=0\.0\.4/);
    const { families } = parseExposition(await response.text());
    for (const [name, type] of [
      ["payg_http_request_duration_seconds", "histogram"],
      ["payg_webhook_delivery_attempts_total", "counter"],
      ["payg_webhook_deliveries_pending", "gauge"],
      ["payg_webhook_oldest_pending_age_seconds", "gauge"],
      ["payg_tx_pending", "gauge"],
      ["payg_tx_oldest_pending_age_seconds", "gauge"],
      ["payg_tx_finished_total", "counter"],
      ["payg_tx_rebroadcasts_total", "counter"],
      ["payg_tx_replacements_total", "counter"],
      ["payg_tx_requeued_total", "counter"],
      ["payg_hot_wallet_gas_balance_ether", "gauge"],
      ["payg_agent_float_balance", "gauge"],
      ["payg_payment_sync_lag_blocks", "gauge"],
      ["payg_payment_sync_lag_seconds", "gauge"],
      ["payg_indexer_lag_blocks", "gauge"],
      ["payg_telemetry_readings_total", "counter"],
      ["payg_anchoring_backlog_batches", "gauge"],
      ["payg_collector_up", "gauge"],
      ["payg_dns_lookups_running", "gauge"],
      ["payg_dns_lookups_queued", "gauge"],
      ["payg_dns_lookup_timeouts_total", "counter"],
    ]) {
      assert.equal(families.get(name), type, `${name} is a ${type}`);
    }
    assert.equal(families.has("payg_db_pool_connections"), database === "postgres", "the pool gauges exist on PostgreSQL only");
    if (database === "postgres") {
      assert.ok((await value("payg_db_pool_connections", { state: "total" })) >= 1, "the pool has served the scrape's query");
      assert.equal(await value("payg_db_pool_waiting_queries"), 0);
    }
    for (const name of families.keys()) assert.match(name, /^payg_/);
    // Nothing looks callback names up between scrapes here, and no lookup has timed out.
    assert.equal(await value("payg_dns_lookups_running"), 0);
    assert.equal(await value("payg_dns_lookups_queued"), 0);
    assert.equal(await value("payg_dns_lookup_timeouts_total"), 0);
  });

  it("times each request under its route template, never its raw path", async () => {
    const order = await createOrder(stack);
    const labels = { method: "GET", route: "/v1/orders/:id", status: "200" };
    const before = await value("payg_http_request_duration_seconds_count", labels);
    assert.equal((await stack.api("GET", `/v1/orders/${order.id}`)).status, 200);
    assert.equal((await stack.api("GET", `/v1/orders/${order.id}`)).status, 200);
    assert.equal(await value("payg_http_request_duration_seconds_count", labels), before + 2);

    // Answered by a middleware (no credential): counted under the route it guards.
    const guarded = { method: "GET", route: "/v1/api-keys", status: "401" };
    const before401 = await value("payg_http_request_duration_seconds_count", guarded);
    assert.equal((await stack.api("GET", "/v1/api-keys")).status, 401);
    assert.equal(await value("payg_http_request_duration_seconds_count", guarded), before401 + 1);

    // No route: one series whatever the path; a made-up method is "other".
    const unmatched = { method: "GET", route: "unmatched", status: "404" };
    const beforeUnmatched = await value("payg_http_request_duration_seconds_count", unmatched);
    for (const p of ["/v1/no-such-route-1", "/v1/no-such-route-2", "/nothing/here"]) assert.equal((await stack.api("GET", p)).status, 404);
    assert.equal(await value("payg_http_request_duration_seconds_count", unmatched), beforeUnmatched + 3);
    // A method of its own would be a series of its own: any method outside the usual ones is "other".
    await stack.api("PROPFIND", "/v1/health");

    const { samples } = await scrape();
    const routes = new Set(samples.filter((s) => s.name === "payg_http_request_duration_seconds_count").map((s) => s.labels.route));
    const methods = new Set(samples.filter((s) => s.name === "payg_http_request_duration_seconds_count").map((s) => s.labels.method));
    assert.ok(routes.has("/v1/orders/:id") && routes.has("/metrics") && routes.has("/v1/health"));
    assert.ok(![...routes].some((r) => r.includes(order.id) || r.includes("no-such-route")), [...routes].join(", "));
    assert.ok(methods.has("other") && !methods.has("PROPFIND"), [...methods].join(", "));
  });

  it("counts webhook attempts by outcome; a failing endpoint leaves a pending delivery", async () => {
    const token = await login(stack);
    const okSub = await subscribe(stack, token, receiver, "/ok", ["test.ping"]);
    const failing = await subscribe(stack, token, receiver, "/failing", ["test.ping"]);
    receiver.respond("/failing", () => 500);
    const succeeded = await value("payg_webhook_delivery_attempts_total", { outcome: "succeeded" });
    const retry = await value("payg_webhook_delivery_attempts_total", { outcome: "retry" });

    await sendTest(stack, token, okSub.id);
    await waitForValue(
      "payg_webhook_delivery_attempts_total",
      { outcome: "succeeded" },
      (v) => v === succeeded + 1,
      "the delivery to be counted",
    );
    await sendTest(stack, token, failing.id);
    await waitForValue(
      "payg_webhook_delivery_attempts_total",
      { outcome: "retry" },
      (v) => v === retry + 1,
      "the failed attempt to be counted",
    );
    // Its retry is a minute away: the delivery is pending, for a measurable time.
    assert.ok((await waitForValue("payg_webhook_deliveries_pending", {}, (v) => v >= 1, "a pending delivery")) >= 1);
    await waitForValue("payg_webhook_oldest_pending_age_seconds", {}, (v) => v > 0, "the pending delivery's age");
    assert.equal(await value("payg_webhook_overdue_seconds"), 0, "nothing is due: the retry is scheduled");
    assert.equal(
      await value("payg_webhook_delivery_attempts_total", { outcome: "succeeded" }),
      succeeded + 1,
      "the failure is not a success",
    );
  });

  it("a relayed payment and a cash payment move the transaction sender's metrics and the hot wallet's balances", async () => {
    const mined = (kind: string) => value("payg_tx_finished_total", { kind, status: "mined" });
    const [permitsBefore, cashBefore] = [await mined("pay_with_permit"), await mined("pay_cash")];
    const gasBefore = await value("payg_hot_wallet_gas_balance_ether");
    const { samples } = await scrape();
    const float = samples.find((s) => s.name === "payg_agent_float_balance");
    assert.ok(float && float.labels.token && float.value > 0, "the float is reported by token");
    assert.ok(gasBefore > 0);

    const permitOrder = await createOrder(stack, "kiosk-nbo-001", "30m");
    assert.equal((await pay(stack, permitOrder, "relayed-permit")).status, 202);
    const cashOrder = await createOrder(stack, "kiosk-nbo-002", "30m");
    assert.equal((await pay(stack, cashOrder, "cash")).status, 202);
    await waitForOrder(stack, permitOrder.id, (o) => o.status === "success");
    await waitForOrder(stack, cashOrder.id, (o) => o.status === "success");

    assert.equal(await mined("pay_with_permit"), permitsBefore + 1);
    assert.equal(await mined("pay_cash"), cashBefore + 1);
    await waitForValue("payg_hot_wallet_gas_balance_ether", {}, (v) => v < gasBefore, "the gas paid to show in the balance");
    // The cash order's amount, in whole tokens, left the float.
    const o = cashOrder.paymentDetails.order;
    const amount = Number(o.amount) / 10 ** cashOrder.paymentDetails.tokenDecimals;
    const floatAfter = await waitForValue(
      "payg_agent_float_balance",
      float.labels,
      (v) => v < float.value,
      "the cash payment to leave the float",
    );
    assert.ok(Math.abs(float.value - floatAfter - amount) < 1e-6, `${float.value} - ${floatAfter} = ${amount}`);
    // Nothing left in flight; the payment sync caught up with the indexer.
    assert.equal(await value("payg_tx_pending", { status: "queued" }), 0);
    assert.equal(await value("payg_tx_pending", { status: "sent" }), 0);
    assert.equal(await value("payg_tx_oldest_pending_age_seconds"), 0);
    await waitForValue("payg_payment_sync_lag_blocks", {}, (v) => v === 0, "the payment sync to be caught up");
    assert.equal(await value("payg_payment_sync_lag_seconds"), 0);
    assert.ok((await value("payg_indexer_lag_blocks")) >= 0);
    assert.equal(await value("payg_collector_up", { collector: "indexer" }), 1);
  });

  it(
    "a transaction left unmined: pending as sent, its age grows, it is broadcast again; mined once blocks come",
    { timeout: 120_000 },
    async () => {
      const rebroadcasts = await value("payg_tx_rebroadcasts_total");
      const order = await createOrder(stack, "kiosk-nbo-001", "30m");
      await stack.chain.rpc("evm_setAutomine", [false]);
      try {
        assert.equal((await pay(stack, order, "relayed-permit")).status, 202);
        await waitForValue("payg_tx_pending", { status: "sent" }, (v) => v === 1, "the transaction sent, not mined");
        await waitForValue("payg_tx_oldest_pending_age_seconds", {}, (v) => v >= 1, "its age to grow");
        // The sender broadcasts the same signed transaction again after 12 s without a receipt.
        await waitForValue("payg_tx_rebroadcasts_total", {}, (v) => v >= rebroadcasts + 1, "a broadcast again", 60_000);
      } finally {
        await stack.chain.rpc("evm_setAutomine", [true]);
        await stack.chain.rpc("evm_mine");
      }
      await waitForOrder(stack, order.id, (o) => o.status === "success", 30_000);
      await waitForValue("payg_tx_pending", { status: "sent" }, (v) => v === 0, "nothing in flight");
    },
  );

  it(
    "the payment sync's lag grows while it cannot write its database, and returns to 0; a scrape still answers",
    { skip: database !== "postgres" && "the database proxy needs PostgreSQL", timeout: 120_000 },
    async () => {
      const order = await createOrder(stack, "kiosk-nbo-002", "30m");
      await stack.databaseProxy!.refuse();
      try {
        // Paid from a wallet, straight on the chain: the indexer sees it and announces it to the payment sync.
        await pay(stack, order, "wallet-permit");
        await waitForValue("payg_payment_sync_lag_blocks", {}, (v) => v >= 1, "the payment sync behind by a block");
        await waitForValue("payg_payment_sync_lag_seconds", {}, (v) => v >= 1, "the lag in seconds to grow");
        await waitForValue("payg_collector_up", { collector: "database" }, (v) => v === 0, "the database source down");
        assert.ok(Number.isNaN(await value("payg_webhook_deliveries_pending")), "a gauge that cannot be read is NaN");
      } finally {
        await stack.databaseProxy!.accept();
      }
      await waitForOrder(stack, order.id, (o) => o.status === "success", 60_000);
      await waitForValue("payg_payment_sync_lag_seconds", {}, (v) => v === 0, "the payment sync caught up", 60_000);
      assert.equal(await value("payg_payment_sync_lag_blocks"), 0);
      await waitForValue("payg_collector_up", { collector: "database" }, (v) => v === 1, "the database source back");
    },
  );

  it("counts telemetry readings accepted and rejected, and batches by answer", async () => {
    const token = await accessToken(stack);
    const m = meter("mtr-kibera-001", { sequence: 4320, cumulative: 18_544_000, epoch: 1 });
    const accepted = await value("payg_telemetry_readings_total", { outcome: "accepted" });
    const rejected = await value("payg_telemetry_readings_total", { outcome: "rejected" });
    const ok = await value("payg_telemetry_batches_total", { status: "200" });
    const [first, regressed, third] = m.readings(3);
    regressed.energy_wh_cumulative = first.energy_wh_cumulative - 1;
    const body = JSON.stringify({ device_id: m.deviceId, readings: [first, regressed, third] });
    const response = await postBatch(stack, token, body, { "idempotency-key": "metrics-batch-1" });
    assert.equal(response.status, 200, response.text);
    assert.equal(response.body.rejected, 1);
    assert.equal(await value("payg_telemetry_readings_total", { outcome: "accepted" }), accepted + 2);
    assert.equal(await value("payg_telemetry_readings_total", { outcome: "rejected" }), rejected + 1);
    assert.equal(await value("payg_telemetry_batches_total", { status: "200" }), ok + 1);

    // A replay is answered from the idempotency store: nothing is counted again.
    const replay = await postBatch(stack, token, body, { "idempotency-key": "metrics-batch-1" });
    assert.equal(replay.headers.get("idempotent-replayed"), "true");
    assert.equal(await value("payg_telemetry_readings_total", { outcome: "accepted" }), accepted + 2);

    const notFound = await value("payg_telemetry_batches_total", { status: "404" });
    const unknown = await postBatch(stack, token, { device_id: "mtr-nowhere-001", readings: m.readings(1) });
    assert.equal(unknown.status, 404);
    assert.equal(await value("payg_telemetry_batches_total", { status: "404" }), notFound + 1);
    // The attested batch is anchored: the backlog is empty again and the anchor transaction was mined.
    await waitForValue("payg_tx_finished_total", { kind: "anchor", status: "mined" }, (v) => v >= 1, "the batch to be anchored");
    await waitForValue("payg_anchoring_backlog_batches", {}, (v) => v === 0, "an empty anchoring backlog");
  });

  it("readiness: 200 with every check ok", async () => {
    const ready = await waitFor("every check ok", async () => {
      const r = await stack.api("GET", "/v1/health/ready");
      return r.status === 200 && r.body.status === "ready" ? r : undefined;
    });
    for (const name of ["database", "rpc", "indexer", "deviceCloud"]) {
      assert.equal(ready.body.checks[name].state, "ok", `${name}: ${JSON.stringify(ready.body.checks[name])}`);
      assert.ok(Number.isInteger(ready.body.checks[name].latencyMs));
    }
    assert.ok(ready.body.checks.rpc.blockNumber > 0);
    assert.ok(ready.body.checks.indexer.lagBlocks >= 0);
    const live = await stack.api("GET", "/v1/health");
    assert.deepEqual(Object.keys(live.body).sort(), ["status", "version"], "liveness is unchanged");
  });

  it("with the chain cut off: readiness 503, /metrics still answers, anchoring waits; both recover", async () => {
    const token = await accessToken(stack);
    const m = meter("mtr-kibera-001", { sequence: 4400, cumulative: 18_700_000, epoch: 1 });
    await stack.chainProxy!.refuse();
    try {
      const notReady = await waitFor("readiness 503", async () => {
        const r = await stack.api("GET", "/v1/health/ready");
        return r.status === 503 ? r : undefined;
      });
      assert.equal(notReady.body.status, "not_ready");
      assert.equal(notReady.body.checks.rpc.state, "down");
      assert.equal(notReady.body.checks.database.state, "ok");
      assert.equal(notReady.body.checks.deviceCloud.state, "ok");
      assert.doesNotMatch(JSON.stringify(notReady.body), /127\.0\.0\.1|ECONNREFUSED|HTTP request failed/, "no address or raw error");

      // An attested batch cannot be anchored meanwhile: the backlog and the queued transaction show it.
      const response = await postBatch(stack, token, m.batch(2));
      assert.equal(response.status, 200, response.text);
      await waitForValue("payg_anchoring_backlog_batches", {}, (v) => v >= 1, "the batch in the backlog");
      await waitForValue("payg_tx_pending", { status: "queued" }, (v) => v >= 1, "the anchor transaction queued");
      await waitForValue("payg_tx_oldest_pending_age_seconds", {}, (v) => v > 0, "its age");
      // The chain's gauges cannot be read: NaN and collector_up 0, and the scrape still succeeds.
      await waitForValue("payg_collector_up", { collector: "hot_wallet" }, (v) => v === 0, "hot_wallet down");
      assert.ok(Number.isNaN(await value("payg_hot_wallet_gas_balance_ether")));
      assert.equal(await value("payg_collector_up", { collector: "database" }), 1);
    } finally {
      await stack.chainProxy!.accept();
    }
    await waitFor(
      "readiness 200 again",
      async () => ((await stack.api("GET", "/v1/health/ready")).status === 200 ? true : undefined),
      60_000,
    );
    await waitForValue("payg_anchoring_backlog_batches", {}, (v) => v === 0, "the backlog drained", 60_000);
    await waitForValue("payg_collector_up", { collector: "hot_wallet" }, (v) => v === 1, "hot_wallet back");
  });

  it("the example alert rules read only metrics /metrics exposes", async () => {
    const rules = parse(await readFile(path.join(repoRoot, "ops", "prometheus-alerts.yml"), "utf8")) as {
      groups: Array<{ name: string; rules: Array<{ alert: string; expr: string; for?: string; labels: { severity: string } }> }>;
    };
    const { families } = await scrape();
    const exposed = exposedNames(families);
    // Written by Prometheus itself, not by the relayer.
    exposed.add("up");
    // PGlite has no connection pool: its gauges exist on PostgreSQL only.
    if (database === "pglite") for (const n of ["payg_db_pool_connections", "payg_db_pool_waiting_queries"]) exposed.add(n);
    const alerts = rules.groups.flatMap((g) => g.rules);
    assert.ok(alerts.length >= 5);
    const covered = new Set<string>();
    for (const rule of alerts) {
      assert.match(rule.alert, /^[A-Z][A-Za-z]+$/);
      assert.ok(["critical", "warning"].includes(rule.labels.severity), rule.alert);
      const names = metricNamesIn(rule.expr);
      assert.ok(names.length > 0, `${rule.alert} reads a metric`);
      for (const name of names) {
        assert.ok(exposed.has(name), `${rule.alert}: ${name} is not exposed by /metrics`);
        covered.add(name);
      }
    }
    for (const name of [
      "up",
      "payg_webhook_overdue_seconds",
      "payg_tx_oldest_pending_age_seconds",
      "payg_hot_wallet_gas_balance_ether",
      "payg_payment_sync_lag_seconds",
    ]) {
      assert.ok(covered.has(name), `an alert reads ${name}`);
    }
    assert.deepEqual(
      metricNamesIn(
        'sum by (kind) (increase(payg_tx_finished_total{status=~"failed|x"}[30m])) > 3 and on() up == 0 or max without (a) (b_c) > 1e3',
      ),
      ["payg_tx_finished_total", "up", "b_c"],
      "the reader of metric names",
    );
  });

  it("/metrics: refused (404) to a request that does not look local; with METRICS_TOKEN only that token opens it", async () => {
    for (const header of ["x-forwarded-for", "forwarded", "x-real-ip"]) {
      const proxied = await stack.api("GET", "/metrics", { headers: { [header]: "203.0.113.9" } });
      assert.equal(proxied.status, 404, header);
      assert.equal(proxied.body.error.code, "not_found");
    }
    const secret = "metrics-token-0123456789abcdef";
    await stack.restartRelayer({ env: { METRICS_TOKEN: secret } });
    try {
      assert.equal((await stack.api("GET", "/metrics")).status, 401, "loopback is not enough once a token is set");
      const wrong = await stack.api("GET", "/metrics", { token: `${secret}x` });
      assert.equal(wrong.status, 401);
      assert.equal(wrong.body.error.code, "unauthorized");
      assert.match(wrong.headers.get("www-authenticate") ?? "", /^Bearer/);
      assert.equal((await stack.api("GET", "/metrics", { token: secret.slice(0, -1) })).status, 401);
      assert.equal((await stack.api("GET", "/metrics", { headers: { authorization: secret } })).status, 401, "Bearer is required");
      const ok = await stack.api("GET", "/metrics", { token: secret, headers: { "x-forwarded-for": "203.0.113.9" } });
      assert.equal(ok.status, 200, "the token opens it from anywhere");
      assert.match(ok.text, /^# HELP payg_/m);
    } finally {
      await stack.restartRelayer();
    }
  });
});
