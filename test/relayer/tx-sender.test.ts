// The relayer's transaction sender on a network's terms: a real Hardhat node that mines a block every
// 500 ms (automine off), reached through an RPC proxy that can rate-limit the relayer. A base-fee spike held
// block after block leaves a relayed payment unmineable until the sender replaces it with higher fees (same
// nonce), and the order is paid once; the chain's next transaction is replaced once due although the node
// does not show it (an RPC node without a pool); a node lagging on receipts does not make a mined transaction
// look spent; a payment whose nonce another transaction spent is sent again with a new nonce and paid once; a
// transaction the node drops is broadcast again and mined; with CONFIRMATIONS set, a transaction counts as
// mined only that deep, and one a reorganisation removed before then is sent again and mined once;
// a 10 s spell of HTTP 429 answers delays the payments queued meanwhile without failing any; a payment goes
// before a backlog of 200 anchoring transactions; a nonce gap found after a restart is filled; a relayer
// killed (SIGKILL) with its transaction in the pool, which the node then drops, broadcasts the same signed
// transaction again. (More SIGKILL cases are in test/resilience/cases/faults.ts; the fee arithmetic's edges
// are checked here directly.)
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { type Address, type Hex, createPublicClient, http, keccak256, parseGwei, toHex } from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { paymentRouterAbi } from "../../generated/abis.ts";
import { bumped, replacementFees } from "../../relayer/src/chain/fee-bump.ts";
import { loadConfig } from "../../relayer/src/config.ts";
import { enqueueTransaction, lowestGap } from "../../relayer/src/chain/tx-sender.ts";
import { openDatabase } from "../../relayer/src/db/client.ts";
import { chainTransactions } from "../../relayer/src/db/schema.ts";
import { ANCHOR_TX_KIND } from "../../relayer/src/energy/anchoring/anchor-worker.ts";
import { createLogger } from "../../relayer/src/logger.ts";
import { waitFor } from "../energy/helpers.ts";
import { type DatabaseKind, oneDatabaseKind } from "../support/databases.ts";
import { localAccount } from "../support/local-chain.ts";
import { type OrderBody, createOrder, pay, waitForOrder } from "../support/pay.ts";
import { MINIMAL_RELAYER_ENV } from "../support/relayer-env.ts";
import { type RpcProxy, startRpcProxy } from "../support/rpc-proxy.ts";
import { QUICK_TAKEOVER_ENV, type Stack, startStack } from "../support/stack.ts";

const BLOCK_MS = 500;
/** Blocks so slow that the sender broadcasts a transaction again (REBROADCAST_AFTER_MS, 12 s) before it has
 * waited REPLACE_AFTER_BLOCKS (the first block comes at once, the third 14 s later). */
const SLOW_BLOCK_MS = 7_000;
const REPLACE_AFTER_BLOCKS = 3;

describe("fee bumps", () => {
  const gwei = (n: number) => parseGwei(String(n));

  it("raise both fees by at least 12.5%, rounded up, and at least to the network's suggestion", () => {
    assert.equal(bumped(8n), 9n);
    assert.equal(bumped(9n), 11n); // 10.125, rounded up
    assert.equal(bumped(0n), 1n, "a zero priority fee rises too");
    assert.deepEqual(
      replacementFees({ maxFeePerGas: gwei(10), maxPriorityFeePerGas: 0n }, { maxFeePerGas: gwei(2), maxPriorityFeePerGas: 0n }, gwei(500)),
      { maxFeePerGas: gwei(11.25), maxPriorityFeePerGas: 1n },
    );
    assert.deepEqual(
      replacementFees(
        { maxFeePerGas: gwei(10), maxPriorityFeePerGas: gwei(1) },
        { maxFeePerGas: gwei(2), maxPriorityFeePerGas: gwei(0.5) },
        gwei(500),
      ),
      { maxFeePerGas: gwei(11.25), maxPriorityFeePerGas: gwei(1.125) },
    );
    assert.deepEqual(
      replacementFees(
        { maxFeePerGas: gwei(10), maxPriorityFeePerGas: gwei(1) },
        { maxFeePerGas: gwei(80), maxPriorityFeePerGas: gwei(3) },
        gwei(500),
      ),
      { maxFeePerGas: gwei(80), maxPriorityFeePerGas: gwei(3) },
    );
  });

  it("stop at the ceiling, and give up when it leaves no room for the bump nodes require", () => {
    assert.deepEqual(
      replacementFees(
        { maxFeePerGas: gwei(10), maxPriorityFeePerGas: gwei(1) },
        { maxFeePerGas: gwei(80), maxPriorityFeePerGas: gwei(30) },
        gwei(20),
      ),
      { maxFeePerGas: gwei(20), maxPriorityFeePerGas: gwei(20) },
    );
    assert.equal(
      replacementFees(
        { maxFeePerGas: gwei(19), maxPriorityFeePerGas: gwei(1) },
        { maxFeePerGas: gwei(80), maxPriorityFeePerGas: gwei(1) },
        gwei(20),
      ),
      undefined,
    );
  });
});

