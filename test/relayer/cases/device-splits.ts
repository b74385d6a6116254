// Every device pays out through its own split (an AssetSplitFactory clone): each payment's yield-deposited
// event comes from the paid device's split and credits that device's asset owner and operator; earnings are
// per tenant; a change of the payout parties waits for the split manager (npm run splits), then splits earlier
// and later payments; a split paying anyone else refuses the device's payments; a split's creation survives a
// relayer killed between signing and broadcasting it, without a second one.
import assert from "node:assert/strict";
import { setTimeout as sleep } from "node:timers/promises";
import { before, describe, it } from "node:test";
import { type Address, type Hex, createPublicClient, encodeAbiParameters, http, keccak256, parseEventLogs, toHex } from "viem";
import { assetSplitAbi, assetSplitFactoryAbi } from "../../../generated/abis.ts";
import { SAMPLE_PARTY_ACCOUNTS, localAccount, otherSampleSeedSpec } from "../../../lib/sample-data.ts";
import { splitsCommand } from "../../../scripts/splits.ts";
import { startRpcProxy } from "../../support/rpc-proxy.ts";
import { createOrder, pay, waitForOrder } from "../../support/pay.ts";
import type { Stack } from "../../support/stack.ts";
import { LOCAL_ACCOUNT_INDEX } from "../../support/local-chain.ts";
import { expectError } from "./expect.ts";

const address = (index: number) => localAccount(index).address;
const same = (a: string, b: string) => a.toLowerCase() === b.toLowerCase();

type Asset = {
  deviceId: string;
  payout: {
    assetOwner: string;
    operator: string;
    split: string;
    splitStatus: string;
    assetKey: Hex;
    pendingChange: { assetOwner: string; operator: string } | null;
  };
};

/** The asset key of a device's split: its chainDeviceId bound to the split's first recipients. */
const assetKeyOf = (chainDeviceId: Hex, assetOwner: string, operator: string) =>
  keccak256(
    encodeAbiParameters(
      [{ type: "bytes32" }, { type: "address" }, { type: "address" }],
      [chainDeviceId, assetOwner as Address, operator as Address],
    ),
  );

