// Child processes for the local stack, the tests and the benchmarks: started directly (never through
// npx, so that stopping the PID stops the service), their output kept for diagnostics, stopped cleanly.
import { spawn, type ChildProcess } from "node:child_process";
import { closeSync, createWriteStream, mkdirSync, openSync, statSync, utimesSync } from "node:fs";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";

export type Service = {
  name: string;
  process: ChildProcess;
  /** The last lines the process printed (stdout and stderr). */
  recentOutput(): string;
  /** Resolves when the process has exited. */
  exited: Promise<number | null>;
  /** Its stop signal (StartOptions.stopSignal), then SIGKILL after `graceMs`. */
  stop(graceMs?: number): Promise<void>;
  /** SIGKILL at once (crash tests). */
  kill(): Promise<void>;
};

export type StartOptions = {
  env?: NodeJS.ProcessEnv;
  cwd?: string;
  /** Also append all output to this file. */
  logFile?: string;
  /** Called with every line of output. */
  onLine?: (line: string) => void;
  /** Echo output to this process's stderr, prefixed with the name. */
  echo?: boolean;
  /** The signal that asks it to stop cleanly (default SIGTERM). */
  stopSignal?: NodeJS.Signals;
  /** One-shot work beside the work a start waits for (a database's initdb, the seed while the contracts
   * compile): run at a lower CPU priority (nice 10), so that on a busy machine the awaited work goes first. */
  background?: boolean;
};

const RECENT_LINES = 200;
const BACKGROUND_PRIORITY = 10;

/** Every service this process started that has not exited yet, in start order. */
const running = new Set<Service>();

/** V8 flags a Node child started here inherits from this process: `--liftoff-only` (WebAssembly compiled by
 * V8's baseline compiler only), which `npm test` runs its test files with (scripts/test.ts says why), so that
 * the relayers, seeds and indexers a test starts run so too (startService adds them; a test that spawns a Node
 * child itself passes them as well, as `npm start`'s suite does). */
export const INHERITED_V8_FLAGS = process.execArgv.filter((arg) => arg === "--liftoff-only");