describe("nonce gaps", () => {
  it("are the lowest nonce from the confirmed count up that no stored unmined transaction holds, below the highest", () => {
    assert.equal(lowestGap([], 5), undefined);
    assert.equal(lowestGap([5, 6, 7], 5), undefined);
    assert.equal(lowestGap([6, 7], 5), 5);
    assert.equal(lowestGap([7, 5, 9], 5), 6, "in any order");
    assert.equal(lowestGap([3, 4, 8], 5), 5, "nonces below the confirmed count are mined: not counted");
    assert.equal(lowestGap([9], 5), 5);
  });
});

describe("the sender's lease setting", () => {
  it("is 15 s unless TX_SENDER_LEASE_SECONDS says otherwise, from 2 to 600 s", () => {
    assert.equal(loadConfig({ ...MINIMAL_RELAYER_ENV }).TX_SENDER_LEASE_SECONDS, 15);
    assert.equal(loadConfig({ ...MINIMAL_RELAYER_ENV, TX_SENDER_LEASE_SECONDS: "3" }).TX_SENDER_LEASE_SECONDS, 3);
    for (const bad of ["1", "601", "2.5", "soon"]) {
      assert.throws(() => loadConfig({ ...MINIMAL_RELAYER_ENV, TX_SENDER_LEASE_SECONDS: bad }), /TX_SENDER_LEASE_SECONDS: /, bad);
    }
  });
});

