// Writes the relayer's two OpenAPI documents (scripts/openapi-documents.ts) to a folder, default
// node_modules/.cache/openapi/: payments.json (/v1) and energy.json (/energy/v1). `npm run lint` lints them
// with Redocly (redocly.yaml).
//
//   node scripts/write-openapi.ts [folder]
import { mkdir, writeFile } from "node:fs/promises";
import { join, resolve } from "node:path";
import { buildOpenApiDocuments } from "./openapi-documents.ts";

const folder = resolve(process.argv[2] ?? "node_modules/.cache/openapi");
const documents = await buildOpenApiDocuments();
await mkdir(folder, { recursive: true });
for (const [name, document] of Object.entries(documents)) {
  await writeFile(join(folder, `${name}.json`), `${JSON.stringify(document, null, 2)}\n`);
}
console.log(
  `wrote ${Object.keys(documents)
    .map((name) => `${name}.json`)
    .join(", ")} to ${folder}`,
);
