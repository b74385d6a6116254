// The revenue page, drawn from GET /v1/revenue/overview: totals, a chart per hour or day, participants'
// earnings, top devices and the latest splits.
import type { z } from "@hono/zod-openapi";
import { html } from "hono/html";
import type { RevenueOverview } from "../../v1/revenue.schemas.ts";
import { barChart } from "../chart.ts";
import { compact, formatUsd, shortHex, shortId, tokenAmount, when } from "../layout.ts";

export type RevenueOverviewView = z.output<typeof RevenueOverview>;

const LEG_LABELS = { assetOwner: "Asset owner 50%", operator: "Operator 40%", protocol: "Protocol 10%" } as const;

export function revenuePage(opts: { overview: RevenueOverviewView; decimals: Map<string, number> }) {
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
    tooltip: `${hourly ? when(s.start).slice(0, 16) : labelOf(s.start)}: ${formatUsd(s.grossUsd)} from ${s.orders} order${s.orders === 1 ? "" : "s"}`,
  }));
  const average = o.totals.orders > 0 ? o.totals.grossUsd / o.totals.orders : 0;
  const tokenDecimals = (symbol: string) => opts.decimals.get(symbol) ?? 6;
  return html`<div class="page-head">
  <div><h1>Revenue</h1><p class="muted">Paid orders of your devices, split 50/40/10 on-chain at payment time.</p></div>
  <nav class="tabs" aria-label="Period">${(["24h", "7d", "30d"] as const).map(
    (r) =>
      html`<a href="/portal/revenue?range=${r}"${r === o.range ? html` class="active" aria-current="page"` : ""}>${r === "24h" ? "24 hours" : r === "7d" ? "7 days" : "30 days"}</a>`,
  )}</nav>
</div>
${o.indexerAvailable ? "" : html`<div class="notice notice-info">The indexer is not reachable: splits and earnings are not shown right now.</div>`}
<div class="stats">
  <div class="stat card"><span class="stat-label">Revenue</span><span class="stat-value" id="revenue-total">${formatUsd(o.totals.grossUsd)}</span><span class="dim small">${when(o.from).slice(0, 10)} – ${when(o.to).slice(0, 10)}</span></div>
  <div class="stat card"><span class="stat-label">Paid orders</span><span class="stat-value" id="revenue-orders">${o.totals.orders}</span><span class="dim small">on every rail</span></div>
  <div class="stat card"><span class="stat-label">Average order</span><span class="stat-value">${formatUsd(average)}</span><span class="dim small">gross, before the split</span></div>
</div>
<section class="card">
  <div class="card-head"><h2>Revenue per ${hourly ? "hour" : "day"}</h2><span class="muted">USD, gross</span></div>
  ${barChart(bars, {
    title: `Revenue per ${hourly ? "hour" : "day"}`,
    formatValue: (v) => (v === 0 ? "$0" : formatUsd(v)),
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
            (p) =>
              html`<tr><td><strong>${p.name}</strong><div class="mono dim small">${shortHex(p.address)}</div></td>${
                p.earnings.length === 0
                  ? html`<td class="num dim" colspan="3">nothing yet</td>`
                  : html`<td class="num">${p.earnings.map((e) => html`<div>${tokenAmount(e.credited, e.tokenDecimals, e.token.symbol)}</div>`)}</td><td class="num">${p.earnings.map((e) => html`<div>${tokenAmount(e.withdrawn, e.tokenDecimals, e.token.symbol)}</div>`)}</td><td class="num strong">${p.earnings.map((e) => html`<div>${tokenAmount(e.claimable, e.tokenDecimals, e.token.symbol)}</div>`)}</td>`
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
            (d) =>
              html`<tr><td class="mono">${d.deviceId}</td><td class="num">${d.orders}</td><td class="num">${formatUsd(d.grossUsd)}</td></tr>`,
          )}</tbody></table>`
    }
  </section>
</div>
<section class="card">
  <div class="card-head"><h2>Latest splits</h2><span class="muted">50% asset owner · 40% operator · 10% protocol</span></div>
  ${
    o.recentSplits.length === 0
      ? html`<p class="empty">No paid orders yet.</p>`
      : html`<div class="table-wrap"><table class="table" id="splits-table"><thead><tr><th>Order</th><th>Device</th><th>Paid (UTC)</th><th class="num">Amount</th>${(
          ["assetOwner", "operator", "protocol"] as const
        ).map((leg) => html`<th class="num">${LEG_LABELS[leg]}</th>`)}<th>Transaction</th></tr></thead><tbody>${o.recentSplits.map(
          (s) => html`<tr>
        <td class="mono small nowrap" title="${s.orderId}">${shortId(s.orderId)}</td>
        <td class="mono small nowrap">${s.deviceId}</td>
        <td class="nowrap">${compact(s.paidAt)}</td>
        <td class="num strong">${formatUsd(s.amountUsd)}</td>
        ${
          s.legs.length === 3
            ? s.legs.map((l) => html`<td class="num">${tokenAmount(l.amount, tokenDecimals(s.token.symbol), s.token.symbol)}</td>`)
            : html`<td class="num dim" colspan="3">not indexed yet</td>`
        }
        <td class="mono small" title="${s.transactionHash}">${shortHex(s.transactionHash)}</td>
      </tr>`,
        )}</tbody></table></div>`
  }
</section>`;
}