/** Starts `command args` as a named service (a Node child with the V8 flags above that this process has). */
export function startService(name: string, command: string, args: string[], opts: StartOptions = {}): Service {
  const inherited = command === process.execPath ? INHERITED_V8_FLAGS.filter((flag) => !args.includes(flag)) : [];
  const child = spawn(command, [...inherited, ...args], {
    cwd: opts.cwd,
    env: { ...process.env, ...opts.env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  if (opts.background && child.pid !== undefined) {
    try {
      os.setPriority(child.pid, BACKGROUND_PRIORITY);
    } catch {
      // not allowed here: it runs at the normal priority
    }
  }
  const recent: string[] = [];
  let log: ReturnType<typeof createWriteStream> | undefined;
  if (opts.logFile) {
    mkdirSync(path.dirname(opts.logFile), { recursive: true });
    log = createWriteStream(opts.logFile, { flags: "a" });
  }
  const onData = (chunk: Buffer) => {
    log?.write(chunk);
    for (const line of chunk.toString("utf8").split("\n")) {
      if (!line) continue;
      recent.push(line);
      if (recent.length > RECENT_LINES) recent.shift();
      opts.onLine?.(line);
      if (opts.echo) process.stderr.write(`[${name}] ${line}\n`);
    }
  };
  child.stdout?.on("data", onData);
  child.stderr?.on("data", onData);
  const exited = new Promise<number | null>((resolve) => {
    child.on("exit", (code) => {
      log?.end();
      resolve(code);
    });
    child.on("error", (error) => {
      recent.push(`spawn error: ${error.message}`);
      resolve(null);
    });
  });
  const hasExited = () => child.exitCode !== null || child.signalCode !== null;
  const service: Service = {
    name,
    process: child,
    exited,
    recentOutput: () => recent.join("\n"),
    async stop(graceMs = 5_000) {
      if (hasExited()) return;
      child.kill(opts.stopSignal ?? "SIGTERM");
      const timer = setTimeout(() => child.kill("SIGKILL"), graceMs);
      await exited;
      clearTimeout(timer);
    },
    async kill() {
      if (hasExited()) return;
      child.kill("SIGKILL");
      await exited;
    },
  };
  running.add(service);
  void exited.then(() => running.delete(service));
  return service;
}

/** Stops every service this process started that still runs, all at once; then any started meanwhile (by
 * start-up work still under way), until none runs. */
export async function stopAllServices(graceMs?: number): Promise<void> {
  while (running.size > 0) {
    await Promise.all([...running].reverse().map((service) => service.stop(graceMs)));
  }
}

/** Polls `check` until it returns a value other than undefined or false; fails with `what` after the timeout,
 * or as soon as `service` exits. */
export async function waitUntil<T>(
  what: string,
  check: () => Promise<T | undefined | false>,
  opts: { timeoutMs?: number; intervalMs?: number; service?: Service } = {},
): Promise<T> {
  const deadline = Date.now() + (opts.timeoutMs ?? 60_000);
  let lastError: unknown;
  while (Date.now() < deadline) {
    if (opts.service && (opts.service.process.exitCode !== null || opts.service.process.signalCode !== null)) {
      throw new Error(`${opts.service.name} exited while waiting for ${what}:\n${opts.service.recentOutput()}`);
    }
    try {
      const value = await check();
      if (value !== undefined && value !== false) return value as T;
    } catch (error) {
      lastError = error;
    }
    await sleep(opts.intervalMs ?? 100);
  }
  const tail = opts.service ? `\n${opts.service.name} output:\n${opts.service.recentOutput()}` : "";
  const cause = lastError ? ` (last error: ${(lastError as Error).message})` : "";
  throw new Error(`timed out waiting for ${what}${cause}${tail}`);
}

/** Whether process `pid` exists (one of another user counts). */
export function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}

/** Where freePort keeps its reservations: one empty file per port handed out, named by the port. One folder
 * per user: another user's folder in a shared temp directory would not be writable. */
const PORT_RESERVATIONS = path.join(os.tmpdir(), `payg-port-reservations-${process.getuid?.() ?? os.userInfo().username}`);
/** How long a port handed out stays reserved for the process that asked (time enough to start on it). */
const RESERVATION_MS = 10 * 60_000;
/** Below Linux's ephemeral range (32768-60999): no outgoing connection and no listen(0) elsewhere takes one. */
const PORT_RANGE = { from: 20_000, to: 32_000 } as const;

/** A TCP port that was free on 127.0.0.1 a moment ago, and that no other caller of freePort on this machine
 * gets for the next ten minutes. A port is used some time after it is chosen (a stack picks its ports, then
 * starts its services one by one): a port the kernel hands out for listen(0) could meanwhile go to another
 * process doing the same (two test files at a time start hundreds of services), or to an outgoing
 * connection. So the port is drawn at random below the kernel's ephemeral range and reserved by creating a
 * file named after it (exclusive create: one winner across processes); a reservation older than ten
 * minutes is taken over. */
export async function freePort(): Promise<number> {
  mkdirSync(PORT_RESERVATIONS, { recursive: true });
  for (let attempt = 0; attempt < 200; attempt++) {
    const port = PORT_RANGE.from + Math.floor(Math.random() * (PORT_RANGE.to - PORT_RANGE.from));
    if (!reservePort(port)) continue;
    if (await canListen(port)) return port;
  }
  throw new Error(`no free port found between ${PORT_RANGE.from} and ${PORT_RANGE.to}`);
}

/** The first of `count` consecutive ports, each as freePort gives one (free a moment ago, reserved for this
 * process, below the ephemeral range), for a program that takes one base port and uses the next ones too
 * (`npm run rehearsal`'s REHEARSAL_PORT_BASE). */
export async function freePortRun(count: number): Promise<number> {
  mkdirSync(PORT_RESERVATIONS, { recursive: true });
  for (let attempt = 0; attempt < 200; attempt++) {
    const base = PORT_RANGE.from + Math.floor(Math.random() * (PORT_RANGE.to - PORT_RANGE.from - count));
    const ports = Array.from({ length: count }, (_, i) => base + i);
    // Each reserved in turn; one that is taken ends the attempt (the ones before it stay reserved, unused).
    if (!ports.every((port) => reservePort(port))) continue;
    if ((await Promise.all(ports.map(canListen))).every(Boolean)) return base;
  }
  throw new Error(`no ${count} consecutive free ports found between ${PORT_RANGE.from} and ${PORT_RANGE.to}`);
}

/** Reserves `port` for this process: true if it was not reserved, or its reservation had expired. */
export function reservePort(port: number): boolean {
  const file = path.join(PORT_RESERVATIONS, String(port));
  try {
    closeSync(openSync(file, "wx"));
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
  }
  try {
    if (Date.now() - statSync(file).mtimeMs < RESERVATION_MS) return false;
    const now = new Date();
    utimesSync(file, now, now);
    return true;
  } catch {
    return false;
  }
}

/** Whether this process can listen on 127.0.0.1:port right now (it closes again at once). */
function canListen(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = net.createServer();
    server.unref();
    server.once("error", () => resolve(false));
    server.listen(port, "127.0.0.1", () => server.close(() => resolve(true)));
  });
}

/** Whether something accepts connections on host:port. */
export function isListening(port: number, host = "127.0.0.1"): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect({ port, host });
    socket.once("connect", () => {
      socket.destroy();
      resolve(true);
    });
    socket.once("error", () => resolve(false));
  });
}
