// The relayer's database: PostgreSQL through DATABASE_URL (production), or the embedded PGlite in a data
// directory (the default, no server). Both are driven through drizzle; LISTEN/NOTIFY works on both.
import { mkdirSync } from "node:fs";
import { PGlite, type PGliteOptions } from "@electric-sql/pglite";
import { drizzle as drizzlePglite } from "drizzle-orm/pglite";
import { drizzle as drizzlePg } from "drizzle-orm/node-postgres";
import type { PgDatabase, PgQueryResultHKT, PgTransaction } from "drizzle-orm/pg-core";
import type { ExtractTablesWithRelations } from "drizzle-orm";
import pg from "pg";
import type { Config } from "../config.ts";
import type { Logger } from "../logger.ts";
import * as schema from "./schema.ts";

export type Schema = typeof schema;
export type Db = PgDatabase<PgQueryResultHKT, Schema>;
export type Tx = PgTransaction<PgQueryResultHKT, Schema, ExtractTablesWithRelations<Schema>>;
/** A database handle or an open transaction: code that writes should accept either. */
export type DbOrTx = Db | Tx;

/** Raw SQL on one connection inside a transaction (migrations). */
export type RawTx = { exec(sqlText: string): Promise<void>; query<T>(sqlText: string, params?: unknown[]): Promise<T[]> };

export type Database = {
  kind: "pglite" | "postgres";
  db: Db;
  /** Runs `fn` in one transaction on one raw connection. */
  rawTransaction<T>(fn: (tx: RawTx) => Promise<T>): Promise<T>;
  /** Calls `handler` for every NOTIFY on `channel` (from any process on the same database), and with
   * `undefined` when the listener is back after it lost its connection (PostgreSQL): notifications sent
   * meanwhile were missed, so whoever listens should look for what they announced. */
  listen(channel: string, handler: (payload: string | undefined) => void): Promise<void>;
  /** PostgreSQL: the connection pool's use now (connections open, of those idle, queries waiting for one).
   * PGlite has no pool: one connection in the process. */
  poolUse?(): { total: number; idle: number; waiting: number };
  close(): Promise<void>;
};

export type DatabaseOptions = { kind: "pglite"; directory: string } | { kind: "postgres"; url: string; schema: string; poolSize?: number };

/** The database the configuration names: DATABASE_URL's PostgreSQL, else the embedded PGlite in PGLITE_DIR. */
export function databaseOptions(config: Pick<Config, "DATABASE_URL" | "DATABASE_SCHEMA" | "PGLITE_DIR">): DatabaseOptions {
  return config.DATABASE_URL
    ? { kind: "postgres", url: config.DATABASE_URL, schema: config.DATABASE_SCHEMA }
    : { kind: "pglite", directory: config.PGLITE_DIR };
}

export async function openDatabase(options: DatabaseOptions, logger: Logger): Promise<Database> {
  return options.kind === "postgres" ? openPostgres(options, logger) : openPglite(options);
}

/** How the relayer opens its embedded PGlite: PostgreSQL's shared buffers at 32 MB instead of PGlite's 128 MB.
 * PGlite zeroes its shared memory when it starts, and 128 MB of it cost about a third of a CPU second on every
 * open (1.27 CPU s for an open against 0.9 with 32 MB, PGlite 0.5.16, 2-core AMD EPYC host, 2026-11-27), in
 * every relayer and seed process; 32 MB holds the working set of a single-process embedded database many
 * times over. */
export const PGLITE_OPTIONS = {
  startParams: [...PGlite.defaultStartParams, "-c", "shared_buffers=32MB"],
} satisfies PGliteOptions;

async function openPglite(options: { directory: string }): Promise<Database> {
  if (!options.directory.startsWith("memory://")) mkdirSync(options.directory, { recursive: true });
  const client = await PGlite.create(options.directory, PGLITE_OPTIONS);
  const db = drizzlePglite(client, { schema }) as unknown as Db;
  return {
    kind: "pglite",
    db,
    rawTransaction: (fn) =>
      client.transaction((tx) =>
        fn({
          exec: async (text) => {
            await tx.exec(text);
          },
          query: async <T>(text: string, params?: unknown[]) => (await tx.query<T>(text, params)).rows,
        }),
      ),
    listen: async (channel, handler) => {
      await client.listen(channel, handler);
    },
    close: () => client.close(),
  };
}

