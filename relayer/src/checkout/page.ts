// The checkout page's HTML. The page works on its own for reading (amount, device, expiry, status) and for paying
// by transfer from any wallet (the EIP-681 QR code and the deposit address); paying with a browser wallet needs
// checkout.js.
import { html } from "hono/html";
import type { devices, orders } from "../db/schema.ts";
import { TICKET_CATEGORIES } from "../v1/tickets.schemas.ts";

type OrderRow = typeof orders.$inferSelect;
type DeviceRow = typeof devices.$inferSelect;

function duration(seconds: number): string {
  if (seconds % 86_400 === 0) return `${seconds / 86_400} day${seconds === 86_400 ? "" : "s"}`;
  if (seconds % 3_600 === 0) return `${seconds / 3_600} hour${seconds === 3_600 ? "" : "s"}`;
  if (seconds % 60 === 0) return `${seconds / 60} minutes`;
  return `${seconds} seconds`;
}

function money(micros: number): string {
  return `$${(micros / 1e6).toLocaleString("en-US", { minimumFractionDigits: 2, maximumFractionDigits: 6 })}`;
}

function utc(d: Date): string {
  return `${d.toISOString().slice(0, 16).replace("T", " ")} UTC`;
}

function head(title: string, version: (f: string) => string) {
  return html`<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex">
<title>${title}</title>
<link rel="stylesheet" href="/checkout/assets/checkout.css?v=${version("checkout.css")}">
<link rel="icon" href="/checkout/assets/logo.svg?v=${version("logo.svg")}" type="image/svg+xml">
<script src="/checkout/assets/checkout.js?v=${version("checkout.js")}" defer></script>
</head>`;
}

export function missingPage(opts: { version: (f: string) => string }) {
  return html`<!doctype html>
<html lang="en">
${head("Order not found", opts.version)}
<body>
<main class="shell"><section class="panel">
  <div class="brand"><img src="/checkout/assets/logo.svg?v=${opts.version("logo.svg")}" alt="" width="28" height="28"><span>PAYG Energy</span></div>
  <h1>Order not found</h1>
  <p class="muted">This payment link is not valid. Scan the QR code on the device again to start a new session.</p>
</section></main>
</body>
</html>`;
}

