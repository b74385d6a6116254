// `npm run demo`: the mission as a user sees it, against the stack `npm start` runs (.local/stack.json).
// A quote, an order, one signature (an EIP-3009 authorization where the token has it, as the local stack's USDC
// has; else an EIP-2612 permit), the relayer pays, the order's event stream shows success, the
// device powers on, the 50/40/10 split appears with its transaction, a signed webhook arrives at a local
// receiver and verifies, the public stats move. Then once on every other rail the chain offers, each a new
// order followed to success through the relayer: an EIP-2612 permit, a Permit2 signature in the second stablecoin,
// USDT, which has neither EIP-2612 nor EIP-3009 (the wallet approves Permit2 once, with a transaction of its own), and a 2-of-3 smart-contract account paying by authorization with
// its ERC-1271 signature (its factory, a test double, is deployed here from the build's artifact: the local
// deployment holds the product's contracts only). Then a cash payment by an agent for a device of another
// asset owner, split by that device's own split into its own owner and operator; then a telemetry batch in
// the sandbox that gets anchored on-chain. The quotes, the orders, the signatures, the relayed payments, the
// event stream and the webhook's verification go through the SDK (sdk/src, the package integrators install).
import { readFile } from "node:fs/promises";
import http from "node:http";
import path from "node:path";
import { createPublicClient, createWalletClient, defineChain, erc20Abi, http as viemHttp, maxUint256, size } from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { repoRoot } from "../ignition/deployment-records.ts";
import { call } from "../lib/api-call.ts";
import { accountSigner, deployAccount, deployAccountFactory, predictAccount } from "../lib/smart-account.ts";
import {
  type Order,
  PERMIT2_ADDRESS,
  createPaymentClient,
  paidOrFailed,
  paymentDetailsOf,
  serverSentEvents,
  signOrderPayment,
  submitOrderPayment,
  toAddress,
  unwrap,
  verifyWebhook,
  waitForOrder,
} from "../sdk/src/index.ts";

type StackFile = {
  chainId: number;
  /** demoWebhookReceiver: the one local callback URL `npm start` allowlists (DEMO_WEBHOOK_PORT). */
  endpoints: { rpc: string; paymentApi: string; sandboxApi: string; demoWebhookReceiver?: string };
  sample: {
    email: string;
    password: string;
    apiKeys: { developer: string; agent: string };
    energyClient?: { clientId: string; clientSecret: string };
  };
  testWallet: { address: `0x${string}`; privateKey: `0x${string}` };
};

const stackPath = path.join(path.resolve(repoRoot, process.env.LOCAL_STACK_DIR || ".local"), "stack.json");
const stack = JSON.parse(
  await readFile(stackPath, "utf8").catch(() => {
    console.error("No .local/stack.json: start the stack first with `npm start` (in another terminal).");
    process.exit(1);
  }),
) as StackFile;
const api = stack.endpoints.paymentApi;
const started = Date.now();
let stepNo = 0;
const say = (title: string, detail = "") =>
  console.log(`\n${++stepNo}. ${title} (+${((Date.now() - started) / 1000).toFixed(1)} s)${detail ? `\n   ${detail}` : ""}`);

type ReceiptSettlement = { split: string; transactionHash: string; legs: Array<{ leg: string; amount: string; recipient: string }> };

/** A receipt's settlement: which split contract, in which transaction, each leg to whom. */
function settlementLines(settlement: ReceiptSettlement | null): string {
  if (!settlement) return "not settled yet (see the portal's revenue page)";
  return [
    `split ${settlement.split}, tx ${settlement.transactionHash}`,
    ...settlement.legs.map((l) => `${l.leg} ${l.amount} -> ${l.recipient}`),
  ].join("\n   ");
}

/** Reads an SSE stream until `until` returns true for an event; returns the events' names. */
async function follow(url: string, until: (event: string) => boolean): Promise<string[]> {
  const seen: string[] = [];
  const response = await fetch(url, { headers: { accept: "text/event-stream" } });
  if (!response.ok || !response.body) throw new Error(`the event stream answered ${response.status}`);
  for await (const { event, comment } of serverSentEvents(response.body)) {
    if (comment) continue;
    seen.push(event);
    if (until(event)) break;
  }
  return seen;
}

