// The developer portal at /portal: server-rendered pages (hono/html), a local stylesheet and a small
// hand-written script. Every action goes through the /v1 JSON routes, called in-process with the
// session's JWT as the bearer token (the same calls an operator can script); the pages only render what
// those routes answer. Forms are protected against CSRF (portal/session.ts).
import path from "node:path";
import type { z } from "@hono/zod-openapi";
import type { Context } from "hono";
import { Hono } from "hono";
import { bodyLimit } from "hono/body-limit";
import type { AppEnv } from "../http/env.ts";
import type { Services } from "../services.ts";
import type { ApiKeyList, CreatedApiKey } from "../v1/api-keys.schemas.ts";
import type { AssetList } from "../v1/assets.schemas.ts";
import type { IdentityView, LoginResponse } from "../v1/auth.schemas.ts";
import type { RevenueOverview } from "../v1/revenue.schemas.ts";
import type { WebhookDelivery, WebhookDeliveryPage } from "../v1/webhook-deliveries.schemas.ts";
import type {
  CreatedWebhookSubscription,
  RotatedWebhookSecret,
  WebhookSubscription,
  WebhookSubscriptionList,
  WebhookTestQueued,
} from "../v1/webhook-subscriptions.schemas.ts";
import { PAGE_HEADERS, staticAssets } from "./assets.ts";
import { type Notice, type PageUser, layout } from "./layout.ts";
import { assetsPage } from "./pages/assets.ts";
import { type CreatedApiKeyView, keysPage } from "./pages/keys.ts";
import { loginPage } from "./pages/login.ts";
import { revenuePage } from "./pages/revenue.ts";
import { subscriptionPage, webhooksPage } from "./pages/webhooks.ts";
import { createPortalSession } from "./session.ts";

/** The relayer's own fetch (app.fetch), to call the /v1 routes in-process. */
export type AppFetch = (request: Request, env: unknown) => Response | Promise<Response>;

type PortalEnv = { Variables: AppEnv["Variables"] & { user: PageUser } };
type C = Context<PortalEnv>;

const NOTICES: Record<string, Notice> = {
  signed_out: { kind: "info", text: "You are signed out." },
  signout_failed: { kind: "error", text: "Signing out failed: the service is unavailable. Try again." },
  expired: { kind: "info", text: "Your session has expired. Sign in again." },
  revoked: { kind: "success", text: "The API key was revoked. Requests with it are rejected from now on." },
  test_queued: { kind: "success", text: "Test event queued: a test.ping is on its way to this endpoint." },
  redelivery_queued: { kind: "success", text: "Redelivery queued: one more attempt is being made now." },
  disabled: { kind: "info", text: "The endpoint is disabled. Pending deliveries were stopped." },
  enabled: { kind: "success", text: "The endpoint is enabled again." },
  updated: { kind: "success", text: "The endpoint was updated." },
  payout_changed: {
    kind: "success",
    text: "The payout parties were changed. Later payments credit them; the on-chain change is on its way.",
  },
  csrf: { kind: "error", text: "The form had expired. Please try again." },
};

function apiError(body: unknown, fallback: string): string {
  const error = (body as { error?: { message?: string; details?: Array<{ message: string }> } })?.error;
  if (!error?.message) return fallback;
  const details = error.details?.map((d) => d.message).filter((m) => m && !error.message?.includes(m));
  return details && details.length > 0 ? `${error.message}: ${details.join("; ")}` : error.message;
}

const str = (v: unknown) => (typeof v === "string" ? v : "");
const list = (v: unknown) => (Array.isArray(v) ? v.map(String) : typeof v === "string" ? [v] : []);

