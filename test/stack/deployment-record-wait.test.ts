// Waiting for a deployment's record: what lets `npm start` boot the indexer and the relayer beside Ignition on
// a new chain (DEPLOYMENT_WAIT_SECONDS). The record is written whole or not at all, a waiting reader gets it
// as soon as it is there, and one that waits in vain fails with the usual message.
import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { readdir, rm } from "node:fs/promises";
import { after, describe, it } from "node:test";
import {
  type DeploymentRecord,
  deploymentRecordPath,
  generatedDeploymentsDir,
  saveDeploymentRecord,
  waitForDeploymentRecord,
} from "../../ignition/deployment-records.ts";
import { IndexerConfigError, readIndexerEnv } from "../../indexer/env.ts";
import { loadConfig } from "../../relayer/src/config.ts";
import { MINIMAL_RELAYER_ENV } from "../support/relayer-env.ts";

const ids: string[] = [];
function recordOf(deploymentId: string): DeploymentRecord {
  ids.push(deploymentId);
  return {
    deploymentId,
    chainId: 31337,
    contracts: { PaymentRouter: { address: `0x${"ab".repeat(20)}`, startBlock: 3, blockHash: `0x${"cd".repeat(32)}` } },
  };
}
const newId = () => `wait-test-${randomBytes(4).toString("hex")}`;

after(async () => {
  for (const id of ids) await rm(deploymentRecordPath(id), { force: true });
});

describe("waiting for a deployment record", () => {
  it("returns a record that exists at once", async () => {
    const record = recordOf(newId());
    await saveDeploymentRecord(record);
    const started = performance.now();
    assert.deepEqual(await waitForDeploymentRecord(record.deploymentId, 5_000), record);
    assert.ok(performance.now() - started < 1_000);
  });

  it("returns the record once it is written, and saving leaves no partial file behind", async () => {
    const record = recordOf(newId());
    const waiting = waitForDeploymentRecord(record.deploymentId, 10_000);
    let settled = false;
    void waiting.then(() => (settled = true));
    await new Promise((resolve) => setTimeout(resolve, 300));
    assert.equal(settled, false, "no record yet: still waiting");
    await saveDeploymentRecord(record);
    assert.deepEqual(await waiting, record);
    const leftovers = (await readdir(generatedDeploymentsDir)).filter(
      (name) => name.startsWith(record.deploymentId) && name.endsWith(".partial"),
    );
    assert.deepEqual(leftovers, []);
  });

  it("fails with the missing record's message when none comes in time", async () => {
    const id = newId();
    const started = performance.now();
    await assert.rejects(waitForDeploymentRecord(id, 300), (error: Error) => {
      assert.match(error.message, new RegExp(`no deployment record .*${id}\\.json`));
      return true;
    });
    assert.ok(performance.now() - started >= 250, "it waited");
  });
});

describe("DEPLOYMENT_WAIT_SECONDS", () => {
  it("the indexer reads it in seconds (0 by default) and refuses what is not 0-3600", () => {
    assert.equal(readIndexerEnv({}).deploymentWaitMs, 0);
    assert.equal(readIndexerEnv({ DEPLOYMENT_WAIT_SECONDS: "120" }).deploymentWaitMs, 120_000);
    for (const bad of ["-1", "3601", "1.5", "soon"]) {
      assert.throws(
        () => readIndexerEnv({ DEPLOYMENT_WAIT_SECONDS: bad }),
        (error: Error) =>
          error instanceof IndexerConfigError && error.message.includes("DEPLOYMENT_WAIT_SECONDS must be an integer from 0 to 3600"),
        bad,
      );
    }
  });

  it("the relayer reads it in seconds (0 by default) and refuses what is not 0-3600", () => {
    const env = MINIMAL_RELAYER_ENV;
    assert.equal(loadConfig(env).DEPLOYMENT_WAIT_SECONDS, 0);
    assert.equal(loadConfig({ ...env, DEPLOYMENT_WAIT_SECONDS: "120" }).DEPLOYMENT_WAIT_SECONDS, 120);
    for (const bad of ["-1", "3601", "1.5", "soon"]) {
      assert.throws(() => loadConfig({ ...env, DEPLOYMENT_WAIT_SECONDS: bad }), /DEPLOYMENT_WAIT_SECONDS/, bad);
    }
  });
});
