// The portal's pages, as hono/html templates. Data comes from the /v1 JSON routes (portal/index.ts).
import { html } from "hono/html";
import { EVENT_CATALOGUE, SUBSCRIBABLE_TYPES } from "../webhooks/catalogue.ts";
import { barChart } from "./chart.ts";
import { badge, compact, csrfField, shortHex, shortId, tokenAmount, usd, when } from "./layout.ts";
import type { RevenueOverview } from "./revenue-api.ts";

type Html = ReturnType<typeof html>;

export type ApiKeyView = {
  id: string;
  name: string;
  role: "developer" | "agent";
  prefix: string;
  last4: string;
  createdAt: string;
  lastUsedAt: string | null;
  revokedAt: string | null;
};

export type SubscriptionView = {
  id: string;
  url: string;
  eventTypes: string[];
  description: string | null;
  status: "active" | "disabled";
  disabledReason: string | null;
  disabledAt: string | null;
  secretHint: string;
  deliveries: { pending: number; succeeded: number; failed: number; lastActivityAt: string | null };
  createdAt: string;
};

export type DeliveryView = {
  id: string;
  eventId: string;
  eventType: string;
  status: "pending" | "succeeded" | "failed";
  attempts: number;
  attemptLimit: number;
  nextAttemptAt: string | null;
  lastStatusCode: number | null;
  lastError: string | null;
  createdAt: string;
  completedAt: string | null;
  attemptLog: Array<{
    attempt: number;
    startedAt: string;
    finishedAt: string | null;
    durationMs: number | null;
    statusCode: number | null;
    error: string | null;
    responseExcerpt: string | null;
  }>;
};

export function loginPage(opts: { csrf: string; email?: string; error?: string }) {
  return html`<section class="auth-card card">
  <h1>Sign in</h1>
  <p class="muted">Manage API keys, webhooks and revenue for your devices.</p>
  ${opts.error ? html`<div class="notice notice-error" role="alert">${opts.error}</div>` : ""}
  <form method="post" action="/portal/login" class="stack">
    ${csrfField(opts.csrf)}
    <label>Email<input type="email" name="email" autocomplete="username" required value="${opts.email ?? ""}" autofocus></label>
    <label>Password<input type="password" name="password" autocomplete="current-password" required></label>
    <button class="btn btn-primary btn-block" type="submit">Sign in</button>
  </form>
</section>`;
}

function secretPanel(opts: { id: string; title: string; value: string; text: Html | string }) {
  return html`<section class="card card-highlight" aria-live="polite">
  <h2>${opts.title}</h2>
  <p>${opts.text}</p>
  <div class="secret-row">
    <input id="${opts.id}" class="mono secret" readonly value="${opts.value}" aria-label="${opts.title}">
    <button class="btn btn-primary" type="button" data-copy="#${opts.id}">Copy</button>
  </div>
</section>`;
}

