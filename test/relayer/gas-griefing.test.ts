// Nobody makes the relayer's hot wallet pay for transactions certain to revert. A real Hardhat node mines a
// block every 2 s (automine off); the relayer reaches it through an RPC proxy that estimates gas against the
// latest block (as some providers do), so the node's pool does not save it. Fresh wallets hold 0.30 USDC and
// no ether. Then:
// - a cancellation and a permit for the same order sent at the same moment: one is accepted, the other
//   refused, never both sent;
// - one wallet signs permits for 10 orders with the same permit nonce and posts them at once: one is
//   relayed, the others refused (409 payer_payment_in_progress, or 422 once the nonce moved);
// - a developer key asking for 20 cancellations, and a portal user for 20 payout changes, get at most the
//   tenant's burst of transactions (then 429);
// - ten wallets post their permits right after the last block at or before their order's expiry (chain
//   time): all are refused with 409 order_expiring.
// After each, no transaction of the hot wallet reverted on the chain, and payg_tx_reverted_gas_total is 0.
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { type Address, type Hex, createPublicClient, createWalletClient, encodeFunctionData, http, parseAbi } from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { paymentRouterAbi } from "../../generated/abis.ts";
import { loadConfig } from "../../relayer/src/config.ts";
import { openDatabase } from "../../relayer/src/db/client.ts";
import { chainTransactions } from "../../relayer/src/db/schema.ts";
import { createLogger } from "../../relayer/src/logger.ts";
import { expiresTooSoon, medianBlockSeconds, voucherExpiryOf } from "../../relayer/src/payments/relay-guard.ts";
import { signOrderPermit } from "../../sdk/src/payment-order.ts";
import { waitFor } from "../energy/helpers.ts";
import { type DatabaseKind, oneDatabaseKind } from "../support/databases.ts";
import { LOCAL_ACCOUNT_INDEX, localAccount, localStablecoin, localStablecoinAbi } from "../support/local-chain.ts";
import { type LatestStateRpcProxy, startLatestStateRpcProxy } from "../support/latest-state-rpc-proxy.ts";
import { type OrderBody, createOrder } from "../support/pay.ts";
import { MINIMAL_RELAYER_ENV } from "../support/relayer-env.ts";
import { type ApiResponse, type Stack, startStack } from "../support/stack.ts";

const BLOCK_MS = 2_000;
/** The tenant's burst of cancellations and payout changes (TENANT_CHAIN_WRITES_PER_MINUTE). */
const CHAIN_WRITES = 5;
const ORDER_AMOUNT = 300_000n; // 0.30 USDC: the kiosks' 30-minute tier

const nonceAbi = parseAbi(["function nonces(address) view returns (uint256)"]);