// A webhook receiver on loopback, at the address `npm start` allowlisted for it (stack.json), subscribed
// through the API with the portal login.
const received: Array<{ type: string; data: Record<string, unknown> }> = [];
/** The description of the demo's subscription: a later run finds an earlier run's by it. */
const DEMO_SUBSCRIPTION = "demo receiver";
let secret = "";
const receiver = http.createServer(async (req, res) => {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  try {
    const event = verifyWebhook({ secret, body: Buffer.concat(chunks), headers: req.headers });
    received.push(event);
    res.writeHead(204).end();
  } catch (error) {
    console.log(`   rejected a delivery: ${(error as Error).message}`);
    res.writeHead(400).end();
  }
});
const receiverUrl = stack.endpoints.demoWebhookReceiver ?? "http://127.0.0.1:8790/hooks";
const receiverAt = new URL(receiverUrl);
await new Promise<void>((resolve) => {
  receiver.once("error", (error: NodeJS.ErrnoException) => {
    console.error(
      error.code === "EADDRINUSE"
        ? `Port ${receiverAt.port} is taken: the demo's webhook receiver listens there (${receiverUrl}). Stop what listens on it, or restart \`npm start\` with another DEMO_WEBHOOK_PORT.`
        : `The demo's webhook receiver cannot listen at ${receiverUrl}: ${error.message}`,
    );
    process.exit(1);
  });
  receiver.listen(Number(receiverAt.port || 80), receiverAt.hostname.replace(/^\[|\]$/g, ""), resolve);
});

