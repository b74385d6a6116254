// What the resilience cases share on one stack: the OpenAPI documents, two tenants (the sample one, A, and
// another, B, each with a login, API keys, a device, a participant, a webhook subscription with a delivery,
// and A with a pending order), the sandbox's token, a webhook receiver, one HTTP client whose journal keeps
// every response, and the register of every secret that exists (for the scan of logs and responses).
import assert from "node:assert/strict";
import { createOrder } from "../../support/pay.ts";
import type { Stack } from "../../support/stack.ts";
import { type WebhookReceiver, startWebhookReceiver } from "../../support/webhook-receiver.ts";
import { type HttpClient, type RawResponse, httpClient } from "./http.ts";
import { type ApiDocs, loadApiDocs } from "./openapi.ts";

export type Tenant = {
  tenantId: string;
  email: string;
  password: string;
  userId: string;
  jwt: string;
  developerKey: string;
  agentKey: string;
  deviceId: string;
  participant: { id: string; address: string };
  subscriptionId: string;
  deliveryId: string;
  /** The event of that delivery (the test ping), for the events API. */
  eventId: string;
  /** An API key of the tenant's that no case revokes (its id, for the key routes). */
  keyId: string;
  orderId?: string;
};

/** A secret and where it may appear: nowhere but in the response that created it (`from`: the journal index
 * of the first response after that one; 0: no response may show it). */
export type Secret = { name: string; value: string; from: number };

export type Fixtures = {
  docs: ApiDocs;
  client: HttpClient;
  receiver: WebhookReceiver;
  a: Tenant;
  b: Tenant;
  energy: { token: string; projectId: string; deviceId: string; distributionId: string; evidenceRef: string };
  secrets: Secret[];
  /** A JSON (or form) call through the journaled client. */
  call(
    method: string,
    path: string,
    opts?: { token?: string; body?: unknown; form?: Record<string, string>; headers?: Record<string, string> },
  ): Promise<RawResponse>;
  /** Registers a secret that exists from now on (in no response after this point, and never in a log). */
  secret(name: string, value: string): void;
  close(): Promise<void>;
};

export const OTHER_TENANT = {
  tenant: { id: "tn_resilience_b", name: "Tenant B" },
  user: { email: "ops@tenant-b.example", password: "tenant-b-password-8412", name: "B operator" },
  apiKeys: [
    { name: "b developer", role: "developer" as const },
    { name: "b agent", role: "agent" as const },
  ],
  devices: [{ id: "b-kiosk-001", name: "Tenant B kiosk", deviceClass: "solar-kiosk", region: "UG-102", tiers: { "1h": 600_000 } }],
  participants: [{ name: "B owner", address: "0x000000000000000000000000000000000000bEEF" }],
};

/** The fixtures of a stack started with OTHER_TENANT as its one extra tenant (StackOptions.tenants: seeded with
 * the sample tenant, before the relayer starts). */
