// The API reference pages (/v1/docs and /energy/docs, relayer/src/http/docs-page.ts) must not be framable by
// another site (clickjacking): they send a Content-Security-Policy with frame-ancestors 'none' and
// X-Frame-Options DENY, and run no inline script, so that the policy needs no 'unsafe-inline'. In Chromium,
// each page still renders the whole reference under that policy without a console error (a CSP violation is
// one), and a page of another origin that frames it gets nothing.
import assert from "node:assert/strict";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { after, before, describe, it } from "node:test";
import type { Browser, BrowserContext } from "playwright-core";
import { launchBrowser, screenshots, watchPageErrors } from "../support/browser.ts";
import { type Stack, startStack } from "../support/stack.ts";

const shot = screenshots("docs");

const PAGES = [
  { path: "/v1/docs", spec: "/v1/openapi.json", operation: "/quote" },
  { path: "/energy/docs", spec: "/energy/openapi.json", operation: "/auth/token" },
] as const;

/** The directives of a Content-Security-Policy header, by name. */
function directives(policy: string): Map<string, string[]> {
  const out = new Map<string, string[]>();
  for (const part of policy.split(";")) {
    const [name, ...values] = part.trim().split(/\s+/);
    if (name) out.set(name.toLowerCase(), values);
  }
  return out;
}

describe("API reference pages: framing refused, rendered under a strict policy", { concurrency: false }, () => {
  let stack: Stack;
  let browser: Browser;
  let context: BrowserContext;
  let framer: http.Server;
  let framerUrl: string;

  before(
    async () => {
      stack = await startStack({ label: "docs-headers", database: "pglite", indexer: false });
      browser = await launchBrowser();
      context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
      context.setDefaultTimeout(20_000);
      // Another origin (another port) whose page frames the reference page named by its query.
      framer = http.createServer((req, res) => {
        const target = new URL(req.url ?? "/", "http://framer").searchParams.get("src") ?? "";
        res.writeHead(200, { "content-type": "text/html; charset=utf-8" });
        res.end(
          `<!doctype html><title>framer</title><iframe id="victim" src="${stack.relayerUrl}${target}" width="800" height="600"></iframe>`,
        );
      });
      await new Promise<void>((resolve) => framer.listen(0, "127.0.0.1", resolve));
      framerUrl = `http://localhost:${(framer.address() as AddressInfo).port}`;
    },
    { timeout: 240_000 },
  );
  after(async () => {
    await browser?.close();
    await stack?.stop();
    // Only a framer that was started: a close callback never called would leave the hook pending, and the run
    // would report that instead of what failed in the set-up.
    if (framer) await new Promise((resolve) => framer.close(resolve));
  });

  for (const page of PAGES) {
    it(`${page.path}: CSP with frame-ancestors 'none', no inline script allowed or used, X-Frame-Options DENY`, async () => {
      const response = await fetch(`${stack.relayerUrl}${page.path}`);
      assert.equal(response.status, 200);
      const html = await response.text();
      assert.equal(response.headers.get("x-frame-options"), "DENY");
      const policy = response.headers.get("content-security-policy");
      assert.ok(policy, "a Content-Security-Policy");
      const csp = directives(policy);
      assert.deepEqual(csp.get("frame-ancestors"), ["'none'"]);
      assert.deepEqual(csp.get("script-src"), ["'self'"]);
      assert.deepEqual(csp.get("object-src"), ["'none'"]);
      assert.deepEqual(csp.get("base-uri"), ["'none'"]);
      assert.ok(!policy.includes("unsafe"), policy);
      assert.equal(response.headers.get("x-content-type-options"), "nosniff");
      // Every script is a file of the page's own (the policy would block an inline one).
      const scripts = [...html.matchAll(/<script\b([^>]*)>([\s\S]*?)<\/script>/g)];
      assert.ok(scripts.length >= 3);
      for (const [, attributes, body] of scripts) {
        assert.match(attributes!, /\bsrc="\/[^"]+"/);
        assert.equal(body!.trim(), "");
      }
      const init = await fetch(`${stack.relayerUrl}${page.path}/assets/reference.js`);
      assert.equal(init.status, 200);
      assert.match(init.headers.get("content-type") ?? "", /^text\/javascript/);
      assert.match(html, new RegExp(`data-spec-url="${page.spec.replace(/\./g, "\\.")}"`));
    });

    it(`${page.path}: renders the whole reference in Chromium without a console error (CSP violations included)`, async () => {
      const tab = await context.newPage();
      const errors = watchPageErrors(tab);
      try {
        await tab.goto(`${stack.relayerUrl}${page.path}`);
        const operation = tab
          .locator(".opblock-summary-path")
          .filter({ hasText: new RegExp(`^${page.operation}$`) })
          .first();
        await operation.waitFor();
        const documented = Object.keys(((await (await fetch(`${stack.relayerUrl}${page.spec}`)).json()) as { paths: object }).paths);
        assert.ok((await tab.locator(".opblock-summary-path").count()) >= documented.length, "every path is listed");
        await operation.click();
        await tab.locator(".opblock.is-open .responses-wrapper").first().waitFor();
        await tab.locator(".models, section.models").first().click();
        await tab.waitForTimeout(500);
        await shot(tab, page.path.replace(/\//g, "_").slice(1));
        assert.deepEqual(errors, []);
      } finally {
        await tab.close();
      }
    });

    it(`${page.path}: a page of another origin that frames it gets nothing`, async () => {
      const tab = await context.newPage();
      const messages: string[] = [];
      tab.on("console", (message) => messages.push(message.text()));
      try {
        await tab.goto(`${framerUrl}/?src=${encodeURIComponent(page.path)}`);
        await tab.locator("#victim").waitFor();
        // Wait until the frame has finished whatever it was going to load.
        const deadline = Date.now() + 15_000;
        let frame = tab.frames().find((f) => f !== tab.mainFrame());
        while (!frame && Date.now() < deadline) {
          await tab.waitForTimeout(100);
          frame = tab.frames().find((f) => f !== tab.mainFrame());
        }
        assert.ok(frame, "the iframe exists");
        await frame.waitForLoadState("load").catch(() => undefined);
        await tab.waitForTimeout(1_000);
        const reference = await frame
          .locator("#reference")
          .count()
          .catch(() => 0);
        const rendered = await frame
          .locator(".opblock-summary-path")
          .count()
          .catch(() => 0);
        assert.equal(reference + rendered, 0, `the framed page rendered (frame at ${frame.url()})`);
        assert.ok(
          messages.some((m) => /frame-ancestors|X-Frame-Options|Refused to (display|frame)/i.test(m)),
          `Chromium reports the refusal: ${JSON.stringify(messages)}`,
        );
      } finally {
        await tab.close();
      }
    });
  }
});
