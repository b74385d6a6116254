// The relayer and the device-cloud simulator as child processes, for the local stack, the tests and the
// benchmarks; and seeding the relayer's database. The relayer runs from its sources, as `npm run relayer`
// (production) runs it: one form everywhere.
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { repoRoot } from "../ignition/deployment-records.ts";
import { type PgliteBuild, createPgliteDirectory, createPgliteTemplate, pgliteOf } from "./pglite.ts";
import { type Service, freePort, startService, waitUntil } from "./processes.ts";

const deviceCloudMain = path.join(repoRoot, "device-cloud", "src", "main.ts");
/** The relayer's entry points: the server (`npm run relayer`) and the seed CLI. */
const relayerMain = path.join(repoRoot, "relayer", "src", "main.ts");
const seedMain = path.join(repoRoot, "relayer", "src", "cli", "seed.ts");

/** Where the relayer keeps its data: the embedded PGlite in a directory, or a PostgreSQL schema. */
export type RelayerDatabase = { kind: "pglite"; directory: string } | { kind: "postgres"; url: string; schema: string };

export type RelayerOptions = {
  port?: number;
  deploymentId: string;
  rpcUrl: string;
  indexerUrl: string;
  deviceCloudUrl: string;
  database: RelayerDatabase;
  quoteSignerPrivateKey: `0x${string}`;
  relayerPrivateKey: `0x${string}`;
  jwtSecret: string;
  /** WEBHOOK_SECRET_KEY: encrypts webhook signing secrets at rest (at least 32 characters). */
  webhookSecretKey?: string;
  /** Extra environment (any variable of relayer/src/config.ts). */
  env?: NodeJS.ProcessEnv;
  logFile?: string;
  echo?: boolean;
  onLine?: (line: string) => void;
};

export function relayerEnv(opts: RelayerOptions, port: number): NodeJS.ProcessEnv {
  const db = opts.database;
  return {
    HOST: "127.0.0.1",
    PORT: String(port),
    DEPLOYMENT: opts.deploymentId,
    RPC_URL: opts.rpcUrl,
    INDEXER_URL: opts.indexerUrl,
    DEVICE_CLOUD_URL: opts.deviceCloudUrl,
    QUOTE_SIGNER_PRIVATE_KEY: opts.quoteSignerPrivateKey,
    RELAYER_PRIVATE_KEY: opts.relayerPrivateKey,
    JWT_SECRET: opts.jwtSecret,
    WEBHOOK_SECRET_KEY: opts.webhookSecretKey,
    DATABASE_URL: db.kind === "postgres" ? db.url : undefined,
    DATABASE_SCHEMA: db.kind === "postgres" ? db.schema : undefined,
    PGLITE_DIR: db.kind === "pglite" ? db.directory : undefined,
    // Test suites and benchmarks deliver to receivers on random loopback ports, so loopback is allowlisted
    // on every port here; the relayer still refuses its own stack's endpoints (its port, the chain, the
    // indexer, the device cloud, the database). `npm start` passes a narrower list (opts.env).
    WEBHOOK_ALLOWED_PRIVATE_HOSTS: "127.0.0.1,localhost,[::1]",
    PUBLIC_BASE_URL: undefined,
    ...opts.env,
  };
}

/** Starts the relayer and waits until /v1/health answers. */
export async function startRelayer(opts: RelayerOptions): Promise<{ service: Service; url: string; port: number }> {
  const port = opts.port ?? (await freePort());
  const service = startService("relayer", process.execPath, [relayerMain], {
    cwd: repoRoot,
    env: relayerEnv(opts, port),
    logFile: opts.logFile,
    echo: opts.echo,
    onLine: opts.onLine,
  });
  const url = `http://127.0.0.1:${port}`;
  try {
    await waitUntil("the relayer", async () => (await fetch(`${url}/v1/health`)).ok, { service, timeoutMs: 180_000 });
  } catch (error) {
    await service.stop();
    throw error;
  }
  return { service, url, port };
}

/** The relayer's PGlite (the repository's own dependency), its templates plain databases: `pglite-<version>`. */
const relayerPglite = (): PgliteBuild => ({ module: pgliteOf(path.join(repoRoot, "package.json")), family: "pglite" });

/** Creates the relayer's embedded database directory (RelayerDatabase kind pglite) ahead of the seed or
 * the relayer, for the relayer's PGlite, from a template kept in `templates` (see lib/pglite.ts); nothing if
 * it exists. */
export function createRelayerDatabase(directory: string, templates: string, run: { background?: boolean } = {}): Promise<void> {
  return createPgliteDirectory(directory, relayerPglite(), templates, run);
}

/** Makes the template of createRelayerDatabase in `templates` unless it exists; returns its path. */
export async function createRelayerDatabaseTemplate(templates: string): Promise<string> {
  return createPgliteTemplate(relayerPglite(), templates);
}

/** Runs the seed CLI against the relayer's database (before the relayer starts, for PGlite): one process
 * for every tenant of `specs`, seeded in order; the results in the same order. `background`: see
 * StartOptions. */
export async function seedRelayer(opts: RelayerOptions, specs: unknown[], run: { background?: boolean } = {}): Promise<SeedOutput[]> {
  const dir = await mkdtemp(path.join(tmpdir(), "payg-seed-"));
  const specFile = path.join(dir, "spec.json");
  await writeFile(specFile, JSON.stringify(specs), { mode: 0o600 });
  const service = startService("seed", process.execPath, [seedMain, specFile], {
    cwd: repoRoot,
    env: relayerEnv(opts, 0),
    background: run.background,
  });
  service.exited.finally(() => rm(dir, { recursive: true, force: true }));
  let output = "";
  service.process.stdout?.on("data", (chunk: Buffer) => (output += chunk.toString("utf8")));
  const code = await service.exited;
  if (code !== 0) throw new Error(`seeding failed (exit ${code}):\n${service.recentOutput()}`);
  return JSON.parse(output.trim().split("\n").at(-1) ?? "[]") as SeedOutput[];
}

export type SeedOutput = {
  tenantId: string;
  user?: { id: string; email: string };
  createdKeys: Array<{ id: string; name: string; role: "developer" | "agent"; key: string }>;
  devices: string[];
  participants: Array<{ id: string; name: string; address: string }>;
};

/** Starts the device-cloud simulator and waits until it answers. */
export async function startDeviceCloud(
  opts: { port?: number; timeScale?: number; logFile?: string; echo?: boolean } = {},
): Promise<{ service: Service; url: string }> {
  const port = opts.port ?? (await freePort());
  const service = startService("device-cloud", process.execPath, [deviceCloudMain], {
    cwd: repoRoot,
    env: { HOST: "127.0.0.1", PORT: String(port), TIME_SCALE: String(opts.timeScale ?? 1) },
    logFile: opts.logFile,
    echo: opts.echo,
  });
  const url = `http://127.0.0.1:${port}`;
  await waitUntil("the device cloud", async () => (await fetch(`${url}/health`)).ok, { service, timeoutMs: 120_000 });
  return { service, url };
}

/** Registers devices with the device-cloud simulator (online, with their power draw). */
export async function registerSimulatedDevices(deviceCloudUrl: string, devices: ReadonlyArray<{ id: string; powerW: number }>) {
  for (const device of devices) {
    const response = await fetch(`${deviceCloudUrl}/sim/devices/${encodeURIComponent(device.id)}`, {
      method: "PUT",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ powerW: device.powerW, online: true }),
    });
    if (!response.ok) throw new Error(`device cloud refused device ${device.id}: ${response.status}`);
  }
}
