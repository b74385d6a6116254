// Every operation of both OpenAPI documents shows a request example (when it takes a body) and a response
// example (for each success answer with a body), as a generator's documentation and a mock server use them,
// and each example satisfies the schema it illustrates (the resilience suite's schema check). The documents
// are built in this process (scripts/openapi-documents.ts).
import assert from "node:assert/strict";
import { before, describe, it } from "node:test";
import { type OpenApiDocumentName, buildOpenApiDocuments } from "../../scripts/openapi-documents.ts";
import { deref, violates } from "../resilience/support/openapi.ts";
import type { UncheckedJson } from "../support/unchecked-json.ts";

const METHODS = ["get", "put", "post", "delete", "patch"];

/** The examples of a media type: its own (`example`, `examples`), else its schema's. */
function examplesOf(doc: UncheckedJson, media: UncheckedJson): unknown[] {
  if (media.example !== undefined) return [media.example];
  if (media.examples) return Object.values(media.examples as Record<string, UncheckedJson>).map((e) => deref(doc, e).value);
  const schema = deref(doc, media.schema ?? {});
  if (schema.example !== undefined) return [schema.example];
  if (Array.isArray(schema.examples)) return schema.examples;
  return [];
}

type Example = { where: string; schema: UncheckedJson; values: unknown[] };

/** Each operation's request body and success answers, with their examples. */
function examples(doc: UncheckedJson): Example[] {
  const out: Example[] = [];
  for (const [path, item] of Object.entries(doc.paths as Record<string, UncheckedJson>)) {
    for (const method of METHODS) {
      const op = item[method];
      if (!op) continue;
      const key = `${method.toUpperCase()} ${path}`;
      for (const [type, media] of Object.entries((op.requestBody?.content ?? {}) as Record<string, UncheckedJson>)) {
        out.push({ where: `${key} request ${type}`, schema: deref(doc, media.schema ?? {}), values: examplesOf(doc, media) });
      }
      for (const [status, response] of Object.entries(op.responses as Record<string, UncheckedJson>)) {
        if (!status.startsWith("2")) continue;
        for (const [type, media] of Object.entries((deref(doc, response).content ?? {}) as Record<string, UncheckedJson>)) {
          out.push({ where: `${key} ${status} ${type}`, schema: deref(doc, media.schema ?? {}), values: examplesOf(doc, media) });
        }
      }
    }
  }
  return out;
}

describe("OpenAPI examples", () => {
  let docs: Record<OpenApiDocumentName, UncheckedJson>;
  before(
    async () => {
      docs = await buildOpenApiDocuments();
    },
    { timeout: 180_000 },
  );

  for (const name of ["payments", "energy"] as const) {
    it(`${name}: every request body and every success answer has an example`, () => {
      const all = examples(docs[name]);
      assert.ok(all.length >= (name === "payments" ? 45 : 12), `bodies found (${all.length})`);
      assert.deepEqual(
        all.filter((e) => e.values.length === 0).map((e) => e.where),
        [],
        "bodies without an example",
      );
    });

    it(`${name}: every example satisfies its schema`, () => {
      const broken = examples(docs[name]).flatMap((e) =>
        e.values.filter((value) => violates(e.schema, value)).map((value) => `${e.where}: ${JSON.stringify(value).slice(0, 200)}`),
      );
      assert.deepEqual(broken, [], "examples their schema refuses");
    });
  }
});
