// The portal's page frame and small view helpers (hono/html templates: every interpolated value is
// escaped unless it is itself a template).
import { html } from "hono/html";

type Html = ReturnType<typeof html>;

export type Notice = { kind: "success" | "error" | "info"; text: string };
export type PageUser = { email: string; name: string; tenant: string };

export const NAV = [
  { id: "keys", href: "/portal/keys", label: "API keys" },
  { id: "webhooks", href: "/portal/webhooks", label: "Webhooks" },
  { id: "revenue", href: "/portal/revenue", label: "Revenue" },
  { id: "devices", href: "/portal/devices", label: "Assets" },
] as const;

export function layout(opts: {
  title: string;
  active?: string;
  user?: PageUser;
  csrf: string;
  notice?: Notice;
  assetVersion: (file: string) => string;
  body: Html | Html[] | string;
  autoRefresh?: boolean;
}) {
  const v = opts.assetVersion;
  return html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${opts.title} · PAYG developer portal</title>
<link rel="stylesheet" href="/portal/assets/portal.css?v=${v("portal.css")}">
<link rel="icon" href="/portal/assets/logo.svg?v=${v("logo.svg")}" type="image/svg+xml">
<script src="/portal/assets/portal.js?v=${v("portal.js")}" defer></script>
</head>
<body${opts.autoRefresh ? html` data-autorefresh="1"` : ""}>
<header class="topbar">
  <div class="topbar-inner">
    <a class="brand" href="/portal"><img src="/portal/assets/logo.svg?v=${v("logo.svg")}" alt="" width="28" height="28"><span>PAYG Energy</span><small>Developer portal</small></a>
    ${
      opts.user
        ? html`<nav class="nav">${NAV.map(
            (item) =>
              html`<a href="${item.href}"${item.id === opts.active ? html` class="active" aria-current="page"` : ""}>${item.label}</a>`,
          )}<a href="/v1/docs">API reference</a></nav>
    <div class="account">
      <span class="who" title="${opts.user.email}"><strong>${opts.user.name}</strong><span>${opts.user.tenant}</span></span>
      <form method="post" action="/portal/logout"><input type="hidden" name="_csrf" value="${opts.csrf}"><button class="btn btn-ghost btn-sm" type="submit">Sign out</button></form>
    </div>`
        : ""
    }
  </div>
</header>
<main class="container">
${opts.notice ? html`<div class="notice notice-${opts.notice.kind}" role="status">${opts.notice.text}</div>` : ""}
${opts.body}
</main>
<footer class="footer">Device payment and revenue service · <a href="/v1/docs">API reference</a> · <a href="/v1/openapi.json">OpenAPI</a></footer>
</body>
</html>`;
}

const pad = (n: number) => String(n).padStart(2, "0");

/** "2026-01-03 14:05 UTC" (or "—"). */
export function when(value: string | Date | null | undefined): string {
  if (!value) return "—";
  const d = typeof value === "string" ? new Date(value) : value;
  return `${d.getUTCFullYear()}-${pad(d.getUTCMonth() + 1)}-${pad(d.getUTCDate())} ${pad(d.getUTCHours())}:${pad(d.getUTCMinutes())}:${pad(d.getUTCSeconds())} UTC`;
}

/** "2026-01-03 14:05:09" (UTC, for tables whose header says so). */
export function compact(value: string | Date | null | undefined): string {
  return when(value).replace(" UTC", "");
}

/** ord_01M80VQ9…K4G9FN: a long id, shortened for tables (the full id goes in a title). */
export function shortId(id: string): string {
  const [prefix, rest] = id.split("_");
  return rest && rest.length > 12 ? `${prefix}_${rest.slice(0, 4)}…${rest.slice(-6)}` : id;
}

/** Dollars as the pages show them: "$1,234.50" (down to a millionth of a dollar for amounts under a cent). */
export function formatUsd(amount: number): string {
  return `$${amount.toLocaleString("en-US", { minimumFractionDigits: 2, maximumFractionDigits: amount !== 0 && Math.abs(amount) < 0.01 ? 6 : 2 })}`;
}

/** Base units of a token to a decimal string with its symbol. */
export function tokenAmount(units: string, decimals: number | null, symbol: string | null): string {
  if (decimals === null) return `${units} units`;
  const value = BigInt(units);
  const scale = 10n ** BigInt(decimals);
  const whole = value / scale;
  const digits = (value % scale).toString().padStart(decimals, "0");
  let end = digits.length;
  while (end > 0 && digits[end - 1] === "0") end--;
  const fraction = digits.slice(0, end).padEnd(2, "0");
  return `${whole.toLocaleString("en-US")}.${fraction}${symbol ? ` ${symbol}` : ""}`;
}

export function shortHex(value: string | null | undefined, keep = 6): string {
  if (!value) return "—";
  return value.length > keep * 2 + 3 ? `${value.slice(0, keep + 2)}…${value.slice(-keep + 2)}` : value;
}

export function badge(status: string) {
  const tone: Record<string, string> = {
    active: "green",
    succeeded: "green",
    open: "amber",
    pending: "amber",
    failed: "red",
    mismatch: "red",
    disabled: "grey",
    revoked: "grey",
    developer: "blue",
    agent: "violet",
  };
  return html`<span class="badge badge-${tone[status] ?? "grey"}">${status}</span>`;
}

export function csrfField(token: string) {
  return html`<input type="hidden" name="_csrf" value="${token}">`;
}

/** A value shown once (a new API key, a signing secret), with a Copy button. */
export function secretPanel(opts: { id: string; title: string; value: string; text: Html | string }) {
  return html`<section class="card card-highlight" aria-live="polite">
  <h2>${opts.title}</h2>
  <p>${opts.text}</p>
  <div class="secret-row">
    <input id="${opts.id}" class="mono secret" readonly value="${opts.value}" aria-label="${opts.title}">
    <button class="btn btn-primary" type="button" data-copy="#${opts.id}">Copy</button>
  </div>
</section>`;
}
