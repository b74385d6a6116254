// Attestation through HTTP and on the local chain: an attested batch's readings become a Merkle tree, the
// batches waiting become a batches tree whose root TelemetryAnchor anchors in one transaction (observable in
// the project's latest evidence and in BatchesAnchored), a reading verifies on chain from what the API returns,
// many batches ingested quickly take far fewer transactions than batches, batches whose anchoring fails end
// failed, baseline batches are never anchored, anomaly scores are confirmed later, and a relayer killed in
// the middle of ingest loses no accepted reading.
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { type Hex, createPublicClient, createWalletClient, http, parseEventLogs } from "viem";
import { telemetryAnchorAbi } from "../../generated/abis.ts";
import { localAccount } from "../../lib/sample-data.ts";
import { type DatabaseKind, selectedDatabaseKinds, withPostgres } from "../support/databases.ts";
import { type Stack, startStack } from "../support/stack.ts";
import {
  type BatchFields,
  type Reading,
  accessToken,
  assertError,
  batchFields,
  call,
  expectedBatchesTree,
  expectedTree,
  meter,
  postBatch,
  readingFields,
  waitFor,
} from "./helpers.ts";

type SentBatch = { fields: BatchFields; readings: Reading[]; tree: ReturnType<typeof expectedTree> };

