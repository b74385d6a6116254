// Smart-contract wallets pay through the payment API, end to end: a 2-of-3 multi-owner account (ERC-1271,
// contracts/test/MultiOwnerAccount.sol) signs the order's EIP-3009 authorization or its EIP-2612 permit with
// its owners' keys, a signature far longer than 65 bytes, and the relayer verifies it (by asking the account,
// through the chain), simulates the payment and pays it through the local stack's USDC (RehearsalUsdc: USDC
// v2.2's `bytes` overloads). An account not deployed yet pays with its signature wrapped in ERC-6492 (the
// factory call that deploys it). A signature the account does not accept is a 422 before anything is sent.
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { type Address, type Hex, size } from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { type MultiOwnerAccount, accountSigner, deployAccount, deployAccountFactory, predictAccount } from "../../lib/smart-account.ts";
import { type Order, signOrderPayment, submitOrderPayment } from "../../sdk/src/index.ts";
import { oneDatabaseKind } from "../support/databases.ts";
import { LOCAL_ACCOUNT_INDEX, localAccount, localStablecoin, localStablecoinAbi } from "../support/local-chain.ts";
import { type OrderBody, clients, createOrder, paymentClient, waitForOrder } from "../support/pay.ts";
import { createPayments } from "../support/payments.ts";
import { type Stack, startStack } from "../support/stack.ts";
import { type WebhookReceiver, startWebhookReceiver } from "../support/webhook-receiver.ts";
import { expectError } from "./cases/expect.ts";

const database = oneDatabaseKind();
const owners = () => Array.from({ length: 3 }, () => privateKeyToAccount(generatePrivateKey()));

