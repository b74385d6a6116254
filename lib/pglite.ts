// Creating an embedded PostgreSQL (PGlite) data directory ahead of the service that uses it. A new directory
// costs PostgreSQL's initdb, seconds of CPU: it is done once per PGlite version into a template directory
// (in a child process, so beside other start-up work), and each new database is a copy of that template,
// as a cleanly shut down PostgreSQL data directory can be copied. A service's own template may also hold what
// the service would otherwise do to every new database at its start (PgliteBuild's `prepare`: the indexer's
// holds Ponder's sync store, lib/indexer.ts). A template made for a new version of PGlite (or of what its
// `prepare` sets up) replaces the other versions' templates of its family in the same directory, so that
// upgrades do not leave tens of megabytes each behind.
import { cpSync, existsSync } from "node:fs";
import { mkdir, readFile, readdir, rename, rm } from "node:fs/promises";
import { createRequire } from "node:module";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { processAlive, startService } from "./processes.ts";

/** The PGlite build of a service (a path, see pgliteOf), the family of its templates and, for a template of
 * that service's own, what its service would otherwise do to every new database at its start. Templates are
 * named `<family>-<PGlite's version>`, or `<family>-<prepare's version>-pglite-<PGlite's version>`; a new one
 * replaces its family's others. */
export type PgliteBuild = {
  module: string;
  family: string;
  /** `source`: the body of an ES module run in the template's process after initdb, with `db` (the open
   * PGlite) and `args` (these strings) in scope; `version`: that of what `source` sets up. */
  prepare?: { version: string; source: string; args: string[] };
};

const initialise = (prepare = "") => `
const [directory, pglite, ...args] = process.argv.slice(1);
const { PGlite } = await import(pglite);
const db = new PGlite({ dataDir: directory });
await db.query("select 1");
${prepare}
await db.close();
`;

/** The PGlite build that `packageJson`'s package depends on (the indexer's Ponder has a version of its own). */
export function pgliteOf(packageJson: string): string {
  return createRequire(packageJson).resolve("@electric-sql/pglite");
}

const isDataDirectory = (directory: string) => existsSync(path.join(directory, "PG_VERSION"));

/** Makes the template directory for `build` in `templates` unless it exists; returns its path. `background`:
 * see StartOptions (lib/processes.ts). */
export async function createPgliteTemplate(build: PgliteBuild, templates: string, run: { background?: boolean } = {}): Promise<string> {
  const pglite = build.module;
  const { version } = JSON.parse(await readFile(path.join(path.dirname(path.dirname(pglite)), "package.json"), "utf8")) as {
    version: string;
  };
  const family = `${build.family}-`;
  const name = build.prepare ? `${family}${build.prepare.version}-pglite-${version}` : `${family}${version}`;
  const template = path.join(templates, name);
  if (isDataDirectory(template)) return template;
  // Made aside and renamed into place: a template is complete, or absent.
  const partial = `${template}.${process.pid}.partial`;
  await rm(partial, { recursive: true, force: true });
  await mkdir(partial, { recursive: true });
  const service = startService(
    "pglite",
    process.execPath,
    // V8's baseline WebAssembly compiler only (Liftoff): the optimised code (TurboFan) would come too late
    // for a process of a few seconds; 3.0 CPU s instead of 4.7 for PGlite 0.5.
    [
      "--liftoff-only",
      "--input-type=module",
      "-e",
      initialise(build.prepare?.source),
      partial,
      pathToFileURL(pglite).href,
      ...(build.prepare?.args ?? []),
    ],
    { background: run.background },
  );
  const code = await service.exited;
  if (code !== 0) throw new Error(`initialising a PGlite ${version} database failed (exit ${code}):\n${service.recentOutput()}`);
  await rename(partial, template).catch(async (error: NodeJS.ErrnoException) => {
    // Made meanwhile by another start: keep that one.
    if (!isDataDirectory(template)) throw error;
    await rm(partial, { recursive: true, force: true });
  });
  await removeOtherVersions(templates, family, name);
  return template;
}

/** Removes the templates in `templates` of `family` but `keep`, and those half-made by a process that is gone
 * (`<name>.<pid>.partial`); another process's half-made one stays. */
async function removeOtherVersions(templates: string, family: string, keep: string): Promise<void> {
  for (const entry of await readdir(templates)) {
    if (!entry.startsWith(family) || entry === keep) continue;
    const partial = entry.endsWith(".partial") ? entry.slice(0, -".partial".length) : undefined;
    const pid = partial === undefined ? undefined : Number(partial.slice(partial.lastIndexOf(".") + 1));
    if (pid !== undefined && Number.isSafeInteger(pid) && pid > 0 && processAlive(pid)) continue;
    await rm(path.join(templates, entry), { recursive: true, force: true });
  }
}

/** Creates the PGlite data directory `directory` for `build` unless it exists: a copy of its template in
 * `templates`, made first if missing. `background`: see StartOptions (lib/processes.ts). */
export async function createPgliteDirectory(
  directory: string,
  build: PgliteBuild,
  templates: string,
  run: { background?: boolean } = {},
): Promise<void> {
  if (isDataDirectory(directory)) return;
  const template = await createPgliteTemplate(build, templates, run);
  const copy = `${directory}.${process.pid}.partial`;
  await rm(copy, { recursive: true, force: true });
  // cpSync: a native copy, several times cheaper than cp here (some 2,000 files).
  cpSync(template, copy, { recursive: true });
  await rm(directory, { recursive: true, force: true });
  await rename(copy, directory);
}
