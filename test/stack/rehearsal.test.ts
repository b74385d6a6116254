// `npm run rehearsal` as a user runs it: a chain like Base Sepolia (chain id 84532, a block every 2 s), the
// USDC-like token, ignition/modules/Payments.ts deployed to the `rehearsal` network from a parameters file,
// the indexer and the relayer in public-network mode, and a gasless payment and a cash payment end to end,
// then a wallet's payment on the Permit2 rail and two 2-of-3 smart accounts' by authorization (ERC-1271, and
// ERC-6492 from one not deployed yet). The script checks the webhooks itself (payment.confirmed only once the
// payment's block is 5 deep); this test checks that it says so, that its figures and the deployment record
// agree with a chain of 2 s blocks, that the orders the other payers paid show their rail and payer, each payer
// the one expected (the wallet; the factory's account of the owners and salt, a contract on the chain), then
// (REHEARSAL_KEEP) pays the order it left open from the checkout page in Chromium with a browser wallet, which
// signs USDC's receive authorization, and stops it with SIGTERM: exit 0.
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { mkdir, readFile, rm } from "node:fs/promises";
import path from "node:path";
import { describe, it } from "node:test";
import { createPublicClient, http, parseAbi } from "viem";
import { deploymentRecordPath, repoRoot } from "../../ignition/deployment-records.ts";
import type { Browser } from "playwright-core";
import { freePortRun, isListening } from "../../lib/processes.ts";
import { PERMIT2_ADDRESS } from "../../lib/permit2.ts";
import { localAccount } from "../../lib/sample-data.ts";
import type { RehearsalAccountPayment, RehearsalPayment, RehearsalResult } from "../../scripts/rehearsal.ts";
import { injectWallet, launchBrowser, watchPageErrors } from "../support/browser.ts";
import { testLogDir } from "../support/local-chain.ts";

/** The ports `npm run rehearsal` takes from REHEARSAL_PORT_BASE: chain, device cloud, indexer, relayer, receiver. */
const PORTS = 5;

const accountFactoryAbi = parseAbi(["function predictAccount(bytes[] signers, uint64 threshold, bytes32 salt) view returns (address)"]);

/** The order `payment` paid, as the running rehearsal's API shows it and its receipt: success, on `rail`, by `payer`. */
async function assertPaid(relayerUrl: string, payment: RehearsalPayment, rail: string, payer: string) {
  assert.equal(payment.rail, rail);
  assert.equal(payment.payer, payer);
  const order = (await (await fetch(`${relayerUrl}/v1/orders/${payment.orderId}`)).json()) as {
    status: string;
    payment: { rail: string; payer: string };
  };
  assert.equal(order.status, "success");
  assert.deepEqual([order.payment.rail, order.payment.payer], [rail, payer], `order ${payment.orderId}`);
  const receipt = (await (await fetch(`${relayerUrl}/v1/orders/${payment.orderId}/receipt`)).json()) as {
    payment: { rail: string; payer: string };
  };
  assert.deepEqual([receipt.payment.rail, receipt.payment.payer], [rail, payer], `order ${payment.orderId}'s receipt`);
}