const database = oneDatabaseKind();
describe(`the transaction sender on ${database}`, { concurrency: false, timeout: 600_000 }, () => {
  let stack: Stack;
  let proxy: RpcProxy;
  /** The chain as the test sees it (straight to the node, never through the proxy). */
  let client: ReturnType<typeof createPublicClient>;
  let relayer: Address;

  before(
    async () => {
      stack = await startStack({
        label: `tx-sender-${database}`,
        database: database as DatabaseKind,
        relayerEnv: { ...QUICK_TAKEOVER_ENV, TX_REPLACE_AFTER_BLOCKS: String(REPLACE_AFTER_BLOCKS) },
      });
      client = createPublicClient({ transport: http(stack.chain.rpcUrl, { retryCount: 0 }) });
      relayer = localAccount(2).address;
      proxy = await startRpcProxy(stack.chain.rpcUrl);
      await stack.restartRelayer({ env: { RPC_URL: proxy.url } });
      // Blocks come every BLOCK_MS whatever is pending, as on a live network.
      await stack.chain.rpc("evm_setAutomine", [false]);
      await mining(true);
      // The devices' splits, created by the relayer at its start, are on the chain before any quote.
      for (const device of stack.sample.devices.slice(0, 2)) {
        await waitFor(
          `the split of ${device.id}`,
          async () => {
            const quote = await stack.api("POST", "/v1/quote", {
              body: { deviceId: device.id, chain: "local", token: "USDC", tier: "30m" },
            });
            return quote.status === 201 ? true : undefined;
          },
          60_000,
          250,
        );
      }
    },
    { timeout: 240_000 },
  );
  after(async () => {
    await stack?.chain.rpc("evm_setIntervalMining", [0]).catch(() => undefined);
    await stack?.chain.rpc("evm_setAutomine", [true]).catch(() => undefined);
    await stack?.stop();
    await proxy?.close();
  });

  const mining = (on: boolean) => stack.chain.rpc("evm_setIntervalMining", [on ? BLOCK_MS : 0]);

  async function metric(name: string, labels: Record<string, string> = {}): Promise<number> {
    const response = await stack.api("GET", "/metrics");
    assert.equal(response.status, 200);
    const wanted = Object.entries(labels)
      .map(([k, v]) => `${k}="${v}"`)
      .join(",");
    const series = wanted ? `${name}{${wanted}}` : name;
    const line = response.text.split("\n").find((l) => l.startsWith(`${series} `));
    return line ? Number(line.slice(series.length + 1)) : 0;
  }

  /** The OrderPaid events of `order` on the chain. */
  async function orderPaidEvents(order: OrderBody) {
    const events = await client.getContractEvents({
      address: stack.chain.record.contracts.PaymentRouter!.address,
      abi: paymentRouterAbi,
      eventName: "OrderPaid",
      args: { orderId: BigInt(order.paymentDetails.order.orderId) },
      fromBlock: 0n,
    });
    return events;
  }

  /** Waits until the relayer has sent the order's transaction; returns it as the node has it. */
  async function sentTransaction(order: OrderBody) {
    const sent = await waitForOrder(stack, order.id, (o) => o.relay?.status === "sent", 30_000);
    const hash = sent.relay.transactionHash as Hex;
    const tx = await waitFor("the transaction in the node's pool", () => client.getTransaction({ hash }).catch(() => undefined), 10_000);
    return tx;
  }

  type SentTransaction = Awaited<ReturnType<typeof sentTransaction>>;

  /** Creates an order and pays it by relayed permit with no block mined: `whileUnmined` runs once the relayer
   * has sent its transaction (given as the node has it), then blocks come again. */
  async function payWhileUnmined(whileUnmined: (sent: SentTransaction, order: OrderBody) => Promise<void>) {
    const order = await createOrder(stack, stack.sample.devices[0].id, "30m");
    await mining(false);
    try {
      assert.equal((await pay(stack, order, "relayed-permit")).status, 202);
      const sent = await sentTransaction(order);
      await whileUnmined(sent, order);
      return { order, sent };
    } finally {
      await mining(true);
    }
  }

  async function paid(order: OrderBody) {
    const done = await waitForOrder(stack, order.id, (o) => o.status === "success" && o.relay?.status !== "sent", 60_000);
    assert.equal(done.relay.status, "mined");
    assert.equal((await orderPaidEvents(order)).length, 1, "exactly one OrderPaid for the order");
    return done;
  }

  it(
    "replaces a payment a base-fee spike left unmineable, with the same nonce and higher fees; the order is paid once",
    { timeout: 120_000 },
    async () => {
      const replacements = await metric("payg_tx_replacements_total", { kind: "pay_with_permit" });
      const { order, sent: first } = await payWhileUnmined(async (first) => {
        // Every block's base fee stays far above what the transaction offers until the sender has replaced
        // it in the node's pool: one spike would decay by 12.5% a block, and on a loaded host the first
        // version could become mineable before the sender's replacement reached the node. The blocks come
        // every SLOW_BLOCK_MS: the sender broadcasts the transaction again before it is due for a replacement,
        // and that must not restart its count of blocks.
        const spike = toHex(first.maxFeePerGas! * 50n);
        await waitFor(
          "the first version replaced in the node's pool",
          async () => {
            await stack.chain.rpc("hardhat_setNextBlockBaseFeePerGas", [spike]);
            await stack.chain.rpc("evm_mine", []);
            if ((await metric("payg_tx_replacements_total", { kind: "pay_with_permit" })) === replacements) return undefined;
            return (await client.getTransaction({ hash: first.hash }).catch(() => null)) === null ? true : undefined;
          },
          60_000,
          SLOW_BLOCK_MS,
        );
      });
      const done = await paid(order);
      assert.ok((await metric("payg_tx_replacements_total", { kind: "pay_with_permit" })) > replacements, "counted as a replacement");
      const mined = await client.getTransaction({ hash: done.relay.transactionHash as Hex });
      assert.notEqual(mined.hash, first.hash, "a replacement was mined");
      assert.equal(mined.nonce, first.nonce, "with the nonce of the first");
      assert.ok(mined.maxFeePerGas! >= bumped(first.maxFeePerGas!), "at least 12.5% more on the max fee");
      assert.ok(mined.maxPriorityFeePerGas! >= bumped(first.maxPriorityFeePerGas!), "and on the priority fee");
      assert.equal(await client.getTransaction({ hash: first.hash }).catch(() => null), null, "the first version is gone from the node");
    },
  );

  it(
    "replaces the chain's next transaction once due although the node does not show it (a node that forwards to a sequencer keeps no pool)",
    { timeout: 120_000 },
    async () => {
      const replacements = await metric("payg_tx_replacements_total", { kind: "pay_with_permit" });
      const rebroadcasts = await metric("payg_tx_rebroadcasts_total");
      const { order, sent: first } = await payWhileUnmined(async (first) => {
        // The node forgets it at once, as one that passes transactions on without a pool shows none, and
        // REPLACE_AFTER_BLOCKS blocks go by well within the 12 s after which it would be broadcast again as
        // it was.
        assert.equal(await stack.chain.rpc("hardhat_dropTransaction", [first.hash]), true);
        for (let i = 0; i < REPLACE_AFTER_BLOCKS; i++) await stack.chain.rpc("evm_mine", []);
        await waitFor(
          "a replacement",
          async () => ((await metric("payg_tx_replacements_total", { kind: "pay_with_permit" })) > replacements ? true : undefined),
          30_000,
          250,
        );
        assert.equal(await metric("payg_tx_rebroadcasts_total"), rebroadcasts, "replaced, not broadcast again as it was first");
      });
      const done = await paid(order);
      const mined = await client.getTransaction({ hash: done.relay.transactionHash as Hex });
      assert.notEqual(mined.hash, first.hash, "the replacement was mined");
      assert.equal(mined.nonce, first.nonce, "with the nonce of the first");
      assert.ok(mined.maxFeePerGas! >= bumped(first.maxFeePerGas!), "at least 12.5% more on the max fee");
    },
  );

  it(
    "does not take its transaction, mined, for one whose nonce another spent while the node it asks for receipts lags behind",
    { timeout: 120_000 },
    async () => {
      const { order, sent } = await payWhileUnmined(async (_sent, order) => {
        // Mined, while the relayer's receipts come from a node that has not seen the block: the chain's
        // count says the nonce is used, and no receipt says by what. No block comes meanwhile.
        proxy.lag(["eth_getTransactionReceipt"]);
        try {
          await stack.chain.rpc("evm_mine", []);
          // Past the 12 s after which the sender takes a transaction it sent as stale.
          await new Promise((resolve) => setTimeout(resolve, 14_000));
          const meanwhile = await stack.api("GET", `/v1/orders/${order.id}`);
          assert.equal(meanwhile.body.relay.status, "sent", "still awaiting its receipt");
        } finally {
          proxy.lag([]);
        }
      });
      const done = await paid(order);
      assert.equal(done.relay.transactionHash, sent.hash);
    },
  );

  it(
    "sends again, with a new nonce, a payment whose nonce another transaction of the hot wallet spent, blocks after the chain used it; it is paid once",
    { timeout: 120_000 },
    async () => {
      const requeued = await metric("payg_tx_requeued_total", { kind: "pay_with_permit" });
      const { order, sent } = await payWhileUnmined(async (sent) => {
        // Something else with the hot wallet's key takes the nonce, paying more: the node replaces the
        // relayer's transaction with it.
        const signer = privateKeyToAccount(stack.relayerOptions.relayerPrivateKey);
        const raw = await signer.signTransaction({
          chainId: stack.chain.record.chainId,
          type: "eip1559",
          to: localAccount(9).address,
          value: 1n,
          nonce: sent.nonce,
          gas: 21_000n,
          maxFeePerGas: sent.maxFeePerGas! * 2n,
          maxPriorityFeePerGas: sent.maxPriorityFeePerGas! * 2n,
        });
        await client.sendRawTransaction({ serializedTransaction: raw });
      });
      const done = await paid(order);
      const mined = await client.getTransaction({ hash: done.relay.transactionHash as Hex });
      assert.ok(mined.nonce > sent.nonce, `a new nonce (${mined.nonce} after ${sent.nonce})`);
      assert.equal(await metric("payg_tx_requeued_total", { kind: "pay_with_permit" }), requeued + 1);
    },
  );

  it("broadcasts again a transaction the node dropped; it is mined", { timeout: 120_000 }, async () => {
    const rebroadcasts = await metric("payg_tx_rebroadcasts_total");
    const { order } = await payWhileUnmined(async (sent) => {
      assert.equal(await stack.chain.rpc("hardhat_dropTransaction", [sent.hash]), true);
      assert.equal(await client.getTransaction({ hash: sent.hash }).catch(() => null), null, "dropped");
      // No block meanwhile: it is broadcast again as it was, not replaced.
      await waitFor(
        "a broadcast again",
        async () => ((await metric("payg_tx_rebroadcasts_total")) > rebroadcasts ? true : undefined),
        40_000,
        250,
      );
      await waitFor(
        "the transaction back in the node's pool",
        () => client.getTransaction({ hash: sent.hash }).catch(() => undefined),
        10_000,
      );
    });
    await paid(order);
  });

  it(
    "counts a transaction mined only once it is CONFIRMATIONS deep: one a reorganisation took off the chain is sent again and mined once",
    { timeout: 240_000 },
    async () => {
      const depth = 3;
      await stack.restartRelayer({ env: { RPC_URL: proxy.url, CONFIRMATIONS: String(depth) } });
      try {
        const rebroadcasts = await metric("payg_tx_rebroadcasts_total");
        const replacements = await metric("payg_tx_replacements_total", { kind: "pay_with_permit" });
        let reorganised: { number: bigint; hash: Hex } | undefined;
        const { order, sent } = await payWhileUnmined(async (sent, order) => {
          const snapshot = await stack.chain.rpc<string>("evm_snapshot");
          await stack.chain.rpc("evm_mine", []);
          const receipt = await client.getTransactionReceipt({ hash: sent.hash });
          reorganised = { number: receipt.blockNumber, hash: receipt.blockHash };
          // One block deep of three, for a few of the sender's ticks: still sent.
          await new Promise((resolve) => setTimeout(resolve, 2_000));
          assert.equal((await waitForOrder(stack, order.id, () => true, 5_000)).relay.status, "sent");
          // A reorganisation takes the block away, and the node does not put the transaction back in its pool.
          assert.equal(await stack.chain.rpc("evm_revert", [snapshot]), true);
          await stack.chain.rpc("hardhat_dropTransaction", [sent.hash]);
          assert.equal(await client.getTransaction({ hash: sent.hash }).catch(() => null), null, "off the chain and the pool");
          assert.equal((await waitForOrder(stack, order.id, () => true, 5_000)).relay.status, "sent");
        });
        const done = await paid(order);
        // Sent again on the new chain: as it was, or replaced with higher fees once its blocks were due (it
        // holds the chain's next nonce).
        const final = await client.getTransaction({ hash: done.relay.transactionHash as Hex });
        assert.equal(final.nonce, sent.nonce, "the same nonce");
        const sentAgain =
          (await metric("payg_tx_rebroadcasts_total")) + (await metric("payg_tx_replacements_total", { kind: "pay_with_permit" })) >
          rebroadcasts + replacements;
        assert.ok(sentAgain, "broadcast again or replaced");
        const receipt = await client.getTransactionReceipt({ hash: final.hash });
        assert.notEqual(receipt.blockHash, reorganised!.hash, "mined in a block of the new chain");
        assert.ok((await client.getBlockNumber()) - receipt.blockNumber >= BigInt(depth));
      } finally {
        await stack.restartRelayer({ env: { RPC_URL: proxy.url } });
      }
    },
  );

  it(
    "pays an order once when the relayer is killed (SIGKILL) with its transaction in the node's pool, and that transaction is then dropped",
    { timeout: 180_000 },
    async () => {
      const { order, sent } = await payWhileUnmined(async (sent) => {
        // Killed with the transaction unmined; while it is down the node loses the transaction too. The
        // next process finds it stored as sent, not on the chain nor in the pool, and broadcasts the same
        // signed bytes again (never a new transaction for the order).
        await stack.restartRelayer({
          kill: true,
          env: { RPC_URL: proxy.url },
          whileStopped: async () => {
            assert.equal(await stack.chain.rpc("hardhat_dropTransaction", [sent.hash]), true);
          },
        });
        await waitFor(
          "the same transaction back in the node's pool",
          () => client.getTransaction({ hash: sent.hash }).catch(() => undefined),
          60_000,
          250,
        );
      });
      const done = await paid(order);
      assert.equal(done.relay.transactionHash, sent.hash, "the transaction signed before the kill was mined");
    },
  );

  it("sends the payments queued while the RPC answered 429 once it stops; none fails", { timeout: 120_000 }, async () => {
    const failed = async () =>
      (await metric("payg_tx_finished_total", { kind: "pay_with_permit", status: "failed" })) +
      (await metric("payg_tx_finished_total", { kind: "pay_cash", status: "failed" }));
    const failedBefore = await failed();
    const permitOrder = await createOrder(stack, stack.sample.devices[0].id, "30m");
    const cashOrder = await createOrder(stack, stack.sample.devices[1].id, "30m");
    const refusedBefore = proxy.refused;
    // Over quota for everything but eth_call: the relayer still checks and accepts payments (it
    // simulates them with eth_call) but cannot send them.
    const throttledUntil = Date.now() + 10_000;
    proxy.throttle(10_000, { spare: ["eth_call", "eth_chainId"] });
    assert.equal((await pay(stack, permitOrder, "relayed-permit")).status, 202);
    assert.equal((await pay(stack, cashOrder, "cash")).status, 202);
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, throttledUntil - Date.now() - 1_000)));
    for (const order of [permitOrder, cashOrder]) {
      const now = await stack.api("GET", `/v1/orders/${order.id}`);
      assert.equal(now.body.relay.status, "queued", "not sent while the RPC refuses");
    }
    assert.ok(proxy.refused > refusedBefore, "the sender met the 429s");
    await paid(permitOrder);
    await paid(cashOrder);
    assert.equal(await failed(), failedBefore, "no payment transaction failed");
  });

  it("fills a nonce gap below a stored unmined transaction after a restart, so that it is mined", { timeout: 120_000 }, async () => {
    // The relayer restarts to find a stored transaction whose nonce is one above the chain's: the one
    // below was lost. The sender fills it with an empty transfer, then both are mined.
    const signer = privateKeyToAccount(stack.relayerOptions.relayerPrivateKey);
    const fromBlock = await client.getBlockNumber({ cacheTime: 0 });
    let gap = 0;
    let stored: Hex = "0x";
    await stack.restartRelayer({
      env: { RPC_URL: proxy.url },
      whileStopped: async () => {
        gap = await client.getTransactionCount({ address: relayer, blockTag: "pending" });
        const raw = await signer.signTransaction({
          chainId: stack.chain.record.chainId,
          type: "eip1559",
          to: localAccount(9).address,
          // No value: the sender's rows carry none, so a replacement it signs (below) is the same transfer.
          value: 0n,
          nonce: gap + 1,
          gas: 21_000n,
          maxFeePerGas: parseGwei("100"),
          maxPriorityFeePerGas: parseGwei("1"),
        });
        stored = keccak256(raw);
        const db = await openDatabase(stack.relayerOptions.database, createLogger("error"));
        try {
          await db.db.insert(chainTransactions).values({
            id: `ctx_gap_test_${gap}`,
            kind: "test_transfer",
            ref: `tx-sender-test-gap-${gap}`,
            toAddress: localAccount(9).address,
            calldata: "0x",
            status: "sent",
            nonce: gap + 1,
            txHash: stored,
            rawTransaction: raw,
            sentBlock: Number(fromBlock),
            sentAt: new Date(Date.now() - 60_000),
            attempts: 1,
          });
        } finally {
          await db.close();
        }
      },
    });
    // The relayer's transaction of a nonce, as mined (from the blocks since the test began).
    const minedAt = (nonce: number, what: string) =>
      waitFor(
        what,
        async () => {
          const latest = await client.getBlockNumber({ cacheTime: 0 });
          for (let n = fromBlock + 1n; n <= latest; n++) {
            const block = await client.getBlock({ blockNumber: n, includeTransactions: true });
            const tx = block.transactions.find((t) => t.from.toLowerCase() === relayer.toLowerCase() && t.nonce === nonce);
            if (tx) return tx;
          }
          return undefined;
        },
        60_000,
        250,
      );
    // The stored transaction is mined as it was signed, or as the sender's replacement with higher fees (it
    // was sent before the restart: it may have waited TX_REPLACE_AFTER_BLOCKS by the time the gap is filled).
    const storedMined = await minedAt(gap + 1, "the stored transaction mined");
    assert.equal(storedMined.to?.toLowerCase(), localAccount(9).address.toLowerCase(), "the stored transfer, not a filler");
    assert.equal(storedMined.value, 0n);
    if (storedMined.hash !== stored) assert.ok(storedMined.maxFeePerGas! > parseGwei("100"), "a replacement pays more");
    const receipt = await client.getTransactionReceipt({ hash: storedMined.hash });
    assert.equal(receipt.status, "success");
    const filler = await minedAt(gap, "the gap's transaction");
    assert.equal(filler.to?.toLowerCase(), relayer.toLowerCase(), "an empty transfer to the hot wallet itself");
    assert.equal(filler.value, 0n);
    assert.equal(filler.input, "0x");
  });

  it("sends a payment before a backlog of 200 anchoring transactions", { timeout: 180_000 }, async () => {
    // The backlog and the payment are queued while the relayer runs no workers; then the sender starts.
    const target = localAccount(9).address;
    await stack.restartRelayer({
      env: { RPC_URL: proxy.url, WORKERS: "false" },
      whileStopped: async () => {
        const db = await openDatabase(stack.relayerOptions.database, createLogger("error"));
        try {
          for (let i = 0; i < 200; i++) {
            await enqueueTransaction(db.db, { kind: ANCHOR_TX_KIND, ref: `tx-sender-test-anchor-${i}`, to: target, data: "0x" });
          }
        } finally {
          await db.close();
        }
      },
    });
    const order = await createOrder(stack, stack.sample.devices[0].id, "30m");
    assert.equal((await pay(stack, order, "relayed-permit")).status, 202);
    const nonce = await client.getTransactionCount({ address: relayer, blockTag: "pending" });
    await stack.restartRelayer({ env: { RPC_URL: proxy.url } });
    const done = await paid(order);
    const tx = await client.getTransaction({ hash: done.relay.transactionHash as Hex });
    assert.equal(tx.nonce, nonce, "the payment took the first nonce, before any anchoring transaction");
    // The backlog follows (the stack stops before all of it is mined).
    await waitFor(
      "anchoring transactions mined after the payment",
      async () => ((await client.getTransactionCount({ address: relayer })) >= nonce + 11 ? true : undefined),
      60_000,
      500,
    );
  });
});
