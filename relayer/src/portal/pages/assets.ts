// The assets page: the tenant's devices with their payout parties and own split (GET /v1/assets), and a
// form per device to change its asset owner and operator (PUT /v1/assets/{id}/payout).
import type { z } from "@hono/zod-openapi";
import { html } from "hono/html";
import type { Asset } from "../../v1/assets.schemas.ts";
import { badge, csrfField, shortHex } from "../layout.ts";

export type AssetView = z.output<typeof Asset>;

export function assetsPage(opts: { csrf: string; assets: AssetView[]; error?: { deviceId: string; text: string } }) {
  return html`<div class="page-head">
  <div><h1>Assets</h1><p class="muted">Each device pays out through its own split contract: 50% to its asset owner, 40% to its operator, 10% to the protocol. A change applies to later payments; what the former recipients earned stays theirs.</p></div>
</div>
<section class="card">
  ${
    opts.assets.length === 0
      ? html`<p class="empty">No devices yet.</p>`
      : html`<div class="table-wrap"><table class="table" id="assets-table">
    <thead><tr><th>Device</th><th>Split</th><th>Asset owner</th><th>Operator</th><th></th></tr></thead>
    <tbody>${opts.assets.map(
      (a) => html`<tr data-device-id="${a.deviceId}">
      <td><strong>${a.name}</strong><div class="dim small mono">${a.deviceId}</div></td>
      <td>${badge(a.payout.splitStatus)}${a.payout.split ? html`<div class="dim small mono" title="${a.payout.split}">${shortHex(a.payout.split)}</div>` : ""}</td>
      <td class="mono small">${a.payout.assetOwner ?? html`<span class="dim">none</span>`}</td>
      <td class="mono small">${a.payout.operator ?? html`<span class="dim">none</span>`}</td>
      <td>
        ${opts.error?.deviceId === a.deviceId ? html`<div class="notice notice-error" role="alert">${opts.error.text}</div>` : ""}
        <form method="post" action="/portal/devices/${a.deviceId}/payout" class="form-row">
          ${csrfField(opts.csrf)}
          <label>Asset owner<input name="assetOwner" required maxlength="42" pattern="0x[0-9a-fA-F]{40}" value="${a.payout.assetOwner ?? ""}"></label>
          <label>Operator<input name="operator" required maxlength="42" pattern="0x[0-9a-fA-F]{40}" value="${a.payout.operator ?? ""}"></label>
          <button class="btn btn-sm" type="submit">Save</button>
        </form>
      </td>
    </tr>`,
    )}</tbody>
  </table></div>`
  }
</section>`;
}
