// `npm start`: the whole system on loopback. A local chain with the contracts deployed, the device-cloud
// simulator, the indexer (embedded PGlite), the relayer (both interfaces, the portal, the checkout), the
// sample tenant; then a table of what runs where, and `.local/stack.json` for scripts and tests. Ctrl-C
// stops everything.
//
// A chain already answering on the chain port is reused: when it is the chain of the last deployment,
// the indexed and relayer data are kept; otherwise (a new chain) everything starts clean, because rows
// indexed from another chain must never be served.
//
// Environment: CHAIN_PORT (8545), DEVICE_CLOUD_PORT (8789), INDEXER_PORT (42069), RELAYER_PORT (8787),
// DEMO_WEBHOOK_PORT (8790), DEVICE_TIME_SCALE (60), LOG_LEVEL (info); LOCAL_STACK_DIR (.local: data, logs and
// stack.json) and LOCAL_DEPLOYMENT_ID (chain-31337: the Ignition deployment's name) let a second stack run
// beside the first.
//
// Webhooks: the relayer may call back to loopback only at 127.0.0.1:DEMO_WEBHOOK_PORT (and localhost on that
// port), where `npm run demo` runs its receiver (stack.json names it) and where a developer may run one of
// their own; every other local port, the stack's own above all, stays out of reach of a portal user.
import { randomBytes } from "node:crypto";
import { existsSync } from "node:fs";
import { mkdir, readFile, rm, writeFile } from "node:fs/promises";
import path from "node:path";
import { deployLocalStack, isSameChain, rpc, startChain } from "../lib/chain.ts";
import { type DeploymentRecord, loadDeploymentRecord, repoRoot } from "../ignition/deployment-records.ts";
import { startIndexer } from "../lib/indexer.ts";
import { isListening, type Service } from "../lib/processes.ts";
import { step } from "../lib/progress.ts";
import {
  type RelayerOptions,
  registerSimulatedDevices,
  seedRelayer,
  startDeviceCloud,
  startRelayer,
} from "../lib/relayer.ts";
import { SAMPLE_DEVICES, localAccount, localPrivateKey, sampleSeedSpec } from "../lib/sample-data.ts";

const DEPLOYMENT = process.env.LOCAL_DEPLOYMENT_ID || "chain-31337";
const port = (name: string, fallback: number) => Number(process.env[name] ?? fallback);
const ports = {
  chain: port("CHAIN_PORT", 8545),
  deviceCloud: port("DEVICE_CLOUD_PORT", 8789),
  indexer: port("INDEXER_PORT", 42069),
  relayer: port("RELAYER_PORT", 8787),
};
/** The one loopback port webhooks may be delivered to (not checked at start: a receiver may already listen). */
const demoWebhookPort = port("DEMO_WEBHOOK_PORT", 8790);
const demoWebhookUrl = `http://127.0.0.1:${demoWebhookPort}/hooks`;
const localDir = path.resolve(repoRoot, process.env.LOCAL_STACK_DIR || ".local");
const shown = path.relative(repoRoot, localDir) || ".";
const logDir = path.join(localDir, "logs");
const stackFile = path.join(localDir, "stack.json");
const dirs = { indexer: path.join(localDir, "indexer-db"), relayer: path.join(localDir, "relayer-db") };

const services: Service[] = [];
let stopping = false;

async function stopAll(code: number) {
  if (stopping) return;
  stopping = true;
  process.stderr.write("\nstopping…\n");
  for (const service of [...services].reverse()) await service.stop().catch(() => undefined);
  process.exit(code);
}
process.on("SIGINT", () => void stopAll(0));
process.on("SIGTERM", () => void stopAll(0));

function watch(service: Service) {
  services.push(service);
  void service.exited.then((code) => {
    if (stopping) return;
    process.stderr.write(`\n✖ ${service.name} exited (code ${code}). Its last output:\n${service.recentOutput()}\n`);
    void stopAll(1);
  });
}

type Previous = { deploymentBlockHash?: string; secrets?: { jwt: string; webhook: string }; sample?: Record<string, unknown> };