export function keysPage(opts: { csrf: string; keys: ApiKeyView[]; created?: ApiKeyView & { key: string }; error?: string }) {
  const active = opts.keys.filter((k) => !k.revokedAt).length;
  return html`<div class="page-head">
  <div><h1>API keys</h1><p class="muted">Server-to-server calls send <code>Authorization: Bearer &lt;key&gt;</code>. Keys are shown once, when created.</p></div>
</div>
${
  opts.created
    ? secretPanel({
        id: "new-key",
        title: `New key “${opts.created.name}”`,
        value: opts.created.key,
        text: "Copy the key now and keep it in your secrets manager: this is the only time it is shown.",
      })
    : ""
}
<section class="card">
  <h2>Create a key</h2>
  ${opts.error ? html`<div class="notice notice-error" role="alert">${opts.error}</div>` : ""}
  <form method="post" action="/portal/keys" class="form-row">
    ${csrfField(opts.csrf)}
    <label class="grow">Name<input name="name" required maxlength="80" placeholder="e.g. production backend"></label>
    <label>Role<select name="role">
      <option value="developer">developer: read devices, revenue, earnings</option>
      <option value="agent">agent: confirm cash payments, read devices</option>
    </select></label>
    <button class="btn btn-primary" type="submit">Create key</button>
  </form>
</section>
<section class="card">
  <div class="card-head"><h2>Your keys</h2><span class="muted">${active} active · ${opts.keys.length} total</span></div>
  ${
    opts.keys.length === 0
      ? html`<p class="empty">No keys yet. Create one above.</p>`
      : html`<div class="table-wrap"><table class="table" id="keys-table">
    <thead><tr><th>Name</th><th>Key</th><th>Role</th><th>Created</th><th>Last used</th><th>Status</th><th></th></tr></thead>
    <tbody>${opts.keys.map(
      (k) => html`<tr data-key-id="${k.id}">
      <td><strong>${k.name}</strong></td>
      <td class="mono">${k.prefix}<span class="dim">••••</span>${k.last4}</td>
      <td>${badge(k.role)}</td>
      <td class="nowrap">${when(k.createdAt)}</td>
      <td class="nowrap">${k.lastUsedAt ? when(k.lastUsedAt) : html`<span class="dim">never</span>`}</td>
      <td>${k.revokedAt ? html`${badge("revoked")}<div class="dim small">${when(k.revokedAt)}</div>` : badge("active")}</td>
      <td class="actions">${
        k.revokedAt
          ? ""
          : html`<form method="post" action="/portal/keys/${k.id}/revoke" data-confirm="Revoke “${k.name}”? Requests with this key fail from now on.">${csrfField(opts.csrf)}<button class="btn btn-danger btn-sm" type="submit">Revoke</button></form>`
      }</td>
    </tr>`,
    )}</tbody>
  </table></div>`
  }
</section>`;
}

const FAMILY_LABELS: Record<string, string> = {
  payment: "Payments",
  revenue: "Revenue",
  split: "Splits",
  device: "Devices",
  ticket: "Tickets",
  test: "Tests",
};

export function eventCheckboxes(selected: string[]) {
  const all = selected.includes("*");
  const families = new Map<string, Array<(typeof SUBSCRIBABLE_TYPES)[number]>>();
  for (const type of SUBSCRIBABLE_TYPES) {
    const family = type.split(".")[0];
    families.set(family, [...(families.get(family) ?? []), type]);
  }
  return html`<fieldset class="events">
  <legend>Events</legend>
  <label class="check check-all"><input type="checkbox" name="events" value="*"${all ? html` checked` : ""} data-all-events> <span><strong>All events</strong> <span class="dim">(*, including types added later)</span></span></label>
  <div class="event-groups">${[...families.entries()].map(
    ([family, types]) => html`<div class="event-group"><h4>${FAMILY_LABELS[family] ?? family}</h4>${types.map(
      (type) => html`<label class="check" title="${EVENT_CATALOGUE[type].fires}"><input type="checkbox" name="events" value="${type}"${
        selected.includes(type) || selected.includes(`${family}.*`) ? html` checked` : ""
      }> <span><code>${type}</code><span class="dim small">${EVENT_CATALOGUE[type].summary}</span></span></label>`,
    )}</div>`,
  )}</div>
</fieldset>`;
}

function eventChips(types: string[]) {
  return html`<span class="chips">${types.map((t) => html`<code class="chip">${t}</code>`)}</span>`;
}

