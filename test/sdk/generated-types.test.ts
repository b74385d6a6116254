// The SDK's API types (sdk/src/generated/payment-api.ts, energy-api.ts) are committed: they must be what
// scripts/generate-sdk-types.ts makes from the OpenAPI documents the relayer serves now, or an integrator's
// client would be typed against another API than the one it calls. `npm run build` writes them again.
import assert from "node:assert/strict";
import { readFile } from "node:fs/promises";
import path from "node:path";
import { describe, it } from "node:test";
import { generatedDir, sdkTypeSources } from "../../scripts/generate-sdk-types.ts";

describe("the SDK's generated API types", () => {
  it(
    "are what openapi-typescript makes of the documents the relayer serves now (run `npm run build` if not)",
    { timeout: 120_000 },
    async () => {
      const sources = await sdkTypeSources();
      assert.deepEqual(Object.keys(sources).sort(), ["energy-api.ts", "payment-api.ts"]);
      for (const [file, expected] of Object.entries(sources)) {
        // Each document's paths and schemas are in it (a sanity check of the generation itself).
        assert.match(expected, /export interface paths \{/);
        assert.match(expected, file === "payment-api.ts" ? /"\/orders\/\{id\}\/permit": \{/ : /"\/auth\/token": \{/);
        const committed = await readFile(path.join(generatedDir, file), "utf8").catch(() => "(missing)");
        assert.ok(
          committed === expected,
          `sdk/src/generated/${file} is out of date: run \`npm run build\` (or node scripts/generate-sdk-types.ts)`,
        );
      }
    },
  );
});
