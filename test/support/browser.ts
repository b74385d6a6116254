// A real browser for the page tests: Debian's Chromium driven by playwright-core, and an injected EIP-1193
// wallet whose signing key stays in the test process (a viem local account): the page asks
// window.ethereum.request, the test process answers (eth_signTypedData_v4 and eth_sendTransaction signed here;
// eth_call, eth_chainId and eth_getTransactionReceipt forwarded to the local chain).
import { mkdirSync } from "node:fs";
import path from "node:path";
import { type Browser, type Page, chromium } from "playwright-core";
import { type Hex, type LocalAccount, createWalletClient, http } from "viem";
import { rpc } from "../../lib/chain.ts";
import { repoRoot } from "../../ignition/deployment-records.ts";

export const CHROMIUM_PATH = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";
export const CHROMIUM_ARGS = [
  "--headless",
  "--no-sandbox",
  "--disable-gpu",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
  "--no-first-run",
];

export function launchBrowser(): Promise<Browser> {
  return chromium.launch({ executablePath: CHROMIUM_PATH, args: CHROMIUM_ARGS, headless: true });
}

/** test-results/<suite>/screenshots (git-ignored); returns a function that saves a full-page PNG. */
export function screenshots(suite: string) {
  const dir = path.join(repoRoot, "test-results", suite, "screenshots");
  mkdirSync(dir, { recursive: true });
  return async (page: Page, name: string) => {
    const file = path.join(dir, `${name}.png`);
    await page.screenshot({ path: file, fullPage: true });
    return file;
  };
}

/** Fails the test on any script error or failed request of the page (CSP violations included). */
export function watchPageErrors(page: Page): string[] {
  const problems: string[] = [];
  page.on("pageerror", (error) => problems.push(`page error: ${error.message}`));
  page.on("console", (message) => {
    if (message.type() === "error") problems.push(`console error: ${message.text()}`);
  });
  return problems;
}

function coerce(types: Record<string, Array<{ name: string; type: string }>>, primaryType: string, message: Record<string, unknown>) {
  const out: Record<string, unknown> = {};
  for (const field of types[primaryType] ?? []) {
    const value = message[field.name];
    out[field.name] = /^u?int\d*$/.test(field.type) ? BigInt(value as string) : value;
  }
  return out;
}

/** Installs window.ethereum in every document of `page` (call before page.goto). */
export async function injectWallet(page: Page, opts: { rpcUrl: string; account: LocalAccount }) {
  const calls: Array<{ method: string; params: unknown[] }> = [];
  await page.exposeFunction("__paygTestWallet", async (method: string, paramsJson: string) => {
    const params = JSON.parse(paramsJson) as unknown[];
    calls.push({ method, params });
    switch (method) {
      case "eth_requestAccounts":
      case "eth_accounts":
        return JSON.stringify([opts.account.address]);
      case "eth_chainId":
      case "eth_call":
      case "eth_blockNumber":
      case "eth_getTransactionReceipt":
        return JSON.stringify(await rpc(opts.rpcUrl, method, params));
      case "eth_sendTransaction": {
        const [tx] = params as [{ from: string; to: Hex; data: Hex }];
        if (tx.from.toLowerCase() !== opts.account.address.toLowerCase()) throw new Error(`unknown account ${tx.from}`);
        const wallet = createWalletClient({ account: opts.account, transport: http(opts.rpcUrl) });
        return JSON.stringify(await wallet.sendTransaction({ to: tx.to, data: tx.data, chain: null }));
      }
      case "eth_signTypedData_v4": {
        const [address, json] = params as [string, string];
        if (address.toLowerCase() !== opts.account.address.toLowerCase()) throw new Error(`unknown account ${address}`);
        const typed = JSON.parse(json) as {
          types: Record<string, Array<{ name: string; type: string }>>;
          domain: Record<string, unknown>;
          primaryType: string;
          message: Record<string, unknown>;
        };
        const { EIP712Domain: _domain, ...types } = typed.types;
        const signature = await opts.account.signTypedData({
          domain: typed.domain,
          types,
          primaryType: typed.primaryType,
          message: coerce(types, typed.primaryType, typed.message),
        } as Parameters<LocalAccount["signTypedData"]>[0]);
        return JSON.stringify(signature);
      }
      default:
        throw new Error(`the test wallet does not support ${method}`);
    }
  });
  await page.addInitScript(() => {
    const w = window as unknown as { ethereum: unknown; __paygTestWallet(method: string, params: string): Promise<string> };
    w.ethereum = {
      isPaygTestWallet: true,
      request: async ({ method, params }: { method: string; params?: unknown[] }) =>
        JSON.parse(await w.__paygTestWallet(method, JSON.stringify(params ?? []))),
      on() {},
      removeListener() {},
    };
  });
  return { calls };
}