export function webhooksPage(opts: { csrf: string; subscriptions: SubscriptionView[]; error?: string; form?: { url?: string; description?: string; events?: string[] } }) {
  return html`<div class="page-head">
  <div><h1>Webhooks</h1><p class="muted">Events are POSTed to your endpoints, signed with the endpoint's secret (<code>webhook-signature</code>, Standard Webhooks, and <code>x-service-signature</code>). Up to 5 attempts with exponential backoff.</p></div>
</div>
<section class="card">
  <div class="card-head"><h2>Endpoints</h2><span class="muted">${opts.subscriptions.filter((s) => s.status === "active").length} active</span></div>
  ${
    opts.subscriptions.length === 0
      ? html`<p class="empty">No endpoints yet. Add one below, then press <em>Send test</em>.</p>`
      : html`<div class="table-wrap"><table class="table" id="subscriptions-table">
    <thead><tr><th>Endpoint</th><th>Events</th><th>Status</th><th>Deliveries</th><th>Created</th><th></th></tr></thead>
    <tbody>${opts.subscriptions.map(
      (s) => html`<tr>
      <td><a class="mono strong" href="/portal/webhooks/${s.id}">${s.url}</a>${s.description ? html`<div class="dim small">${s.description}</div>` : ""}</td>
      <td>${eventChips(s.eventTypes)}</td>
      <td>${badge(s.status)}</td>
      <td class="nowrap"><span class="stat-ok" title="succeeded">✓ ${s.deliveries.succeeded}</span> <span class="stat-bad" title="failed">✗ ${s.deliveries.failed}</span> <span class="stat-wait" title="pending">⋯ ${s.deliveries.pending}</span></td>
      <td class="nowrap">${when(s.createdAt)}</td>
      <td class="actions"><a class="btn btn-sm" href="/portal/webhooks/${s.id}">Manage</a></td>
    </tr>`,
    )}</tbody>
  </table></div>`
  }
</section>
<section class="card" id="add-endpoint">
  <h2>Add an endpoint</h2>
  ${opts.error ? html`<div class="notice notice-error" role="alert">${opts.error}</div>` : ""}
  <form method="post" action="/portal/webhooks" class="stack">
    ${csrfField(opts.csrf)}
    <label>Endpoint URL<input type="url" name="url" required maxlength="2048" placeholder="https://example.com/webhooks/payg" value="${opts.form?.url ?? ""}">
      <span class="hint">https, on a public host. Private and loopback addresses are refused unless allowlisted by the operator.</span></label>
    <label><span>Description <span class="dim">(optional)</span></span><input name="description" maxlength="200" value="${opts.form?.description ?? ""}"></label>
    ${eventCheckboxes(opts.form?.events ?? ["payment.succeeded", "payment.confirmed"])}
    <div><button class="btn btn-primary" type="submit">Add endpoint</button></div>
  </form>
</section>`;
}

function deliveryRows(csrf: string, subscriptionId: string, deliveries: DeliveryView[], canRedeliver: boolean) {
  return deliveries.map(
    (d) => html`<tbody class="delivery" data-delivery-id="${d.id}" data-event-type="${d.eventType}" data-status="${d.status}" data-attempts="${d.attempts}">
  <tr>
    <td><code>${d.eventType}</code></td>
    <td class="mono small">${d.id}</td>
    <td>${badge(d.status)}</td>
    <td class="num">${d.attempts}/${d.attemptLimit}</td>
    <td class="num">${d.lastStatusCode ?? html`<span class="dim">—</span>`}</td>
    <td class="nowrap">${compact(d.createdAt)}</td>
    <td class="nowrap">${d.status === "pending" ? compact(d.nextAttemptAt) : compact(d.completedAt)}</td>
    <td class="actions">${
      canRedeliver && d.status !== "pending"
        ? html`<form method="post" action="/portal/webhooks/deliveries/${d.id}/redeliver">${csrfField(csrf)}<input type="hidden" name="subscriptionId" value="${subscriptionId}"><button class="btn btn-sm" type="submit">Redeliver</button></form>`
        : ""
    }</td>
  </tr>
  <tr class="attempts-row"><td colspan="8"><details${d.status !== "succeeded" ? html` open` : ""}><summary>${d.attemptLog.length} attempt${d.attemptLog.length === 1 ? "" : "s"}${d.lastError ? html` · <span class="err">${d.lastError}</span>` : ""}</summary>
    ${
      d.attemptLog.length === 0
        ? html`<p class="dim small">No attempt yet.</p>`
        : html`<table class="table table-inner"><thead><tr><th class="num">#</th><th>Started (UTC)</th><th class="num">Duration</th><th>HTTP</th><th>Error / response</th></tr></thead><tbody>${d.attemptLog.map(
            (a) => html`<tr class="attempt">
      <td class="num">${a.attempt}</td>
      <td class="nowrap">${compact(a.startedAt)}</td>
      <td class="num">${a.durationMs === null ? "—" : `${a.durationMs} ms`}</td>
      <td>${a.statusCode === null ? (a.finishedAt ? html`<span class="badge badge-red">no answer</span>` : html`<span class="badge badge-amber">in flight</span>`) : html`<span class="badge ${a.statusCode >= 200 && a.statusCode < 300 ? "badge-green" : "badge-red"}">${a.statusCode}</span>`}</td>
      <td class="mono small wrap">${a.error ?? ""}${a.error && a.responseExcerpt ? " · " : ""}${a.responseExcerpt ?? ""}</td>
    </tr>`,
          )}</tbody></table>`
    }
  </details></td></tr>
</tbody>`,
  );
}

