// Typed clients of the two APIs: openapi-fetch clients over the types openapi-typescript generated from the
// service's OpenAPI documents (sdk/src/generated). Every path, parameter, body and answer is typed:
//
//   const payments = createPaymentClient({ baseUrl: "https://payments.example.com/v1", apiKey });
//   const { data, error } = await payments.POST("/quote", { body: { deviceId, chain, token, tier } });
//
// `baseUrl` is the API's base as the service prints it (…/v1, …/energy/v1); paths are the documents' own.
import createClient, { type Client, type Middleware } from "openapi-fetch";
import { PaygApiError } from "./errors.ts";
import type { paths as EnergyPaths } from "./generated/energy-api.ts";
import type { paths as PaymentPaths } from "./generated/payment-api.ts";

export type PaymentClient = Client<PaymentPaths>;
export type EnergyClient = Client<EnergyPaths>;

type CommonOptions = {
  /** The API's base URL, e.g. https://payments.example.com/v1 (the payment API) or …/energy/v1 (the sandbox). */
  baseUrl: string;
  /** A fetch to use instead of the global one (a proxy agent, a test double, a retry wrapper). */
  fetch?: typeof globalThis.fetch;
  /** Headers sent with every request. */
  headers?: Record<string, string>;
};

function checkBaseUrl(baseUrl: unknown): string {
  if (typeof baseUrl !== "string" || !/^https?:\/\//.test(baseUrl)) {
    throw new TypeError(`baseUrl must be an http(s) URL such as https://payments.example.com/v1 (got ${String(baseUrl)})`);
  }
  let base = baseUrl;
  while (base.endsWith("/")) base = base.slice(0, -1);
  return base;
}

/** Sets `Authorization: Bearer <token>` on requests that carry no Authorization of their own. */
function bearer(token: () => string | Promise<string>): Middleware {
  return {
    async onRequest({ request }) {
      if (!request.headers.has("authorization")) request.headers.set("authorization", `Bearer ${await token()}`);
      return request;
    },
  };
}

/**
 * A client of the payment service (`/v1`). `apiKey`, a developer or agent API key (payg_…), is sent as a
 * bearer token with every request (the public routes ignore it); without one only the public routes answer.
 * A portal JWT may be given as `apiKey` too, for the routes the portal's session reaches.
 */
export function createPaymentClient(options: CommonOptions & { apiKey?: string }): PaymentClient {
  const client = createClient<PaymentPaths>({ baseUrl: checkBaseUrl(options.baseUrl), fetch: options.fetch, headers: options.headers });
  const apiKey = options.apiKey;
  if (apiKey !== undefined) {
    if (typeof apiKey !== "string" || apiKey === "") throw new TypeError("apiKey must be a non-empty string when given");
    client.use(bearer(() => apiKey));
  }
  return client;
}

/** How long before its expiry a sandbox token is replaced (seconds). */
const TOKEN_MARGIN_SECONDS = 60;

/**
 * A client of the energy sandbox (`/energy/v1`) that authenticates with OAuth 2.0 client credentials: the
 * first request fetches a token from `POST /auth/token` (form-encoded `grant_type=client_credentials`,
 * `client_id`, `client_secret`), later ones reuse it until a minute before it expires, and concurrent
 * requests share one token request. A token request refused throws PaygApiError (401 invalid_client, ...).
 * The public routes (health, version, capabilities, the token route itself) are called without a token.
 */
export function createEnergyClient(options: CommonOptions & { clientId: string; clientSecret: string }): EnergyClient {
  const baseUrl = checkBaseUrl(options.baseUrl);
  const { clientId, clientSecret } = options;
  if (typeof clientId !== "string" || clientId === "" || typeof clientSecret !== "string" || clientSecret === "") {
    throw new TypeError("clientId and clientSecret are required (the sandbox client's credentials)");
  }
  const doFetch = options.fetch ?? globalThis.fetch;
  let current: { token: string; renewAt: number } | undefined;
  let pending: Promise<string> | undefined;

  async function requestToken(): Promise<string> {
    const response = await doFetch(`${baseUrl}/auth/token`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded", accept: "application/json", ...options.headers },
      body: new URLSearchParams({ grant_type: "client_credentials", client_id: clientId, client_secret: clientSecret }).toString(),
    });
    const text = await response.text();
    let body: unknown = text;
    try {
      body = JSON.parse(text);
    } catch {
      // not JSON: PaygApiError keeps the text
    }
    const token = body as { access_token?: unknown; expires_in?: unknown };
    if (!response.ok || typeof token.access_token !== "string")
      throw new PaygApiError(response.status, body, "the sandbox's token request");
    const lifetime = typeof token.expires_in === "number" && token.expires_in > 0 ? token.expires_in : 3600;
    current = { token: token.access_token, renewAt: Date.now() + Math.max(0, lifetime - TOKEN_MARGIN_SECONDS) * 1000 };
    return token.access_token;
  }

  function token(): Promise<string> {
    if (current && Date.now() < current.renewAt) return Promise.resolve(current.token);
    pending ??= requestToken().finally(() => (pending = undefined));
    return pending;
  }

  const PUBLIC = new Set(["/health", "/version", "/capabilities", "/auth/token"]);
  const client = createClient<EnergyPaths>({ baseUrl, fetch: options.fetch, headers: options.headers });
  client.use({
    async onRequest({ request, schemaPath }) {
      if (PUBLIC.has(schemaPath) || request.headers.has("authorization")) return request;
      request.headers.set("authorization", `Bearer ${await token()}`);
      return request;
    },
    onResponse({ response, schemaPath }) {
      // A token the sandbox no longer takes (a restart with another signing key): fetch a new one next time.
      if (response.status === 401 && !PUBLIC.has(schemaPath)) current = undefined;
      return response;
    },
  });
  return client;
}
