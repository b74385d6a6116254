// The API keys page: the tenant's keys (GET /v1/api-keys), create one (shown once), revoke one.
import type { z } from "@hono/zod-openapi";
import { html } from "hono/html";
import type { ApiKey, CreatedApiKey } from "../../v1/api-keys.schemas.ts";
import { badge, csrfField, secretPanel, when } from "../layout.ts";

export type ApiKeyView = z.output<typeof ApiKey>;
export type CreatedApiKeyView = z.output<typeof CreatedApiKey>;

export function keysPage(opts: { csrf: string; keys: ApiKeyView[]; created?: CreatedApiKeyView; error?: string }) {
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