export function subscriptionPage(opts: {
  csrf: string;
  subscription: SubscriptionView;
  deliveries: DeliveryView[];
  nextCursor: string | null;
  secret?: string;
  error?: string;
  form?: { url?: string; description?: string; events?: string[] };
}) {
  const s = opts.subscription;
  const active = s.status === "active";
  return html`<div class="page-head">
  <div>
    <p class="crumbs"><a href="/portal/webhooks">Webhooks</a> /</p>
    <h1 class="mono break">${s.url}</h1>
    <p class="muted">${badge(s.status)} ${s.description ?? ""} ${s.disabledReason ? html`<span class="dim">· ${s.disabledReason} (${when(s.disabledAt)})</span>` : ""}</p>
  </div>
  <div class="head-actions">
    ${
      active
        ? html`<form method="post" action="/portal/webhooks/${s.id}/test">${csrfField(opts.csrf)}<button class="btn btn-primary" type="submit" id="send-test">Send test</button></form>
    <form method="post" action="/portal/webhooks/${s.id}/disable" data-confirm="Disable this endpoint? Pending deliveries will fail and no new events are sent.">${csrfField(opts.csrf)}<button class="btn btn-danger" type="submit">Disable</button></form>`
        : html`<form method="post" action="/portal/webhooks/${s.id}/enable">${csrfField(opts.csrf)}<button class="btn btn-primary" type="submit">Enable</button></form>`
    }
  </div>
</div>
${
  opts.secret
    ? secretPanel({
        id: "new-secret",
        title: "Signing secret",
        value: opts.secret,
        text: html`Copy it now: it is shown only this once. Verify every delivery with it (see <code>sdk/webhooks.ts</code> <code>verifyWebhook</code>).`,
      })
    : ""
}
<div class="grid-2">
  <section class="card">
    <h2>Endpoint</h2>
    <dl class="facts">
      <dt>Id</dt><dd class="mono">${s.id}</dd>
      <dt>Signing secret</dt><dd class="mono">${s.secretHint}</dd>
      <dt>Events</dt><dd>${eventChips(s.eventTypes)}</dd>
      <dt>Created</dt><dd>${when(s.createdAt)}</dd>
      <dt>Deliveries</dt><dd><span class="stat-ok">✓ ${s.deliveries.succeeded} succeeded</span> · <span class="stat-bad">✗ ${s.deliveries.failed} failed</span> · <span class="stat-wait">⋯ ${s.deliveries.pending} pending</span></dd>
    </dl>
  </section>
  <section class="card">
    <details${opts.error ? html` open` : ""}>
      <summary><h2 class="inline">Edit endpoint</h2></summary>
      ${opts.error ? html`<div class="notice notice-error" role="alert">${opts.error}</div>` : ""}
      <form method="post" action="/portal/webhooks/${s.id}/update" class="stack">
        ${csrfField(opts.csrf)}
        <label>Endpoint URL<input type="url" name="url" required maxlength="2048" value="${opts.form?.url ?? s.url}"></label>
        <label>Description<input name="description" maxlength="200" value="${opts.form?.description ?? s.description ?? ""}"></label>
        ${eventCheckboxes(opts.form?.events ?? s.eventTypes)}
        <div><button class="btn btn-primary" type="submit">Save changes</button></div>
      </form>
    </details>
  </section>
</div>
<section class="card">
  <div class="card-head"><h2>Delivery log</h2><a class="btn btn-sm btn-ghost" href="/portal/webhooks/${s.id}">Refresh</a></div>
  ${
    opts.deliveries.length === 0
      ? html`<p class="empty">No deliveries yet. ${active ? html`Press <em>Send test</em> to send a <code>test.ping</code>.` : ""}</p>`
      : html`<div class="table-wrap"><table class="table" id="deliveries-table">
    <thead><tr><th>Event</th><th>Delivery id</th><th>Status</th><th class="num">Attempts</th><th class="num">HTTP</th><th>Created (UTC)</th><th>Next / done (UTC)</th><th></th></tr></thead>
    ${deliveryRows(opts.csrf, s.id, opts.deliveries, active)}
  </table></div>
  ${opts.nextCursor ? html`<p class="pager"><a class="btn btn-sm" href="/portal/webhooks/${s.id}?cursor=${opts.nextCursor}">Older deliveries →</a></p>` : ""}`
  }
</section>`;
}

