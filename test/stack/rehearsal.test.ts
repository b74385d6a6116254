// `npm run rehearsal` as a user runs it: a chain like Base Sepolia (chain id 84532, a block every 2 s), the
// USDC-like token, ignition/modules/Payments.ts deployed to the `rehearsal` network from a parameters file,
// the indexer and the relayer in public-network mode, and a gasless payment and a cash payment end to end.
// The script checks the webhooks itself (payment.confirmed only once the payment's block is 5 deep); this
// test checks that it says so, exits 0, and that its figures and the deployment record agree with a chain
// of 2 s blocks.
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { mkdir, readFile, rm } from "node:fs/promises";
import path from "node:path";
import { describe, it } from "node:test";
import { deploymentRecordPath, repoRoot } from "../../ignition/deployment-records.ts";
import { isListening } from "../../lib/processes.ts";
import type { RehearsalResult } from "../../scripts/rehearsal.ts";
import { testLogDir } from "../support/local-chain.ts";

const PORTS = 5;

/** The first of PORTS consecutive free loopback ports. */
async function freePortRun(): Promise<number> {
  for (let attempt = 0; attempt < 50; attempt++) {
    const base = 20_000 + Math.floor(Math.random() * 30_000);
    const taken = await Promise.all(Array.from({ length: PORTS }, (_, i) => isListening(base + i)));
    if (!taken.some(Boolean)) return base;
  }
  throw new Error(`no ${PORTS} consecutive free ports found`);
}

describe("npm run rehearsal", () => {
  it("deploys like the testnet section says, pays by signature and in cash, and payment.confirmed waits for 5 blocks", { timeout: 300_000 }, async () => {
    const dir = path.join(testLogDir("rehearsal"), "rehearsal");
    await rm(dir, { recursive: true, force: true });
    await mkdir(dir, { recursive: true });
    const resultFile = path.join(dir, "..", "rehearsal-result.json");
    await rm(resultFile, { force: true });
    const child = spawn("npm", ["run", "--silent", "rehearsal"], {
      cwd: repoRoot,
      env: {
        ...process.env,
        HARDHAT_DISABLE_TELEMETRY: "true",
        PONDER_TELEMETRY_DISABLED: "1",
        REHEARSAL_DIR: dir,
        REHEARSAL_PORT_BASE: String(await freePortRun()),
        REHEARSAL_RESULT_FILE: resultFile,
      },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString("utf8")));
    child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString("utf8")));
    const code = await new Promise<number | null>((resolve) => child.once("close", resolve));
    const last = stdout.trim().split("\n").at(-1) ?? "";
    assert.equal(code, 0, `exit ${code}\n${stdout}\n${stderr.slice(-4_000)}`);
    assert.match(last, /^rehearsal passed: chain 84532, a block every 2 s, CONFIRMATIONS=5; ready in [\d.]+ s; (permit|authorization) payment submitted -> success/);

    const result = JSON.parse(await readFile(resultFile, "utf8")) as RehearsalResult;
    assert.equal(result.chainId, 84532);
    assert.equal(result.blockMs, 2_000);
    assert.ok(result.confirmedDepth >= 5, `payment.confirmed at depth ${result.confirmedDepth}`);
    // Five blocks on top of the payment's block take at least four intervals after it was mined.
    assert.ok(result.minedToConfirmedWebhookMs >= 4 * result.blockMs, `mined -> payment.confirmed ${result.minedToConfirmedWebhookMs} ms`);
    assert.ok(result.minedToSucceededWebhookMs < result.minedToConfirmedWebhookMs);
    assert.ok(result.submittedToSuccessMs > 0 && result.cashSubmittedToSuccessMs > 0);

    const record = JSON.parse(await readFile(deploymentRecordPath("rehearsal-84532"), "utf8")) as { chainId: number; contracts: Record<string, unknown> };
    assert.equal(record.chainId, 84532);
    for (const name of ["PaymentRouter", "AssetSplit", "AssetSplitFactory", "TelemetryAnchor"]) assert.ok(record.contracts[name], `${name} deployed`);
    assert.equal(record.contracts.TestStablecoin, undefined, "no test stablecoin: Payments.ts takes the token as a parameter");
  });
});