describe("the chain-time margin of a relay", () => {
  it("measures the block time as the median gap between the latest blocks, 1 to 60 s", () => {
    assert.equal(medianBlockSeconds([100n, 102n, 104n, 106n, 1006n]), 2, "one long gap (a jump in time) does not count");
    assert.equal(medianBlockSeconds([100n, 100n, 100n]), 1, "at least 1 s");
    assert.equal(medianBlockSeconds([0n, 500n, 1000n]), 60, "at most 60 s");
    assert.equal(medianBlockSeconds([7n]), 1);
  });

  it("refuses a voucher expiring before the block RELAY_EXPIRY_MARGIN_BLOCKS after the next one", () => {
    const clock = { latestTimestamp: 1_000n, blockSeconds: 2 };
    // The next block comes at 1002, two more at 1006: a voucher good until 1006 is mined in time.
    assert.equal(expiresTooSoon(1_006n, clock, 2), false);
    assert.equal(expiresTooSoon(1_005n, clock, 2), true);
    assert.equal(expiresTooSoon(1_001n, clock, 0), true, "with no margin, the next block's timestamp still counts");
    assert.equal(expiresTooSoon(1_002n, clock, 0), false);
  });

  it("reads the voucher's expiry from the router's payment calls only", () => {
    const voucher = {
      orderId: 1n,
      deviceId: `0x${"11".repeat(32)}` as Hex,
      token: localAccount(3).address,
      split: localAccount(4).address,
      amount: 5n,
      expiry: 1234n,
    };
    const pay = encodeFunctionData({ abi: paymentRouterAbi, functionName: "payCash", args: [voucher, "0x"] });
    assert.equal(voucherExpiryOf(pay), 1234n);
    assert.equal(voucherExpiryOf(encodeFunctionData({ abi: paymentRouterAbi, functionName: "cancelOrder", args: [1n] })), undefined);
    assert.equal(voucherExpiryOf("0x1234"), undefined);
  });

  it("has its settings' defaults and bounds", () => {
    const config = loadConfig({ ...MINIMAL_RELAYER_ENV });
    assert.equal(config.RELAY_EXPIRY_MARGIN_BLOCKS, 2);
    assert.equal(config.CHAIN_BLOCK_SECONDS, undefined);
    assert.equal(config.RELAY_PAYER_MAX_REVERTS, 3);
    assert.equal(config.TENANT_CHAIN_WRITES_PER_MINUTE, 10);
    for (const [name, bad] of [
      ["RELAY_EXPIRY_MARGIN_BLOCKS", "-1"],
      ["CHAIN_BLOCK_SECONDS", "0"],
      ["RELAY_REVERT_WINDOW_SECONDS", "10"],
    ]) {
      assert.throws(() => loadConfig({ ...MINIMAL_RELAYER_ENV, [name!]: bad }), new RegExp(`${name}: `));
    }
  });
});