for (const database of selectedDatabaseKinds()) {
  describe(`energy sandbox attestation (${database})`, { timeout: 300_000 }, () => {
    let stack: Stack;
    let token: string;
    let anchor: Hex;
    let publicClient: ReturnType<typeof createPublicClient>;

    const liveEnergy = async (ref: string) => (await call(stack, token, "GET", `/evidence/${ref}`)).body.clusters.energy_evidence;

    const verifyReading = (reading: Reading, readingProof: string[], batch: BatchFields, batchProof: string[]) =>
      publicClient.readContract({
        address: anchor,
        abi: telemetryAnchorAbi,
        functionName: "verifyReading",
        args: [readingFields(reading), readingProof as Hex[], batch, batchProof as Hex[]],
      });

    /** A batch as sent: its readings, its tree (built here from them) and its batches-tree leaf. */
    const sent = (projectId: string, deviceId: string, batchSequence: number, readings: Reading[]): SentBatch => {
      const tree = expectedTree({ chainId: stack.chain.record.chainId, projectId, deviceId, batchSequence }, readings);
      return { readings, tree, fields: batchFields(projectId, deviceId, batchSequence, tree.root, readings.length) };
    };

    /** The BatchesAnchored events from `fromBlock` on, in chain order. */
    const anchorsSince = async (fromBlock: bigint) =>
      (await publicClient.getContractEvents({ address: anchor, abi: telemetryAnchorAbi, eventName: "BatchesAnchored", fromBlock })).map(
        (e) => ({
          batchesRoot: e.args.batchesRoot!,
          batches: e.args.batches!,
        }),
      );

    /** Checks that the anchors from `fromBlock` on took exactly `batches`, each once, oldest first (the order the
     * relayer takes them in): each event's root is the batches tree of the next `batches` of them, rebuilt here;
     * and that every batch's readings verify on chain through both trees. Resolves with the number of anchors. */
    const assertAnchoredOnce = async (fromBlock: bigint, batches: SentBatch[]): Promise<number> => {
      const anchors = await waitFor(
        `${batches.length} batches anchored`,
        async () => {
          const found = await anchorsSince(fromBlock);
          return found.reduce((sum, a) => sum + a.batches, 0) >= batches.length ? found : undefined;
        },
        120_000,
        250,
      );
      assert.equal(
        anchors.reduce((sum, a) => sum + a.batches, 0),
        batches.length,
        "every batch in exactly one anchor",
      );
      let next = 0;
      for (const a of anchors) {
        const members = batches.slice(next, next + a.batches);
        next += a.batches;
        const tree = expectedBatchesTree(members.map((b) => b.fields));
        assert.equal(tree.root, a.batchesRoot, "the anchor's root is the batches tree of its batches");
        for (const [i, batch] of members.entries()) {
          const batchProof = tree.getProof(i);
          for (const index of [0, batch.readings.length - 1]) {
            assert.equal(await verifyReading(batch.readings[index], batch.tree.getProof(index), batch.fields, batchProof), true);
          }
        }
      }
      return anchors.length;
    };

    /** What the energy cluster of the latest evidence gives a verifier: the batch's leaf fields and its proof. */
    const evidenceBatch = (
      projectId: string,
      energy: { readings: number; merkle_root: string; device_id: string; batch_sequence: number },
    ) => batchFields(projectId, energy.device_id, energy.batch_sequence, energy.merkle_root, energy.readings);

    before(async () => {
      stack = await startStack({
        label: `energy-anchor-${database}`,
        database: database as DatabaseKind,
        indexer: false,
        relayerEnv: { ENERGY_ANOMALY_CONFIRM_SECONDS: "1" },
      });
      token = await accessToken(stack);
      anchor = stack.chain.record.contracts.TelemetryAnchor!.address;
      publicClient = createPublicClient({ transport: http(stack.chain.rpcUrl) });
    });
    after(() => stack?.stop());

    it("anchors an attested batch: pending, then anchored; a reading verifies on chain from what the API returns", async () => {
      const m = meter("mtr-kariakoo-001", { sequence: 672, cumulative: 1_612_800, epoch: 1 });
      const body = m.batch(25);
      body.readings[3] = { ...body.readings[3], reset_reason: null, measurement_quality: "estimated" };
      const response = await postBatch(stack, token, body);
      assert.equal(response.status, 200, response.text);
      assert.equal(response.body.attestation.status, "pending");

      const energy = await waitFor("the batch to be anchored", async () => {
        const e = await liveEnergy("ev_kariakoo_2026_02");
        return e.anchor.chain === "local" && e.anchor.status === "anchored" ? e : undefined;
      });
      assert.equal(energy.readings, 25);
      assert.equal(energy.device_id, "mtr-kariakoo-001");
      assert.equal(energy.batch_sequence, 1);
      assert.equal(energy.anchor.chain, "local");
      assert.match(energy.anchor.tx, /^0x[0-9a-f]{64}$/);
      assert.match(energy.anchor.batches_root, /^0x[0-9a-f]{64}$/);
      assert.ok(Array.isArray(energy.anchor.batch_proof));

      // The verifier's side, from the API's answer and the readings it sent: the batch's tree (its root is
      // merkle_root), then TelemetryAnchor's view with the evidence's batch fields and proof.
      const tree = expectedTree(
        {
          chainId: stack.chain.record.chainId,
          projectId: "prj_kariakoo_cold",
          deviceId: energy.device_id,
          batchSequence: energy.batch_sequence,
        },
        body.readings,
      );
      assert.equal(energy.merkle_root, tree.root);
      const batch = evidenceBatch("prj_kariakoo_cold", energy);
      for (const index of [0, 3, 24]) {
        assert.equal(await verifyReading(body.readings[index], tree.getProof(index), batch, energy.anchor.batch_proof), true);
      }
      // A changed reading, or another batch sequence, does not verify.
      const changed = { ...body.readings[0], energy_wh_cumulative: body.readings[0].energy_wh_cumulative + 1 };
      assert.equal(await verifyReading(changed, tree.getProof(0), batch, energy.anchor.batch_proof), false);
      assert.equal(
        await verifyReading(body.readings[0], tree.getProof(0), { ...batch, batchSequence: 2n }, energy.anchor.batch_proof),
        false,
      );

      // The transaction anchored the evidence's batches root.
      const receipt = await publicClient.getTransactionReceipt({ hash: energy.anchor.tx });
      assert.equal(receipt.status, "success");
      assert.equal(receipt.to?.toLowerCase(), anchor.toLowerCase());
      const [event] = parseEventLogs({ abi: telemetryAnchorAbi, logs: receipt.logs, eventName: "BatchesAnchored" });
      assert.equal(event.args.batchesRoot, energy.anchor.batches_root);
      assert.equal(
        await publicClient.readContract({
          address: anchor,
          abi: telemetryAnchorAbi,
          functionName: "isAnchored",
          args: [energy.anchor.batches_root],
        }),
        true,
      );
      // Historical evidence of the project keeps its sample values.
      assert.equal((await call(stack, token, "GET", "/evidence/ev_kibera_2026_01")).body.clusters.energy_evidence.anchor.chain, "sample");
    });

    it("batches whose anchor transaction fails (the relayer lost the anchorer role) end failed", async () => {
      const transport = http(stack.chain.rpcUrl);
      const admin = createWalletClient({ account: localAccount(0), transport });
      const role = await publicClient.readContract({ address: anchor, abi: telemetryAnchorAbi, functionName: "ANCHORER_ROLE" });
      const chain = {
        id: stack.chain.record.chainId,
        name: "local",
        nativeCurrency: { name: "Ether", symbol: "ETH", decimals: 18 },
        rpcUrls: { default: { http: [stack.chain.rpcUrl] } },
      };
      const setRole = async (functionName: "grantRole" | "revokeRole") =>
        publicClient.waitForTransactionReceipt({
          hash: await admin.writeContract({
            chain,
            address: anchor,
            abi: telemetryAnchorAbi,
            functionName,
            args: [role, localAccount(2).address],
          }),
        });
      const fromBlock = (await publicClient.getBlockNumber({ cacheTime: 0 })) + 1n;
      await setRole("revokeRole");
      const m = meter("mtr-kibera-001", { sequence: 4320, cumulative: 18_544_000, epoch: 1 });
      const bodies = [m.batch(3), m.batch(2), m.batch(4)];
      try {
        for (const body of bodies) {
          const response = await postBatch(stack, token, body);
          assert.equal(response.status, 200, response.text);
          assert.equal(response.body.attestation.status, "pending");
        }
        const last = sent("prj_kibera_solar", "mtr-kibera-001", 3, bodies[2].readings);
        const energy = await waitFor("the anchoring to fail", async () => {
          const e = await liveEnergy("ev_kibera_2026_02");
          return e.merkle_root === last.tree.root && e.anchor.status === "failed" ? e : undefined;
        });
        assert.equal(energy.anchor.tx, "", "never sent: it would revert");
        assert.match(energy.anchor.batches_root, /^0x[0-9a-f]{64}$/, "it was put into an anchor");
      } finally {
        await setRole("grantRole");
      }
      assert.deepEqual(await anchorsSince(fromBlock), [], "nothing was anchored meanwhile");

      // The failed batches are not anchored later; the next batch is, on its own.
      const fromNext = (await publicClient.getBlockNumber({ cacheTime: 0 })) + 1n;
      const body = m.batch(2);
      assert.equal((await postBatch(stack, token, body)).status, 200);
      const next = sent("prj_kibera_solar", "mtr-kibera-001", 4, body.readings);
      assert.equal(await assertAnchoredOnce(fromNext, [next]), 1);
      const energy = await waitFor("the next batch anchored", async () => {
        const e = await liveEnergy("ev_kibera_2026_02");
        return e.merkle_root === next.tree.root && e.anchor.status === "anchored" ? e : undefined;
      });
      assert.equal(energy.batch_sequence, 4);
    });

    it("never anchors baseline batches (409): the project's evidence keeps its sample values", async () => {
      const m = meter("mtr-yaba-002", { sequence: 90, cumulative: 201_600, epoch: 1 });
      assertError(await postBatch(stack, token, m.batch(3)), 409, "baseline_incomplete");
      await new Promise((resolve) => setTimeout(resolve, 2_000));
      const energy = await liveEnergy("ev_yaba_2026_02");
      assert.equal(energy.anchor.chain, "sample");
    });

    if (database === "postgres") {
      it("confirms the provisional anomaly score later (ENERGY_ANOMALY_CONFIRM_SECONDS)", async () => {
        const m = meter("mtr-kibera-004", { sequence: 980, cumulative: 2_402_000, epoch: 2 });
        const response = await postBatch(stack, token, m.batch(4));
        assert.equal(response.body.verification.anomaly_status, "provisional");
        const db = stack.relayerOptions.database as { url: string; schema: string };
        // Waits for the anchor too: a batch of this test anchored during the next one would count among its
        // anchors.
        const row = await waitFor("the anomaly status to be confirmed and the batch anchored", () =>
          withPostgres(db.url, async (client) => {
            const result = await client.query(
              `select anomaly_status, anomaly_score, anomaly_confirmed_at, attestation_status
               from "${db.schema}".energy_batches where batch_id = $1`,
              [response.body.batch_id],
            );
            const found = result.rows[0];
            return found?.anomaly_status === "confirmed" && found.attestation_status !== "pending" ? found : undefined;
          }),
        );
        assert.equal(row.attestation_status, "anchored");
        assert.ok(row.anomaly_score >= 0 && row.anomaly_score <= 1);
        assert.ok(row.anomaly_confirmed_at instanceof Date);
        // The ingest response does not change: a replay would still say provisional (it is stored as sent).
      });
    }

    it("loses no accepted reading when the relayer is killed in the middle of ingest", async () => {
      const m = meter("mtr-yaba-003", { sequence: 1440, cumulative: 3_980_000, epoch: 1 });
      const fromBlock = (await publicClient.getBlockNumber({ cacheTime: 0 })) + 1n;
      const batches: Reading[][] = [];
      for (let i = 0; i < 10; i++) {
        const body = m.batch(4);
        const headers = { "Idempotency-Key": `restart-${database}-${i}` };
        if (i === 5) {
          // Kill the relayer while this batch is in flight, start it again, and retry with the same key.
          const inflight = postBatch(stack, token, body, headers).then(
            (r) => r,
            (error: Error) => error,
          );
          await new Promise((resolve) => setTimeout(resolve, 5));
          await stack.restartRelayer({ kill: true });
          const first = await inflight;
          const retried = await postBatch(stack, token, body, headers);
          assert.equal(retried.status, 200, retried.text);
          if (!(first instanceof Error) && first.status === 200) assert.equal(retried.text, first.text);
        } else {
          const response = await postBatch(stack, token, body, headers);
          assert.equal(response.status, 200, response.text);
        }
        batches.push(body.readings);
      }

      const record = (await call(stack, token, "GET", "/devices/mtr-yaba-003")).body;
      assert.equal(record.last_sequence_number, 1440 + 40);
      assert.equal(record.last_energy_wh_cumulative, m.state.cumulative);

      // Every batch is anchored, once, with the root of exactly the readings that were sent (the relayer's
      // sender resumes once the killed process's lease has run out).
      await assertAnchoredOnce(
        fromBlock,
        batches.map((readings, index) => sent("prj_yaba_ebike", "mtr-yaba-003", index + 1, readings)),
      );
      const energy = await waitFor("the latest batch in the evidence", async () => {
        const e = await liveEnergy("ev_yaba_2026_02");
        return e.anchor.status === "anchored" ? e : undefined;
      });
      assert.equal(
        energy.merkle_root,
        expectedTree(
          { chainId: stack.chain.record.chainId, projectId: "prj_yaba_ebike", deviceId: "mtr-yaba-003", batchSequence: 10 },
          batches[9],
        ).root,
      );
    });

    it("anchors 50 batches ingested quickly with far fewer transactions, each batch once", async (t) => {
      const fromBlock = (await publicClient.getBlockNumber({ cacheTime: 0 })) + 1n;
      const m = meter("mtr-yaba-001", { sequence: 2016, cumulative: 6_210_000, epoch: 1 });
      const batches: SentBatch[] = [];
      for (let i = 0; i < 50; i++) {
        const body = m.batch(2);
        const response = await postBatch(stack, token, body);
        assert.equal(response.status, 200, response.text);
        batches.push(sent("prj_yaba_ebike", "mtr-yaba-001", i + 1, body.readings));
      }
      const anchors = await assertAnchoredOnce(fromBlock, batches);

      // Count the chain's transactions to TelemetryAnchor meanwhile: one per anchor.
      let transactions = 0;
      for (let n = fromBlock; n <= (await publicClient.getBlockNumber({ cacheTime: 0 })); n++) {
        const block = await publicClient.getBlock({ blockNumber: n, includeTransactions: true });
        transactions += block.transactions.filter((t) => t.to?.toLowerCase() === anchor.toLowerCase()).length;
      }
      assert.equal(transactions, anchors);
      assert.ok(transactions <= 25, `${transactions} anchor transactions for 50 batches`);
      t.diagnostic(`50 batches anchored in ${transactions} transactions`);

      // The latest batch, verified from the evidence alone.
      const energy = await waitFor("the latest batch in the evidence", async () => {
        const e = await liveEnergy("ev_yaba_2026_02");
        return e.merkle_root === batches[49].fields.root && e.anchor.status === "anchored" ? e : undefined;
      });
      assert.equal(energy.device_id, "mtr-yaba-001");
      assert.equal(energy.batch_sequence, 50);
      const last = batches[49];
      assert.equal(
        await verifyReading(last.readings[1], last.tree.getProof(1), evidenceBatch("prj_yaba_ebike", energy), energy.anchor.batch_proof),
        true,
      );
    });

    if (database === "postgres") {
      it("two relayer processes running the anchor worker put each batch into exactly one anchor", async () => {
        const extra = await stack.startExtraRelayer();
        const other = { ...stack, relayerUrl: extra.url };
        const record = (await call(stack, token, "GET", "/devices/mtr-yaba-001")).body;
        const m = meter("mtr-yaba-001", { sequence: record.last_sequence_number, cumulative: record.last_energy_wh_cumulative, epoch: 1 });
        const fromBlock = (await publicClient.getBlockNumber({ cacheTime: 0 })) + 1n;
        const batches: SentBatch[] = [];
        // The previous test left the device at batch 50.
        for (let i = 0; i < 30; i++) {
          const body = m.batch(2);
          const response = await postBatch(i % 2 ? other : stack, token, body);
          assert.equal(response.status, 200, response.text);
          batches.push(sent("prj_yaba_ebike", "mtr-yaba-001", 51 + i, body.readings));
        }
        await assertAnchoredOnce(fromBlock, batches);
      });
    }
  });
}
