// A PGlite template made for a new version (lib/pglite.ts) replaces its family's templates of other versions in
// the same directory (`.local/database-templates/` for `npm start`), and the half-made ones of processes that are
// gone, so that upgrades do not leave tens of megabytes each behind; another family's templates, another
// process's half-made template and anything else there stay.
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdir, mkdtemp, readdir, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { after, describe, it } from "node:test";
import { createRelayerDatabaseTemplate } from "../../lib/relayer.ts";

/** A directory that looks like a finished template (a PostgreSQL data directory has PG_VERSION). */
async function fakeTemplate(directory: string): Promise<void> {
  await mkdir(directory, { recursive: true });
  await writeFile(path.join(directory, "PG_VERSION"), "17\n");
}

describe("PGlite templates across versions", () => {
  const dirs: string[] = [];
  after(async () => {
    for (const dir of dirs) await rm(dir, { recursive: true, force: true });
  });

  it("a new version's template replaces its family's other versions and dead half-made ones, and nothing else", async () => {
    const templates = await mkdtemp(path.join(os.tmpdir(), "pglite-templates-"));
    dirs.push(templates);
    const gone = spawnSync(process.execPath, ["-e", ""]).pid;
    assert.ok(gone > 0);
    await fakeTemplate(path.join(templates, "pglite-0.0.1"));
    await mkdir(path.join(templates, `pglite-0.0.2.${gone}.partial`));
    await mkdir(path.join(templates, `pglite-0.0.3.${process.pid}.partial`));
    await fakeTemplate(path.join(templates, "ponder-0.0.1-sync-pglite-0.0.1"));
    await writeFile(path.join(templates, "notes.txt"), "kept\n");

    const made = await createRelayerDatabaseTemplate(templates);
    const name = path.basename(made);
    assert.match(name, /^pglite-\d+\.\d+\.\d+/);
    assert.notEqual(name, "pglite-0.0.1");
    assert.deepEqual(
      (await readdir(templates)).sort(),
      ["notes.txt", `pglite-0.0.3.${process.pid}.partial`, name, "ponder-0.0.1-sync-pglite-0.0.1"].sort(),
    );
    assert.ok((await readdir(made)).includes("PG_VERSION"), "the new template is a data directory");

    // Found, it is used as it is: an old version put back meanwhile stays until a template is made again.
    await fakeTemplate(path.join(templates, "pglite-0.0.1"));
    assert.equal(await createRelayerDatabaseTemplate(templates), made);
    assert.ok((await readdir(templates)).includes("pglite-0.0.1"));
  });
});
