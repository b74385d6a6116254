// `npm start` and `npm run demo` as a newcomer runs them (scripts/start.ts, scripts/demo.ts), each stack on
// ports of its own and in a directory of its own (LOCAL_STACK_DIR, LOCAL_DEPLOYMENT_ID), so a developer's
// running stack is not touched:
//   - a taken port fails the start with a message that names it, and nothing is left running;
//   - the start shows each step, prints the table once everything answers, and the demo then pays a device
//     end to end against it; SIGINT stops every child the start started;
//   - started again on the same chain, the data is kept (the demo's order is still there, and the indexer
//     serves its payment); on a new chain on the same port, everything starts clean (the order is gone:
//     nothing indexed from the old chain).
import assert from "node:assert/strict";
import { type ChildProcess, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdir, readFile, rm } from "node:fs/promises";
import net from "node:net";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { after, before, describe, it } from "node:test";
import { startChain } from "../../lib/chain.ts";
import { deploymentRecordPath, deploymentsDir, repoRoot } from "../../ignition/deployment-records.ts";
import { pgliteOf } from "../../lib/pglite.ts";
import { OTHER_SAMPLE_DEVICES, SAMPLE_DEVICES, SAMPLE_PARTY_ACCOUNTS, localAccount } from "../../lib/sample-data.ts";
import { INHERITED_V8_FLAGS, type Service, freePort, isListening } from "../../lib/processes.ts";
import { testLogDir } from "../support/local-chain.ts";

const node = process.execPath;
const id = `start-${process.pid}-${randomBytes(3).toString("hex")}`;
const stackDir = path.join(testLogDir("start"), id);
let ports: Record<"CHAIN_PORT" | "DEVICE_CLOUD_PORT" | "INDEXER_PORT" | "RELAYER_PORT", number>;
/** The demo's webhook receiver: a free port too, so the test does not depend on 8790 being free. */
let demoWebhookPort: number;
const env = () => ({
  ...process.env,
  ...Object.fromEntries(Object.entries(ports).map(([k, v]) => [k, String(v)])),
  DEMO_WEBHOOK_PORT: String(demoWebhookPort),
  LOCAL_STACK_DIR: stackDir,
  LOCAL_DEPLOYMENT_ID: id,
  HARDHAT_DISABLE_TELEMETRY: "true",
  PONDER_TELEMETRY_DISABLED: "1",
  // The sample users' passwords hashed with scrypt N=2^14, as every test stack does (test/support/stack.ts):
  // the seed of a fresh start hashes them at the default 2^17 in some 3 CPU s otherwise, and how strongly
  // they are hashed is not what this suite is about (test/relayer/passwords.test.ts is).
  PASSWORD_SCRYPT_N: "16384",
});

type Started = { child: ChildProcess; stdout: () => string; stderr: () => string; exited: Promise<number | null> };

/** Runs scripts/start.ts; resolves once it printed its table (or exited). */
async function start(): Promise<Started> {
  // With this process's V8 flags (`--liftoff-only` under `npm test`), which the start passes on to the indexer and
  // the relayer it starts, as every test stack's processes run: only which of V8's compilers compiles their
  // embedded databases' WebAssembly changes (some 3-5 CPU s less a start on a fresh chain).
  const child = spawn(node, [...INHERITED_V8_FLAGS, path.join(repoRoot, "scripts/start.ts")], {
    cwd: repoRoot,
    env: env(),
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stdout = "";
  let stderr = "";
  child.stdout!.on("data", (chunk: Buffer) => (stdout += chunk.toString("utf8")));
  child.stderr!.on("data", (chunk: Buffer) => (stderr += chunk.toString("utf8")));
  const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)));
  // A slow machine running other stacks beside this one takes minutes to start a whole stack.
  const deadline = Date.now() + 420_000;
  while (!stdout.includes("Try it: npm run demo") && child.exitCode === null && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return { child, stdout: () => stdout, stderr: () => stderr, exited };
}

/** SIGINT, as Ctrl-C; resolves with the exit code. */
async function interrupt(started: Started): Promise<number | null> {
  started.child.kill("SIGINT");
  const timeout = setTimeout(() => started.child.kill("SIGKILL"), 60_000);
  const code = await started.exited;
  clearTimeout(timeout);
  return code;
}

function runDemo(): Promise<{ code: number | null; output: string }> {
  const child = spawn(node, [path.join(repoRoot, "scripts/demo.ts")], { cwd: repoRoot, env: env(), stdio: ["ignore", "pipe", "pipe"] });
  let output = "";
  child.stdout!.on("data", (chunk: Buffer) => (output += chunk.toString("utf8")));
  child.stderr!.on("data", (chunk: Buffer) => (output += chunk.toString("utf8")));
  const timeout = setTimeout(() => child.kill("SIGKILL"), 180_000);
  return new Promise((resolve) =>
    child.on("exit", (code) => {
      clearTimeout(timeout);
      resolve({ code, output });
    }),
  );
}

