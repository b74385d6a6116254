// The webhooks pages: the tenant's endpoints (GET /v1/webhooks/subscriptions) with the form to add one, and
// one endpoint with its settings and delivery log (GET /v1/webhooks/subscriptions/{id} and its deliveries).
import type { z } from "@hono/zod-openapi";
import { html } from "hono/html";
import type { WebhookDelivery } from "../../v1/webhook-deliveries.schemas.ts";
import type { WebhookSubscription } from "../../v1/webhook-subscriptions.schemas.ts";
import { EVENT_CATALOGUE, SUBSCRIBABLE_TYPES } from "../../webhooks/catalogue.ts";
import { badge, compact, csrfField, secretPanel, when } from "../layout.ts";

export type SubscriptionView = z.output<typeof WebhookSubscription>;
export type DeliveryView = z.output<typeof WebhookDelivery>;

const FAMILY_LABELS: Record<string, string> = {
  payment: "Payments",
  revenue: "Revenue",
  split: "Splits",
  device: "Devices",
  ticket: "Tickets",
  test: "Tests",
};

function eventCheckboxes(selected: string[]) {
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
    ([family, types]) =>
      html`<div class="event-group"><h4>${FAMILY_LABELS[family] ?? family}</h4>${types.map(
        (type) =>
          html`<label class="check" title="${EVENT_CATALOGUE[type].fires}"><input type="checkbox" name="events" value="${type}"${
            selected.includes(type) || selected.includes(`${family}.*`) ? html` checked` : ""
          }> <span><code>${type}</code><span class="dim small">${EVENT_CATALOGUE[type].summary}</span></span></label>`,
      )}</div>`,
  )}</div>
</fieldset>`;
}

function eventChips(types: string[]) {
  return html`<span class="chips">${types.map((t) => html`<code class="chip">${t}</code>`)}</span>`;
}

export function webhooksPage(opts: {
  csrf: string;
  subscriptions: SubscriptionView[];
  error?: string;
  form?: { url?: string; description?: string; events?: string[] };
}) {
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
    (
      d,
    ) => html`<tbody class="delivery" data-delivery-id="${d.id}" data-event-type="${d.eventType}" data-status="${d.status}" data-attempts="${d.attempts}">
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
        ? html`<form method="post" action="/portal/deliveries/${d.id}/redeliver">${csrfField(csrf)}<input type="hidden" name="subscriptionId" value="${subscriptionId}"><button class="btn btn-sm" type="submit">Redeliver</button></form>`
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
        text: s.previousSecretHint
          ? html`Copy it now: it is shown only this once. Until ${when(s.previousSecretExpiresAt)} deliveries are signed with it and with the previous secret (<code>x-service-signature</code> with the previous one only): switch your endpoint to it before then.`
          : html`Copy it now: it is shown only this once. Verify every delivery with it (see <code>verifyWebhook</code> of <code>@payg/sdk</code>).`,
      })
    : ""
}
<div class="grid-2">
  <section class="card">
    <h2>Endpoint</h2>
    <dl class="facts">
      <dt>Id</dt><dd class="mono">${s.id}</dd>
      <dt>Signing secret</dt><dd><span class="mono">${s.secretHint}</span>
        <form method="post" action="/portal/webhooks/${s.id}/rotate-secret" class="inline" data-confirm="Issue a new signing secret? The current one keeps signing deliveries (beside the new one) until the grace period ends.">${csrfField(opts.csrf)}<button class="btn btn-sm" type="submit" id="rotate-secret">Rotate</button></form>
        ${s.previousSecretHint ? html`<br><span class="dim">Previous secret <span class="mono">${s.previousSecretHint}</span> also signs until ${when(s.previousSecretExpiresAt)}</span>` : ""}</dd>
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
