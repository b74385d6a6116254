// An integrator's script, run from a folder where only the packed @payg/sdk (and what it depends on) is
// installed: test/sdk/packed-install.test.ts copies it there. Everything comes from the package: a webhook
// subscription (portal login), quote -> order -> pay (the rail the order offers, signed with a viem account)
// -> the payment.succeeded delivery, verified with the package's verifier; a refusal as PaygApiError; the
// sandbox's client with its client-credentials token. Prints one JSON line of results.
import http from "node:http";
import type { AddressInfo } from "node:net";
import {
  createEnergyClient,
  createPaymentClient,
  PaygApiError,
  createWebhookVerifier,
  payOrder,
  unwrap,
  WebhookVerificationError,
  type PaymentApi,
  type WebhookEnvelope,
} from "@payg/sdk";
import { privateKeyToAccount } from "viem/accounts";

const env = process.env as Record<string, string>;
const client = createPaymentClient({ baseUrl: env.PAYG_API_URL });

// The receiver: every delivery is verified on its raw bytes; a tampered copy of each must not verify.
let verify: (body: Buffer, headers: http.IncomingHttpHeaders) => WebhookEnvelope = () => {
  throw new Error("no subscription yet");
};
const verified: WebhookEnvelope[] = [];
let tamperedRejected = 0;
const receiver = http.createServer(async (req, res) => {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  const body = Buffer.concat(chunks);
  try {
    verified.push(verify(body, req.headers));
    res.writeHead(204).end();
  } catch (error) {
    res.writeHead(400).end(String(error));
    return;
  }
  try {
    verify(Buffer.from(body.toString("utf8").replace('"type"', '"tYpe"')), req.headers);
  } catch (error) {
    if (error instanceof WebhookVerificationError && error.reason === "bad_signature") tamperedRejected++;
  }
});
await new Promise<void>((resolve) => receiver.listen(0, "127.0.0.1", resolve));
const receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hooks`;

// A subscription for it, made with a portal session (the client takes its JWT as the bearer token).
const login = unwrap(await client.POST("/auth/login", { body: { email: env.PORTAL_EMAIL, password: env.PORTAL_PASSWORD } }));
const portal = createPaymentClient({ baseUrl: env.PAYG_API_URL, apiKey: login.accessToken });
const subscription = unwrap(
  await portal.POST("/webhooks/subscriptions", { body: { url: receiverUrl, eventTypes: ["payment.succeeded"] } }),
);
verify = createWebhookVerifier({ secret: subscription.secret });

// Quote -> order -> pay.
const deviceId = env.DEVICE_ID;
const quote: PaymentApi.components["schemas"]["Quote"] = unwrap(
  await client.POST("/quote", { body: { deviceId, chain: "local", token: "USDC", tier: "1h" } }),
);
const order = unwrap(
  await client.POST("/orders", { body: { deviceId, chain: "local", token: "USDC", amountUsd: quote.amountUsd, quoteId: quote.quoteId } }),
);
const account = privateKeyToAccount(env.WALLET_PRIVATE_KEY as `0x${string}`);
const paid = await payOrder(client, order, account, { rpcUrl: env.RPC_URL, pollIntervalMs: 100, timeoutMs: 60_000 });

// The webhook of this order's payment.
const deadline = Date.now() + 30_000;
const mine = () => verified.find((e) => e.type === "payment.succeeded" && e.data.orderId === order.id);
while (!mine() && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 100));
receiver.close();
const webhook = mine();

// A refusal: a quote for a device the service does not know -> PaygApiError with the status and the code.
const refusal = await client
  .POST("/quote", { body: { deviceId: "no-such-device", chain: "local", token: "USDC", tier: "1h" } })
  .then((result) => unwrap(result))
  .catch((error: unknown) => error);
const refused = refusal instanceof PaygApiError ? { status: refusal.status, code: refusal.code, requestId: refusal.requestId } : refusal;

// The sandbox: one token (client credentials) for several requests, concurrent ones included.
let tokenRequests = 0;
const energy = createEnergyClient({
  baseUrl: env.ENERGY_API_URL,
  clientId: env.ENERGY_CLIENT_ID,
  clientSecret: env.ENERGY_CLIENT_SECRET,
  fetch: (input, init) => {
    if ((input instanceof Request ? input.url : String(input)).endsWith("/auth/token")) tokenRequests++;
    return fetch(input, init);
  },
});
const meters = await Promise.all(
  ["mtr-kariakoo-001", "mtr-kariakoo-001", "mtr-kariakoo-001"].map((id) =>
    energy.GET("/devices/{device_id}", { params: { path: { device_id: id } } }),
  ),
);
const again = unwrap(await energy.GET("/devices/{device_id}", { params: { path: { device_id: "mtr-kariakoo-001" } } }));
console.log(
  JSON.stringify({
    orderId: order.id,
    offered: order.paymentDetails?.authorization ? "authorization" : "permit",
    status: paid.status,
    rail: paid.payment?.rail,
    payer: paid.payment?.payer,
    webhook: webhook && { type: webhook.type, id: webhook.id, orderId: webhook.data.orderId },
    tamperedRejected,
    refused,
    energy: { statuses: meters.map((m) => m.response.status), deviceId: again.device_id, tokenRequests },
  }),
);