const database = oneDatabaseKind();
describe(`gas griefing of the hot wallet on ${database}`, { concurrency: false, timeout: 900_000 }, () => {
  let stack: Stack;
  let proxy: LatestStateRpcProxy;
  let client: ReturnType<typeof createPublicClient>;
  const hotWallet = localAccount(LOCAL_ACCOUNT_INDEX.agent).address;
  const wallets = Array.from({ length: 18 }, () => privateKeyToAccount(generatePrivateKey()));
  let firstBlock = 0n;

  before(
    async () => {
      stack = await startStack({
        label: `gas-griefing-${database}`,
        database: database as DatabaseKind,
        indexer: false,
        relayerEnv: { TENANT_CHAIN_WRITES_PER_MINUTE: String(CHAIN_WRITES) },
      });
      client = createPublicClient({ transport: http(stack.chain.rpcUrl, { retryCount: 0 }) });
      // 0.30 USDC each, no ether (minted while the node still mines at once).
      const admin = createWalletClient({ account: localAccount(LOCAL_ACCOUNT_INDEX.admin), transport: http(stack.chain.rpcUrl) });
      const token = localStablecoin(stack.chain.record);
      for (const wallet of wallets) {
        const hash = await admin.writeContract({
          chain: null,
          address: token,
          abi: localStablecoinAbi,
          functionName: "mint",
          args: [wallet.address, ORDER_AMOUNT],
        });
        await client.waitForTransactionReceipt({ hash });
        assert.equal(await client.getBalance({ address: wallet.address }), 0n);
      }
      proxy = await startLatestStateRpcProxy(stack.chain.rpcUrl);
      await stack.restartRelayer({ env: { RPC_URL: proxy.url } });
      await stack.chain.rpc("evm_setAutomine", [false]);
      await stack.chain.rpc("evm_setIntervalMining", [BLOCK_MS]);
      for (const device of stack.sample.devices.slice(0, 3)) {
        await waitFor(
          `the split of ${device.id}`,
          async () => {
            const quote = await stack.api("POST", "/v1/quote", {
              body: { deviceId: device.id, chain: "local", token: "USDC", tier: "30m" },
            });
            return quote.status === 201 ? true : undefined;
          },
          120_000,
          500,
        );
      }
      await settled();
      firstBlock = await client.getBlockNumber({ cacheTime: 0 });
    },
    { timeout: 300_000 },
  );
  after(async () => {
    await stack?.chain.rpc("evm_setIntervalMining", [0]).catch(() => undefined);
    await stack?.chain.rpc("evm_setAutomine", [true]).catch(() => undefined);
    await stack?.stop();
    await proxy?.close();
  });

  /** Resolves once nothing of the hot wallet's is queued, in the pool or unmined, for three blocks. */
  async function settled() {
    let quietSince: bigint | undefined;
    await waitFor(
      "the hot wallet's transactions all mined",
      async () => {
        const [latest, pending, head, inFlight] = await Promise.all([
          client.getTransactionCount({ address: hotWallet, blockTag: "latest" }),
          client.getTransactionCount({ address: hotWallet, blockTag: "pending" }),
          client.getBlockNumber({ cacheTime: 0 }),
          metric("payg_tx_pending"),
        ]);
        if (latest !== pending || inFlight > 0) {
          quietSince = undefined;
          return undefined;
        }
        quietSince ??= head;
        return head - quietSince >= 3n ? true : undefined;
      },
      180_000,
      500,
    );
  }

  async function metric(name: string, labels: Record<string, string> = {}): Promise<number> {
    const response = await stack.api("GET", "/metrics");
    const wanted = Object.entries(labels)
      .map(([k, v]) => `${k}="${v}"`)
      .join(",");
    let total = 0;
    for (const line of response.text.split("\n")) {
      if (!line.startsWith(`${name}{`) && !line.startsWith(`${name} `)) continue;
      if (wanted && !line.includes(wanted)) continue;
      total += Number(line.slice(line.lastIndexOf(" ") + 1));
    }
    return total;
  }

  /** The hot wallet's transactions mined since `from` that reverted, with the gas and fees they cost. */
  async function reverted(from: bigint) {
    const head = await client.getBlockNumber({ cacheTime: 0 });
    const found: Array<{ hash: Hex; gasUsed: bigint; fee: bigint; to: Address | null }> = [];
    let mined = 0;
    for (let n = from + 1n; n <= head; n++) {
      const block = await client.getBlock({ blockNumber: n, includeTransactions: true });
      for (const tx of block.transactions) {
        if (tx.from.toLowerCase() !== hotWallet.toLowerCase()) continue;
        mined++;
        const receipt = await client.getTransactionReceipt({ hash: tx.hash });
        if (receipt.status === "reverted") {
          found.push({ hash: tx.hash, gasUsed: receipt.gasUsed, fee: receipt.gasUsed * receipt.effectiveGasPrice, to: tx.to });
        }
      }
    }
    return { mined, reverted: found, gas: found.reduce((a, r) => a + r.gasUsed, 0n), fees: found.reduce((a, r) => a + r.fee, 0n) };
  }

  /** Waits until the hot wallet's transactions since block `from` are all mined and logs what reverted among
   * them and what it cost; then `check` asserts the answers, and none of those transactions may have
   * reverted. */
  async function afterSettling(from: bigint, what: string, check: () => void) {
    await settled();
    const seen = await reverted(from);
    console.log(
      `# ${what}: the hot wallet mined ${seen.mined} transactions, ${seen.reverted.length} reverted, ${seen.gas} gas (${seen.fees} wei) on them`,
    );
    check();
    assert.deepEqual(seen.reverted, [], `${what}: no transaction of the hot wallet reverted`);
    assert.equal(await metric("payg_tx_reverted_gas_total"), 0, "payg_tx_reverted_gas_total stays 0");
  }

  async function permitFor(order: OrderBody, wallet: (typeof wallets)[number], nonce?: bigint) {
    const n =
      nonce ??
      (await client.readContract({
        address: order.paymentDetails.token.address,
        abi: nonceAbi,
        functionName: "nonces",
        args: [wallet.address],
      }));
    return { owner: wallet.address, signature: await signOrderPermit(wallet, order.paymentDetails.permit, n) };
  }

  it("a cancellation and a permit for the same order sent at the same moment: one is accepted, never both", async () => {
    const from = await client.getBlockNumber({ cacheTime: 0 });
    const tries: ApiResponse[][] = [];
    for (let i = 0; i < 5; i++) {
      const order = await createOrder(stack, stack.sample.devices[0].id, "30m");
      const permit = await permitFor(order, wallets[11 + i]!);
      tries.push(
        await Promise.all([
          stack.api("POST", `/v1/orders/${order.id}/cancel`, { token: stack.sample.developerKey }),
          stack.api("POST", `/v1/orders/${order.id}/permit`, { body: permit }),
        ]),
      );
    }
    await afterSettling(from, "cancel against permit", () => {
      tries.forEach(([cancel, relay], i) => {
        const accepted = [cancel!, relay!].filter((r) => r.status === 202);
        assert.equal(
          accepted.length,
          1,
          `try ${i}: one accepted (cancel ${cancel!.status} ${cancel!.text}; permit ${relay!.status} ${relay!.text})`,
        );
        const refused = cancel!.status === 202 ? relay! : cancel!;
        assert.equal(refused.status, 409, refused.text);
        assert.ok(["order_cancelled", "payment_in_progress"].includes(refused.body.error.code), refused.text);
      });
    });
  });

  it("one wallet's permits for 10 orders with the same nonce: one relayed, the rest refused", async () => {
    const from = await client.getBlockNumber({ cacheTime: 0 });
    const wallet = wallets[10]!;
    const orders = await Promise.all(Array.from({ length: 10 }, (_, i) => createOrder(stack, stack.sample.devices[i % 2]!.id, "30m")));
    const nonce = await client.readContract({
      address: orders[0]!.paymentDetails.token.address,
      abi: nonceAbi,
      functionName: "nonces",
      args: [wallet.address],
    });
    const permits = await Promise.all(orders.map((order) => permitFor(order, wallet, nonce)));
    const answers = await Promise.all(orders.map((order, i) => stack.api("POST", `/v1/orders/${order.id}/permit`, { body: permits[i] })));
    await afterSettling(from, "same permit nonce", () => {
      const statuses = answers.map((a) => `${a.status} ${a.status === 202 ? "" : a.body.error?.code}`);
      assert.equal(answers.filter((a) => a.status === 202).length, 1, `one relayed: ${statuses.join(", ")}`);
      for (const answer of answers.filter((a) => a.status !== 202)) {
        assert.ok(
          (answer.status === 409 && answer.body.error.code === "payer_payment_in_progress") || answer.status === 422,
          `refused as in flight or as a stale permit: ${answer.status} ${answer.text}`,
        );
      }
    });
    const paidIndex = answers.findIndex((a) => a.status === 202);
    const paid = await stack.api("GET", `/v1/orders/${orders[paidIndex]!.id}`);
    assert.equal(paid.body.relay.status, "mined", "the relayed one was mined");
  });

  it("a tenant's cancellations and payout changes are limited to its burst of transactions", async () => {
    const from = await client.getBlockNumber({ cacheTime: 0 });
    const orders = await Promise.all(Array.from({ length: 20 }, () => createOrder(stack, stack.sample.devices[1]!.id, "30m")));
    const cancels = await Promise.all(
      orders.map((order) => stack.api("POST", `/v1/orders/${order.id}/cancel`, { token: stack.sample.developerKey })),
    );
    const login = await stack.api("POST", "/v1/auth/login", { body: { email: stack.sample.email, password: stack.sample.password } });
    assert.equal(login.status, 200, login.text);
    const device = stack.sample.devices[2]!;
    const assets = await stack.api("GET", "/v1/assets", { token: login.body.accessToken });
    const current = assets.body.data.find((a: { deviceId: string }) => a.deviceId === device.id).payout;
    const other = { assetOwner: localAccount(8).address, operator: localAccount(9).address };
    const changes: ApiResponse[] = [];
    for (let i = 0; i < 20; i++) {
      const parties = i % 2 === 0 ? other : { assetOwner: current.assetOwner, operator: current.operator };
      changes.push(await stack.api("PUT", `/v1/assets/${device.id}/payout`, { token: login.body.accessToken, body: parties }));
    }
    await afterSettling(from, "cancellations and payout changes", () => {
      const accepted = cancels.filter((r) => r.status === 202).length;
      const sent = changes.filter((r) => r.status === 200 && r.body.transactionId).length;
      console.log(`# ${accepted} of 20 cancellations accepted; ${sent} of 20 payout changes sent a transaction`);
      assert.ok(accepted <= CHAIN_WRITES, `at most ${CHAIN_WRITES} cancellations accepted, not ${accepted}`);
      for (const refused of cancels.filter((r) => r.status !== 202)) {
        assert.equal(refused.status, 429, refused.text);
        assert.equal(refused.body.error.code, "rate_limited");
        assert.ok(Number(refused.headers.get("retry-after")) >= 1);
      }
      // A payout change of a device with a split sends nothing from the hot wallet (it waits for the split manager).
      assert.equal(sent, 0, `no payout change sent a transaction, not ${sent}`);
      for (const refused of changes.filter((r) => r.status !== 200)) {
        assert.equal(refused.status, 429, refused.text);
        assert.equal(refused.body.error.code, "rate_limited");
      }
    });
  });

  it("a wallet past its budget of reverted relays is refused with 429, and so is a tenant past its own", async () => {
    const payer = privateKeyToAccount(generatePrivateKey());
    const [first, second, third, fourth] = await Promise.all(
      Array.from({ length: 4 }, (_, i) => createOrder(stack, stack.sample.devices[i % 2]!.id, "30m")),
    );
    /** A reverted transaction of the hot wallet's, as the sender records one. */
    const revertedRow = (kind: string, ref: string, calldata: Hex) => ({
      id: `ctx_test_${ref.replace(/[^a-z0-9]/gi, "_")}`,
      kind,
      ref,
      toAddress: first!.paymentDetails.router as string,
      calldata,
      status: "reverted" as const,
      lastError: "InvalidPermit(...)",
    });
    const payWithPermitBy = (wallet: Address) =>
      encodeFunctionData({
        abi: paymentRouterAbi,
        functionName: "payWithPermit",
        args: [
          {
            orderId: BigInt(first!.paymentDetails.order.orderId),
            deviceId: first!.paymentDetails.order.deviceId,
            token: first!.paymentDetails.order.token,
            split: first!.paymentDetails.order.split,
            amount: BigInt(first!.paymentDetails.order.amount),
            expiry: BigInt(first!.paymentDetails.order.expiry),
          },
          first!.paymentDetails.voucherSignature,
          wallet,
          `0x${"00".repeat(64)}1b`,
        ],
      });
    const insert = async (rows: Array<ReturnType<typeof revertedRow>>) => {
      const db = await openDatabase(stack.relayerOptions.database, createLogger("error"));
      try {
        await db.db.insert(chainTransactions).values(rows);
      } finally {
        await db.close();
      }
    };
    // Three of the payer's relayed payments reverted within the hour (the default budget).
    await stack.restartRelayer({
      env: { RPC_URL: proxy.url },
      whileStopped: () =>
        insert([0, 1, 2].map((i) => revertedRow("pay_with_permit", `test-reverted-${i}`, payWithPermitBy(payer.address)))),
    });
    const refused = await stack.api("POST", `/v1/orders/${first!.id}/permit`, { body: await permitFor(first!, payer) });
    assert.equal(refused.status, 429, refused.text);
    assert.equal(refused.body.error.code, "too_many_reverts");
    assert.ok(Number(refused.headers.get("retry-after")) > 60, "until the oldest revert leaves the window");
    const other = await stack.api("POST", `/v1/orders/${second!.id}/permit`, { body: await permitFor(second!, wallets[16]!) });
    assert.equal(other.status, 202, `another wallet is relayed: ${other.text}`);

    // The tenant's budget: two of its orders' transactions reverted, with RELAY_TENANT_MAX_REVERTS=2.
    await stack.restartRelayer({
      env: { RPC_URL: proxy.url, RELAY_TENANT_MAX_REVERTS: "2" },
      whileStopped: () =>
        insert([revertedRow("cancel_order", `cancel:${first!.id}`, "0x"), revertedRow("cancel_order", `cancel:${second!.id}`, "0x")]),
    });
    try {
      const cancel = await stack.api("POST", `/v1/orders/${third!.id}/cancel`, { token: stack.sample.developerKey });
      assert.equal(cancel.status, 429, cancel.text);
      assert.equal(cancel.body.error.code, "too_many_reverts");
      const permit = await stack.api("POST", `/v1/orders/${fourth!.id}/permit`, { body: await permitFor(fourth!, wallets[17]!) });
      assert.equal(permit.status, 429, permit.text);
      assert.equal(permit.body.error.code, "too_many_reverts");
    } finally {
      await stack.restartRelayer({ env: { RPC_URL: proxy.url } });
    }
    await settled();
  });

  it("ten wallets' permits posted right after the last block at or before their order's expiry: all refused", async () => {
    const from = await client.getBlockNumber({ cacheTime: 0 });
    const orders = await Promise.all(Array.from({ length: 10 }, (_, i) => createOrder(stack, stack.sample.devices[i % 2]!.id, "30m")));
    const permits = await Promise.all(orders.map((order, i) => permitFor(order, wallets[i]!)));
    const expiryOf = (order: OrderBody) => BigInt(order.paymentDetails.order.expiry);
    const byExpiry = new Map<bigint, number[]>();
    orders.forEach((order, i) => byExpiry.set(expiryOf(order), [...(byExpiry.get(expiryOf(order)) ?? []), i]));
    const answers: Array<{ status: number; code?: string; text: string }> = [];
    for (const expiry of [...byExpiry.keys()].sort((a, b) => (a < b ? -1 : 1))) {
      // The chain's next block comes at `expiry - 1` (chain time runs ahead of the relayer's clock, as a
      // chain's may), and the one after it, 2 s later, past the expiry.
      let latest = await client.getBlock({ blockTag: "latest" });
      if (latest.timestamp < expiry - 1n) {
        await stack.chain.rpc("evm_setNextBlockTimestamp", [Number(expiry - 1n)]);
        latest = await waitFor(
          "the block at expiry - 1",
          async () => {
            const block = await client.getBlock({ blockTag: "latest" });
            return block.timestamp === expiry - 1n ? block : undefined;
          },
          30_000,
          20,
        );
      }
      assert.ok(
        latest.timestamp <= expiry && latest.timestamp + 2n > expiry,
        `the last block (${latest.timestamp}) is at or before ${expiry}`,
      );
      const group = byExpiry.get(expiry)!;
      const posted = await Promise.all(group.map((i) => stack.api("POST", `/v1/orders/${orders[i]!.id}/permit`, { body: permits[i] })));
      for (const answer of posted) answers.push({ status: answer.status, code: answer.body.error?.code, text: answer.text });
    }
    try {
      await afterSettling(from, "permits at expiry", () => {
        for (const answer of answers) {
          assert.equal(answer.status, 409, `refused: ${answer.text}`);
          assert.equal(answer.code, "order_expiring");
        }
      });
    } finally {
      const all = await reverted(firstBlock);
      console.log(
        `# whole run: ${all.mined} hot-wallet transactions mined, ${all.reverted.length} reverted, ${all.gas} gas (${all.fees} wei) on them`,
      );
    }
  });
});
