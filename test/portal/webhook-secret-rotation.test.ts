// Rotating a webhook endpoint's signing secret from the developer portal, in a real browser (Chromium
// through playwright-core) on PGlite: the Rotate button shows the new secret once, the endpoint's facts
// name the previous secret and until when it still signs, and a test delivery sent next verifies with the
// new secret on a real receiver.
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import type { Browser, Page } from "playwright-core";
import { launchBrowser, watchPageErrors } from "../support/browser.ts";
import { type Stack, startStack } from "../support/stack.ts";
import { type WebhookReceiver, startWebhookReceiver } from "../support/webhook-receiver.ts";

describe("webhook secret rotation in the portal", { concurrency: false }, () => {
  let stack: Stack;
  let receiver: WebhookReceiver;
  let browser: Browser;
  let page: Page;
  let errors: string[];

  before(
    async () => {
      receiver = await startWebhookReceiver();
      stack = await startStack({ label: "portal-rotation", database: "pglite", indexer: false });
      browser = await launchBrowser();
      const context = await browser.newContext();
      context.setDefaultTimeout(15_000);
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

  it("rotates the secret with the Rotate button, shows it once, and deliveries verify with it", async () => {
    const base = stack.relayerUrl;
    await page.goto(`${base}/portal/login`);
    await page.getByLabel("Email").fill(stack.sample.email);
    await page.getByLabel("Password").fill(stack.sample.password);
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.waitForURL(/\/portal\/keys$/);
    await page.goto(`${base}/portal/webhooks`);
    await page.getByLabel("Endpoint URL").fill(receiver.url("/rotated"));
    await page.locator('input[name="events"][value="ticket.created"]').check();
    await page.getByRole("button", { name: "Add endpoint" }).click();
    const first = await page.locator("#new-secret").inputValue();
    assert.match(first, /^whsec_/);

    await page.getByRole("button", { name: "Rotate" }).click();
    await page.waitForURL(/\/rotate-secret$/);
    const second = await page.locator("#new-secret").inputValue();
    assert.match(second, /^whsec_/);
    assert.notEqual(second, first);
    const facts = (await page.locator("dl.facts").textContent()) ?? "";
    assert.ok(facts.includes(`whsec_...${second.slice(-4)}`), facts);
    assert.match(facts, new RegExp(`Previous secret whsec_\\.\\.\\.${first.slice(-4).replace(/[+/=]/g, "\\$&")} also signs until`));

    // Shown once: the endpoint's page, loaded again, has hints only.
    const subscriptionUrl = page.url().replace(/\/rotate-secret$/, "");
    await page.goto(subscriptionUrl);
    assert.equal(await page.locator("#new-secret").count(), 0);
    assert.ok(!(await page.content()).includes(second));

    receiver.setSecret("/rotated", second);
    await page.getByRole("button", { name: "Send test" }).click();
    const ping = await receiver.waitFor((d) => d.path === "/rotated" && d.envelope?.type === "test.ping", 60_000, "test.ping");
    assert.ok(ping.standardOk, ping.verifyError);
    assert.deepEqual(errors, []);
  });
});