export async function prepareFixtures(stack: Stack): Promise<Fixtures> {
  const seededB = stack.tenants[0];
  if (seededB?.tenantId !== OTHER_TENANT.tenant.id) throw new Error("start the stack with tenants: [OTHER_TENANT]");
  const client = httpClient(() => stack.relayerUrl);
  const receiver = await startWebhookReceiver();
  const docs = await loadApiDocs(stack.relayerUrl);
  const secrets: Secret[] = [];

  const call: Fixtures["call"] = (method, path, opts = {}) => {
    const headers: Record<string, string> = { ...opts.headers };
    if (opts.token) headers.authorization = `Bearer ${opts.token}`;
    let body: string | undefined;
    if (opts.form) {
      headers["content-type"] = "application/x-www-form-urlencoded";
      body = new URLSearchParams(opts.form).toString();
    } else if (opts.body !== undefined) {
      headers["content-type"] ??= "application/json";
      body = typeof opts.body === "string" ? opts.body : JSON.stringify(opts.body);
    }
    return client.send({ method, path, headers, body });
  };
  const secret = (name: string, value: string) => {
    if (value) secrets.push({ name, value, from: client.journal.length });
  };

  // Secrets that existed before any response: no response may ever show them.
  const { sample } = stack;
  const env = stack.relayerOptions.env ?? {};
  for (const [name, value] of [
    ["A's password", sample.password],
    ["B's password", OTHER_TENANT.user.password],
    ["A's developer key", sample.developerKey],
    ["A's agent key", sample.agentKey],
    ["B's developer key", seededB.createdKeys[0].key],
    ["B's agent key", seededB.createdKeys[1].key],
    ["the sandbox client secret", sample.energyClient.clientSecret],
    ["JWT_SECRET", stack.relayerOptions.jwtSecret],
    ["WEBHOOK_SECRET_KEY", String(env.WEBHOOK_SECRET_KEY ?? "")],
    ["RELAYER_PRIVATE_KEY", stack.relayerOptions.relayerPrivateKey],
    ["QUOTE_SIGNER_PRIVATE_KEY", stack.relayerOptions.quoteSignerPrivateKey],
  ] as const) {
    secrets.push({ name, value, from: 0 });
  }

  async function tenant(
    label: string,
    creds: {
      email: string;
      password: string;
      developerKey: string;
      agentKey: string;
      deviceId: string;
      participant: { id: string; address: string };
    },
  ): Promise<Tenant> {
    const login = await call("POST", "/v1/auth/login", { body: { email: creds.email, password: creds.password } });
    assert.equal(login.status, 200, login.text);
    const jwt = login.json.accessToken as string;
    secret(`${label}'s login JWT`, jwt);
    const me = await call("GET", "/v1/auth/me", { token: jwt });
    assert.equal(me.status, 200, me.text);
    const path = `/${label.toLowerCase()}`;
    const sub = await call("POST", "/v1/webhooks/subscriptions", {
      token: jwt,
      body: { url: receiver.url(path), eventTypes: ["ticket.created"], description: `tenant ${label}` },
    });
    assert.equal(sub.status, 201, sub.text);
    secret(`${label}'s webhook signing secret`, sub.json.secret);
    receiver.setSecret(path, sub.json.secret);
    const ping = await call("POST", `/v1/webhooks/subscriptions/${sub.json.id}/test`, { token: jwt });
    assert.equal(ping.status, 202, ping.text);
    let delivered: { id: string; eventId: string } | undefined;
    for (let i = 0; i < 100 && !delivered; i++) {
      const log = await call("GET", `/v1/webhooks/subscriptions/${sub.json.id}/deliveries`, { token: jwt });
      delivered = log.json?.data?.find((d: { status: string }) => d.status === "succeeded");
      if (!delivered) await new Promise((resolve) => setTimeout(resolve, 100));
    }
    const deliveryId = delivered?.id;
    assert.ok(deliveryId, `${label}'s test delivery was made`);
    const key = await call("POST", "/v1/api-keys", { token: jwt, body: { name: `${label} resilience key` } });
    assert.equal(key.status, 201, key.text);
    secret(`${label}'s resilience API key`, key.json.key);
    return {
      tenantId: me.json.tenant.id,
      email: creds.email,
      password: creds.password,
      userId: me.json.user.id,
      jwt,
      developerKey: creds.developerKey,
      agentKey: creds.agentKey,
      deviceId: creds.deviceId,
      participant: creds.participant,
      subscriptionId: sub.json.id,
      deliveryId: deliveryId!,
      eventId: delivered!.eventId,
      keyId: key.json.id,
    };
  }

  const a = await tenant("A", {
    email: sample.email,
    password: sample.password,
    developerKey: sample.developerKey,
    agentKey: sample.agentKey,
    deviceId: sample.devices[0].id,
    participant: sample.participants[0],
  });
  const b = await tenant("B", {
    email: OTHER_TENANT.user.email,
    password: OTHER_TENANT.user.password,
    developerKey: seededB.createdKeys[0].key,
    agentKey: seededB.createdKeys[1].key,
    deviceId: OTHER_TENANT.devices[0].id,
    participant: seededB.participants[0],
  });
  a.orderId = (await createOrder(stack, a.deviceId, "1h")).id;

  const token = await call("POST", "/energy/v1/auth/token", {
    form: { grant_type: "client_credentials", client_id: sample.energyClient.clientId, client_secret: sample.energyClient.clientSecret },
  });
  assert.equal(token.status, 200, token.text);
  secret("the sandbox access token", token.json.access_token);
  const capabilities = (await call("GET", "/energy/v1/capabilities")).json.sample_data;

  return {
    docs,
    client,
    receiver,
    a,
    b,
    energy: {
      token: token.json.access_token,
      projectId: capabilities.projects[0],
      deviceId: capabilities.devices.find((d: { note: string }) => d.note === "registered").device_id,
      distributionId: capabilities.distributions[0],
      evidenceRef: capabilities.evidence[0].evidence_ref,
    },
    secrets,
    call,
    secret,
    async close() {
      client.close();
      await receiver.close();
    },
  };
}
