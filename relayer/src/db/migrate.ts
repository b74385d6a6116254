// Applies the SQL files of db/migrations/ in name order, each once, recorded in schema_migrations. An
// advisory lock makes concurrent relayer processes wait for one another instead of racing.
import { readdir, readFile } from "node:fs/promises";
import path from "node:path";
import type { Database } from "./client.ts";

const migrationsDir = path.join(import.meta.dirname, "migrations");

export async function migrate(database: Database): Promise<string[]> {
  const files = (await readdir(migrationsDir)).filter((f) => f.endsWith(".sql")).sort();
  return database.rawTransaction(async (tx) => {
    await tx.query("select pg_advisory_xact_lock(hashtext('relayer-migrations'))");
    await tx.exec(
      "create table if not exists schema_migrations (name text primary key, applied_at timestamptz not null default now())",
    );
    const done = new Set((await tx.query<{ name: string }>("select name from schema_migrations")).map((r) => r.name));
    const applied: string[] = [];
    for (const file of files) {
      if (done.has(file)) continue;
      await tx.exec(await readFile(path.join(migrationsDir, file), "utf8"));
      await tx.query("insert into schema_migrations (name) values ($1)", [file]);
      applied.push(file);
    }
    return applied;
  });
}