export function checkoutPage(opts: {
  order: OrderRow;
  device: DeviceRow | undefined;
  /** The token's decimals (undefined when the chain cannot be reached). */
  tokenDecimals: number | undefined;
  /** Whether the wallet pays through Permit2 (the token has neither EIP-2612 nor EIP-3009): it approves Permit2
   * for the token once, with a transaction of its own, before its first signature. */
  approvesPermit2: boolean;
  uri: string;
  /** The order's EIP-681 payment request (paymentDetails.transfer), where the router has the transfer rail. */
  transfer: { depositAddress: string; uri: string; qrCodeUrl: string } | undefined;
  version: (f: string) => string;
}) {
  const { order, device } = opts;
  const decimals = opts.tokenDecimals;
  const tokenText =
    decimals === undefined
      ? `${order.token}`
      : `${(Number(order.tokenAmount) / 10 ** decimals).toLocaleString("en-US", { minimumFractionDigits: 2, maximumFractionDigits: decimals })} ${order.token}`;
  const expired = order.status === "expired" || (order.status === "pending" && order.expiresAt.getTime() <= Date.now());
  const state = order.status === "success" ? "paid" : expired ? "expired" : "pending";
  return html`<!doctype html>
<html lang="en">
${head(`Pay ${money(order.amountUsdMicros)} · ${device?.name ?? order.deviceId}`, opts.version)}
<body>
<main class="shell" id="checkout" data-order-id="${order.id}" data-device-id="${order.deviceId}" data-state="${state}" data-expires-at="${order.expiresAt.toISOString()}">
  <section class="panel">
    <div class="brand"><img src="/checkout/assets/logo.svg?v=${opts.version("logo.svg")}" alt="" width="28" height="28"><span>PAYG Energy</span><span class="secure">Secure checkout</span></div>

    <div class="device">
      <div class="device-icon" aria-hidden="true">⚡</div>
      <div>
        <div class="device-name" id="device-name">${device?.name ?? order.deviceId}</div>
        <div class="muted small"><span class="mono">${order.deviceId}</span>${device ? html` · ${device.region}` : ""}</div>
      </div>
    </div>

    <div class="amount">
      <div class="amount-usd" id="amount">${money(order.amountUsdMicros)}</div>
      <div class="muted">${duration(order.durationSeconds)} of power · <span id="token-amount">${tokenText}</span></div>
    </div>

    <dl class="facts">
      <dt>Session</dt><dd>${duration(order.durationSeconds)} (${order.tier})</dd>
      <dt>Network</dt><dd>${order.chain} · chain ${order.chainId}</dd>
      <dt>Order</dt><dd class="mono small">${order.id}</dd>
      <div class="pending-only"><dt>Expires</dt><dd><span id="expiry" data-expires-at="${order.expiresAt.toISOString()}">${utc(order.expiresAt)}</span></dd></div>
    </dl>

    <div class="status status-${state}" id="status" role="status" aria-live="polite">${
      state === "paid"
        ? html`<strong>Paid.</strong> ${order.poweredOnAt ? html`The device is on until ${utc(order.sessionEndsAt ?? order.poweredOnAt)}.` : "The device is powering on."}`
        : state === "expired"
          ? html`<strong>This order has expired.</strong> Scan the device's QR code again for a new one.`
          : html`Waiting for payment.`
    }</div>

    <ol class="steps" id="steps"${state === "pending" ? "" : html` hidden`}>
      <li data-step="connect">Connect your wallet</li>
      <li data-step="sign">${opts.approvesPermit2 ? "Sign the payment in your wallet (the first time, approve Permit2 for this token)" : "Sign the payment in your wallet (no gas)"}</li>
      <li data-step="confirm">Payment confirmed on-chain</li>
      <li data-step="power">Device powered on</li>
    </ol>

    <div class="actions">
      <button class="btn btn-primary btn-block" id="pay" type="button"${state === "pending" ? "" : html` hidden`}>Pay ${money(order.amountUsdMicros)} with wallet</button>
      <p class="error" id="error" role="alert" hidden></p>
      <p class="fine pending-only">Your wallet signs a payment of exactly this amount for this order only; the service submits it and pays the network fee${opts.approvesPermit2 ? " (approving Permit2 for the token, once, is a transaction of your wallet's)" : ""}. The price is locked until the order expires.</p>
    </div>

    <dl class="facts receipt" id="receipt"${order.status === "success" ? "" : html` hidden`}>
      <dt>Transaction</dt><dd class="mono small break" id="tx-hash">${order.txHash ?? ""}</dd>
      <dt>Device on until</dt><dd id="session-ends">${order.sessionEndsAt ? utc(order.sessionEndsAt) : "—"}</dd>
    </dl>
  </section>

  <aside class="panel side">
    <div class="pending-only">
      <h2>Pay from your phone</h2>
      <p class="muted small">Scan with a wallet app's camera to open this checkout there.</p>
      <img class="qr" src="/pay/${order.id}/qr.svg" alt="QR code of ${opts.uri}" width="220" height="220">
      <p class="mono small break muted">${opts.uri}</p>
    </div>
    ${
      opts.transfer
        ? html`<div class="pending-only transfer" id="transfer">
      <h2>Or send it from any wallet</h2>
      <p class="muted small">Scan with any wallet app: it sends exactly <strong id="transfer-amount">${tokenText}</strong> to this order's own deposit address. Send only ${order.token}, only this amount, before the order expires.</p>
      <img class="qr" src="/pay/${order.id}/transfer.svg" alt="QR code of the payment request ${opts.transfer.uri}" width="220" height="220">
      <p class="small">Deposit address</p>
      <p class="mono small break" id="deposit-address">${opts.transfer.depositAddress}</p>
      <button class="btn" type="button" data-copy="${opts.transfer.depositAddress}">Copy address</button>
      <p class="mono small break muted" id="transfer-uri">${opts.transfer.uri}</p>
    </div>`
        : ""
    }
    <div class="settled-only">
      <h2>Need help?</h2>
      <p class="muted small">If the device does not work as paid for, tell the operator. Mention order <span class="mono">${order.id}</span>.</p>
    </div>

    <details class="report">
      <summary>Report a problem with this device</summary>
      <form id="report" class="stack">
        <label>What happened?<select name="category">${Object.entries(TICKET_CATEGORIES).map(
          ([value, label]) => html`<option value="${value}">${label}</option>`,
        )}</select></label>
        <label>Details<textarea name="message" rows="3" maxlength="2000" required></textarea></label>
        <label>Contact <span class="muted">(optional)</span><input name="contact" maxlength="200" placeholder="phone or email"></label>
        <button class="btn" type="submit">Send report</button>
        <p class="small" id="report-status" role="status" hidden></p>
      </form>
    </details>
  </aside>
</main>
</body>
</html>`;
}