const LEG_LABELS = { assetOwner: "Asset owner 50%", operator: "Operator 40%", protocol: "Protocol 10%" } as const;

export function revenuePage(opts: { overview: RevenueOverview; decimals: Map<string, number> }) {
  const o = opts.overview;
  const hourly = o.bucket === "hour";
  const labelOf = (start: string) => {
    const d = new Date(start);
    return hourly
      ? `${String(d.getUTCHours()).padStart(2, "0")}:00`
      : d.toLocaleDateString("en-US", { month: "short", day: "numeric", timeZone: "UTC" });
  };
  const bars = o.series.map((s) => ({
    label: labelOf(s.start),
    value: s.grossUsd,
    tooltip: `${hourly ? when(s.start).slice(0, 16) : labelOf(s.start)}: ${usd(s.grossUsd)} from ${s.orders} order${s.orders === 1 ? "" : "s"}`,
  }));
  const average = o.totals.orders > 0 ? o.totals.grossUsd / o.totals.orders : 0;
  const tokenDecimals = (symbol: string) => opts.decimals.get(symbol) ?? 6;
  return html`<div class="page-head">
  <div><h1>Revenue</h1><p class="muted">Paid orders of your devices, split 50/40/10 on-chain at payment time.</p></div>
  <nav class="tabs" aria-label="Period">${(["24h", "7d", "30d"] as const).map(
    (r) => html`<a href="/portal/revenue?range=${r}"${r === o.range ? html` class="active" aria-current="page"` : ""}>${r === "24h" ? "24 hours" : r === "7d" ? "7 days" : "30 days"}</a>`,
  )}</nav>
</div>
${o.indexerAvailable ? "" : html`<div class="notice notice-info">The indexer is not reachable: splits and earnings are not shown right now.</div>`}
<div class="stats">
  <div class="stat card"><span class="stat-label">Revenue</span><span class="stat-value" id="revenue-total">${usd(o.totals.grossUsd)}</span><span class="dim small">${when(o.from).slice(0, 10)} – ${when(o.to).slice(0, 10)}</span></div>
  <div class="stat card"><span class="stat-label">Paid orders</span><span class="stat-value" id="revenue-orders">${o.totals.orders}</span><span class="dim small">on every rail</span></div>
  <div class="stat card"><span class="stat-label">Average order</span><span class="stat-value">${usd(average)}</span><span class="dim small">gross, before the split</span></div>
</div>
<section class="card">
  <div class="card-head"><h2>Revenue per ${hourly ? "hour" : "day"}</h2><span class="muted">USD, gross</span></div>
  ${barChart(bars, {
    title: `Revenue per ${hourly ? "hour" : "day"}`,
    formatValue: (v) => (v === 0 ? "$0" : usd(v)),
    labelEvery: hourly ? 3 : o.series.length > 14 ? 5 : 1,
    emptyText: "No paid orders in this period",
  })}
</section>
<div class="grid-2">
  <section class="card">
    <h2>Earnings</h2>
    ${
      o.participants.length === 0
        ? html`<p class="empty">No participants configured.</p>`
        : html`<div class="table-wrap"><table class="table" id="earnings-table"><thead><tr><th>Participant</th><th class="num">Credited</th><th class="num">Withdrawn</th><th class="num">Claimable</th></tr></thead><tbody>${o.participants.map(
            (p) => html`<tr><td><strong>${p.name}</strong><div class="mono dim small">${shortHex(p.address)}</div></td>${
              p.earnings.length === 0
                ? html`<td class="num dim" colspan="3">nothing yet</td>`
                : html`<td class="num">${p.earnings.map((e) => html`<div>${tokenAmount(e.credited, e.token.decimals, e.token.symbol)}</div>`)}</td><td class="num">${p.earnings.map((e) => html`<div>${tokenAmount(e.withdrawn, e.token.decimals, e.token.symbol)}</div>`)}</td><td class="num strong">${p.earnings.map((e) => html`<div>${tokenAmount(e.claimable, e.token.decimals, e.token.symbol)}</div>`)}</td>`
            }</tr>`,
          )}</tbody></table></div>`
    }
  </section>
  <section class="card">
    <h2>Top devices</h2>
    ${
      o.byDevice.length === 0
        ? html`<p class="empty">No paid orders in this period.</p>`
        : html`<table class="table"><thead><tr><th>Device</th><th class="num">Orders</th><th class="num">Revenue</th></tr></thead><tbody>${o.byDevice.map(
            (d) => html`<tr><td class="mono">${d.deviceId}</td><td class="num">${d.orders}</td><td class="num">${usd(d.grossUsd)}</td></tr>`,
          )}</tbody></table>`
    }
  </section>
</div>
<section class="card">
  <div class="card-head"><h2>Latest splits</h2><span class="muted">50% asset owner · 40% operator · 10% protocol</span></div>
  ${
    o.recentSplits.length === 0
      ? html`<p class="empty">No paid orders yet.</p>`
      : html`<div class="table-wrap"><table class="table" id="splits-table"><thead><tr><th>Order</th><th>Device</th><th>Paid (UTC)</th><th class="num">Amount</th>${(["assetOwner", "operator", "protocol"] as const).map(
          (leg) => html`<th class="num">${LEG_LABELS[leg]}</th>`,
        )}<th>Transaction</th></tr></thead><tbody>${o.recentSplits.map(
          (s) => html`<tr>
        <td class="mono small nowrap" title="${s.orderId}">${shortId(s.orderId)}</td>
        <td class="mono small nowrap">${s.deviceId}</td>
        <td class="nowrap">${compact(s.paidAt)}</td>
        <td class="num strong">${usd(s.amountUsd)}</td>
        ${
          s.legs.length === 3
            ? s.legs.map((l) => html`<td class="num">${tokenAmount(l.amount, tokenDecimals(s.token), s.token)}</td>`)
            : html`<td class="num dim" colspan="3">not indexed yet</td>`
        }
        <td class="mono small" title="${s.transactionHash}">${shortHex(s.transactionHash)}</td>
      </tr>`,
        )}</tbody></table></div>`
  }
</section>`;
}
