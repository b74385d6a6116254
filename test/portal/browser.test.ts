// The developer portal and the scan-to-pay checkout in a real browser (Chromium through playwright-core),
// against the whole system on PGlite: sign in; create an API key, use it, revoke it and see it fail; add a
// webhook endpoint, press Send test and see the signed delivery arrive (and in the delivery log), redeliver
// it; pay an order from its checkout page with an injected EIP-1193 wallet and follow it to success; see
// the revenue; see an order's EIP-681 transfer request on its page and follow a transfer to success. Screenshots go to test-results/portal/screenshots/.
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import type { Browser, BrowserContext, Page } from "playwright-core";
import { erc20Abi } from "viem";
import { parsePaymentRequest } from "../../sdk/src/index.ts";
import { localAccount } from "../../lib/sample-data.ts";
import { injectWallet, launchBrowser, screenshots, watchPageErrors } from "../support/browser.ts";
import { TEST_WALLET_INDEX, clients, createOrder, waitForOrder } from "../support/pay.ts";
import { type Stack, startStack } from "../support/stack.ts";
import { type WebhookReceiver, startWebhookReceiver } from "../support/webhook-receiver.ts";

const shot = screenshots("portal");

describe("developer portal and checkout in a browser", { concurrency: false }, () => {
  let stack: Stack;
  let receiver: WebhookReceiver;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  let errors: string[];
  let base: string;
  let subscriptionPath: string | undefined;

  before(
    async () => {
      receiver = await startWebhookReceiver();
      stack = await startStack({ label: "portal", database: "pglite", relayerEnv: { WEBHOOK_RETRY_BASE_MS: "50" } });
      base = stack.relayerUrl;
      browser = await launchBrowser();
      context = await browser.newContext({ viewport: { width: 1280, height: 860 }, deviceScaleFactor: 1 });
      await context.grantPermissions(["clipboard-read", "clipboard-write"], { origin: base });
      context.setDefaultTimeout(10_000);
      page = await context.newPage();
      page.on("dialog", (dialog) => void dialog.accept());
      errors = watchPageErrors(page);
    },
    { timeout: 240_000 },
  );
  after(async () => {
    await browser?.close();
    await stack?.stop();
    await receiver?.close();
  });

  it("signs in with the portal login; the session cookie is HttpOnly, SameSite=Strict, scoped to /portal", async () => {
    await page.goto(`${base}/portal`);
    assert.match(page.url(), /\/portal\/login$/);
    await page.getByLabel("Email").fill(stack.sample.email);
    await page.getByLabel("Password").fill("wrong password");
    await page.getByRole("button", { name: "Sign in" }).click();
    assert.equal(await page.locator(".notice-error").textContent(), "Wrong email or password.");
    errors.length = 0; // the failed sign-in answered 422 on purpose
    await page.getByLabel("Password").fill(stack.sample.password);
    await shot(page, "01-sign-in");
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.waitForURL(/\/portal\/keys$/);
    assert.equal(await page.locator("h1").textContent(), "API keys");
    const session = (await context.cookies()).find((c) => c.name === "payg_session");
    assert.ok(session, "session cookie set");
    assert.equal(session.httpOnly, true);
    assert.equal(session.sameSite, "Strict");
    assert.equal(session.path, "/portal");
    assert.equal(session.secure, false, "not Secure over plain http (it is when served over TLS)");
    const headers = (await page.request.get(`${base}/portal/keys`)).headers();
    assert.match(headers["content-security-policy"], /script-src 'self'/);
    assert.equal(headers["x-frame-options"], "DENY");
  });

  it("refuses portal forms without the CSRF token, with a wrong one, or from another origin", async () => {
    const noToken = await page.request.post(`${base}/portal/keys`, { form: { name: "forged" }, maxRedirects: 0 });
    assert.equal(noToken.status(), 403);
    const wrong = await page.request.post(`${base}/portal/keys`, { form: { name: "forged", _csrf: "x".repeat(43) }, maxRedirects: 0 });
    assert.equal(wrong.status(), 403);
    const token = await page.locator('form[action="/portal/keys"] input[name="_csrf"]').getAttribute("value");
    const crossSite = await page.request.post(`${base}/portal/keys`, {
      form: { name: "forged", _csrf: token! },
      headers: { origin: "https://evil.example" },
      maxRedirects: 0,
    });
    assert.equal(crossSite.status(), 403);
    const keys = await stack.api("GET", "/v1/devices", { token: stack.sample.developerKey });
    assert.equal(keys.status, 200);
    await page.reload();
    assert.equal(await page.locator("#keys-table tr", { hasText: "forged" }).count(), 0, "no key was created");
  });

  it("creates an API key shown once with a copy button, uses it, revokes it and sees it rejected", async () => {
    await page.getByLabel("Name").fill("integration test key");
    await page.getByRole("button", { name: "Create key" }).click();
    const key = await page.locator("#new-key").inputValue();
    assert.match(key, /^payg_[0-9A-Za-z]{38}$/);
    await page.getByRole("button", { name: "Copy" }).click();
    await page.getByRole("button", { name: "Copied" }).waitFor();
    const copied = await page.evaluate(() => navigator.clipboard.readText()).catch(() => undefined);
    if (copied !== undefined) assert.equal(copied, key);
    const row = page.locator("#keys-table tr", { hasText: "integration test key" });
    assert.match((await row.locator("td").nth(1).textContent()) ?? "", new RegExp(`payg_.*${key.slice(-4)}$`));
    await shot(page, "02-api-key-created");

    const used = await stack.api("GET", "/v1/devices", { token: key });
    assert.equal(used.status, 200, used.text);
    await page.goto(`${base}/portal/keys`);
    assert.equal(await page.locator("#new-key").count(), 0, "the key is shown only once");
    assert.notEqual((await row.locator("td").nth(4).textContent())?.trim(), "never", "last used is shown");

    await row.getByRole("button", { name: "Revoke" }).click();
    await page.waitForURL(/notice=revoked/);
    assert.match((await row.textContent()) ?? "", /revoked/);
    const rejected = await stack.api("GET", "/v1/devices", { token: key });
    assert.equal(rejected.status, 401);
    await shot(page, "03-api-key-revoked");
  });

  it("adds a webhook endpoint, sends a test and sees the signed delivery arrive and in the log; redelivers it", async () => {
    subscriptionPath = "/portal-hook";
    await page.getByRole("link", { name: "Webhooks" }).click();
    await page.waitForURL(/\/portal\/webhooks$/);
    await shot(page, "04-webhooks-empty");
    await page.getByLabel("Endpoint URL").fill(receiver.url(subscriptionPath));
    await page.getByLabel("Description").fill("Order fulfilment service");
    await page.locator('input[name="events"][value="ticket.created"]').check();
    await page.locator('input[name="events"][value="device.powered_on"]').check();
    await page.getByRole("button", { name: "Add endpoint" }).click();
    const secret = await page.locator("#new-secret").inputValue();
    assert.match(secret, /^whsec_/);
    receiver.setSecret(subscriptionPath, secret);
    await shot(page, "05-webhook-created");

    await page.getByRole("button", { name: "Send test" }).click();
    const ping = await receiver.waitFor((d) => d.path === subscriptionPath && d.envelope?.type === "test.ping", 15_000, "test.ping");
    assert.ok(ping.standardOk && ping.serviceOk, ping.verifyError);
    const row = page.locator(`tbody.delivery[data-delivery-id="${ping.envelope!.id}"][data-status="succeeded"]`);
    await row.waitFor({ timeout: 15_000 });
    assert.match((await row.textContent()) ?? "", /test\.ping/);
    assert.match((await row.locator(".attempt").first().textContent()) ?? "", /200/);
    await shot(page, "06-webhook-delivered");

    await row.getByRole("button", { name: "Redeliver" }).click();
    const again = await receiver.waitFor((d) => d.path === subscriptionPath && d.n === 2, 15_000, "the redelivery");
    assert.equal(again.envelope!.id, ping.envelope!.id);
    await page
      .locator(`tbody.delivery[data-delivery-id="${ping.envelope!.id}"][data-attempts="2"][data-status="succeeded"]`)
      .waitFor({ timeout: 15_000 });

    // A flaky endpoint: the log shows each attempt with its status.
    receiver.respond(subscriptionPath, (_d, previous) => (previous.filter((p) => p.answered === 500).length < 2 ? 500 : 200));
    await page.getByRole("button", { name: "Send test" }).click();
    const retried = page.locator('tbody.delivery[data-event-type="test.ping"][data-attempts="3"][data-status="succeeded"]');
    await retried.waitFor({ timeout: 15_000 });
    await retried.locator("summary").click();
    assert.deepEqual(
      (await retried.locator(".attempt td:nth-child(4)").allTextContents()).map((t) => t.trim()),
      ["500", "500", "200"],
    );
    await shot(page, "06b-webhook-retried");
    receiver.respond(subscriptionPath, () => 200);
  });

  it("pays an order on its checkout page with a browser wallet and follows it to success", async () => {
    const order = await createOrder(stack, stack.sample.devices[0].id, "1h");
    const uri = order.paymentDetails.scanToPay.uri as string;
    assert.equal(uri, `${base}/pay/${order.id}`);
    const qr = await fetch(order.paymentDetails.scanToPay.qrCodeUrl);
    assert.equal(qr.headers.get("content-type"), "image/svg+xml");
    assert.match(await qr.text(), /^<svg[^>]*xmlns="http:\/\/www\.w3\.org\/2000\/svg"/);

    const buyer = await context.newPage();
    const buyerErrors = watchPageErrors(buyer);
    const wallet = await injectWallet(buyer, { rpcUrl: stack.chain.rpcUrl, account: localAccount(TEST_WALLET_INDEX) });
    await buyer.setViewportSize({ width: 1100, height: 860 });
    await buyer.goto(uri);
    assert.equal(await buyer.locator("#amount").textContent(), "$0.50");
    assert.equal(await buyer.locator("#device-name").textContent(), "Solar kiosk, Kibera");
    assert.match((await buyer.locator("#expiry").textContent()) ?? "", /^in \d+:\d\d/);
    assert.ok(await buyer.locator('img.qr[src$="/qr.svg"]').evaluate((img: HTMLImageElement) => img.complete && img.naturalWidth > 0));
    await shot(buyer, "07-checkout");

    await buyer.getByRole("button", { name: /Pay \$0\.50 with wallet/ }).click();
    await buyer.locator('#checkout[data-state="done"]').waitFor({ timeout: 30_000 });
    assert.match((await buyer.locator("#status").textContent()) ?? "", /Paid\. The device is on/);
    // The local stack's USDC has EIP-3009: the page signs the order's receive authorization (no permit nonce
    // to read from the chain) and the relayer pays on the authorization rail.
    assert.deepEqual([...new Set(wallet.calls.map((c) => c.method))].sort(), [
      "eth_chainId",
      "eth_requestAccounts",
      "eth_signTypedData_v4",
    ]);
    const signed = JSON.parse((wallet.calls.find((c) => c.method === "eth_signTypedData_v4")!.params as string[])[1]!) as {
      primaryType: string;
    };
    assert.equal(signed.primaryType, "ReceiveWithAuthorization");
    const paid = await waitForOrder(stack, order.id, (o) => o.status === "success");
    assert.equal(paid.payment.rail, "authorization");
    assert.equal((await buyer.locator("#tx-hash").textContent())?.trim(), paid.payment.transactionHash);
    await shot(buyer, "08-checkout-paid");

    // The customer reports a problem from the same page: ticket.created reaches the endpoint.
    await buyer.getByText("Report a problem with this device").click();
    await buyer.getByLabel("Details").fill("The light is on but the socket has no power.");
    await buyer.getByRole("button", { name: "Send report" }).click();
    await buyer.getByText(/Thank you\. Your report tkt_/).waitFor();
    const ticket = await receiver.waitFor(
      (d) => d.path === subscriptionPath && d.envelope?.type === "ticket.created",
      15_000,
      "ticket.created",
    );
    assert.equal(ticket.envelope!.data.orderId, order.id);

    const phone = await context.newPage();
    await phone.setViewportSize({ width: 390, height: 844 });
    await phone.goto(uri);
    await shot(phone, "09-checkout-paid-mobile");
    await phone.close();
    await buyer.close();
    assert.deepEqual(buyerErrors, []);

    const succeeded = await receiver.waitFor(
      (d) => d.path === subscriptionPath && d.envelope?.type === "payment.succeeded" && d.envelope.data.orderId === order.id,
      15_000,
      "payment.succeeded",
    );
    assert.ok(succeeded.standardOk && succeeded.serviceOk);
  });

  it("shows the tenant's revenue: totals, a server-drawn chart, splits and earnings", async () => {
    await page.goto(`${base}/portal/revenue?range=24h`);
    assert.equal(await page.locator("#revenue-orders").textContent(), "1");
    assert.equal(await page.locator("#revenue-total").textContent(), "$0.50");
    assert.equal(await page.locator("svg.chart rect.chart-bar").count(), 1);
    assert.match((await page.locator("#splits-table tbody tr").first().textContent()) ?? "", /0\.25 USDC.*0\.20 USDC.*0\.05 USDC/s);
    assert.match((await page.locator("#earnings-table").textContent()) ?? "", /Asset owner A/);
    await shot(page, "10-revenue-24h");
    await page.getByRole("link", { name: "7 days" }).click();
    await page.waitForURL(/range=7d/);
    await shot(page, "11-revenue-7d");
    // The page's data is the API's: GET /v1/revenue/overview with the session's JWT (a portal route: no API key).
    const session = (await context.cookies()).find((c) => c.name === "payg_session");
    assert.ok(session, "signed in");
    const api = await stack.api("GET", "/v1/revenue/overview?range=24h", { token: session.value });
    assert.equal(api.status, 200);
    assert.equal((await stack.api("GET", "/v1/revenue/overview?range=24h", { token: stack.sample.developerKey })).status, 401);
    assert.equal(api.body.totals.orders, 1);
  });

  it("pays a USDT order (no EIP-2612, no EIP-3009) on its checkout page: the wallet approves Permit2 once and signs it", async () => {
    const order = await createOrder(stack, stack.sample.devices[0].id, "1h", "USDT");
    assert.ok(order.paymentDetails.permit2 && !order.paymentDetails.permit && !order.paymentDetails.authorization);
    const buyer = await context.newPage();
    const buyerErrors = watchPageErrors(buyer);
    // The test wallet holds USDT and has not approved Permit2 for it on this stack: the page asks it to, once.
    const wallet = await injectWallet(buyer, { rpcUrl: stack.chain.rpcUrl, account: localAccount(TEST_WALLET_INDEX) });
    await buyer.goto(order.paymentDetails.scanToPay.uri);
    assert.match((await buyer.locator('li[data-step="sign"]').textContent()) ?? "", /the first time, approve Permit2 for this token/);
    await buyer.getByRole("button", { name: /Pay \$0\.50 with wallet/ }).click();
    await buyer.locator('#checkout[data-state="done"]').waitFor({ timeout: 60_000 });
    await shot(buyer, "12b-checkout-usdt-permit2-paid");
    const methods = wallet.calls.map((c) => c.method);
    assert.ok(methods.includes("eth_sendTransaction"), "the wallet approved Permit2 for the token");
    const signed = JSON.parse((wallet.calls.find((c) => c.method === "eth_signTypedData_v4")!.params as string[])[1]!) as {
      primaryType: string;
    };
    assert.equal(signed.primaryType, "PermitWitnessTransferFrom");
    const paid = await waitForOrder(stack, order.id, (o) => o.status === "success");
    assert.equal(paid.payment.rail, "permit2");
    assert.equal(paid.payment.payer, localAccount(TEST_WALLET_INDEX).address);
    assert.deepEqual(buyerErrors, []);
  });

  it("lists the endpoint, disables it, and signs out", async () => {
    await page.goto(`${base}/portal/webhooks`);
    await shot(page, "12-webhooks-list");
    await page.locator("#subscriptions-table a.btn", { hasText: "Manage" }).first().click();
    await page.getByRole("button", { name: "Disable" }).click();
    await page.waitForURL(/notice=disabled/);
    assert.match((await page.locator(".page-head").textContent()) ?? "", /disabled/);
    await page.getByRole("button", { name: "Sign out" }).click();
    await page.waitForURL(/\/portal\/login\?notice=signed_out/);
    await page.goto(`${base}/portal/keys`);
    assert.match(page.url(), /\/portal\/login$/);
    assert.deepEqual(errors, []);
  });

  it("shows the order's EIP-681 request (QR code, deposit address, amount, copy button) and follows a transfer from elsewhere to success", async () => {
    const order = await createOrder(stack, stack.sample.devices[0].id, "1h");
    const transfer = order.paymentDetails.transfer;
    const phone = await context.newPage();
    const phoneErrors = watchPageErrors(phone);
    await phone.setViewportSize({ width: 390, height: 844 });
    await phone.goto(order.paymentDetails.scanToPay.uri as string);
    const qr = phone.locator('img.qr[src$="/transfer.svg"]');
    await qr.scrollIntoViewIfNeeded();
    assert.ok(await qr.evaluate((img: HTMLImageElement) => img.complete && img.naturalWidth > 0), "the transfer QR code renders");
    assert.equal((await phone.locator("#deposit-address").textContent())?.trim(), transfer.depositAddress);
    assert.equal((await phone.locator("#transfer-uri").textContent())?.trim(), transfer.uri);
    assert.equal(await phone.locator("#transfer-amount").textContent(), "0.50 USDC");
    await phone.getByRole("button", { name: "Copy address" }).click();
    await phone.getByRole("button", { name: "Copied" }).waitFor();
    assert.equal(await phone.evaluate(() => navigator.clipboard.readText()), transfer.depositAddress);
    await shot(phone, "13-checkout-transfer-mobile");

    // Another wallet pays the request with a plain transfer: the page follows the order to success all the same.
    const { walletClient, publicClient } = clients(stack);
    const request = parsePaymentRequest(transfer.uri as string, { chainId: stack.chain.record.chainId });
    const hash = await walletClient.writeContract({
      address: request.token,
      abi: erc20Abi,
      functionName: "transfer",
      args: [request.to, request.amount],
    });
    await publicClient.waitForTransactionReceipt({ hash });
    await phone.locator('#checkout[data-state="done"]').waitFor({ timeout: 60_000 });
    assert.match((await phone.locator("#status").textContent()) ?? "", /Paid\. The device is on/);
    const paid = await waitForOrder(stack, order.id, (o) => o.status === "success");
    assert.equal(paid.payment.rail, "transfer");
    assert.equal((await phone.locator("#tx-hash").textContent())?.trim(), paid.payment.transactionHash);
    await shot(phone, "14-checkout-transfer-paid");
    await phone.close();
    assert.deepEqual(phoneErrors, []);
  });
});
