// lib/processes.ts freePort: the ports the stacks start their services on. Two test files run at a time, each
// starting services on ports it chose seconds earlier: a port must not go to two processes, nor be one the
// kernel hands to outgoing connections or to listen(0).
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import net from "node:net";
import path from "node:path";
import { describe, it } from "node:test";
import { freePort, freePortRun } from "../../lib/processes.ts";

const root = path.resolve(import.meta.dirname, "..", "..");

/** `count` ports from freePort in a process of its own. */
function portsFromAnotherProcess(count: number): Promise<number[]> {
  const script = `const { freePort } = await import(${JSON.stringify(path.join(root, "lib", "processes.ts"))});
const ports = []; for (let i = 0; i < ${count}; i++) ports.push(await freePort());
console.log(JSON.stringify(ports));`;
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ["--input-type=module", "-e", script], { stdio: ["ignore", "pipe", "inherit"] });
    let out = "";
    child.stdout.on("data", (chunk: Buffer) => (out += chunk.toString("utf8")));
    child.on("error", reject);
    child.on("exit", (code) => (code === 0 ? resolve(JSON.parse(out) as number[]) : reject(new Error(`exit ${code}`))));
  });
}

describe("freePort", () => {
  it("never hands the same port to two processes, even when none of them listens on it yet", async () => {
    const [a, b, c] = await Promise.all([portsFromAnotherProcess(150), portsFromAnotherProcess(150), portsFromAnotherProcess(150)]);
    const all = [...a, ...b, ...c];
    assert.equal(new Set(all).size, all.length, "a port was handed out twice");
  });

  it("gives ports outside the kernel's ephemeral range, that can be listened on", async () => {
    // Linux says its range here; elsewhere, the widest of the usual ones (Linux's default start, IANA's end).
    const range = "/proc/sys/net/ipv4/ip_local_port_range";
    const [low, high] = existsSync(range) ? readFileSync(range, "utf8").trim().split(/\s+/).map(Number) : [32768, 65535];
    for (let i = 0; i < 20; i++) {
      const port = await freePort();
      assert.ok(port < low || port > high, `${port} is in the ephemeral range ${low}-${high}`);
      await new Promise<void>((resolve, reject) => {
        const server = net.createServer().once("error", reject);
        server.listen(port, "127.0.0.1", () => server.close(() => resolve()));
      });
    }
  });

  it("freePortRun: consecutive ports outside the ephemeral range, reserved: another process cannot have them", async () => {
    const [low, high] = existsSync("/proc/sys/net/ipv4/ip_local_port_range")
      ? readFileSync("/proc/sys/net/ipv4/ip_local_port_range", "utf8").trim().split(/\s+/).map(Number)
      : [32768, 65535];
    const base = await freePortRun(5);
    const run = [0, 1, 2, 3, 4].map((i) => base + i);
    for (const port of run) {
      assert.ok(port < low || port > high, `${port} is in the ephemeral range ${low}-${high}`);
      await new Promise<void>((resolve, reject) => {
        const server = net.createServer().once("error", reject);
        server.listen(port, "127.0.0.1", () => server.close(() => resolve()));
      });
    }
    // What freePort does with a port it drew: reserve it. Another process is refused each port of the run.
    const script = `const { reservePort } = await import(${JSON.stringify(path.join(root, "lib", "processes.ts"))});
console.log(JSON.stringify(${JSON.stringify(run)}.map(reservePort)));`;
    const answers = await new Promise<boolean[]>((resolve, reject) => {
      const child = spawn(process.execPath, ["--input-type=module", "-e", script], { stdio: ["ignore", "pipe", "inherit"] });
      let out = "";
      child.stdout.on("data", (chunk: Buffer) => (out += chunk.toString("utf8")));
      child.on("error", reject);
      child.on("exit", (code) => (code === 0 ? resolve(JSON.parse(out) as boolean[]) : reject(new Error(`exit ${code}`))));
    });
    assert.deepEqual(answers, [false, false, false, false, false]);
  });
});
