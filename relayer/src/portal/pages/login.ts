// The sign-in page (POST /portal/login calls POST /v1/auth/login).
import { html } from "hono/html";
import { csrfField } from "../layout.ts";

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
