// lib/file-lock.ts and lib/hardhat-lock.ts: one Hardhat build of the checkout at a time, and none beside the
// start of an Ignition deployment to a local chain.
// Test files deploy with Ignition side by side (each compiles first), and Hardhat's compile cache is written
// under one temporary name for all of them: two builds at once made one fail with ENOENT on the rename.
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import http from "node:http";
import type { AddressInfo } from "node:net";
import os from "node:os";
import path from "node:path";
import { after, describe, it } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";
import { startChain } from "../../lib/chain.ts";
import { withFileLock } from "../../lib/file-lock.ts";
import { HARDHAT_LOCK_FILE, withHardhatLock } from "../../lib/hardhat-lock.ts";
import { freePort } from "../../lib/processes.ts";

const root = path.resolve(import.meta.dirname, "..", "..");
const scratch = mkdtempSync(path.join(os.tmpdir(), "hardhat-lock-"));
after(() => rmSync(scratch, { recursive: true, force: true }));

/** A node process of its own running `script` (an ES module); resolves with its exit code and output. */
function runScript(script: string) {
  return runNode(["--input-type=module", "-e", script]);
}

/** `node ...args` from the repository root. */
function runNode(args: string[], env: NodeJS.ProcessEnv = {}) {
  const child = spawn(process.execPath, args, {
    cwd: root,
    env: { ...process.env, ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  child.stdout.on("data", (chunk: Buffer) => (output += chunk.toString("utf8")));
  child.stderr.on("data", (chunk: Buffer) => (output += chunk.toString("utf8")));
  const exited = new Promise<{ code: number | null; output: string; at: number }>((resolve) =>
    child.on("exit", (code) => resolve({ code, output, at: Date.now() })),
  );
  return { child, exited };
}

describe("the Hardhat lock", () => {
  it("lets no two processes build at once: each writes a shared temporary file and renames it, as Hardhat does", async () => {
    const lock = path.join(scratch, "overlap.lock");
    const journal = path.join(scratch, "journal");
    const script = `const { withFileLock } = await import(${JSON.stringify(path.join(root, "lib", "file-lock.ts"))});
const { appendFileSync, renameSync, writeFileSync } = await import("node:fs");
const dir = ${JSON.stringify(scratch)};
for (let i = 0; i < 20; i++) {
  await withFileLock(${JSON.stringify(lock)}, async () => {
    appendFileSync(${JSON.stringify(journal)}, "in " + process.pid + "\\n");
    writeFileSync(dir + "/cache.json.tmp", String(process.pid));
    await new Promise((r) => setTimeout(r, 3));
    renameSync(dir + "/cache.json.tmp", dir + "/cache.json");
    appendFileSync(${JSON.stringify(journal)}, "out " + process.pid + "\\n");
  });
}`;
    const runs = await Promise.all([runScript(script).exited, runScript(script).exited, runScript(script).exited]);
    for (const run of runs) assert.equal(run.code, 0, run.output);
    const lines = readFileSync(journal, "utf8").trim().split("\n");
    assert.equal(lines.length, 3 * 20 * 2);
    for (let i = 0; i < lines.length; i += 2) {
      const [enter, leave] = [lines[i]!.split(" "), lines[i + 1]!.split(" ")];
      assert.deepEqual([enter[0], leave[0], leave[1]], ["in", "out", enter[1]], `builds overlapped at line ${i + 1}`);
    }
  });

  it("takes over a lock whose holder is gone", async () => {
    const lock = path.join(scratch, "stale.lock");
    const gone = runScript("");
    await gone.exited;
    writeFileSync(lock, String(gone.child.pid));
    const started = Date.now();
    assert.equal(await withFileLock(lock, async () => "built"), "built");
    assert.ok(Date.now() - started < 2_000, `waited ${Date.now() - started} ms for a lock nobody holds`);
    assert.throws(() => readFileSync(lock), { code: "ENOENT" }, "the lock is released after the build");
  });

  it("is reentrant within a process, and released once the outermost work ends", async () => {
    const lock = path.join(scratch, "reentrant.lock");
    const inner = await withFileLock(lock, () => withFileLock(lock, async () => readFileSync(lock, "utf8")));
    assert.equal(inner, String(process.pid));
    assert.throws(() => readFileSync(lock), { code: "ENOENT" });
  });

  it("holds a deployment to the local chain (lib/ignition-deploy.ts) until the lock is free", async () => {
    // A JSON-RPC endpoint that answers eth_chainId (31337) only: the deployment asks it first, and fails on the
    // errors of what it asks next, which is fine here.
    const calls: number[] = [];
    const server = http.createServer((req, res) => {
      let body = "";
      req.on("data", (chunk: Buffer) => (body += chunk.toString("utf8")));
      req.on("end", () => {
        const { id, method } = JSON.parse(body) as { id: number; method: string };
        calls.push(Date.now());
        res.setHeader("content-type", "application/json");
        res.end(
          JSON.stringify(
            method === "eth_chainId"
              ? { jsonrpc: "2.0", id, result: "0x7a69" }
              : { jsonrpc: "2.0", id, error: { code: -32601, message: `${method} is not served here` } },
          ),
        );
      });
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const rpcUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const deploymentId = `hardhat-lock-${process.pid}`;
    try {
      let released = 0;
      let deploy: ReturnType<typeof runNode> | undefined;
      await withHardhatLock(async () => {
        deploy = runNode([path.join(root, "lib", "ignition-deploy.ts"), deploymentId], {
          RPC_URL: rpcUrl,
          HARDHAT_DISABLE_TELEMETRY: "true",
        });
        // Unheld, the deployment would load Hardhat and ask for the chain id within a second or two.
        await sleep(6_000);
        released = Date.now();
      });
      const exit = await deploy!.exited;
      assert.ok(calls.length > 0, `the deployment asked the chain nothing:\n${exit.output}`);
      assert.ok(
        calls.every((at) => at >= released),
        `the deployment went on while the lock was held:\n${exit.output}`,
      );
      assert.notEqual(exit.code, 0, "the endpoint serves no deployment");
    } finally {
      server.close();
      rmSync(path.join(root, "ignition", "deployments", deploymentId), { recursive: true, force: true });
    }
  });

  it("is released by a deployment to the local chain once it has compiled, before it deploys", async () => {
    const { service, rpcUrl } = await startChain({ port: await freePort() });
    const deploymentId = `hardhat-lock-deploy-${process.pid}`;
    try {
      const deploy = runNode([path.join(root, "lib", "ignition-deploy.ts"), deploymentId], {
        RPC_URL: rpcUrl,
        HARDHAT_DISABLE_TELEMETRY: "true",
      });
      const pid = String(deploy.child.pid);
      let running = true;
      void deploy.exited.then(() => (running = false));
      // What the lock file said while the deployment ran: held by it, then no longer, well before it ended.
      let held = false;
      let releasedAt: number | undefined;
      while (running) {
        let holder: string | undefined;
        try {
          holder = readFileSync(HARDHAT_LOCK_FILE, "utf8");
        } catch {
          holder = undefined;
        }
        if (holder === pid) held = true;
        else if (held) releasedAt ??= Date.now();
        await sleep(10);
      }
      const exit = await deploy.exited;
      assert.equal(exit.code, 0, exit.output);
      assert.ok(held, "the deployment never held the lock");
      assert.ok(releasedAt !== undefined && exit.at - releasedAt > 500, "the deployment held the lock until it ended");
    } finally {
      await service.stop();
      rmSync(path.join(root, "ignition", "deployments", deploymentId), { recursive: true, force: true });
    }
  });
});
