// Seeds the relayer's database from JSON: a SeedSpec or an array of them (a file path argument, or standard
// input), each tenant in a transaction of its own, in order; prints the SeedResult (an array of them for an
// array) as JSON. Run it before starting the relayer (PGlite allows one process at a time).
// Usage: node relayer/src/cli/seed.ts spec.json
import { readFile } from "node:fs/promises";
import { text } from "node:stream/consumers";
import { passwordHasher } from "../auth/passwords.ts";
import { loadConfig } from "../config.ts";
import { databaseOptions, openDatabase } from "../db/client.ts";
import { migrate } from "../db/migrate.ts";
import { createLogger } from "../logger.ts";
import { type SeedSpec, seed } from "../seed.ts";

const config = loadConfig();
const logger = createLogger("warn", { service: "seed" });
const passwords = passwordHasher(config.passwordScrypt);
const input = JSON.parse(process.argv[2] ? await readFile(process.argv[2], "utf8") : await text(process.stdin)) as SeedSpec | SeedSpec[];
const database = await openDatabase(databaseOptions(config), logger);
try {
  await migrate(database);
  if (Array.isArray(input)) {
    const results = [];
    for (const spec of input) results.push(await seed(database.db, spec, passwords));
    process.stdout.write(`${JSON.stringify(results)}\n`);
  } else {
    process.stdout.write(`${JSON.stringify(await seed(database.db, input, passwords))}\n`);
  }
} finally {
  await database.close();
}
