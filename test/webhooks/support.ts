// Shared steps of the webhook suites: signing in, subscribing a receiver endpoint, reading the delivery log.
import assert from "node:assert/strict";
import type { Stack } from "../support/stack.ts";
import type { WebhookReceiver } from "../support/webhook-receiver.ts";

export async function login(stack: Stack, email = stack.sample.email, password = stack.sample.password): Promise<string> {
  const response = await stack.api("POST", "/v1/auth/login", { body: { email, password } });
  assert.equal(response.status, 200, response.text);
  return response.body.accessToken;
}

/** Subscribes `receiver`'s endpoint `path` and teaches the receiver its secret. */
export async function subscribe(stack: Stack, token: string, receiver: WebhookReceiver, path: string, eventTypes: string[]) {
  const response = await stack.api("POST", "/v1/webhooks/subscriptions", {
    token,
    body: { url: receiver.url(path), eventTypes, description: `test endpoint ${path}` },
  });
  assert.equal(response.status, 201, response.text);
  assert.match(response.body.secret, /^whsec_[A-Za-z0-9+/]{43}=$/);
  receiver.setSecret(path, response.body.secret);
  return response.body as { id: string; secret: string; url: string; status: string };
}

export type LoggedDelivery = {
  id: string;
  eventId: string;
  eventType: string;
  status: "pending" | "succeeded" | "failed";
  attempts: number;
  attemptLimit: number;
  lastError: string | null;
  attemptLog: Array<{
    attempt: number;
    statusCode: number | null;
    error: string | null;
    durationMs: number | null;
    finishedAt: string | null;
  }>;
};

export async function deliveryLog(stack: Stack, token: string, subscriptionId: string): Promise<LoggedDelivery[]> {
  const response = await stack.api("GET", `/v1/webhooks/subscriptions/${subscriptionId}/deliveries?limit=100`, { token });
  assert.equal(response.status, 200, response.text);
  return response.body.data;
}

/** Polls the delivery log until a delivery satisfies `until`. */
export async function waitForDelivery(
  stack: Stack,
  token: string,
  subscriptionId: string,
  until: (d: LoggedDelivery) => boolean,
  timeoutMs = 20_000,
): Promise<LoggedDelivery> {
  const deadline = Date.now() + timeoutMs;
  let last: LoggedDelivery[] = [];
  while (Date.now() < deadline) {
    last = await deliveryLog(stack, token, subscriptionId);
    const found = last.find(until);
    if (found) return found;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`no delivery of ${subscriptionId} reached the expected state; log: ${JSON.stringify(last, null, 1)}`);
}

/** Queues a test.ping for the subscription; returns its event id. */
export async function sendTest(stack: Stack, token: string, subscriptionId: string, relayerUrl?: string): Promise<string> {
  const route = `/v1/webhooks/subscriptions/${subscriptionId}/test`;
  if (relayerUrl) {
    const response = await fetch(`${relayerUrl}${route}`, { method: "POST", headers: { authorization: `Bearer ${token}` } });
    const text = await response.text();
    assert.equal(response.status, 202, text);
    return (JSON.parse(text) as { eventId: string }).eventId;
  }
  const response = await stack.api("POST", route, { token });
  assert.equal(response.status, 202, response.text);
  return response.body.eventId;
}

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