const stackFile = async () => JSON.parse(await readFile(path.join(stackDir, "stack.json"), "utf8"));

/** Whether a Ponder app still holds the indexer's PGlite database (Ponder's own mark in `_ponder_meta`, which
 * its shutdown clears; a later start on the database waits until the mark expires). */
async function indexerDatabaseLocked(directory: string): Promise<boolean> {
  const pglite = pgliteOf(path.join(repoRoot, "node_modules", "ponder", "package.json"));
  const { PGlite } = (await import(pathToFileURL(pglite).href)) as typeof import("@electric-sql/pglite");
  const db = new PGlite({ dataDir: directory });
  try {
    const { rows } = await db.query<{ locked: string }>("select value->>'is_locked' as locked from public._ponder_meta where key = 'app'");
    assert.equal(rows.length, 1, "the indexer's metadata");
    return rows[0]!.locked !== "0";
  } finally {
    await db.close();
  }
}

describe("npm start and npm run demo", { concurrency: false, timeout: 1_500_000 }, () => {
  let chain: Service | undefined;
  let running: Started | undefined;
  let demoOrderId = "";

  before(async () => {
    ports = {
      CHAIN_PORT: await freePort(),
      DEVICE_CLOUD_PORT: await freePort(),
      INDEXER_PORT: await freePort(),
      RELAYER_PORT: await freePort(),
    };
    demoWebhookPort = await freePort();
    await mkdir(stackDir, { recursive: true });
  });
  /** Stops a stack that a failed test left running, so that the next test starts on free ports. */
  const stopLeftover = async () => {
    if (running && running.child.exitCode === null) await interrupt(running);
  };
  after(async () => {
    await stopLeftover();
    await chain?.stop();
    await rm(path.join(deploymentsDir, id), { recursive: true, force: true });
    await rm(deploymentRecordPath(id), { force: true });
  });

  it("fails with a message naming a taken port, and leaves nothing running", async () => {
    const squatter = net.createServer().listen(ports.RELAYER_PORT, "127.0.0.1");
    await new Promise((resolve) => squatter.once("listening", resolve));
    try {
      const started = await start();
      assert.equal(await started.exited, 1, started.stdout() + started.stderr());
      assert.match(started.stderr(), new RegExp(`port ${ports.RELAYER_PORT} \\(relayer\\) is taken.*RELAYER_PORT`));
      for (const [name, port] of Object.entries(ports)) {
        if (name !== "RELAYER_PORT") assert.equal(await isListening(port), false, `${name} ${port} is free`);
      }
    } finally {
      await new Promise((resolve) => squatter.close(resolve));
    }
  });

  it("shows each step, prints the table when everything answers, and the demo pays a device against it", async () => {
    // A chain the start does not own (as a developer's own node): it stays up when the start stops.
    chain = (await startChain({ port: ports.CHAIN_PORT, logFile: path.join(stackDir, "external-chain.log") })).service;
    running = await start();
    const out = running.stdout();
    assert.match(out, /^Ready\. Everything listens on 127\.0\.0\.1/m, running.stderr());
    for (const stepTitle of [
      "checking ports",
      `using the chain already running on port ${ports.CHAIN_PORT}`,
      "deploying the contracts with Ignition",
      "seeding the sample tenants",
      `starting the relayer on port ${ports.RELAYER_PORT}`,
    ]) {
      assert.ok(running.stderr().includes(`✔ ${stepTitle}`), `step shown: ${stepTitle}`);
    }
    for (const row of [
      "Payment API",
      "Sandbox API",
      "Developer portal",
      "Indexer",
      "Portal login",
      "Developer API key",
      "Agent API key",
      "Second tenant",
      "Sandbox client",
      "Test wallet",
    ]) {
      assert.match(out, new RegExp(`^  ${row} +\\S`, "m"), `row ${row}`);
    }
    const stack = await stackFile();
    assert.equal(stack.endpoints.paymentApi, `http://127.0.0.1:${ports.RELAYER_PORT}/v1`);
    for (const url of [
      stack.endpoints.paymentApiDocs,
      stack.endpoints.sandboxApiDocs,
      `${stack.endpoints.paymentApi}/openapi.json`,
      `${stack.endpoints.portal}/login`,
    ]) {
      assert.equal((await fetch(url)).status, 200, url);
    }
    assert.equal((await fetch(`${stack.endpoints.indexer}/ready`)).status, 200);
    const key = await fetch(`${stack.endpoints.paymentApi}/devices`, {
      headers: { authorization: `Bearer ${stack.sample.apiKeys.developer}` },
    });
    assert.equal(key.status, 200, "the printed developer key works");
    // The second sample tenant: its key sees its own devices only.
    const otherDevices = await fetch(`${stack.endpoints.paymentApi}/devices`, {
      headers: { authorization: `Bearer ${stack.otherSample.apiKeys.developer}` },
    });
    assert.equal(otherDevices.status, 200, "the second tenant's developer key works");
    assert.deepEqual(
      ((await otherDevices.json()).data as Array<{ id: string }>).map((d) => d.id).sort(),
      OTHER_SAMPLE_DEVICES.map((d) => d.id).sort(),
    );

    const demo = await runDemo();
    assert.equal(demo.code, 0, demo.output);
    for (const title of [
      "The wallet signs one EIP-3009 receive authorization",
      "The relayer submits payWithAuthorization",
      "The device is powered on",
      "The 50/40/10 split, in the payment's transaction",
      "EIP-2612 permit: the wallet signs a permit",
      "Its deadline is no time: it is the order's EIP-712 digest",
      "Permit2 in USDT, a stablecoin without EIP-2612 or EIP-3009: the wallet signs the order as Permit2's witness",
      "the wallet approves Permit2 once, with its own transaction 0x",
      "A 2-of-3 smart-contract account pays by EIP-3009 authorization (ERC-1271)",
      "An agent confirms a cash payment",
    ]) {
      assert.ok(demo.output.includes(title), `demo step: ${title}`);
    }
    // One payment per rail after the first, each followed to success through the relayer: what the demo printed
    // is what the API says of each order.
    const railPayments = [
      ...demo.output.matchAll(/^ {3}(ord_\w+) is success, rail (\w+), payer (0x[0-9a-fA-F]{40}), tx (0x[0-9a-f]{64})$/gm),
    ];
    assert.deepEqual(
      railPayments.map((m) => m[2]),
      ["permit", "permit2", "authorization"],
      demo.output,
    );
    const wallet = localAccount(7).address;
    const paidOrders = [];
    for (const [, orderId, rail, payer, tx] of railPayments) {
      const paid = await (await fetch(`${stack.endpoints.paymentApi}/orders/${orderId}`)).json();
      assert.equal(paid.status, "success", orderId);
      assert.deepEqual([paid.payment.rail, paid.payment.payer, paid.payment.transactionHash], [rail, payer, tx], orderId);
      assert.ok(paid.settlement?.transactionHash, `${orderId} is settled by its split`);
      paidOrders.push(paid);
    }
    // The Permit2 payment was in the second stablecoin, through the device's own split in it.
    assert.deepEqual(
      paidOrders.map((o) => o.token.symbol),
      ["USDC", "USDT", "USDC"],
      "the Permit2 order was in USDT, the others in USDC",
    );
    const usdtSplit = /into the device's USDT split (0x[0-9a-fA-F]{40})/.exec(demo.output)?.[1];
    assert.ok(usdtSplit, demo.output);
    const devicePayout = await (
      await fetch(`${stack.endpoints.paymentApi}/devices/kiosk-nbo-002`, {
        headers: { authorization: `Bearer ${stack.sample.apiKeys.developer}` },
      })
    ).json();
    assert.ok(devicePayout.payout?.split, JSON.stringify(devicePayout));
    assert.notEqual(usdtSplit.toLowerCase(), devicePayout.payout.split.toLowerCase(), "USDT settles through another split than USDC");
    assert.deepEqual(
      railPayments.map((m) => m[3] === wallet),
      [true, true, false],
      "the wallet paid by permit and Permit2, a smart-contract account by authorization",
    );
    const accountCode = await fetch(stack.endpoints.rpc, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "eth_getCode", params: [railPayments[2]![3], "latest"] }),
    });
    assert.notEqual((await accountCode.json()).result, "0x", "the payer of the last is a contract (the 2-of-3 account)");
    assert.match(demo.output, /Signed webhooks arrived and verified[^\n]*\n {3}[^\n]*payment\.succeeded/);
    assert.match(
      demo.output,
      /The batch is anchored on-chain[^\n]*\n {3}evidence \S+: 12 readings, merkle root 0x[0-9a-f]{64}, tx 0x[0-9a-f]{64}/,
    );
    demoOrderId = /^ {3}(ord_\w+) is pending/m.exec(demo.output)?.[1] ?? "";
    assert.ok(demoOrderId, "the demo printed its order");
    const order = await (await fetch(`${stack.endpoints.paymentApi}/orders/${demoOrderId}`)).json();
    assert.equal(order.status, "success");
    assert.equal(order.payment.rail, "authorization", "the local stack's USDC has EIP-3009: the SDK signed that rail");
    // Two devices of different asset owners and operators, each paid through its own split into its own parties.
    const cashOrderId = /An agent confirms a cash payment for \S+ [^\n]*\n {3}(ord_\w+) is success/.exec(demo.output)?.[1];
    assert.ok(cashOrderId, "the demo's cash order succeeded");
    const splits = [];
    for (const [orderId, deviceId] of [
      [demoOrderId, "kiosk-nbo-001"],
      [cashOrderId, "charger-los-002"],
    ] as const) {
      const receipt = await (await fetch(`${stack.endpoints.paymentApi}/orders/${orderId}/receipt`)).json();
      const device = SAMPLE_DEVICES.find((d) => d.id === deviceId)!;
      const legs = Object.fromEntries(
        (receipt.settlement.legs as Array<{ leg: string; recipient: string }>).map((l) => [l.leg, l.recipient]),
      );
      assert.equal(legs.assetOwner, localAccount(SAMPLE_PARTY_ACCOUNTS[device.owner]).address, `${deviceId}'s asset owner`);
      assert.equal(legs.operator, localAccount(SAMPLE_PARTY_ACCOUNTS[device.operator]).address, `${deviceId}'s operator`);
      assert.ok(
        demo.output.includes(`split ${receipt.settlement.split}, tx ${receipt.settlement.transactionHash}`),
        `the demo shows ${deviceId}'s split`,
      );
      splits.push(receipt.settlement.split);
    }
    assert.notEqual(splits[0], splits[1], "each device has its own split");

    assert.equal(await interrupt(running), 0, running.stderr());
    for (const name of ["DEVICE_CLOUD_PORT", "INDEXER_PORT", "RELAYER_PORT"] as const) {
      assert.equal(await isListening(ports[name]), false, `${name} is free after SIGINT`);
    }
    assert.equal(await isListening(ports.CHAIN_PORT), true, "the chain the start did not start keeps running");
    // The indexer shut down cleanly: it released its database, so a restart need not wait for the lock to expire.
    assert.equal(await indexerDatabaseLocked(path.join(stackDir, "indexer-db")), false, "the indexer's database is unlocked");
  });

  it("keeps the data when started again on the same chain", async () => {
    await stopLeftover();
    assert.ok(demoOrderId, "needs the demo's order");
    const before = await stackFile();
    running = await start();
    assert.match(running.stdout(), /^Ready \(data kept: same chain\)\./m, running.stderr());
    const stack = await stackFile();
    const order = await (await fetch(`${stack.endpoints.paymentApi}/orders/${demoOrderId}`)).json();
    assert.equal(order.status, "success");
    // The sample tenant is the one seeded before, and the key printed then still works.
    assert.deepEqual({ ...stack.sample, seedDigest: undefined }, { ...before.sample, seedDigest: undefined });
    assert.deepEqual(stack.otherSample, before.otherSample, "the second tenant is kept too");
    const key = await fetch(`${stack.endpoints.paymentApi}/devices`, {
      headers: { authorization: `Bearer ${stack.sample.apiKeys.developer}` },
    });
    assert.equal(key.status, 200, "the developer key of the first start works");
    // The on-chain volume comes from the indexer: its kept index serves the demo's payment again.
    const stats = await (await fetch(`${stack.endpoints.paymentApi}/public/stats`)).json();
    assert.ok(stats.onchainVolumeUsd > 0, `on-chain volume ${stats.onchainVolumeUsd} after the restart`);
    // The demo runs again on the kept data: the first run's webhook subscription, signed with another secret, no
    // longer delivers to its receiver.
    const again = await runDemo();
    assert.equal(again.code, 0, again.output);
    assert.ok(!again.output.includes("rejected a delivery"), again.output);
    assert.ok(again.output.includes("Signed webhooks arrived and verified"), again.output);
    assert.equal(await interrupt(running), 0);
  });

  it("starts clean on a new chain on the same port: nothing of the old chain is served", async () => {
    await stopLeftover();
    assert.ok(demoOrderId, "needs the demo's order");
    await chain!.stop();
    chain = (await startChain({ port: ports.CHAIN_PORT, logFile: path.join(stackDir, "external-chain-2.log") })).service;
    running = await start();
    assert.match(running.stdout(), /^Ready\. /m, running.stderr());
    assert.ok(running.stderr().includes("✔ new chain: clearing indexed and relayer data"));
    const stack = await stackFile();
    const order = await fetch(`${stack.endpoints.paymentApi}/orders/${demoOrderId}`);
    assert.equal(order.status, 404);
    const stats = await (await fetch(`${stack.endpoints.paymentApi}/public/stats`)).json();
    assert.equal(stats.onchainVolumeUsd, 0, "no volume from the old chain");
    assert.equal(await interrupt(running), 0);
  });
});