describe("npm run rehearsal", () => {
  it(
    "deploys like the testnet section says, pays by signature and in cash, and payment.confirmed waits for 5 blocks; a wallet pays by Permit2, 2-of-3 smart accounts by ERC-1271 and ERC-6492; a browser wallet pays on the checkout page by EIP-3009",
    { timeout: 420_000 },
    async () => {
      const dir = path.join(testLogDir("rehearsal"), "rehearsal");
      await rm(dir, { recursive: true, force: true });
      await mkdir(dir, { recursive: true });
      const resultFile = path.join(dir, "..", "rehearsal-result.json");
      await rm(resultFile, { force: true });
      const base = await freePortRun(PORTS);
      const child = spawn("npm", ["run", "--silent", "rehearsal"], {
        cwd: repoRoot,
        env: {
          ...process.env,
          HARDHAT_DISABLE_TELEMETRY: "true",
          PONDER_TELEMETRY_DISABLED: "1",
          REHEARSAL_DIR: dir,
          REHEARSAL_PORT_BASE: String(base),
          REHEARSAL_RESULT_FILE: resultFile,
          REHEARSAL_KEEP: "1",
          // Passwords hashed with scrypt N=2^14, as every test stack does (test/support/stack.ts): not this
          // suite's subject, and some 3 CPU s a seed at the default 2^17.
          PASSWORD_SCRYPT_N: "16384",
        },
        stdio: ["ignore", "pipe", "pipe"],
        // A process group of its own, as a terminal gives a command: SIGTERM goes to the group at the end.
        detached: true,
      });
      let stdout = "";
      let stderr = "";
      child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString("utf8")));
      child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString("utf8")));
      const closed = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
        child.once("close", (code, signal) => resolve({ code, signal })),
      );
      let exited = false;
      void closed.then(() => (exited = true));
      let browser: Browser | undefined;
      try {
        // The flow ran and passed once the result file is there; the rehearsal keeps running with an open order.
        const deadline = Date.now() + 300_000;
        let result: RehearsalResult | undefined;
        while (!result) {
          assert.ok(!exited, `the rehearsal ended early\n${stdout}\n${stderr.slice(-4_000)}`);
          assert.ok(Date.now() < deadline, `no result within 300 s\n${stdout}\n${stderr.slice(-4_000)}`);
          result = await readFile(resultFile, "utf8").then(
            (text) => JSON.parse(text) as RehearsalResult,
            () => undefined,
          );
          if (!result) await new Promise((resolve) => setTimeout(resolve, 500));
        }
        // The rehearsal prints its verdict after writing the result file: the line may still be on its way.
        const verdict = () => stdout.split("\n").find((line) => line.startsWith("rehearsal ") && stdout.includes(`${line}\n`));
        while (!verdict() && !exited && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 100));
        const passed = verdict();
        assert.match(
          passed ?? "",
          /^rehearsal passed: chain 84532, a block every 2 s, CONFIRMATIONS=5; ready in [\d.]+ s; authorization payment submitted -> success/,
        );
        assert.equal(result.chainId, 84532);
        assert.equal(result.blockMs, 2_000);
        assert.equal(result.rail, "authorization", "the token has EIP-3009: the order offers USDC's own rail");
        assert.ok(result.confirmedDepth >= 5, `payment.confirmed at depth ${result.confirmedDepth}`);
        // Five blocks on top of the payment's block take at least four intervals after it was mined.
        assert.ok(
          result.minedToConfirmedWebhookMs >= 4 * result.blockMs,
          `mined -> payment.confirmed ${result.minedToConfirmedWebhookMs} ms`,
        );
        assert.ok(result.minedToSucceededWebhookMs < result.minedToConfirmedWebhookMs);
        assert.ok(result.submittedToSuccessMs > 0 && result.cashSubmittedToSuccessMs > 0);
        assert.match(
          passed ?? "",
          /; the wallet's permit2 payment \(Permit2 approved once\) from 0x[\da-fA-F]{40}, 65-byte signature -> success [\d.]+ s; a 2-of-3 smart account's authorization payment \(ERC-1271\) from 0x[\da-fA-F]{40}, \d+-byte signature -> success [\d.]+ s; an undeployed 2-of-3 smart account's authorization payment \(ERC-6492, deployed by it\) from 0x[\da-fA-F]{40}, \d+-byte signature -> success [\d.]+ s$/,
        );

        // The other payers' orders, read from the running rehearsal: the wallet paid on the Permit2 rail (Permit2
        // at its canonical address), each smart account by authorization from its own address, which is the
        // factory's account of its owners and salt, a contract now (the undeployed one was deployed by its payment).
        const kept = result.kept!;
        const chain = createPublicClient({ transport: http(kept.rpcUrl) });
        assert.ok(await chain.getCode({ address: PERMIT2_ADDRESS }), "Permit2 at its canonical address");
        await assertPaid(kept.relayerUrl, result.permit2, "permit2", localAccount(7).address);
        assert.equal(result.permit2.signatureBytes, 65);
        for (const [account, deployedBefore] of [
          [result.smartAccount, true],
          [result.undeployedSmartAccount, false],
        ] as Array<[RehearsalAccountPayment, boolean]>) {
          const predicted = await chain.readContract({
            address: account.factory,
            abi: accountFactoryAbi,
            functionName: "predictAccount",
            args: [account.owners, BigInt(account.threshold), account.salt],
          });
          assert.equal(account.threshold, 2);
          assert.equal(account.owners.length, 3);
          await assertPaid(kept.relayerUrl, account, "authorization", predicted);
          assert.equal(account.deployedBefore, deployedBefore);
          assert.ok(await chain.getCode({ address: predicted }), `the account ${predicted} has code`);
          assert.ok(account.signatureBytes > 65, "the account's signature is its owners' (ERC-1271), not one key's");
        }
        assert.notEqual(result.smartAccount.payer, result.undeployedSmartAccount.payer);

        const record = JSON.parse(await readFile(deploymentRecordPath("rehearsal-84532"), "utf8")) as {
          chainId: number;
          contracts: Record<string, unknown>;
        };
        assert.equal(record.chainId, 84532);
        for (const name of ["PaymentRouter", "AssetSplitFactory", "TelemetryAnchor"]) assert.ok(record.contracts[name], `${name} deployed`);
        assert.equal(record.contracts.AssetSplit, undefined, "no split deployed on its own: every split is the factory's");
        assert.equal(record.contracts.TestStablecoin, undefined, "no test stablecoin: Payments.ts takes the token as a parameter");

        // The checkout page of the open order, with a browser wallet: it signs the EIP-3009 authorization
        // (no permit nonce to read), and the order is paid on the authorization rail.
        browser = await launchBrowser();
        const page = await (await browser.newContext()).newPage();
        const errors = watchPageErrors(page);
        const wallet = await injectWallet(page, { rpcUrl: kept.rpcUrl, account: localAccount(7) });
        await page.goto(kept.checkoutUrl);
        await page.getByRole("button", { name: /Pay \$[\d.]+ with wallet/ }).click();
        await page.locator('#checkout[data-state="done"]').waitFor({ timeout: 60_000 });
        assert.deepEqual([...new Set(wallet.calls.map((c) => c.method))].sort(), [
          "eth_chainId",
          "eth_requestAccounts",
          "eth_signTypedData_v4",
        ]);
        const signed = JSON.parse((wallet.calls.find((c) => c.method === "eth_signTypedData_v4")!.params as string[])[1]!) as {
          primaryType: string;
        };
        assert.equal(signed.primaryType, "ReceiveWithAuthorization");
        const paid = (await (await fetch(`${kept.relayerUrl}/v1/orders/${kept.orderId}`)).json()) as {
          status: string;
          payment: { rail: string };
        };
        assert.equal(paid.status, "success");
        assert.equal(paid.payment.rail, "authorization");
        assert.deepEqual(errors, []);
      } finally {
        await browser?.close().catch(() => undefined);
        if (!exited) process.kill(-child.pid!, "SIGTERM");
      }
      // npm itself takes the group's SIGTERM (and reports it as its own end); the script stops what it started.
      const { code, signal } = await closed;
      assert.ok(code === 0 || signal === "SIGTERM", `exit ${code} (${signal})\n${stdout}\n${stderr.slice(-4_000)}`);
      assert.doesNotMatch(stdout, /rehearsal failed/);
      for (let i = 0; i < PORTS; i++) {
        const port = base + i;
        const deadline = Date.now() + 15_000;
        while ((await isListening(port)) && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 250));
        assert.equal(await isListening(port), false, `port ${port} is free once the rehearsal stopped`);
      }
    },
  );
});
