// test/support/databases.ts: each test process gets a PostgreSQL database of its own, dropped when the process
// ends, whether it ends by running out of work or by process.exit().
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import path from "node:path";
import { describe, it } from "node:test";
import { selectedDatabaseKinds, serverTestDatabaseUrl, withPostgres } from "../support/databases.ts";

const root = path.resolve(import.meta.dirname, "..", "..");

/** Runs a process that loads databases.ts, prints its database's URL, then runs `ending`. */
function childDatabase(ending: string): Promise<{ url: string; code: number | null; output: string }> {
  const script = `const { testDatabaseUrl } = await import(${JSON.stringify(path.join(root, "test", "support", "databases.ts"))});
console.log(testDatabaseUrl());
${ending}`;
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ["--input-type=module", "-e", script], {
      cwd: root,
      env: { ...process.env, TEST_DATABASES: "postgres" },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let out = "";
    let err = "";
    child.stdout.on("data", (chunk: Buffer) => (out += chunk.toString("utf8")));
    child.stderr.on("data", (chunk: Buffer) => (err += chunk.toString("utf8")));
    child.on("error", reject);
    child.on("exit", (code) => resolve({ url: out.trim(), code, output: out + err }));
  });
}

async function databaseExists(name: string): Promise<boolean> {
  return withPostgres(serverTestDatabaseUrl(), async (client) => {
    const { rowCount } = await client.query("select 1 from pg_database where datname = $1", [name]);
    return rowCount === 1;
  });
}

describe(
  "a test process's PostgreSQL database",
  { skip: !selectedDatabaseKinds().includes("postgres") && "TEST_DATABASES leaves postgres out" },
  () => {
    for (const [how, ending] of [
      ["when the process runs out of work", "setTimeout(() => {}, 50);"],
      ["when the process calls process.exit()", "process.exit(0);"],
    ] as const) {
      it(`is created, and dropped ${how}`, async () => {
        const run = await childDatabase(ending);
        assert.equal(run.code, 0, run.output);
        const name = new URL(run.url).pathname.slice(1);
        assert.match(name, /_p\d+$/, run.output);
        assert.equal(await databaseExists(name), false, `${name} is still there`);
      });
    }

    it("exists while its process runs", async () => {
      const run = await childDatabase(
        `const { withPostgres, testDatabaseUrl: url } = await import(${JSON.stringify(path.join(root, "test", "support", "databases.ts"))});
await withPostgres(url(), (c) => c.query("select 1"));`,
      );
      assert.equal(run.code, 0, run.output);
    });
  },
);