describe(`smart-contract accounts pay through the relayer on ${database}`, { concurrency: false }, () => {
  let stack: Stack;
  let receiver: WebhookReceiver;
  let factory: Address;
  let salt = 1n;
  const hotWallet = localAccount(LOCAL_ACCOUNT_INDEX.agent).address;

  before(
    async () => {
      receiver = await startWebhookReceiver();
      stack = await startStack({ label: "smart-accounts", database });
      const { walletClient, publicClient } = clients(stack);
      factory = await deployAccountFactory(walletClient, publicClient);
      const subscription = await stack.api("POST", "/v1/webhooks/subscriptions", {
        token: stack.sample.developerKey,
        body: { url: receiver.url("/payments"), eventTypes: ["payment.succeeded"] },
      });
      assert.equal(subscription.status, 201, subscription.text);
      receiver.setSecret("/payments", subscription.body.secret);
    },
    { timeout: 240_000 },
  );
  after(async () => {
    await stack?.stop();
    await receiver?.close();
  });

  /** A new 2-of-3 account of fresh owner keys with 10 USDC, deployed unless `deployed` is false. */
  async function newAccount(opts: { deployed?: boolean } = {}): Promise<MultiOwnerAccount> {
    const { walletClient, publicClient } = clients(stack);
    const account = await predictAccount(publicClient, factory, { owners: owners(), threshold: 2, salt: salt++ });
    if (opts.deployed ?? true) await deployAccount(walletClient, publicClient, account);
    const admin = createPayments(stack.chain).wallet(LOCAL_ACCOUNT_INDEX.admin);
    const hash = await admin.writeContract({
      address: localStablecoin(stack.chain.record),
      abi: localStablecoinAbi,
      functionName: "mint",
      args: [account.address, 10_000_000n],
    });
    await publicClient.waitForTransactionReceipt({ hash });
    return account;
  }

  /** Signs `order` on `rail` as `account` (its owners, up to its threshold) and submits it to the relayer. */
  async function relay(order: OrderBody, account: MultiOwnerAccount, rail: "authorization" | "permit", opts: { erc6492?: boolean } = {}) {
    const { publicClient } = clients(stack);
    const signed = await signOrderPayment(order as Order, accountSigner(account, opts), { rail, publicClient });
    return { signed, signature: signed.body.signature, relayed: await submitOrderPayment(paymentClient(stack), order.id, signed) };
  }

  /** The order, paid: on `rail`, by `payer`, shown so by the order, its receipt and its payment.succeeded webhook. */
  async function assertPaidBy(order: OrderBody, payer: Address, rail: string) {
    const paid = await waitForOrder(stack, order.id, (o) => o.status === "success", 30_000);
    assert.equal(paid.payment.rail, rail);
    assert.equal(paid.payment.payer, payer, "the account is the payer, EIP-55 checksummed");
    const receipt = await stack.api("GET", `/v1/orders/${order.id}/receipt`);
    assert.equal(receipt.status, 200, receipt.text);
    assert.equal(receipt.body.payment.payer, payer);
    assert.equal(receipt.body.payment.rail, rail);
    const delivery = await receiver.waitFor(
      (d) => d.path === "/payments" && d.envelope?.type === "payment.succeeded" && d.envelope.data.orderId === order.id,
      20_000,
      "payment.succeeded",
    );
    assert.ok(delivery.standardOk && delivery.serviceOk, delivery.verifyError);
    assert.equal(delivery.envelope!.data.payer, payer);
    assert.equal(delivery.envelope!.data.rail, rail);
    return paid;
  }

  /** What the relayer's hot wallet sent so far (its nonce, pending included). */
  const sentByHotWallet = () => clients(stack).publicClient.getTransactionCount({ address: hotWallet, blockTag: "pending" });

  it("a deployed 2-of-3 account pays by EIP-3009 authorization with its ERC-1271 signature", async () => {
    const account = await newAccount();
    const order = await createOrder(stack, "kiosk-nbo-002", "30m");
    const { signature, relayed } = await relay(order, account, "authorization");
    assert.ok(size(signature as Hex) > 65, "longer than an ECDSA signature");
    assert.equal(relayed.orderId, order.id);
    await assertPaidBy(order, account.address, "authorization");
    const balance = await clients(stack).publicClient.readContract({
      address: localStablecoin(stack.chain.record),
      abi: localStablecoinAbi,
      functionName: "balanceOf",
      args: [account.address],
    });
    assert.equal(balance, 10_000_000n - BigInt(order.paymentDetails.order.amount), "the account paid the order's amount");
  });

  it("a deployed 2-of-3 account pays by EIP-2612 permit with its ERC-1271 signature", async () => {
    const account = await newAccount();
    const order = await createOrder(stack, "kiosk-nbo-002", "30m");
    const { signed } = await relay(order, account, "permit");
    assert.equal(signed.rail === "permit" && signed.nonce, 0n, "the account's first permit");
    await assertPaidBy(order, account.address, "permit");
  });

  it("an account not deployed yet pays with an ERC-6492 signature: the payment deploys it", async () => {
    const account = await newAccount({ deployed: false });
    const { publicClient } = clients(stack);
    assert.equal(await publicClient.getCode({ address: account.address }), undefined, "not deployed");
    const order = await createOrder(stack, "kiosk-nbo-002", "30m");
    const { signature } = await relay(order, account, "authorization", { erc6492: true });
    assert.ok((signature as Hex).endsWith("6492".repeat(16)), "an ERC-6492 signature (its magic suffix)");
    await assertPaidBy(order, account.address, "authorization");
    assert.ok((await publicClient.getCode({ address: account.address }))?.length, "the account exists now");
  });
  // Last, so that the relayer's own start-up transactions (the sample devices' splits) are long mined: from here
  // on the hot wallet sends only what a request asks for.
  it("refuses a signature the account does not accept with 422 on `signature`, and sends nothing", async () => {
    const account = await newAccount();
    const undeployed = await newAccount({ deployed: false });
    const order = await createOrder(stack);
    const sentBefore = await sentByHotWallet();
    // Two keys that are not the account's owners sign for it; one owner alone is below the threshold.
    const strangers: MultiOwnerAccount = { ...account, owners: owners() };
    const cases: Array<{
      what: string;
      account: MultiOwnerAccount;
      rail: "authorization" | "permit";
      opts?: { count?: number; erc6492?: boolean };
    }> = [
      { what: "non-owners' authorization", account: strangers, rail: "authorization" },
      { what: "non-owners' permit", account: strangers, rail: "permit" },
      { what: "one owner of two needed", account, rail: "authorization", opts: { count: 1 } },
      {
        what: "non-owners' ERC-6492 signature",
        account: { ...undeployed, owners: owners() },
        rail: "authorization",
        opts: { erc6492: true },
      },
      { what: "an undeployed account's signature without ERC-6492", account: undeployed, rail: "authorization" },
    ];
    for (const c of cases) {
      const { publicClient } = clients(stack);
      const signed = await signOrderPayment(order as Order, accountSigner(c.account, c.opts), { rail: c.rail, publicClient });
      assert.ok(size(signed.body.signature) > 65, `${c.what}: an account's signature, longer than 65 bytes`);
      const refused = await stack.api("POST", `/v1/orders/${order.id}/${c.rail}`, { body: signed.body });
      expectError(refused, 422, "invalid_parameters");
      assert.equal(refused.body.error.details[0].path, "signature", c.what);
      assert.match(refused.body.error.message, /signature/, c.what);
    }
    const still = await stack.api("GET", `/v1/orders/${order.id}`);
    assert.equal(still.body.status, "pending");
    assert.equal(still.body.relay, null, "nothing was queued");
    assert.equal(await sentByHotWallet(), sentBefore, "the hot wallet sent no transaction");
    assert.equal(await clients(stack).publicClient.getCode({ address: undeployed.address }), undefined, "the undeployed account stays so");
    // The account's own owners then pay the same order.
    await relay(order, account, "authorization");
    await assertPaidBy(order, account.address, "authorization");
  });
});
