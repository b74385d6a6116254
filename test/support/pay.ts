// Paying orders through the relayer, as an integrator and a wallet would: quote, order, then one of the
// rails (a relayed EIP-3009 authorization or permit, the wallet paying the router itself with a permit or an
// approval, or an agent's cash confirmation), and waiting for the order to reach a state. Quotes, orders and relayed payments go
// through the SDK (sdk/src: its typed client, signOrderPayment, submitOrderPayment and payOrder), so the
// end-to-end suites exercise what integrators install.
import { type Address, type Hex, createPublicClient, createWalletClient, defineChain, http, maxUint256, parseAbi } from "viem";
import { paymentRouterAbi } from "../../generated/abis.ts";
import { localAccount } from "../../lib/sample-data.ts";
import {
  type Order,
  PaygApiError,
  type ServerSentEvent,
  createPaymentClient,
  payOrder as payWithSdk,
  serverSentEvents,
  signOrderPayment,
  submitOrderPayment,
  unwrap,
} from "../../sdk/src/index.ts";
import type { Stack } from "./stack.ts";
import type { UncheckedJson } from "./unchecked-json.ts";

/** The local node's funded test wallet. */
export const TEST_WALLET_INDEX = 7;

const tokenAbi = parseAbi([
  "function nonces(address) view returns (uint256)",
  "function approve(address, uint256) returns (bool)",
  "function balanceOf(address) view returns (uint256)",
  "function mint(address, uint256)",
]);

export type OrderBody = {
  id: string;
  status: "pending" | "success" | "expired";
  paymentDetails?: UncheckedJson;
  [key: string]: UncheckedJson;
};

export function clients(stack: Stack, walletIndex = TEST_WALLET_INDEX) {
  const chain = defineChain({
    id: stack.chain.record.chainId,
    name: "local",
    nativeCurrency: { name: "Ether", symbol: "ETH", decimals: 18 },
    rpcUrls: { default: { http: [stack.chain.rpcUrl] } },
  });
  const transport = http(stack.chain.rpcUrl);
  const account = localAccount(walletIndex);
  return {
    account,
    publicClient: createPublicClient({ chain, transport, pollingInterval: 50 }),
    walletClient: createWalletClient({ account, chain, transport }),
  };
}

/** The SDK's client of the stack's payment API (public routes; `apiKey` for the others). */
export function paymentClient(stack: Stack, apiKey?: string) {
  return createPaymentClient({ baseUrl: `${stack.relayerUrl}/v1`, apiKey });
}

/** Quotes `tier` on `deviceId` in `token` and creates the order; returns the order as POST /v1/orders answered. */
export async function createOrder(
  stack: Stack,
  deviceId: string = stack.sample.devices[0].id,
  tier = "1h",
  token = "USDC",
): Promise<OrderBody> {
  const client = paymentClient(stack);
  // The device's split in the token may be created by this quote (409 split_not_ready while it is): asked again.
  const deadline = Date.now() + 60_000;
  let answer = await client.POST("/quote", { body: { deviceId, chain: "local", token, tier } });
  while (
    answer.response.status === 409 &&
    (answer.error as { error?: { code?: string } })?.error?.code === "split_not_ready" &&
    Date.now() < deadline
  ) {
    await new Promise((resolve) => setTimeout(resolve, 250));
    answer = await client.POST("/quote", { body: { deviceId, chain: "local", token, tier } });
  }
  const quote = unwrap(answer, "quote failed");
  const order = unwrap(
    await client.POST("/orders", { body: { deviceId, chain: "local", token, amountUsd: quote.amountUsd, quoteId: quote.quoteId } }),
    "order failed",
  );
  return order as OrderBody;
}

/** The wallet's EIP-2612 signature of the order's permit (paymentDetails.permit with owner and nonce), by the
 * SDK's signOrderPayment. */
export async function signPermit(stack: Stack, order: OrderBody, walletIndex = TEST_WALLET_INDEX) {
  const { account, publicClient } = clients(stack, walletIndex);
  const signed = await signOrderPayment(order as Order, account, { rail: "permit", publicClient });
  if (signed.rail !== "permit") throw new Error("signOrderPayment signed another rail than the permit");
  return signed.body;
}

function voucher(order: OrderBody) {
  const o = order.paymentDetails.order;
  return {
    orderId: BigInt(o.orderId),
    deviceId: o.deviceId as Hex,
    token: o.token as Address,
    split: o.split as Address,
    amount: BigInt(o.amount),
    expiry: BigInt(o.expiry),
  };
}

