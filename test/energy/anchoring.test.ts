// Attestation through HTTP and on the local chain: an attested batch's readings become a Merkle tree whose
// root TelemetryAnchor anchors (observable in the project's latest evidence and in BatchAnchored), a batch
// whose anchoring reverts ends failed, baseline batches are never anchored, anomaly scores are confirmed
// later, and a relayer killed in the middle of ingest loses no accepted reading.
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { type Hex, createPublicClient, createWalletClient, http, keccak256, parseEventLogs, toHex } from "viem";
import { telemetryAnchorAbi } from "../../generated/abis.ts";
import { localAccount } from "../../lib/sample-data.ts";
import { type DatabaseKind, selectedDatabaseKinds, withPostgres } from "../support/databases.ts";
import { type Stack, startStack } from "../support/stack.ts";
import { type Reading, accessToken, assertError, call, expectedTree, meter, postBatch, waitFor } from "./helpers.ts";

const key = (id: string) => keccak256(toHex(id));

for (const database of selectedDatabaseKinds()) {
  describe(`energy sandbox attestation (${database})`, { timeout: 300_000 }, () => {
    let stack: Stack;
    let token: string;
    let anchor: Hex;
    let publicClient: ReturnType<typeof createPublicClient>;

    const liveEnergy = async (ref: string) => (await call(stack, token, "GET", `/evidence/${ref}`)).body.clusters.energy_evidence;

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

    it("anchors an attested batch: pending, then anchored in the project's latest evidence and on chain", async () => {
      const m = meter("mtr-kariakoo-001", { sequence: 672, cumulative: 1_612_800, epoch: 1 });
      const body = m.batch(25);
      body.readings[3] = { ...body.readings[3], reset_reason: null, measurement_quality: "estimated" };
      const response = await postBatch(stack, token, body);
      assert.equal(response.status, 200, response.text);
      assert.equal(response.body.attestation.status, "pending");
      const tree = expectedTree(
        { chainId: stack.chain.record.chainId, projectId: "prj_kariakoo_cold", deviceId: "mtr-kariakoo-001", batchSequence: 1 },
        body.readings,
      );

      const energy = await waitFor("the batch to be anchored", async () => {
        const e = await liveEnergy("ev_kariakoo_2026_02");
        return e.merkle_root === tree.root && e.anchor.status === "anchored" ? e : undefined;
      });
      assert.equal(energy.readings, 25);
      assert.equal(energy.anchor.chain, "local");
      assert.match(energy.anchor.tx, /^0x[0-9a-f]{64}$/);

      const receipt = await publicClient.getTransactionReceipt({ hash: energy.anchor.tx });
      assert.equal(receipt.status, "success");
      assert.equal(receipt.to?.toLowerCase(), anchor.toLowerCase());
      const [event] = parseEventLogs({ abi: telemetryAnchorAbi, logs: receipt.logs, eventName: "BatchAnchored" });
      assert.deepEqual(event.args, {
        projectId: key("prj_kariakoo_cold"),
        deviceId: key("mtr-kariakoo-001"),
        batchSequence: 1n,
        root: tree.root,
        readings: 25,
      });
      // Any reading of the batch is provable on chain, from its fields, against the anchored root.
      for (const index of [0, 3, 24]) {
        const r = body.readings[index];
        const reading = {
          readingId: r.reading_id,
          sequenceNumber: BigInt(r.sequence_number),
          meterEpoch: BigInt(r.meter_epoch),
          energyWhCumulative: BigInt(r.energy_wh_cumulative),
          deviceTsMs: BigInt(Date.parse(r.device_ts)),
          supersedesReadingId: r.supersedes_reading_id ?? "",
        };
        assert.equal(
          await publicClient.readContract({
            address: anchor,
            abi: telemetryAnchorAbi,
            functionName: "verifyReading",
            args: [key("prj_kariakoo_cold"), key("mtr-kariakoo-001"), 1n, reading, tree.getProof(index) as Hex[]],
          }),
          true,
        );
      }
      // Historical evidence of the project keeps its sample values.
      assert.equal((await call(stack, token, "GET", "/evidence/ev_kibera_2026_01")).body.clusters.energy_evidence.anchor.chain, "sample");
    });

    it("a batch whose anchoring reverts (the batch is on chain already) ends failed", async () => {
      // Another anchorer takes batch 1 of mtr-kibera-001 first.
      const transport = http(stack.chain.rpcUrl);
      const admin = createWalletClient({ account: localAccount(0), transport });
      const spare = createWalletClient({ account: localAccount(3), transport });
      const role = await publicClient.readContract({ address: anchor, abi: telemetryAnchorAbi, functionName: "ANCHORER_ROLE" });
      const chain = { id: stack.chain.record.chainId, name: "local", nativeCurrency: { name: "Ether", symbol: "ETH", decimals: 18 }, rpcUrls: { default: { http: [stack.chain.rpcUrl] } } };
      await publicClient.waitForTransactionReceipt({
        hash: await admin.writeContract({ chain, address: anchor, abi: telemetryAnchorAbi, functionName: "grantRole", args: [role, localAccount(3).address] }),
      });
      await publicClient.waitForTransactionReceipt({
        hash: await spare.writeContract({
          chain,
          address: anchor,
          abi: telemetryAnchorAbi,
          functionName: "anchor",
          args: [key("prj_kibera_solar"), key("mtr-kibera-001"), 1n, keccak256(toHex("someone else's root")), 1],
        }),
      });

      const m = meter("mtr-kibera-001", { sequence: 4320, cumulative: 18_544_000, epoch: 1 });
      const body = m.batch(3);
      const response = await postBatch(stack, token, body);
      assert.equal(response.status, 200, response.text);
      assert.equal(response.body.attestation.status, "pending");
      const root = expectedTree(
        { chainId: stack.chain.record.chainId, projectId: "prj_kibera_solar", deviceId: "mtr-kibera-001", batchSequence: 1 },
        body.readings,
      ).root;
      const energy = await waitFor("the anchoring to fail", async () => {
        const e = await liveEnergy("ev_kibera_2026_02");
        return e.merkle_root === root && e.anchor.status === "failed" ? e : undefined;
      });
      assert.equal(energy.anchor.tx, "", "never sent: it would revert");
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
        const row = await waitFor("the anomaly status to be confirmed", () =>
          withPostgres(db.url, async (client) => {
            const result = await client.query(
              `select anomaly_status, anomaly_score, anomaly_confirmed_at from "${db.schema}".energy_batches where batch_id = $1`,
              [response.body.batch_id],
            );
            return result.rows[0]?.anomaly_status === "confirmed" ? result.rows[0] : undefined;
          }),
        );
        assert.ok(row.anomaly_score >= 0 && row.anomaly_score <= 1);
        assert.ok(row.anomaly_confirmed_at instanceof Date);
        // The ingest response does not change: a replay would still say provisional (it is stored as sent).
      });
    }

    it("loses no accepted reading when the relayer is killed in the middle of ingest", async () => {
      const m = meter("mtr-yaba-003", { sequence: 1440, cumulative: 3_980_000, epoch: 1 });
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

      // Every batch is anchored with the root of exactly the readings that were sent (the relayer's sender
      // resumes once the killed process's lease has run out).
      const chainId = stack.chain.record.chainId;
      for (const [index, readings] of batches.entries()) {
        const batchSequence = index + 1;
        const root = expectedTree({ chainId, projectId: "prj_yaba_ebike", deviceId: "mtr-yaba-003", batchSequence }, readings).root;
        const batchKey = [key("prj_yaba_ebike"), key("mtr-yaba-003"), BigInt(batchSequence)] as const;
        await waitFor(
          `batch ${batchSequence} on chain`,
          async () => {
            const stored = await publicClient.readContract({ address: anchor, abi: telemetryAnchorAbi, functionName: "rootOf", args: batchKey });
            return stored === root ? stored : undefined;
          },
          60_000,
          250,
        );
        // The count is in the batch's event (the contract stores only the root).
        const [event] = await publicClient.getContractEvents({
          address: anchor,
          abi: telemetryAnchorAbi,
          eventName: "BatchAnchored",
          args: { projectId: batchKey[0], deviceId: batchKey[1], batchSequence: batchKey[2] },
          fromBlock: 0n,
        });
        assert.equal(event?.args.root, root);
        assert.equal(event?.args.readings, 4);
      }
      const energy = await waitFor("the latest batch in the evidence", async () => {
        const e = await liveEnergy("ev_yaba_2026_02");
        return e.anchor.status === "anchored" ? e : undefined;
      });
      assert.equal(
        energy.merkle_root,
        expectedTree({ chainId, projectId: "prj_yaba_ebike", deviceId: "mtr-yaba-003", batchSequence: 10 }, batches[9]).root,
      );
    });
  });
}
