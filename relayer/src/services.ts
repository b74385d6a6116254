// Everything the routes and workers share, created once by main.ts (or by a test) and passed down.
import type { JwtSigner } from "./auth/jwt.ts";
import type { PaymentsChain } from "./chain/payments-chain.ts";
import type { TxSender } from "./chain/tx-sender.ts";
import type { Config } from "./config.ts";
import type { Database } from "./db/client.ts";
import type { DeviceCloud } from "./devices/device-cloud.ts";
import type { IndexerClient } from "../../indexer/client.ts";
import type { OrderEventHub } from "./payments/order-event-hub.ts";
import type { Logger } from "./logger.ts";
import type { Metrics } from "./metrics/registry.ts";

export type Services = {
  config: Config;
  logger: Logger;
  /** The database: drizzle's query builder (`database.db`), raw transactions, its kind. */
  database: Database;
  chain: PaymentsChain;
  txSender: TxSender;
  jwt: JwtSigner;
  deviceCloud: DeviceCloud;
  indexer: IndexerClient;
  orderEvents: OrderEventHub;
  /** This process's Prometheus metrics (GET /metrics). */
  metrics: Metrics;
};