/** Pays `order` on `rail`; returns the relayer's answer (relayed rails) or the wallet's transaction hash. */
export async function pay(
  stack: Stack,
  order: OrderBody,
  rail: "relayed-authorization" | "relayed-permit" | "wallet-permit" | "wallet-approval" | "cash",
  walletIndex = TEST_WALLET_INDEX,
): Promise<{ status?: number; body?: UncheckedJson; hash?: Hex }> {
  if (rail === "relayed-permit" || rail === "relayed-authorization") {
    const { account, publicClient } = clients(stack, walletIndex);
    const signed = await signOrderPayment(order as Order, account, {
      rail: rail === "relayed-permit" ? "permit" : "authorization",
      publicClient,
    });
    try {
      return { status: 202, body: await submitOrderPayment(paymentClient(stack), order.id, signed) };
    } catch (error) {
      if (error instanceof PaygApiError) return { status: error.status, body: error.body };
      throw error;
    }
  }
  if (rail === "cash") {
    const response = await stack.api("POST", `/v1/orders/${order.id}/cash`, { token: stack.sample.agentKey });
    return { status: response.status, body: response.body };
  }
  const { walletClient, publicClient } = clients(stack, walletIndex);
  const router = order.paymentDetails.router as Address;
  if (rail === "wallet-permit") {
    const permit = await signPermit(stack, order, walletIndex);
    const hash = await walletClient.writeContract({
      address: router,
      abi: paymentRouterAbi,
      functionName: "payWithPermit",
      args: [voucher(order), order.paymentDetails.voucherSignature, permit.owner, permit.signature],
    });
    await publicClient.waitForTransactionReceipt({ hash });
    return { hash };
  }
  const approve = await walletClient.writeContract({
    address: order.paymentDetails.token.address,
    abi: tokenAbi,
    functionName: "approve",
    args: [router, maxUint256],
  });
  await publicClient.waitForTransactionReceipt({ hash: approve });
  const hash = await walletClient.writeContract({
    address: router,
    abi: paymentRouterAbi,
    functionName: "pay",
    args: [voucher(order), order.paymentDetails.voucherSignature],
  });
  await publicClient.waitForTransactionReceipt({ hash });
  return { hash };
}

/** Polls GET /v1/orders/{id} until `until` holds; returns the order. */
export async function waitForOrder(stack: Stack, id: string, until: (order: OrderBody) => boolean, timeoutMs = 20_000): Promise<OrderBody> {
  const deadline = Date.now() + timeoutMs;
  let last: OrderBody | undefined;
  while (Date.now() < deadline) {
    const response = await stack.api("GET", `/v1/orders/${id}`);
    last = response.body;
    if (response.status === 200 && until(response.body)) return response.body;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`order ${id} did not reach the expected state; last: ${JSON.stringify(last)}`);
}

/** Reads a whole SSE stream until it closes (or `timeoutMs`, or `until` returns true); returns its events. */
export async function readEventStream(
  url: string,
  opts: { headers?: Record<string, string>; timeoutMs?: number; until?: (event: SseEvent) => boolean } = {},
): Promise<SseEvent[]> {
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(), opts.timeoutMs ?? 20_000);
  const events: SseEvent[] = [];
  try {
    const response = await fetch(url, { headers: opts.headers, signal: controller.signal });
    if (!response.ok || !response.body) throw new Error(`event stream answered ${response.status}`);
    for await (const event of serverSentEvents(response.body)) {
      events.push(event);
      if (opts.until?.(event)) break;
    }
  } catch (error) {
    if ((error as Error).name !== "AbortError") throw error;
  } finally {
    clearTimeout(timer);
  }
  return events;
}

export type SseEvent = ServerSentEvent;

/** Pays an order end to end through the relayer, as a wallet would: quote and order `tier` on `deviceId`,
 * the test wallet (account 7) signs the rail the order offers (the SDK's choice: the EIP-3009 authorization
 * where the token has it, as the local stack's has) and the relayer submits it; with `until` (default
 * "success") waits for the order to be paid (the SDK's payOrder) or, "powered_on", for its device to be on
 * too; "submitted" signs a permit instead and returns once the relayer took it (POST /v1/orders/{id}/permit).
 * Returns the order as created and as last read. */
export async function payOrder(
  stack: Stack,
  opts: { deviceId?: string; tier?: string; walletIndex?: number; until?: "submitted" | "success" | "powered_on"; timeoutMs?: number } = {},
): Promise<{ created: OrderBody; order: OrderBody }> {
  const created = await createOrder(stack, opts.deviceId ?? stack.sample.devices[0].id, opts.tier ?? "1h");
  const until = opts.until ?? "success";
  if (until === "submitted") {
    const relayed = await pay(stack, created, "relayed-permit", opts.walletIndex ?? TEST_WALLET_INDEX);
    if (relayed.status !== 202) throw new Error(`the relayer refused the permit: ${relayed.status} ${JSON.stringify(relayed.body)}`);
    return { created, order: created };
  }
  const { account, publicClient } = clients(stack, opts.walletIndex ?? TEST_WALLET_INDEX);
  const paid = await payWithSdk(paymentClient(stack), created as Order, account, {
    publicClient,
    pollIntervalMs: 50,
    timeoutMs: opts.timeoutMs ?? 30_000,
  });
  if (until === "success") return { created, order: paid as OrderBody };
  const order = await waitForOrder(
    stack,
    created.id,
    (o) => o.status === "success" && (until !== "powered_on" || Boolean(o.device?.poweredOnAt)),
    opts.timeoutMs ?? 30_000,
  );
  return { created, order };
}