async function openPostgres(options: { url: string; schema: string; poolSize?: number }, logger: Logger): Promise<Database> {
  const searchPath = `-c search_path=${options.schema}`;
  const bootstrap = new pg.Client({ connectionString: options.url });
  await bootstrap.connect();
  try {
    await bootstrap.query(`create schema if not exists "${options.schema}"`);
  } catch (error) {
    // Two processes creating the same schema at once: the loser sees a unique violation. The schema exists.
    const code = (error as { code?: string }).code;
    if (code !== "23505" && code !== "42P06") throw error;
  } finally {
    await bootstrap.end();
  }
  const pool = new pg.Pool({ connectionString: options.url, options: searchPath, max: options.poolSize ?? 10 });
  pool.on("error", (error) => logger.warn("idle database connection failed", { error }));
  // A connection that fails while checked out (held by a transaction between two queries, say) emits
  // 'error' on its client, which pg-pool only listens to while the client is idle: without a listener of
  // our own that would end the process. The transaction's next query fails instead, and the pool discards
  // the client when it is released.
  pool.on("connect", (client) => {
    client.on("error", (error) => logger.warn("database connection failed while in use", { error: error.message }));
  });
  const db = drizzlePg(pool, { schema }) as unknown as Db;

  const listeners = new Map<string, Set<(payload: string | undefined) => void>>();
  let listenClient: pg.Client | undefined;
  let closed = false;
  const connectListener = async (): Promise<void> => {
    const client = new pg.Client({ connectionString: options.url, options: searchPath });
    client.on("notification", (msg) => {
      for (const handler of listeners.get(msg.channel) ?? []) handler(msg.payload ?? "");
    });
    client.on("error", (error) => {
      logger.warn("database listener connection lost; reconnecting", { error });
      if (listenClient === client) listenClient = undefined;
      void client.end().catch(() => undefined);
      reconnectListener();
    });
    try {
      await client.connect();
      for (const channel of listeners.keys()) await client.query(`listen "${channel}"`);
    } catch (error) {
      void client.end().catch(() => undefined);
      throw error;
    }
    listenClient = client;
  };
  // Until it is back: a database that is down for a while refuses the first attempts too, and without
  // the listener no process would hear another's notifications again (only the workers' polls).
  let reconnecting = false;
  const reconnectListener = (delayMs = 1_000) => {
    if (closed || reconnecting) return;
    reconnecting = true;
    setTimeout(() => {
      connectListener()
        .then(() => {
          reconnecting = false;
          logger.info("database listener reconnected");
          for (const handlers of listeners.values()) for (const handler of handlers) handler(undefined);
        })
        .catch((error) => {
          reconnecting = false;
          logger.warn("database listener still cannot connect; retrying", { error: (error as Error).message });
          reconnectListener(Math.min(delayMs * 2, 5_000));
        });
    }, delayMs);
  };

  return {
    kind: "postgres",
    db,
    rawTransaction: async (fn) => {
      const client = await pool.connect();
      try {
        await client.query("begin");
        const result = await fn({
          exec: async (text) => {
            await client.query(text);
          },
          query: async <T>(text: string, params?: unknown[]) => (await client.query(text, params as unknown[])).rows as T[],
        });
        await client.query("commit");
        return result;
      } catch (error) {
        await client.query("rollback").catch(() => undefined);
        throw error;
      } finally {
        client.release();
      }
    },
    listen: async (channel, handler) => {
      const set = listeners.get(channel) ?? new Set();
      const isNew = !listeners.has(channel);
      set.add(handler);
      listeners.set(channel, set);
      if (!listenClient) await connectListener();
      else if (isNew) await listenClient.query(`listen "${channel}"`);
    },
    poolUse: () => ({ total: pool.totalCount, idle: pool.idleCount, waiting: pool.waitingCount }),
    close: async () => {
      closed = true;
      await listenClient?.end().catch(() => undefined);
      await pool.end();
    },
  };
}
