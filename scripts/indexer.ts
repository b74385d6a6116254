// `npm run indexer`: the indexer for production, configured by the environment only. It runs Ponder on the
// indexer/ app the way the local stack does (lib/indexer.ts: the same preloads, telemetry off), in the
// foreground, and exits with Ponder's exit code.
//
//   DEPLOYMENT=chain-84532 PONDER_RPC_URL=https://… DATABASE_URL=postgresql://… \
//     DATABASE_SCHEMA=payg_v1 INDEXER_VIEWS_SCHEMA=payg npm run indexer
//   # a read replica of the same database, answering the same HTTP API without indexing
//   DEPLOYMENT=chain-84532 DATABASE_URL=postgresql://… DATABASE_SCHEMA=payg INDEXER_COMMAND=serve npm run indexer
//
// Environment: the indexer's own variables (indexer/env.ts: DEPLOYMENT, PONDER_RPC_URL, PONDER_RPC_BUCKETS,
// PONDER_WS_URL, PONDER_POLLING_MS, DATABASE_URL, PONDER_PGLITE_DIR), and
//   PORT (42069), INDEXER_HOST (127.0.0.1): where the HTTP API listens. Its SQL over HTTP is for the relayer:
//     keep it on loopback, or give it a private address that only the relayer reaches (never 0.0.0.0 on a host
//     with a public interface);
//   DATABASE_SCHEMA: Ponder's schema, required with DATABASE_URL (one per deployment of the indexing code:
//     Ponder refuses a schema that another version of the code filled); "public" on PGlite;
//   INDEXER_VIEWS_SCHEMA (optional, start only): a stable schema of views over DATABASE_SCHEMA, moved to it
//     once its backfill is done, for readers (a `serve` replica among them) to follow new deployments;
//   INDEXER_COMMAND: start (default: index and serve) or serve (a read replica, PostgreSQL only);
//   PONDER_LOG_LEVEL: Ponder's own (info).
// HOSTNAME is not read (shells and container runtimes set it to the machine's name, which would move the API off
// loopback).
//
// On a local chain (31337, 1337) with PostgreSQL, `start` first deletes that chain's cached RPC data from
// the database's `ponder_sync` (a restarted local node is a new chain with the same id; see
// lib/indexer.ts resetLocalChainSyncData).
//
// SIGINT, SIGTERM and SIGHUP all stop Ponder with SIGINT (lib/indexer.ts PONDER_STOP_SIGNAL: on SIGTERM it
// would end before releasing its lock on the schema). Ponder runs in a process group of its own so that a
// signal to the whole group of `npm run indexer` (Ctrl-C, a service manager stopping the group) reaches it
// only that way. A signal to npm's process alone does not reach this script: npm passes it to the shell it
// runs the script in, and sh (dash) ends without passing it on; send it to the group, or run
// `node scripts/indexer.ts` directly under such a manager (npm with script-shell=bash execs the script and
// passes signals to it).
import { type ChildProcess, spawn } from "node:child_process";
import { LOCAL_CHAIN_IDS, readIndexerEnv } from "../indexer/env.ts";
import { loadDeploymentRecord } from "../ignition/deployment-records.ts";
import {
  PONDER_ENV,
  PONDER_STOP_SIGNAL,
  type PonderCommand,
  indexerRoot,
  ponderNodeArgs,
  resetLocalChainSyncData,
} from "../lib/indexer.ts";

/** Lower-case SQL identifiers of at most 45 characters (Ponder's limit), never Ponder's own sync schema. */
const SCHEMA_NAME = /^[a-z_][a-z0-9_]{0,44}$/;

type Settings = { command: PonderCommand; databaseUrl: string | undefined; deploymentId: string };

