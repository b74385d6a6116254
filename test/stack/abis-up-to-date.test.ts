// lib/contracts.ts abisUpToDate: generated/abis.ts is up to date when it holds what scripts/generate-abis.ts
// generates from the artifacts, whatever the files' modification times. `npm start` compiles and regenerates
// when it is not, and restarts an indexer it started early; an answer of "stale" after every build that
// rewrote the artifacts with the same ABIs made every start do both.
import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, rmSync, statSync, utimesSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { after, describe, it } from "node:test";
import { abisUpToDate } from "../../lib/contracts.ts";
import { abisFile, abisSource } from "../../scripts/generate-abis.ts";

const root = path.resolve(import.meta.dirname, "..", "..");
const scratch = mkdtempSync(path.join(os.tmpdir(), "abis-"));
after(() => rmSync(scratch, { recursive: true, force: true }));

describe("generated/abis.ts up to date", () => {
  it("is, after the build, and stays so when the artifacts are rewritten with the same ABIs", async () => {
    assert.equal(await abisUpToDate(), true);
    // An artifact newer than generated/abis.ts, its content unchanged (as a build that rewrote it leaves it).
    const artifact = path.join(root, "artifacts", "contracts", "PaymentRouter.sol", "PaymentRouter.json");
    const { atime, mtime } = statSync(artifact);
    const later = new Date(Math.max(Date.now(), statSync(abisFile).mtimeMs + 60_000));
    utimesSync(artifact, later, later);
    try {
      assert.equal(await abisUpToDate(), true);
    } finally {
      utimesSync(artifact, atime, mtime);
    }
  });

  it("is not when the file's text differs from what the artifacts give, or when it is missing", async () => {
    const { text, sources } = await abisSource();
    assert.ok(sources.includes("PaymentRouter.sol") && text.includes("export const paymentRouterAbi = ["));
    const copy = path.join(scratch, "abis.ts");
    writeFileSync(copy, text);
    assert.equal(await abisUpToDate(copy), true);
    writeFileSync(copy, text.replace('"name": "payWithPermit"', '"name": "payWithPermit2"'));
    assert.notEqual(readFileSync(copy, "utf8"), text);
    assert.equal(await abisUpToDate(copy), false);
    assert.equal(await abisUpToDate(path.join(scratch, "missing.ts")), false);
  });
});