export function deviceSplitCases(stack: () => Stack) {
  describe("each device's own split", () => {
    let other: { key: string; sharedParticipantId: string; email: string; password: string };
    let jwt: string;

    before(async () => {
      const s = stack();
      // The second sample tenant, following the first tenant's asset owner C as a participant of its own.
      const spec = otherSampleSeedSpec();
      const user = { email: "dev@lakeside.example", password: "lakeside-sample-password", name: "Lakeside developer" };
      const seeded = await s.seed({
        ...spec,
        user,
        participants: [...spec.participants, { name: "Shared owner", address: address(SAMPLE_PARTY_ACCOUNTS.ownerC) }],
        devices: [
          ...spec.devices,
          {
            id: "kiosk-kla-nosplit",
            name: "Kiosk without parties",
            deviceClass: "solar-kiosk",
            region: "UG-102",
            tiers: { "30m": 300_000 },
          },
        ],
      });
      // The relayer as the stack starts it (an earlier case may have restarted it with settings of its own).
      await s.restartRelayer();
      const key = seeded.createdKeys.find((k: { role: string }) => k.role === "developer")!.key;
      const shared = seeded.participants.find((p: { name: string }) => p.name === "Shared owner")!;
      other = { key, sharedParticipantId: shared.id, email: user.email, password: user.password };
      const login = await s.api("POST", "/v1/auth/login", { body: { email: s.sample.email, password: s.sample.password } });
      assert.equal(login.status, 200, login.text);
      jwt = login.body.accessToken;
    });

    const client = (s: Stack) => createPublicClient({ transport: http(s.chain.rpcUrl) });

    /** The split manager's command as an operator runs it against the stack's chain (on a local chain its key
     * defaults to the local stack's split manager, account 13). */
    const splits = (s: Stack, ...args: string[]) => splitsCommand(args, { RPC_URL: s.chain.rpcUrl, DEPLOYMENT: s.chain.deploymentId });

    /** Proposes a change as the split manager, moves the chain past the factory's delay and executes it. */
    async function changeOnChain(s: Stack, assetKey: Hex, assetOwner: string, operator: string, ...factory: string[]) {
      assert.match(await splits(s, "propose", assetKey, assetOwner, operator, ...factory), /^proposed: 0x/);
      const shown = JSON.parse(await splits(s, "show", assetKey, ...factory));
      assert.equal(shown.pendingChange.assetOwner, assetOwner);
      await s.chain.rpc("evm_increaseTime", [shown.recipientChangeDelaySeconds]);
      assert.match(await splits(s, "execute", assetKey, ...factory), /^executed: 0x/);
    }

    /** Seeds a device of the second tenant (the first one's device list stays as the other cases expect it), paying
     * that tenant's sample owner and operator. */
    const seedOtherDevice = (s: Stack, deviceId: string, name: string) =>
      s.seed({
        tenant: otherSampleSeedSpec().tenant,
        devices: [
          {
            id: deviceId,
            name,
            deviceClass: "solar-kiosk",
            region: "UG-102",
            tiers: { "30m": 300_000 },
            assetOwner: address(SAMPLE_PARTY_ACCOUNTS.otherOwner),
            operator: address(SAMPLE_PARTY_ACCOUNTS.otherOperator),
          },
        ],
      });

    /** POST /v1/quote for `deviceId` in `token`, asked again while the answer is 409 split_not_ready (its split in
     * that token being created). */
    async function quoteIn(s: Stack, deviceId: string, token: string, tier = "30m") {
      const deadline = Date.now() + 60_000;
      for (;;) {
        const answer = await s.api("POST", "/v1/quote", { body: { deviceId, chain: "local", token, tier } });
        if (answer.status !== 409 || answer.body.error.code !== "split_not_ready" || Date.now() > deadline) return answer;
        await sleep(250);
      }
    }

    /** Waits until GET /v1/assets shows `deviceId` as `check` wants it (the relayer picks changes up from the chain). */
    async function assetUntil(s: Stack, deviceId: string, check: (a: Asset) => boolean, what: string, token = jwt): Promise<Asset> {
      const deadline = Date.now() + 30_000;
      for (;;) {
        const found = await asset(s, deviceId, token);
        if (check(found)) return found;
        assert.ok(Date.now() < deadline, `${deviceId}: ${what}; last seen ${JSON.stringify(found.payout)}`);
        await sleep(250);
      }
    }

    async function asset(s: Stack, deviceId: string, token = jwt): Promise<Asset> {
      const list = await s.api("GET", "/v1/assets", { token });
      assert.equal(list.status, 200, list.text);
      const found = list.body.data.find((a: Asset) => a.deviceId === deviceId);
      assert.ok(found, `${deviceId} is among the tenant's assets`);
      return found;
    }

    async function paid(s: Stack, deviceId: string) {
      const order = await createOrder(s, deviceId, "30m");
      assert.equal((await pay(s, order, "relayed-permit")).status, 202);
      const done = await waitForOrder(s, order.id, (o) => o.status === "success" && o.split !== null);
      const receipt = await client(s).getTransactionReceipt({ hash: done.payment.transactionHash as Hex });
      const deposits = parseEventLogs({ abi: assetSplitAbi, eventName: "YieldDeposited", logs: receipt.logs });
      assert.equal(deposits.length, 1, "one yield-deposited event per payment");
      return { order: done, deposit: deposits[0] };
    }

    it("pays two devices of different owners each through its own split, crediting its own owner and operator", async () => {
      const s = stack();
      const a = await asset(s, "kiosk-nbo-001");
      const c = await asset(s, "charger-los-002");
      assert.equal(a.payout.splitStatus, "created");
      assert.equal(c.payout.splitStatus, "created");
      assert.notEqual(a.payout.split, c.payout.split);
      // The split's address is the factory's own prediction.
      const factory = s.chain.record.contracts.AssetSplitFactory!.address;
      const device = await s.api("GET", "/v1/devices/kiosk-nbo-001", { token: s.sample.developerKey });
      // Its asset key binds the device's key to the split's first recipients; the split's address is the factory's
      // own prediction for it.
      assert.equal(a.payout.assetKey, assetKeyOf(device.body.chainDeviceId, a.payout.assetOwner, a.payout.operator));
      const predicted = await client(s).readContract({
        address: factory,
        abi: assetSplitFactoryAbi,
        functionName: "predictSplit",
        args: [a.payout.assetKey],
      });
      assert.equal(a.payout.split, predicted);
      assert.deepEqual(device.body.payout, a.payout);

      for (const [deviceId, owner, operator, view] of [
        ["kiosk-nbo-001", SAMPLE_PARTY_ACCOUNTS.ownerA, SAMPLE_PARTY_ACCOUNTS.operatorA, a],
        ["charger-los-002", SAMPLE_PARTY_ACCOUNTS.ownerC, SAMPLE_PARTY_ACCOUNTS.operatorB, c],
      ] as const) {
        const { order, deposit } = await paid(s, deviceId);
        assert.equal(deposit.address.toLowerCase(), view.payout.split.toLowerCase(), `${deviceId}: the event comes from its own split`);
        const receipt = await s.api("GET", `/v1/orders/${order.id}/receipt`);
        assert.equal(receipt.status, 200, receipt.text);
        assert.ok(same(receipt.body.settlement.split, view.payout.split));
        const [ownerLeg, operatorLeg] = receipt.body.settlement.legs;
        assert.ok(same(ownerLeg.recipient, address(owner)), `${deviceId}: asset owner`);
        assert.ok(same(operatorLeg.recipient, address(operator)), `${deviceId}: operator`);
        assert.equal(BigInt(ownerLeg.amount), deposit.args.assetOwnerAmount);
        assert.equal(BigInt(operatorLeg.amount), deposit.args.operatorAmount);
        const listed = await s.api("GET", `/v1/revenue/splits?deviceId=${deviceId}&limit=1`, { token: s.sample.developerKey });
        assert.equal(listed.body.data[0].orderId, order.id);
        assert.ok(same(listed.body.data[0].split, view.payout.split));
        const { body: chainView } = await s.api("GET", `/v1/devices/${deviceId}`, { token: s.sample.developerKey });
        assert.deepEqual(listed.body.data[0].asset, { deviceId, chainDeviceId: chainView.chainDeviceId });
      }
    });

    it("adds each participant's earnings up from the legs of the tenant's splits, and shows another tenant none of them", async () => {
      const s = stack();
      const splits = await s.api("GET", "/v1/revenue/splits?limit=100", { token: s.sample.developerKey });
      assert.equal(splits.status, 200);
      for (const participant of s.sample.participants) {
        const legs = splits.body.data.flatMap((item: { legs: Array<{ recipient: string; amount: string }> }) =>
          item.legs.filter((leg) => same(leg.recipient, participant.address)).map((leg) => BigInt(leg.amount)),
        );
        const earnings = await s.api("GET", `/v1/participants/${participant.id}/earnings`, { token: s.sample.developerKey });
        assert.equal(earnings.status, 200, earnings.text);
        const credited = earnings.body.earnings.reduce((n: bigint, e: { credited: string }) => n + BigInt(e.credited), 0n);
        assert.equal(
          credited,
          legs.reduce((n: bigint, x: bigint) => n + x, 0n),
          `${participant.name}: credited = its legs`,
        );
        for (const e of earnings.body.earnings) {
          const bySplit = e.bySplit.reduce((n: bigint, x: { credited: string }) => n + BigInt(x.credited), 0n);
          assert.equal(bySplit, BigInt(e.credited), `${participant.name}: the per-split credits add up`);
          for (const x of e.bySplit) assert.ok(x.asset.deviceId, "every split is one of the tenant's devices");
        }
        for (const settlement of earnings.body.latestSettlements) {
          assert.ok(settlement.asset.deviceId, "each settlement names its asset");
          assert.ok(splits.body.data.some((item: { split: string }) => same(item.split, settlement.split)));
        }
      }
      // Owner C was paid by this tenant's charger-los-002; the other tenant follows the same address and sees
      // nothing of it, nor any of this tenant's splits.
      const theirs = await s.api("GET", `/v1/participants/${other.sharedParticipantId}/earnings`, { token: other.key });
      assert.equal(theirs.status, 200, theirs.text);
      assert.deepEqual(theirs.body.earnings, []);
      assert.deepEqual(theirs.body.latestSettlements, []);
      const theirSplits = await s.api("GET", "/v1/revenue/splits?limit=100", { token: other.key });
      assert.deepEqual(theirSplits.body.data, []);
      const ownerC = s.sample.participants.find((p) => same(p.address, address(SAMPLE_PARTY_ACCOUNTS.ownerC)))!;
      const ours = await s.api("GET", `/v1/participants/${ownerC.id}/earnings`, { token: s.sample.developerKey });
      assert.ok(BigInt(ours.body.earnings[0].credited) > 0n);
      expectError(await s.api("GET", "/v1/assets", { token: other.key }), 401, "unauthorized");
    });

    it("a payout change waits for the split manager, then splits payments between the former and the new recipients", async () => {
      const s = stack();
      const deviceId = "kiosk-nbo-002";
      const before = await asset(s, deviceId);
      const first = await paid(s, deviceId);
      const newOwner = address(LOCAL_ACCOUNT_INDEX.spare);
      const formerOwner = before.payout.assetOwner;
      // The device has a split in USDT too, created by its first quote in USDT with the same parties.
      assert.equal((await quoteIn(s, deviceId, "USDT")).status, 201);

      // Refused before anything is stored: a bad checksum, the zero address.
      const letter = newOwner.slice(2).search(/[a-fA-F]/) + 2;
      const flipped = newOwner[letter] === newOwner[letter].toLowerCase() ? newOwner[letter].toUpperCase() : newOwner[letter].toLowerCase();
      const badChecksum = `${newOwner.slice(0, letter)}${flipped}${newOwner.slice(letter + 1)}`;
      expectError(
        await s.api("PUT", `/v1/assets/${deviceId}/payout`, {
          token: jwt,
          body: { assetOwner: badChecksum, operator: before.payout.operator },
        }),
        422,
        "invalid_parameters",
      );
      expectError(
        await s.api("PUT", `/v1/assets/${deviceId}/payout`, {
          token: jwt,
          body: { assetOwner: `0x${"0".repeat(40)}`, operator: before.payout.operator },
        }),
        422,
        "invalid_parameters",
      );
      expectError(
        await s.api("PUT", `/v1/assets/${deviceId}/payout`, {
          token: s.sample.developerKey,
          body: { assetOwner: newOwner, operator: before.payout.operator },
        }),
        401,
        "unauthorized",
      );

      const changed = await s.api("PUT", `/v1/assets/${deviceId}/payout`, {
        token: jwt,
        body: { assetOwner: newOwner, operator: before.payout.operator },
      });
      assert.equal(changed.status, 200, changed.text);
      // Nothing is sent by the hot wallet: the device keeps paying its parties, the change waits for the manager.
      assert.equal(changed.body.transactionId, null);
      assert.equal(changed.body.payout.assetOwner, formerOwner);
      assert.deepEqual(changed.body.payout.pendingChange, { assetOwner: newOwner, operator: before.payout.operator });
      assert.equal(changed.body.payout.assetKey, before.payout.assetKey, "the split and its asset key stay");
      const split = before.payout.split as Address;
      const [unchanged] = await client(s).readContract({ address: split, abi: assetSplitAbi, functionName: "legs" });
      assert.ok(same(unchanged[0], formerOwner), "the split still pays the former owner");

      // For a multisig or KMS signer, the command writes the proposal's transaction instead of sending it.
      const printed = JSON.parse(await splits(s, "propose", before.payout.assetKey, newOwner, before.payout.operator, "--print"));
      assert.ok(same(printed.to, s.chain.record.contracts.AssetSplitFactory!.address));
      assert.match(printed.data, /^0x[0-9a-f]+$/);
      assert.equal(JSON.parse(await splits(s, "show", before.payout.assetKey)).pendingChange, null, "--print sends nothing");
      // The split manager proposes it, anyone executes it after the factory's delay; the relayer picks it up.
      await changeOnChain(s, before.payout.assetKey, newOwner, before.payout.operator);
      const after = await assetUntil(s, deviceId, (a) => same(a.payout.assetOwner, newOwner), "the change taken up");
      assert.equal(after.payout.pendingChange, null);
      assert.equal(after.payout.splitStatus, "created");
      // The portal's Assets page shows the new parties.
      const page = await s.api("GET", "/portal/devices", { headers: { cookie: `payg_session=${jwt}` } });
      assert.equal(page.status, 200);
      assert.match(page.text, /<h1>Assets<\/h1>/);
      assert.ok(
        page.text.includes(`data-device-id="${deviceId}"`) && page.text.includes(newOwner),
        "the page lists the device with its new owner",
      );
      const second = await paid(s, deviceId);
      assert.equal(second.deposit.address.toLowerCase(), split.toLowerCase(), "the same split");
      // Its USDT split still pays the former owner: the device's USDT quotes are refused until the manager changes it
      // at the USDT factory too.
      expectError(await quoteIn(s, deviceId, "USDT"), 409, "split_recipients_mismatch");
      await changeOnChain(s, before.payout.assetKey, newOwner, before.payout.operator, "--factory", "AssetSplitFactory_USDT");
      const usdtQuote = await quoteIn(s, deviceId, "USDT");
      assert.equal(usdtQuote.status, 201, usdtQuote.text);
      const legsOf = async (orderId: string) => (await s.api("GET", `/v1/orders/${orderId}/receipt`)).body.settlement.legs;
      assert.ok(same((await legsOf(first.order.id))[0].recipient, formerOwner), "the earlier payment credited the former owner");
      assert.ok(same((await legsOf(second.order.id))[0].recipient, newOwner), "the later one the new owner");
      // What the former owner earned there stays its own.
      assert.equal(
        (await client(s).readContract({
          address: split,
          abi: assetSplitAbi,
          functionName: "claimable",
          args: [formerOwner as Address],
        })) >= first.deposit.args.assetOwnerAmount,
        true,
      );
    });

    it("a device whose parties changed after its split was created takes no payment in a second stablecoin (422)", async () => {
      const s = stack();
      const deviceId = "kiosk-kla-usdc-only";
      await seedOtherDevice(s, deviceId, "Kiosk of the second-stablecoin case");
      assert.equal((await quoteIn(s, deviceId, "USDC")).status, 201);
      const login = await s.api("POST", "/v1/auth/login", { body: { email: other.email, password: other.password } });
      const token: string = login.body.accessToken;
      const created = await asset(s, deviceId, token);
      const newOwner = address(LOCAL_ACCOUNT_INDEX.spare);
      const changed = await s.api("PUT", `/v1/assets/${deviceId}/payout`, {
        token,
        body: { assetOwner: newOwner, operator: created.payout.operator },
      });
      assert.equal(changed.status, 200, changed.text);
      await changeOnChain(s, created.payout.assetKey, newOwner, created.payout.operator);
      await assetUntil(s, deviceId, (a) => same(a.payout.assetOwner, newOwner), "the change taken up", token);
      // Its asset key commits to its first parties: a split in USDT would start paying the former owner.
      const refused = await quoteIn(s, deviceId, "USDT");
      expectError(refused, 422, "invalid_parameters");
      assert.match(refused.body.error.message, /takes no payment in USDT, only in the main stablecoin/);
      assert.equal(refused.body.error.details[0].path, "token");
      assert.equal((await quoteIn(s, deviceId, "USDC")).status, 201, "the main stablecoin still pays");
    });

    it("a split paying recipients nobody requested refuses the device's payments (409 split_recipients_mismatch) until resolved", async () => {
      const s = stack();
      const deviceId = "kiosk-kla-mismatch";
      await seedOtherDevice(s, deviceId, "Kiosk of the mismatch case");
      const quote = () => s.api("POST", "/v1/quote", { body: { deviceId, chain: "local", token: "USDC", tier: "30m" } });
      const deadline = Date.now() + 60_000;
      let first = await quote();
      while (first.status === 409 && Date.now() < deadline) {
        await sleep(500);
        first = await quote();
      }
      assert.equal(first.status, 201, first.text);
      const login = await s.api("POST", "/v1/auth/login", { body: { email: other.email, password: other.password } });
      assert.equal(login.status, 200, login.text);
      const token: string = login.body.accessToken;
      const created = await asset(s, deviceId, token);
      assert.equal(created.payout.splitStatus, "created");

      // A change the tenant never asked for is proposed and executed on-chain (a stolen manager key, say).
      const thief = address(LOCAL_ACCOUNT_INDEX.spare);
      await changeOnChain(s, created.payout.assetKey, thief, thief);
      const mismatched = await assetUntil(s, deviceId, (a) => a.payout.splitStatus === "mismatch", "a mismatch", token);
      assert.ok(same(mismatched.payout.assetOwner, address(SAMPLE_PARTY_ACCOUNTS.otherOwner)), "the device's parties stay");
      const refused = await quote();
      expectError(refused, 409, "split_recipients_mismatch");
      assert.match(refused.body.error.message, new RegExp(`device ${deviceId}`));
      const metrics = await s.api("GET", "/metrics");
      assert.match(metrics.text, /^payg_split_recipients_mismatched_devices [1-9]/m);
      assert.match(metrics.text, /^payg_split_unrequested_proposals_total [1-9]/m);

      // Resolved: the manager puts the device's parties back; the relayer reads them and takes payments again.
      await changeOnChain(
        s,
        created.payout.assetKey,
        address(SAMPLE_PARTY_ACCOUNTS.otherOwner),
        address(SAMPLE_PARTY_ACCOUNTS.otherOperator),
      );
      await assetUntil(s, deviceId, (a) => a.payout.splitStatus === "created", "resolved", token);
      assert.equal((await quote()).status, 201);
    });

    it(
      "creates a split once when the relayer is killed (SIGKILL) between signing its creation and broadcasting it; a quote meanwhile is 409 split_not_ready",
      { timeout: 180_000 },
      async () => {
        const s = stack();
        const deviceId = "kiosk-kla-nosplit";
        const chain = client(s);
        const factory = s.chain.record.contracts.AssetSplitFactory!.address;
        const relayer = address(LOCAL_ACCOUNT_INDEX.agent);
        const quote = () => s.api("POST", "/v1/quote", { body: { deviceId, chain: "local", token: "USDC", tier: "30m" } });
        // No payout parties: no split, and a quote says so.
        const none = await quote();
        expectError(none, 409, "split_not_ready");
        assert.equal(none.headers.get("retry-after"), "2");

        const rpcProxy = await startRpcProxy(s.chain.rpcUrl);
        try {
          await s.restartRelayer({ env: { RPC_URL: rpcProxy.url } });
          // Parties set while there is no split: stored, nothing sent; the next quote asks for the split.
          const login = await s.api("POST", "/v1/auth/login", { body: { email: other.email, password: other.password } });
          assert.equal(login.status, 200, login.text);
          const owner = address(SAMPLE_PARTY_ACCOUNTS.otherOwner);
          const set = await s.api("PUT", `/v1/assets/${deviceId}/payout`, {
            token: login.body.accessToken,
            body: { assetOwner: owner, operator: address(SAMPLE_PARTY_ACCOUNTS.otherOperator) },
          });
          assert.equal(set.status, 200, set.text);
          assert.equal(set.body.transactionId, null);
          assert.equal(set.body.payout.splitStatus, "none");
          const chainDeviceId = keccak256(toHex(deviceId));

          const nonceBefore = await chain.getTransactionCount({ address: relayer });
          const fromBlock = await chain.getBlockNumber({ cacheTime: 0 });
          rpcProxy.hold("eth_sendRawTransaction");
          // The creation is signed and stored, its broadcast held: the quote waits, then answers 409.
          const waiting = await quote();
          expectError(waiting, 409, "split_not_ready");
          assert.equal(waiting.headers.get("retry-after"), "2");
          await rpcProxy.held(20_000);
          const killedAt = Date.now();
          await s.restartRelayer({ kill: true });
          await rpcProxy.close();
          // The restarted relayer takes the sender's lease when the dead one's runs out and broadcasts the same
          // signed creation again.
          const leaseMs = Number(s.relayerOptions.env?.TX_SENDER_LEASE_SECONDS ?? 15) * 1000;
          await sleep(Math.max(0, killedAt + leaseMs - Date.now()));
          const deadline = Date.now() + 40_000;
          let quoted = await quote();
          while (quoted.status === 409 && Date.now() < deadline) {
            await sleep(Number(quoted.headers.get("retry-after") ?? 1) * 1000);
            quoted = await quote();
          }
          assert.equal(quoted.status, 201, quoted.text);
          // This asset's creations and the hot wallet's transactions about it (other devices' splits may be
          // created meanwhile when this case runs alone).
          const assetKey = assetKeyOf(chainDeviceId, owner, address(SAMPLE_PARTY_ACCOUNTS.otherOperator));
          const created = parseEventLogs({
            abi: assetSplitFactoryAbi,
            eventName: "SplitCreated",
            logs: await chain.getLogs({ address: factory, fromBlock, toBlock: "latest" }),
          }).filter((event) => event.args.assetKey === assetKey);
          assert.equal(created.length, 1, "one creation");
          assert.ok(same(created[0].args.assetOwner, owner));
          const sent = [];
          for (let n = fromBlock + 1n; n <= (await chain.getBlockNumber({ cacheTime: 0 })); n++) {
            const block = await chain.getBlock({ blockNumber: n, includeTransactions: true });
            // The creation's calldata carries the device's key and recipients (the factory derives the asset key).
            sent.push(...block.transactions.filter((tx) => same(tx.from, relayer) && tx.input.includes(chainDeviceId.slice(2))));
          }
          assert.equal(sent.length, 1, "the hot wallet sent one transaction for the asset");
          assert.ok(sent[0]!.nonce >= nonceBefore);
          const [recipients] = await chain.readContract({ address: created[0].args.split, abi: assetSplitAbi, functionName: "legs" });
          assert.ok(same(recipients[0], owner));
        } finally {
          await rpcProxy.close();
        }
      },
    );
  });
}