/** The settings from `env`, or every problem with them. */
function readSettings(env: NodeJS.ProcessEnv): Settings | { problems: string[] } {
  const problems: string[] = [];
  const value = (name: string) => {
    const v = env[name]?.trim();
    return v === undefined || v === "" ? undefined : v;
  };

  let indexer: ReturnType<typeof readIndexerEnv> | undefined;
  try {
    indexer = readIndexerEnv(env);
  } catch (error) {
    // "invalid indexer configuration:\n  - A\n  - B": one problem a line.
    problems.push(
      ...(error as Error).message
        .split("\n")
        .slice(1)
        .map((line) => line.replace(/^\s*- /, "")),
    );
  }
  const postgres = value("DATABASE_URL") !== undefined;

  const rawCommand = value("INDEXER_COMMAND") ?? "start";
  if (rawCommand !== "start" && rawCommand !== "serve") problems.push(`INDEXER_COMMAND must be start or serve, got "${rawCommand}"`);
  const command = rawCommand === "serve" ? "serve" : "start";
  if (command === "serve" && !postgres) problems.push("INDEXER_COMMAND=serve needs DATABASE_URL (a replica reads a PostgreSQL schema)");
  if (command !== "serve" && value("PONDER_SQL_STATEMENT_TIMEOUT_MS") !== undefined)
    problems.push(
      "PONDER_SQL_STATEMENT_TIMEOUT_MS is for INDEXER_COMMAND=serve (with start it would also end the indexing's own statements)",
    );

  const rawPort = value("PORT") ?? "42069";
  const port = Number(rawPort);
  if (!/^\d{1,5}$/.test(rawPort) || port < 1 || port > 65_535) problems.push(`PORT must be a port number (1-65535), got "${rawPort}"`);

  const hostname = value("INDEXER_HOST") ?? "127.0.0.1";
  if (!/^[A-Za-z0-9._:%[\]-]{1,253}$/.test(hostname)) problems.push(`INDEXER_HOST must be a host name or an IP address, got "${hostname}"`);

  const schemaOf = (name: string): string | undefined => {
    const schema = value(name);
    if (schema !== undefined && (!SCHEMA_NAME.test(schema) || schema === "ponder_sync")) {
      problems.push(`${name} must be a lower-case SQL identifier of at most 45 characters (not ponder_sync), got "${schema}"`);
    }
    return schema;
  };
  const schema = schemaOf("DATABASE_SCHEMA");
  if (postgres && schema === undefined)
    problems.push("DATABASE_SCHEMA is required with DATABASE_URL: the schema of this deployment of the indexing code");
  const viewsSchema = schemaOf("INDEXER_VIEWS_SCHEMA");
  if (viewsSchema !== undefined) {
    if (command === "serve")
      problems.push("INDEXER_VIEWS_SCHEMA applies to start only: a replica reads the views schema as its DATABASE_SCHEMA");
    else if (!postgres) problems.push("INDEXER_VIEWS_SCHEMA needs DATABASE_URL (views are for readers of a PostgreSQL schema)");
    else if (viewsSchema === schema) problems.push("INDEXER_VIEWS_SCHEMA must differ from DATABASE_SCHEMA");
  }
  // Ponder reads it when no --views-schema is given: it would move the views without being asked here.
  if (value("DATABASE_VIEWS_SCHEMA") !== undefined) problems.push("DATABASE_VIEWS_SCHEMA is not read: set INDEXER_VIEWS_SCHEMA");

  if (problems.length > 0 || !indexer) return { problems };
  return {
    command: { command, schema: schema ?? "public", viewsSchema, port, hostname },
    databaseUrl: indexer.database.kind === "postgres" ? indexer.database.connectionString : undefined,
    deploymentId: indexer.deploymentId,
  };
}

async function main(): Promise<number> {
  const settings = readSettings(process.env);
  if ("problems" in settings) {
    process.stderr.write(`npm run indexer: ${settings.problems.join("; ")}\n`);
    return 2;
  }

  // Signals that arrive before Ponder runs end the start-up here; later ones are passed on to Ponder.
  const state: { stopRequested: boolean; ponder?: ChildProcess } = { stopRequested: false };
  const onSignal = () => {
    state.stopRequested = true;
    state.ponder?.kill(PONDER_STOP_SIGNAL);
  };
  for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"] as const) process.on(signal, onSignal);

  if (settings.command.command === "start" && settings.databaseUrl !== undefined) {
    let chainId: number;
    try {
      ({ chainId } = await loadDeploymentRecord(settings.deploymentId));
    } catch (error) {
      process.stderr.write(`npm run indexer: DEPLOYMENT=${settings.deploymentId}: ${(error as Error).message.split("\n")[0]}\n`);
      return 2;
    }
    if (LOCAL_CHAIN_IDS.includes(chainId)) {
      try {
        await resetLocalChainSyncData(settings.databaseUrl, chainId);
      } catch (error) {
        process.stderr.write(`npm run indexer: cannot reach the database (DATABASE_URL): ${(error as Error).message.split("\n")[0]}\n`);
        return 1;
      }
    }
  }
  if (state.stopRequested) return 0;

  const child = (state.ponder = spawn(process.execPath, ponderNodeArgs(settings.command), {
    cwd: indexerRoot,
    env: {
      ...process.env,
      ...PONDER_ENV,
      // Ponder prefers PORT to --port; they are the same here (and PORT may have been unset).
      PORT: String(settings.command.port),
    },
    stdio: "inherit",
    detached: true,
  }));
  return new Promise((resolve) => {
    child.on("error", (error) => {
      process.stderr.write(`npm run indexer: cannot run Ponder: ${error.message}\n`);
      resolve(1);
    });
    // A Ponder ended by a signal (not the ones passed on: it handles those) counts as a failure.
    child.on("exit", (code, signal) => resolve(code ?? (signal ? 1 : 0)));
  });
}

process.exitCode = await main();
