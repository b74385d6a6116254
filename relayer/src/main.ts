// The relayer process: configuration, database and migrations, chain connection, HTTP server, background
// workers; a clean stop on SIGINT/SIGTERM.
import type { Server } from "node:http";
import { serve } from "@hono/node-server";
import { createIndexerClient } from "../../indexer/client.ts";
import { createApp } from "./app.ts";
import { createJwtSigner } from "./auth/jwt.ts";
import { SCRYPT_PARAMS } from "./auth/passwords.ts";
import { connectPaymentsChain } from "./chain/payments-chain.ts";
import { createTxSender } from "./chain/tx-sender.ts";
import { type Config, loadConfig } from "./config.ts";
import { databaseOptions, openDatabase } from "./db/client.ts";
import { answerClientErrors } from "./http/client-errors.ts";
import { clientNetwork } from "./http/client-address.ts";
import { connectionLimits, defaultMaxConnections, serverTimeouts } from "./http/connection-limits.ts";
import { migrate } from "./db/migrate.ts";
import { createDeviceCloud } from "./devices/device-cloud.ts";
import { deviceJobHandlers } from "./devices/power-on.ts";
import { createJobRunner } from "./jobs/queue.ts";
import { createRetentionWorker } from "./jobs/retention.ts";
import type { Worker } from "./jobs/worker.ts";
import { energyWorkers } from "./energy/workers.ts";
import { batchedStdoutWriter, createLogger } from "./logger.ts";
import { registerCollectedGauges } from "./metrics/collected.ts";
import { createMetrics } from "./metrics/registry.ts";
import { createOrderEventHub } from "./payments/order-event-hub.ts";
import { createDepositWatch } from "./payments/deposit-watch.ts";
import { createExpiry } from "./payments/expiry.ts";
import { createPaymentSync } from "./payments/payment-sync.ts";
import { createSplitProvisioner } from "./payments/payout-parties.ts";
import type { Services } from "./services.ts";
import { createDeviceStatusWatcher } from "./webhooks/device-status.ts";
import { createWebhookDispatcher } from "./webhooks/dispatcher.ts";

/** Builds every service from the configuration (the database is migrated). */
export async function createServices(config: Config): Promise<Services> {
  const logger = createLogger(config.LOG_LEVEL, { service: "relayer" }, batchedStdoutWriter());
  if (config.PASSWORD_SCRYPT_N < SCRYPT_PARAMS.N) {
    logger.warn("PASSWORD_SCRYPT_N is below OWASP's minimum for scrypt: new password hashes are weaker (test suites only)", {
      passwordScryptN: config.PASSWORD_SCRYPT_N,
      minimum: SCRYPT_PARAMS.N,
    });
  }
  const database = await openDatabase(databaseOptions(config), logger);
  const applied = await migrate(database);
  if (applied.length > 0) logger.info("migrations applied", { applied });
  const chain = await connectPaymentsChain(config, logger);
  const metrics = createMetrics();
  const txSender = createTxSender({ database, chain, logger, metrics, config });
  // A missing paid order is a reorganisation only if its block left the chain (see isCanonicalBlock).
  const indexer = createIndexerClient(config.INDEXER_URL, { isCanonicalBlock: chain.isCanonicalBlock });
  registerCollectedGauges(metrics, { database, chain, indexer, logger });
  return {
    config,
    logger,
    database,
    chain,
    txSender,
    jwt: createJwtSigner(config.JWT_SECRET, config.JWT_TTL_SECONDS),
    deviceCloud: createDeviceCloud(config.DEVICE_CLOUD_URL, config.DEVICE_CLOUD_TIMEOUT_MS),
    indexer,
    orderEvents: createOrderEventHub(database),
    metrics,
  };
}

/** The background workers of one relayer process (jobs/worker.ts), started in this order and stopped in the
 * reverse one. */
export function createWorkers(services: Services): Worker[] {
  return [
    services.txSender,
    createSplitProvisioner(services),
    createPaymentSync(services),
    createExpiry(services),
    createDepositWatch(services),
    createJobRunner({ database: services.database, logger: services.logger, handlers: deviceJobHandlers(services) }),
    createWebhookDispatcher(services),
    createDeviceStatusWatcher(services),
    createRetentionWorker({
      db: services.database.db,
      logger: services.logger,
      eventRetentionDays: services.config.WEBHOOK_EVENT_RETENTION_DAYS,
    }),
    ...energyWorkers(services),
  ];
}

async function main() {
  let config: Config;
  try {
    config = loadConfig();
  } catch (error) {
    console.error((error as Error).message);
    process.exit(1);
  }
  const services = await createServices(config);
  const { logger } = services;
  await services.orderEvents.start();
  const workers = config.WORKERS ? createWorkers(services) : [];
  for (const worker of workers) await worker.start();
  void services.chain
    .stablecoins()
    .then(() => services.chain.checkRoles())
    .catch((error) => logger.warn("the chain is not reachable yet", { error: (error as Error).message }));

  const app = createApp(services);
  const limits = connectionLimits({
    max: config.HTTP_MAX_CONNECTIONS ?? defaultMaxConnections(),
    perClient: config.HTTP_MAX_CONNECTIONS_PER_CLIENT,
    bodyProgressMs: config.HTTP_BODY_PROGRESS_TIMEOUT_MS,
    network: clientNetwork(config),
    logger,
  });
  // serve() makes the server and listens once the current code has run: the limits are attached before the
  // first connection.
  const server = serve(
    {
      fetch: limits.guard(app.fetch),
      hostname: config.HOST,
      port: config.PORT,
      serverOptions: serverTimeouts(config),
    },
    (info) => {
      logger.info("relayer listening", { host: info.address, port: info.port, database: services.database.kind });
    },
  ) as Server;
  server.maxRequestsPerSocket = config.HTTP_MAX_REQUESTS_PER_CONNECTION;
  limits.attach(server);
  answerClientErrors(server, logger);
  let acceptFailures = 0;
  server.on("error", (error: NodeJS.ErrnoException) => {
    // Out of file descriptors when accepting (EMFILE, ENFILE): that connection is lost, the server goes on.
    if (error.syscall === "accept") {
      if (acceptFailures++ % 1000 === 0) logger.warn("a connection could not be accepted", { error: error.code, failures: acceptFailures });
      return;
    }
    logger.error("the HTTP server failed", { error });
    process.exit(1);
  });

  let stopping = false;
  const shutdown = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info("stopping", { signal });
    const force = setTimeout(() => process.exit(1), 10_000);
    force.unref();
    server.close();
    if ("closeAllConnections" in server) (server as { closeAllConnections(): void }).closeAllConnections();
    for (const worker of [...workers].reverse()) await worker.stop().catch(() => undefined);
    await services.database.close().catch(() => undefined);
    process.exit(0);
  };
  process.on("SIGINT", () => void shutdown("SIGINT"));
  process.on("SIGTERM", () => void shutdown("SIGTERM"));
}

if (import.meta.main) await main();