async function main() {
  await mkdir(logDir, { recursive: true });
  const previous: Previous = existsSync(stackFile) ? JSON.parse(await readFile(stackFile, "utf8")) : {};

  await step("checking ports", async () => {
    if (!Number.isInteger(demoWebhookPort) || demoWebhookPort < 1 || demoWebhookPort > 65_535 || Object.values(ports).includes(demoWebhookPort)) {
      throw new Error(`DEMO_WEBHOOK_PORT ${process.env.DEMO_WEBHOOK_PORT} must be a port of its own (1-65535), not one of the stack's`);
    }
    for (const [name, value] of Object.entries(ports)) {
      if (name !== "chain" && (await isListening(value))) {
        throw new Error(`port ${value} (${name}) is taken: stop what listens there, or set ${name.replace(/[A-Z]/g, (c) => `_${c}`).toUpperCase()}_PORT`);
      }
    }
  });

  await step("building contracts and generated code", async () => {
    const { spawnSync } = await import("node:child_process");
    for (const args of [
      [path.join(repoRoot, "node_modules/hardhat/dist/src/cli.js"), "build", "--quiet"],
      [path.join(repoRoot, "scripts/generate-abis.ts")],
    ]) {
      const result = spawnSync(process.execPath, args, {
        cwd: repoRoot,
        env: { ...process.env, HARDHAT_DISABLE_TELEMETRY: "true" },
        encoding: "utf8",
      });
      if (result.status !== 0) throw new Error(`${args.join(" ")} failed:\n${result.stdout}${result.stderr}`);
    }
  });

  const rpcUrl = `http://127.0.0.1:${ports.chain}`;
  let record: DeploymentRecord | undefined;
  let reuse = false;
  if (await isListening(ports.chain)) {
    await step(`using the chain already running on port ${ports.chain}`, async () => {
      const chainId = Number(await rpc<string>(rpcUrl, "eth_chainId"));
      if (chainId !== 31337) throw new Error(`port ${ports.chain} answers chain ${chainId}, not a local chain (31337)`);
      record = await loadDeploymentRecord(DEPLOYMENT).catch(() => undefined);
      reuse = record !== undefined && (await isSameChain(rpcUrl, record));
    });
  } else {
    await step(`starting the local chain on port ${ports.chain}`, async () => {
      const chain = await startChain({ port: ports.chain, logFile: path.join(logDir, "chain.log") });
      watch(chain.service);
    });
  }

  if (!reuse) {
    await step("new chain: clearing indexed and relayer data", async () => {
      await rm(dirs.indexer, { recursive: true, force: true });
      await rm(dirs.relayer, { recursive: true, force: true });
    });
  }
  // On the same chain Ignition only deploys what the deployment lacks (contracts added since).
  record = await step(reuse ? "bringing the deployment up to date with Ignition" : "deploying the contracts with Ignition", () =>
    deployLocalStack({ rpcUrl, deploymentId: DEPLOYMENT, fresh: !reuse, logFile: path.join(logDir, "deploy.log") }),
  );
  if (!record) throw new Error("no deployment");

  const deviceCloud = await step(`starting the device-cloud simulator on port ${ports.deviceCloud}`, async () => {
    const started = await startDeviceCloud({
      port: ports.deviceCloud,
      timeScale: Number(process.env.DEVICE_TIME_SCALE ?? 60),
      logFile: path.join(logDir, "device-cloud.log"),
    });
    watch(started.service);
    await registerSimulatedDevices(started.url, SAMPLE_DEVICES);
    return started;
  });

  const indexer = await step(`starting the indexer on port ${ports.indexer} (catching up with the chain)`, async () => {
    const start = () =>
      startIndexer({
        deploymentId: DEPLOYMENT,
        rpcUrl,
        port: ports.indexer,
        database: { kind: "pglite", directory: dirs.indexer },
        logFile: path.join(logDir, "indexer.log"),
      });
    let started;
    try {
      started = await start();
    } catch (error) {
      if (!reuse) throw error;
      // Ponder refuses data written by a different version of the indexer: index the chain again.
      process.stderr.write(`\n  the kept index could not be reused (${(error as Error).message.split("\n")[0]}); re-indexing\n`);
      await rm(dirs.indexer, { recursive: true, force: true });
      started = await start();
    }
    watch(started.service);
    return started;
  });

  const secrets =
    reuse && previous.secrets
      ? previous.secrets
      : { jwt: randomBytes(32).toString("base64url"), webhook: randomBytes(32).toString("base64url") };
  const relayerOptions: RelayerOptions = {
    port: ports.relayer,
    deploymentId: DEPLOYMENT,
    rpcUrl,
    indexerUrl: indexer.url,
    deviceCloudUrl: deviceCloud.url,
    database: { kind: "pglite", directory: dirs.relayer },
    quoteSignerPrivateKey: localPrivateKey(1),
    relayerPrivateKey: localPrivateKey(2),
    jwtSecret: secrets.jwt,
    env: {
      WEBHOOK_SECRET_KEY: secrets.webhook,
      LOG_LEVEL: process.env.LOG_LEVEL ?? "info",
      // Only the demo's receiver port, not loopback at large (lib/relayer.ts's default for the tests).
      WEBHOOK_ALLOWED_PRIVATE_HOSTS: `127.0.0.1:${demoWebhookPort},localhost:${demoWebhookPort}`,
    },
    logFile: path.join(logDir, "relayer.log"),
  };

  const spec = sampleSeedSpec();
  const seeded = await step("seeding the sample tenant", () => seedRelayer(relayerOptions, spec));
  const relayer = await step(`starting the relayer on port ${ports.relayer}`, async () => {
    const started = await startRelayer(relayerOptions);
    watch(started.service);
    return started;
  });

  const keyOf = (role: string) =>
    seeded.createdKeys.find((k) => k.role === role)?.key ??
    ((previous.sample?.apiKeys as Record<string, string> | undefined)?.[role] ?? "(created earlier; see the portal)");
  const password = seeded.createdKeys.length > 0 ? spec.user.password : String(previous.sample?.password ?? spec.user.password);
  const wallet = localAccount(7);
  const stack = {
    chainId: record.chainId,
    deploymentBlockHash: Object.values(record.contracts)[0]?.blockHash,
    endpoints: {
      rpc: rpcUrl,
      paymentApi: `${relayer.url}/v1`,
      paymentApiDocs: `${relayer.url}/v1/docs`,
      sandboxApi: `${relayer.url}/energy/v1`,
      sandboxApiDocs: `${relayer.url}/energy/docs`,
      portal: `${relayer.url}/portal`,
      indexer: indexer.url,
      deviceCloud: deviceCloud.url,
      demoWebhookReceiver: demoWebhookUrl,
    },
    contracts: Object.fromEntries(Object.entries(record.contracts).map(([name, c]) => [name, c.address])),
    sample: {
      tenantId: seeded.tenantId,
      email: spec.user.email,
      password,
      apiKeys: { developer: keyOf("developer"), agent: keyOf("agent") },
      devices: seeded.devices,
      participants: seeded.participants,
      ...("energyClient" in spec ? { energyClient: (spec as { energyClient: unknown }).energyClient } : {}),
    },
    testWallet: { address: wallet.address, privateKey: localPrivateKey(7) },
    secrets,
  };
  // The sandbox client's secret is only known when it was created now; keep the earlier one otherwise.
  if (reuse && previous.sample && "energyClient" in previous.sample) {
    (stack.sample as Record<string, unknown>).energyClient = previous.sample.energyClient;
  }
  await writeFile(stackFile, `${JSON.stringify(stack, null, 2)}\n`, { mode: 0o600 });

  const rows: Array<[string, string]> = [
    ["Payment API", stack.endpoints.paymentApi],
    ["  reference", stack.endpoints.paymentApiDocs],
    ["Sandbox API", stack.endpoints.sandboxApi],
    ["  reference", stack.endpoints.sandboxApiDocs],
    ["Developer portal", stack.endpoints.portal],
    ["Indexer", `${indexer.url} (SQL over HTTP at /sql)`],
    ["Chain (JSON-RPC)", `${rpcUrl}, chain id ${record.chainId}`],
    ["Device cloud", deviceCloud.url],
    ["Webhook receiver", `${demoWebhookUrl} (npm run demo's; the only local callback the relayer allows)`],
    ["Portal login", `${stack.sample.email} / ${password}`],
    ["Developer API key", stack.sample.apiKeys.developer],
    ["Agent API key", stack.sample.apiKeys.agent],
    ["Test wallet", `${wallet.address} (10,000 USDC; key in ${shown}/stack.json)`],
  ];
  const energy = (stack.sample as { energyClient?: { clientId: string; clientSecret: string } }).energyClient;
  if (energy) rows.push(["Sandbox client", `${energy.clientId} / ${energy.clientSecret}`]);
  const width = Math.max(...rows.map(([k]) => k.length));
  process.stdout.write(`\nReady${reuse ? " (data kept: same chain)" : ""}. Everything listens on 127.0.0.1; logs in ${shown}/logs/.\n\n`);
  for (const [k, v] of rows) process.stdout.write(`  ${k.padEnd(width)}  ${v}\n`);
  process.stdout.write("\nTry it: npm run demo        Stop: Ctrl-C\n");
}

main().catch(async (error) => {
  process.stderr.write(`\n${(error as Error).message}\n`);
  await stopAll(1);
});