try {
  const { accessToken: jwt } = await call("POST", `${api}/auth/login`, { email: stack.sample.email, password: stack.sample.password });
  // An earlier run's subscription at this receiver (kept, so that the portal shows its deliveries) would deliver
  // with its own secret, which this run's receiver refuses: it goes first.
  const earlier = await call<{ data: Array<{ id: string; url: string; description: string | null }> }>(
    "GET",
    `${api}/webhooks/subscriptions`,
    undefined,
    jwt,
  );
  for (const old of earlier.data.filter((s) => s.url === receiverUrl && s.description === DEMO_SUBSCRIPTION)) {
    await call("DELETE", `${api}/webhooks/subscriptions/${old.id}`, undefined, jwt);
  }
  const subscription = await call(
    "POST",
    `${api}/webhooks/subscriptions`,
    { url: receiverUrl, eventTypes: ["payment.*", "split.settled", "device.powered_on"], description: DEMO_SUBSCRIPTION },
    jwt,
  );
  secret = subscription.secret;
  say("A webhook receiver listens and is subscribed", `${receiverUrl} (subscription ${subscription.id})`);

  const statsBefore = await call("GET", `${api}/public/stats`);
  const deviceId = "kiosk-nbo-001";
  const client = createPaymentClient({ baseUrl: api });
  const quote = unwrap(await client.POST("/quote", { body: { deviceId, chain: "local", token: "USDC", tier: "1h" } }), "POST /quote");
  say("Quote", `${deviceId}, tier 1h: $${quote.amountUsd} = ${quote.tokenAmount} USDC base units, locked until ${quote.expiresAt}`);

  const order = unwrap(
    await client.POST("/orders", { body: { deviceId, chain: "local", token: "USDC", amountUsd: quote.amountUsd, quoteId: quote.quoteId } }),
    "POST /orders",
  );
  say("Order", `${order.id} is ${order.status}; voucher signed by the quote signer, expires ${order.expiresAt}`);

  // The SDK signs the rail the order offers: the EIP-3009 receive authorization where the token has it (USDC),
  // else the EIP-2612 permit (its nonce read from the chain).
  const wallet = privateKeyToAccount(stack.testWallet.privateKey);
  const signed = await signOrderPayment(order, wallet, { rpcUrl: stack.endpoints.rpc });
  if (signed.rail === "authorization") {
    say(
      "The wallet signs one EIP-3009 receive authorization",
      `${wallet.address}, valid before ${order.expiresAt}; it sends no transaction and pays no gas`,
    );
  } else if (signed.rail === "permit") {
    say(
      "The wallet signs one EIP-2612 permit (the token has no EIP-3009)",
      `${wallet.address}, nonce ${signed.nonce}; it sends no transaction and pays no gas`,
    );
  }

  const streaming = follow(`${api}/orders/${order.id}/events`, (event) => event === "device.powered_on");
  const relay = await submitOrderPayment(client, order.id, signed);
  say(
    `The relayer submits ${signed.rail === "authorization" ? "payWithAuthorization" : "payWithPermit"} and pays the gas`,
    `relay ${relay.status}`,
  );
  say("The order's event stream (opened before paying)", (await streaming).join(" -> "));

  const status = await call("GET", `${api}/devices/${deviceId}/status`);
  say("The device is powered on", `online ${status.online}, powered on ${status.poweredOn}, session ends ${status.sessionEndsAt}`);

  const receipt = await call("GET", `${api}/orders/${order.id}/receipt`);
  say(`The 50/40/10 split, in the payment's transaction, by ${deviceId}'s own split`, settlementLines(receipt.settlement));

  const deadline = Date.now() + 15_000;
  while (!received.some((e) => e.type === "split.settled") && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
  say("Signed webhooks arrived and verified", received.map((e) => e.type).join(", ") || "none yet (see the portal's delivery log)");

  // The public stats are computed at most every 5 s: read them until they show the payment, at most that long.
  const moved = (s: typeof statsBefore) =>
    s.powerSessions !== statsBefore.powerSessions && s.onchainVolumeUsd !== statsBefore.onchainVolumeUsd;
  const statsDeadline = Date.now() + 6_000;
  let statsAfter = await call("GET", `${api}/public/stats`);
  while (!moved(statsAfter) && Date.now() < statsDeadline) {
    await new Promise((r) => setTimeout(r, 250));
    statsAfter = await call("GET", `${api}/public/stats`);
  }
  say(
    "The public stats moved",
    `power sessions ${statsBefore.powerSessions} -> ${statsAfter.powerSessions}, on-chain volume $${statsBefore.onchainVolumeUsd} -> $${statsAfter.onchainVolumeUsd}`,
  );

  // Every other rail, once each: a new order, signed, submitted to the relayer and followed to success there.
  const chain = defineChain({
    id: stack.chainId,
    name: "local",
    nativeCurrency: { name: "Ether", symbol: "ETH", decimals: 18 },
    rpcUrls: { default: { http: [stack.endpoints.rpc] } },
  });
  const chainClient = createPublicClient({ chain, transport: viemHttp(stack.endpoints.rpc) });
  const walletClient = createWalletClient({ account: wallet, chain, transport: viemHttp(stack.endpoints.rpc) });
  const railDevice = "kiosk-nbo-002";
  const newOrder = async (token = "USDC"): Promise<Order> => {
    // The first quote in USDT creates the device's split in it: 409 split_not_ready (Retry-After) until it is mined.
    const quote = () => client.POST("/quote", { body: { deviceId: railDevice, chain: "local", token, tier: "30m" } });
    const deadline = Date.now() + 60_000;
    let quoted = await quote();
    while (quoted.response.status === 409 && quoted.error?.error.code === "split_not_ready" && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, Number(quoted.response.headers.get("retry-after") ?? "1") * 1000));
      quoted = await quote();
    }
    const q = unwrap(quoted, "POST /quote");
    return unwrap(
      await client.POST("/orders", {
        body: { deviceId: railDevice, chain: "local", token, amountUsd: q.amountUsd, quoteId: q.quoteId },
      }),
      "POST /orders",
    );
  };
  const paidLine = async (orderId: string) => {
    const paid = await waitForOrder(client, orderId, paidOrFailed, { timeoutMs: 30_000, pollIntervalMs: 200 });
    return `${paid.id} is ${paid.status}, rail ${paid.payment?.rail}, payer ${paid.payment?.payer}, tx ${paid.payment?.transactionHash}`;
  };

  const permitOrder = await newOrder();
  const permit = await signOrderPayment(permitOrder, wallet, { rail: "permit", rpcUrl: stack.endpoints.rpc });
  if (permit.rail !== "permit") throw new Error("the SDK signed another rail than the permit");
  await submitOrderPayment(client, permitOrder.id, permit);
  const permitDeadline = BigInt(paymentDetailsOf(permitOrder).permit!.message.deadline);
  say(
    "EIP-2612 permit: the wallet signs a permit, the relayer submits payWithPermit",
    `nonce ${permit.nonce}. Its deadline is no time: it is the order's EIP-712 digest (0x${permitDeadline.toString(16)}),\n` +
      "   which binds the permit to this order, so the token never expires it (the order's voucher expires, the permit\n" +
      "   does not). Prefer the EIP-3009 authorization or Permit2, whose signatures expire with the order.\n" +
      `   ${await paidLine(permitOrder.id)}`,
  );

  // The second stablecoin, USDT, has neither EIP-2612 nor EIP-3009 (as on many chains): Permit2 is its gasless rail.
  // The order settles through the device's own split in USDT, created by the first quote in it.
  const permit2Order = await newOrder("USDT");
  const permit2Details = paymentDetailsOf(permit2Order);
  if (permit2Details.permit || permit2Details.authorization) throw new Error("the USDT order offers a rail its token does not have");
  if (permit2Details.permit2) {
    const token = toAddress(permit2Details.token.address);
    const allowance = await chainClient.readContract({
      address: token,
      abi: erc20Abi,
      functionName: "allowance",
      args: [wallet.address, PERMIT2_ADDRESS],
    });
    let approval = "the wallet approved Permit2 before";
    if (allowance < BigInt(permit2Details.order.amount)) {
      const hash = await walletClient.writeContract({
        address: token,
        abi: erc20Abi,
        functionName: "approve",
        args: [PERMIT2_ADDRESS, maxUint256],
      });
      await chainClient.waitForTransactionReceipt({ hash });
      approval = `the wallet approves Permit2 once, with its own transaction ${hash}`;
    }
    // No rail asked for: the SDK picks Permit2, the only gasless rail the order offers.
    const signed = await signOrderPayment(permit2Order, wallet);
    if (signed.rail !== "permit2") throw new Error(`the SDK signed ${signed.rail} for a USDT order`);
    await submitOrderPayment(client, permit2Order.id, signed);
    say(
      "Permit2 in USDT, a stablecoin without EIP-2612 or EIP-3009: the wallet signs the order as Permit2's witness, the relayer submits payWithPermit2",
      `${approval}; the signature pays this order once and expires with it, into the device's USDT split ${permit2Details.split}.\n   ${await paidLine(permit2Order.id)}`,
    );
  } else {
    say("Permit2", "not on this chain: that rail is skipped");
  }

  // A 2-of-3 smart-contract account: the test wallet deploys its factory and the account, and funds it.
  const accountOrder = await newOrder();
  if (paymentDetailsOf(accountOrder).authorization) {
    const factory = await deployAccountFactory(walletClient, chainClient);
    const owners = Array.from({ length: 3 }, () => privateKeyToAccount(generatePrivateKey()));
    const account = await predictAccount(chainClient, factory, { owners, threshold: 2, salt: BigInt(Date.now()) });
    await deployAccount(walletClient, chainClient, account);
    const funding = await walletClient.writeContract({
      address: toAddress(paymentDetailsOf(accountOrder).token.address),
      abi: erc20Abi,
      functionName: "transfer",
      args: [account.address, 5_000_000n],
    });
    await chainClient.waitForTransactionReceipt({ hash: funding });
    const signed = await signOrderPayment(accountOrder, accountSigner(account), { rail: "authorization" });
    await submitOrderPayment(client, accountOrder.id, signed);
    say(
      "A 2-of-3 smart-contract account pays by EIP-3009 authorization (ERC-1271)",
      `account ${account.address}, deployed by its factory ${factory} and given 5 USDC by the test wallet.\n` +
        `   Two of its three owners sign: a ${size(signed.body.signature)}-byte signature, which the token checks by asking the\n` +
        `   account (ERC-1271 isValidSignature) in its bytes overload. An account not deployed yet pays the same way, its\n` +
        `   signature wrapped in ERC-6492.\n   ${await paidLine(accountOrder.id)}`,
    );
  } else {
    say("A smart-contract account", "the token has no EIP-3009 authorization: that payment is skipped");
  }

  // A device of another asset owner and another operator: its payment goes through its own split.
  const cashDeviceId = "charger-los-002";
  const cashQuote = await call("POST", `${api}/quote`, { deviceId: cashDeviceId, chain: "local", token: "USDC", tier: "30m" });
  const cashOrder = await call("POST", `${api}/orders`, {
    deviceId: cashDeviceId,
    chain: "local",
    token: "USDC",
    amountUsd: cashQuote.amountUsd,
    quoteId: cashQuote.quoteId,
  });
  await call("POST", `${api}/orders/${cashOrder.id}/cash`, undefined, stack.sample.apiKeys.agent);
  const cashDeadline = Date.now() + 20_000;
  let cashPaid = await call("GET", `${api}/orders/${cashOrder.id}`);
  while (cashPaid.status !== "success" && Date.now() < cashDeadline) {
    await new Promise((r) => setTimeout(r, 200));
    cashPaid = await call("GET", `${api}/orders/${cashOrder.id}`);
  }
  say(
    `An agent confirms a cash payment for ${cashDeviceId}`,
    `${cashOrder.id} is ${cashPaid.status}, rail ${cashPaid.payment?.rail}, tx ${cashPaid.payment?.transactionHash}`,
  );
  const cashReceipt = await call("GET", `${api}/orders/${cashOrder.id}/receipt`);
  say(`Split by ${cashDeviceId}'s own split, into its own asset owner and operator`, settlementLines(cashReceipt.settlement));
  const assets = await call<{
    data: Array<{ deviceId: string; payout: { assetOwner: string; operator: string; split: string; splitStatus: string } }>;
  }>("GET", `${api}/assets`, undefined, jwt);
  say(
    "Each asset has a split of its own (GET /v1/assets)",
    assets.data
      .map(
        ({ deviceId: id, payout: p }) =>
          `${id.padEnd(16)} split ${p.split} (${p.splitStatus})  owner ${p.assetOwner}  operator ${p.operator}`,
      )
      .join("\n   "),
  );

  if (stack.sample.energyClient) {
    const sandbox = stack.endpoints.sandboxApi;
    const form = new URLSearchParams({
      grant_type: "client_credentials",
      client_id: stack.sample.energyClient.clientId,
      client_secret: stack.sample.energyClient.clientSecret,
    });
    const tokenResponse = await fetch(`${sandbox}/auth/token`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: form,
    });
    const { access_token: token } = (await tokenResponse.json()) as { access_token: string };
    const meter = await call("GET", `${sandbox}/devices/mtr-kariakoo-001`, undefined, token);
    const now = Date.now();
    const readings = Array.from({ length: 12 }, (_, i) => ({
      reading_id: `demo-${now}-${i}`,
      device_ts: new Date(now - (12 - i) * 300_000).toISOString(),
      energy_wh_cumulative: meter.last_energy_wh_cumulative + (i + 1) * 400,
      meter_epoch: meter.meter_epoch,
      sequence_number: meter.last_sequence_number + i + 1,
      measurement_quality: "good",
      active_power_w: 4_800,
    }));
    const batch = await call("POST", `${sandbox}/telemetry:batch`, { device_id: "mtr-kariakoo-001", readings }, token);
    say(
      "A telemetry batch in the sandbox",
      `batch ${batch.batch_id}: ${batch.accepted} accepted, continuity ${batch.verification.continuity}, attestation ${batch.attestation.status}`,
    );
    const capabilities = await call("GET", `${sandbox}/capabilities`);
    const refs = (capabilities.sample_data?.evidence ?? [])
      .filter((e: { live: boolean }) => e.live)
      .map((e: { evidence_ref: string }) => e.evidence_ref);
    let anchored: { ref: string; energy: { readings: number; merkle_root: string; anchor: { tx: string } } } | undefined;
    const anchorDeadline = Date.now() + 30_000;
    while (!anchored && Date.now() < anchorDeadline) {
      for (const ref of refs) {
        const evidence = await call("GET", `${sandbox}/evidence/${ref}`, undefined, token);
        const energy = evidence.clusters.energy_evidence;
        if (evidence.project_id === "prj_kariakoo_cold" && energy.anchor.status === "anchored" && energy.readings === readings.length)
          anchored = { ref, energy };
      }
      if (!anchored) await new Promise((r) => setTimeout(r, 300));
    }
    say(
      "The batch is anchored on-chain",
      anchored
        ? `evidence ${anchored.ref}: ${anchored.energy.readings} readings, merkle root ${anchored.energy.merkle_root}, tx ${anchored.energy.anchor.tx}`
        : "not yet: see GET /energy/v1/evidence of the project",
    );
  }
  console.log(`\nDone in ${((Date.now() - started) / 1000).toFixed(1)} s. The portal shows it all: ${api.replace(/\/v1$/, "")}/portal`);
} finally {
  receiver.close();
}