export function portalPages(services: Services, appFetch: AppFetch) {
  const app = new Hono<PortalEnv>();
  const session = createPortalSession(services.config);
  const assets = staticAssets(path.join(import.meta.dirname, "assets"), ["portal.css", "portal.js", "logo.svg"]);
  app.route("/assets", assets.app);

  /** Calls a /v1 route in-process. `Ok` is the body of the route's success answer (its response schema):
   * read `body` as that only once `status` is that success status; any other answer's body goes to apiError.
   * The call carries the page request's signal: when the browser hangs up, the route sees it too (a sign-in
   * waiting for its password check leaves the queue). */
  async function callApi<Ok = unknown>(
    c: C,
    method: string,
    route: string,
    body?: unknown,
    opts: { auth?: boolean } = {},
  ): Promise<{ status: number; body: Ok }> {
    const headers = new Headers({ "x-request-id": c.get("requestId") ?? "" });
    const token = session.token(c);
    if (opts.auth !== false && token) headers.set("authorization", `Bearer ${token}`);
    if (body !== undefined) headers.set("content-type", "application/json");
    const response = await appFetch(
      new Request(new URL(route, c.req.url), {
        method,
        headers,
        body: body === undefined ? undefined : JSON.stringify(body),
        signal: c.req.raw.signal,
      }),
      c.env,
    );
    const text = await response.text();
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch {
      json = undefined;
    }
    return { status: response.status, body: json as Ok };
  }

  function page(
    c: C,
    title: string,
    body: Parameters<typeof layout>[0]["body"],
    opts: { active?: string; notice?: Notice; status?: 200 | 201 | 400 | 403 | 404 | 422 | 502 | 503; autoRefresh?: boolean } = {},
  ) {
    const name = c.req.query("notice") ?? "";
    const notice = opts.notice ?? (Object.hasOwn(NOTICES, name) ? NOTICES[name] : undefined);
    return c.html(
      layout({
        title,
        active: opts.active,
        user: c.get("user"),
        csrf: session.csrfToken(c),
        notice,
        assetVersion: assets.version,
        body,
        autoRefresh: opts.autoRefresh,
      }),
      opts.status ?? 200,
      PAGE_HEADERS,
    );
  }

  /** Signs out and sends to the sign-in page when the API no longer accepts the session. */
  function expired(c: C) {
    session.end(c);
    return c.redirect("/portal/login?notice=expired", 303);
  }

  function notFound(c: C) {
    return page(c, "Not found", "", { notice: { kind: "error", text: "There is no such page." }, status: 404 });
  }

  function failure(c: C, title: string, result: { status: number; body: unknown }) {
    if (result.status === 401) return expired(c);
    return page(c, title, "", {
      notice: { kind: "error", text: apiError(result.body, `The service answered ${result.status}.`) },
      status: 502,
    });
  }

  app.use("*", bodyLimit({ maxSize: 64 * 1024, onError: (c) => c.text("the form is too large", 413) }));

  // Every POST: the CSRF checks first.
  app.use("*", async (c, next) => {
    if (c.req.method !== "POST") return next();
    const form = await c.req.parseBody({ all: true }).catch(() => ({}) as Record<string, unknown>);
    if (!session.checkPost(c, (form as Record<string, unknown>)._csrf)) {
      c.get("logger").warn("portal form rejected by the CSRF check", { path: c.req.path });
      if (c.req.path === "/portal/login") return c.redirect("/portal/login?notice=csrf", 303);
      return c.html(
        layout({ title: "Forbidden", csrf: session.csrfToken(c), assetVersion: assets.version, body: "", notice: NOTICES.csrf }),
        403,
        PAGE_HEADERS,
      );
    }
    await next();
  });

  app.get("/", (c) => c.redirect(session.token(c) ? "/portal/keys" : "/portal/login", 303));

  app.get("/login", (c) => page(c, "Sign in", loginPage({ csrf: session.csrfToken(c) })));

  app.post("/login", async (c) => {
    const form = await c.req.parseBody();
    const email = str(form.email).trim();
    const result = await callApi<z.output<typeof LoginResponse>>(
      c,
      "POST",
      "/v1/auth/login",
      { email, password: str(form.password) },
      { auth: false },
    );
    if (result.status === 200) {
      session.start(c, result.body.accessToken, result.body.expiresIn);
      return c.redirect("/portal/keys", 303);
    }
    const error =
      result.status === 401
        ? "Wrong email or password."
        : result.status === 429
          ? "Too many attempts. Wait a few minutes and try again."
          : result.status === 422
            ? "Enter your email address and password."
            : result.status === 503
              ? "Sign-in is busy right now. Wait a few seconds and try again."
              : apiError(result.body, "Sign-in failed. Try again.");
    // Render with a fresh token bound to the sign-in cookie.
    return page(c, "Sign in", loginPage({ csrf: session.csrfToken(c), email, error }), {
      status: result.status === 429 ? 400 : result.status === 503 ? 503 : 422,
    });
  });

  // Sign-out ends the session on the server (POST /v1/auth/logout), so the cookie's JWT is refused from now
  // on even where a copy of it survives, then deletes the cookie. 401: the session had ended already.
  app.post("/logout", async (c) => {
    if (session.token(c)) {
      const result = await callApi(c, "POST", "/v1/auth/logout");
      if (result.status !== 204 && result.status !== 401) {
        c.get("logger").warn("sign-out failed", { status: result.status });
        return c.redirect("/portal/keys?notice=signout_failed", 303);
      }
    }
    session.end(c);
    return c.redirect("/portal/login?notice=signed_out", 303);
  });

  // Everything below needs a session the API accepts.
  app.use("*", async (c, next) => {
    if (!session.token(c)) return c.redirect("/portal/login", 303);
    const me = await callApi<z.output<typeof IdentityView>>(c, "GET", "/v1/auth/me");
    const user = me.status === 200 && me.body?.type === "user" ? me.body.user : undefined;
    if (!user) return expired(c);
    c.set("user", { email: user.email, name: user.name, tenant: me.body.tenant.name });
    await next();
  });

  // API keys
  async function renderKeys(c: C, extra: { created?: CreatedApiKeyView; error?: string } = {}, status: 200 | 201 | 422 = 200) {
    const keys = await callApi<z.output<typeof ApiKeyList>>(c, "GET", "/v1/api-keys");
    if (keys.status !== 200) return failure(c, "API keys", keys);
    return page(c, "API keys", keysPage({ csrf: session.csrfToken(c), keys: keys.body.data, ...extra }), { active: "keys", status });
  }

  app.get("/keys", (c) => renderKeys(c));

  app.post("/keys", async (c) => {
    const form = await c.req.parseBody();
    const created = await callApi<z.output<typeof CreatedApiKey>>(c, "POST", "/v1/api-keys", {
      name: str(form.name).trim(),
      role: str(form.role) || "developer",
    });
    if (created.status === 201) return renderKeys(c, { created: created.body }, 201);
    if (created.status === 401) return expired(c);
    return renderKeys(c, { error: apiError(created.body, "The key could not be created.") }, 422);
  });

  app.post("/keys/:id/revoke", async (c) => {
    const result = await callApi(c, "DELETE", `/v1/api-keys/${encodeURIComponent(c.req.param("id"))}`);
    if (result.status !== 200) return failure(c, "API keys", result);
    return c.redirect("/portal/keys?notice=revoked", 303);
  });

  // Webhooks
  app.get("/webhooks", async (c) => {
    const subs = await callApi<z.output<typeof WebhookSubscriptionList>>(c, "GET", "/v1/webhooks/subscriptions");
    if (subs.status !== 200) return failure(c, "Webhooks", subs);
    return page(c, "Webhooks", webhooksPage({ csrf: session.csrfToken(c), subscriptions: subs.body.data }), { active: "webhooks" });
  });

  app.post("/webhooks", async (c) => {
    const form = await c.req.parseBody({ all: true });
    const events = list(form.events);
    const input = { url: str(form.url).trim(), description: str(form.description).trim(), events };
    const created = await callApi<z.output<typeof CreatedWebhookSubscription>>(c, "POST", "/v1/webhooks/subscriptions", {
      url: input.url,
      eventTypes: events.includes("*") ? ["*"] : events,
      ...(input.description ? { description: input.description } : {}),
    });
    if (created.status === 201) {
      const { secret, ...subscription } = created.body;
      return page(
        c,
        "Webhook endpoint",
        subscriptionPage({ csrf: session.csrfToken(c), subscription, deliveries: [], nextCursor: null, secret }),
        { active: "webhooks", status: 201 },
      );
    }
    if (created.status === 401) return expired(c);
    const subs = await callApi<z.output<typeof WebhookSubscriptionList>>(c, "GET", "/v1/webhooks/subscriptions");
    const message = events.length === 0 ? "Choose at least one event." : apiError(created.body, "The endpoint could not be added.");
    return page(
      c,
      "Webhooks",
      webhooksPage({ csrf: session.csrfToken(c), subscriptions: subs.body?.data ?? [], error: message, form: input }),
      {
        active: "webhooks",
        status: 422,
      },
    );
  });

  async function renderSubscription(
    c: C,
    id: string,
    extra: { error?: string; form?: { url?: string; description?: string; events?: string[] } } = {},
    status: 200 | 422 = 200,
  ) {
    const sub = await callApi<z.output<typeof WebhookSubscription>>(c, "GET", `/v1/webhooks/subscriptions/${encodeURIComponent(id)}`);
    if (sub.status === 404 || sub.status === 422) return notFound(c);
    if (sub.status !== 200) return failure(c, "Webhook endpoint", sub);
    const query = new URLSearchParams({ limit: "25" });
    const cursor = c.req.query("cursor");
    if (cursor) query.set("cursor", cursor);
    const deliveries = await callApi<z.output<typeof WebhookDeliveryPage>>(
      c,
      "GET",
      `/v1/webhooks/subscriptions/${sub.body.id}/deliveries?${query}`,
    );
    if (deliveries.status !== 200) return failure(c, "Webhook endpoint", deliveries);
    const data = deliveries.body.data;
    // Refresh while deliveries are on their way, and until the one just queued (?watch=) is done.
    const watch = c.req.query("watch");
    const watched = watch ? data.find((d) => d.eventId === watch || d.id === watch) : undefined;
    const waiting = data.some((d) => d.status === "pending") || (watch !== undefined && (!watched || watched.status === "pending"));
    return page(
      c,
      "Webhook endpoint",
      subscriptionPage({
        csrf: session.csrfToken(c),
        subscription: sub.body,
        deliveries: data,
        nextCursor: deliveries.body.nextCursor,
        ...extra,
      }),
      { active: "webhooks", status, autoRefresh: waiting && !cursor },
    );
  }

  app.get("/webhooks/:id", (c) => renderSubscription(c, c.req.param("id")));

  app.post("/webhooks/:id/test", async (c) => {
    const id = c.req.param("id");
    const result = await callApi<z.output<typeof WebhookTestQueued>>(
      c,
      "POST",
      `/v1/webhooks/subscriptions/${encodeURIComponent(id)}/test`,
    );
    if (result.status !== 202) return failure(c, "Webhook endpoint", result);
    return c.redirect(
      `/portal/webhooks/${encodeURIComponent(id)}?notice=test_queued&watch=${encodeURIComponent(result.body.eventId)}`,
      303,
    );
  });

  app.post("/webhooks/:id/rotate-secret", async (c) => {
    const id = c.req.param("id");
    const result = await callApi<z.output<typeof RotatedWebhookSecret>>(
      c,
      "POST",
      `/v1/webhooks/subscriptions/${encodeURIComponent(id)}/rotate-secret`,
    );
    if (result.status !== 200) return failure(c, "Webhook endpoint", result);
    const { secret, ...subscription } = result.body;
    return page(
      c,
      "Webhook endpoint",
      subscriptionPage({ csrf: session.csrfToken(c), subscription, deliveries: [], nextCursor: null, secret }),
      { active: "webhooks" },
    );
  });

  app.post("/webhooks/:id/disable", async (c) => {
    const id = c.req.param("id");
    // Disabled, not deleted (DELETE removes it from the page): it can be enabled again.
    const result = await callApi(c, "PATCH", `/v1/webhooks/subscriptions/${encodeURIComponent(id)}`, { status: "disabled" });
    if (result.status !== 200) return failure(c, "Webhook endpoint", result);
    return c.redirect(`/portal/webhooks/${encodeURIComponent(id)}?notice=disabled`, 303);
  });

  app.post("/webhooks/:id/enable", async (c) => {
    const id = c.req.param("id");
    const result = await callApi(c, "PATCH", `/v1/webhooks/subscriptions/${encodeURIComponent(id)}`, { status: "active" });
    if (result.status !== 200) return failure(c, "Webhook endpoint", result);
    return c.redirect(`/portal/webhooks/${encodeURIComponent(id)}?notice=enabled`, 303);
  });

  app.post("/webhooks/:id/update", async (c) => {
    const id = c.req.param("id");
    const form = await c.req.parseBody({ all: true });
    const events = list(form.events);
    const input = { url: str(form.url).trim(), description: str(form.description).trim(), events };
    if (events.length === 0) return renderSubscription(c, id, { error: "Choose at least one event.", form: input }, 422);
    const result = await callApi(c, "PATCH", `/v1/webhooks/subscriptions/${encodeURIComponent(id)}`, {
      url: input.url,
      eventTypes: events.includes("*") ? ["*"] : events,
      description: input.description || null,
    });
    if (result.status === 200) return c.redirect(`/portal/webhooks/${encodeURIComponent(id)}?notice=updated`, 303);
    if (result.status === 422)
      return renderSubscription(c, id, { error: apiError(result.body, "The endpoint could not be saved."), form: input }, 422);
    return failure(c, "Webhook endpoint", result);
  });

  // Not under /webhooks/: a static segment beside /webhooks/:id would make Hono fall back to a slower router.
  app.post("/deliveries/:id/redeliver", async (c) => {
    const result = await callApi<z.output<typeof WebhookDelivery>>(
      c,
      "POST",
      `/v1/webhooks/deliveries/${encodeURIComponent(c.req.param("id"))}/redeliver`,
    );
    if (result.status !== 202) return failure(c, "Webhook endpoint", result);
    return c.redirect(
      `/portal/webhooks/${encodeURIComponent(result.body.subscriptionId)}?notice=redelivery_queued&watch=${encodeURIComponent(result.body.id)}`,
      303,
    );
  });

  // Revenue
  app.get("/revenue", async (c) => {
    const range = ["24h", "7d", "30d"].includes(c.req.query("range") ?? "") ? (c.req.query("range") as string) : "7d";
    const overview = await callApi<z.output<typeof RevenueOverview>>(c, "GET", `/v1/revenue/overview?range=${range}`);
    if (overview.status !== 200) return failure(c, "Revenue", overview);
    const tokens = await services.chain.stablecoins().catch(() => new Map());
    const decimals = new Map<string, number>([...tokens.values()].map((t) => [t.symbol as string, t.decimals as number]));
    return page(c, "Revenue", revenuePage({ overview: overview.body, decimals }), { active: "revenue" });
  });

  // Assets (devices) and their payout parties
  async function renderAssets(c: C, error?: { deviceId: string; text: string }, status: 200 | 422 = 200) {
    const assets = await callApi<z.output<typeof AssetList>>(c, "GET", "/v1/assets");
    if (assets.status !== 200) return failure(c, "Assets", assets);
    return page(c, "Assets", assetsPage({ csrf: session.csrfToken(c), assets: assets.body.data, error }), { active: "devices", status });
  }

  app.get("/devices", (c) => renderAssets(c));

  app.post("/devices/:id/payout", async (c) => {
    const id = c.req.param("id");
    const form = await c.req.parseBody();
    const result = await callApi(c, "PUT", `/v1/assets/${encodeURIComponent(id)}/payout`, {
      assetOwner: str(form.assetOwner).trim(),
      operator: str(form.operator).trim(),
    });
    if (result.status === 200) return c.redirect("/portal/devices?notice=payout_changed", 303);
    if (result.status === 422 || result.status === 409 || result.status === 429) {
      // 429: the tenant's payout changes (each a transaction from the hot wallet) are over their rate; the
      // form shows it with the API's message, as a refused change.
      return renderAssets(c, { deviceId: id, text: apiError(result.body, "The payout parties could not be changed.") }, 422);
    }
    return failure(c, "Assets", result);
  });

  app.all("*", (c) => notFound(c));
  return app;
}
