// Both OpenAPI documents (/v1/openapi.json and /energy/openapi.json), as the relayer's app serves them, are
// fit for client generators (openapi-generator, openapi-typescript, Kiota, ...): every operation and webhook
// has an operationId, unique in its document and usable as a method name; every public operation says so
// with `security: []` (otherwise a generator applies a document-level default, or asks for a credential the
// route does not take); and every $ref resolves. The app is built in this process from the relayer's own
// configuration and services (scripts/openapi-documents.ts: an in-memory PGlite database, a placeholder
// deployment record; no chain or indexer is contacted to serve the documents).
import assert from "node:assert/strict";
import { before, describe, it } from "node:test";
import { buildOpenApiDocuments } from "../../scripts/openapi-documents.ts";
import { EVENT_CATALOGUE } from "../../relayer/src/webhooks/catalogue.ts";
import type { UncheckedJson } from "../support/unchecked-json.ts";

const METHODS = ["get", "put", "post", "delete", "options", "head", "patch", "trace"];

/** The public operations, from the access rules: the README's route table for /v1, the sandbox interface's
 * Endpoints table for /energy/v1. Every other operation needs a credential. */
const PUBLIC = {
  "/v1/openapi.json": [
    "GET /health",
    "GET /health/ready",
    "POST /auth/login",
    "GET /devices/{id}/status",
    "POST /devices/{id}/tickets",
    "POST /quote",
    "POST /orders",
    "GET /orders/{id}",
    "GET /orders/{id}/events",
    "GET /orders/{id}/receipt",
    "POST /orders/{id}/permit",
    "POST /orders/{id}/authorization",
    "POST /orders/{id}/permit2",
    "GET /public/stats",
    "GET /impact",
    "GET /webhooks/event-types",
  ],
  "/energy/openapi.json": ["GET /health", "GET /version", "GET /capabilities", "POST /auth/token"],
} as const;

type Document = keyof typeof PUBLIC;
type Operation = { key: string; webhook: boolean; operation: UncheckedJson };

function operationsOf(doc: UncheckedJson): Operation[] {
  const out: Operation[] = [];
  for (const [section, webhook] of [
    ["paths", false],
    ["webhooks", true],
  ] as const) {
    for (const [path, item] of Object.entries((doc[section] ?? {}) as Record<string, Record<string, UncheckedJson>>)) {
      for (const method of METHODS) {
        if (item[method]) out.push({ key: `${method.toUpperCase()} ${path}`, webhook, operation: item[method] });
      }
    }
  }
  return out;
}

/** Every `$ref` in `value`, with where it is. */
function refsOf(value: UncheckedJson, where = "#", out: Array<{ ref: string; where: string }> = []) {
  if (Array.isArray(value)) value.forEach((v, i) => refsOf(v, `${where}/${i}`, out));
  else if (value && typeof value === "object") {
    for (const [key, v] of Object.entries(value)) {
      if (key === "$ref" && typeof v === "string") out.push({ ref: v, where });
      else refsOf(v, `${where}/${key}`, out);
    }
  }
  return out;
}

/** The node a local JSON pointer ($ref "#/components/schemas/Quote") names in `doc`; undefined if none. */
function resolve(doc: UncheckedJson, ref: string): UncheckedJson {
  if (!ref.startsWith("#/")) return undefined;
  let node = doc;
  for (const raw of ref.slice(2).split("/")) {
    const key = raw.replaceAll("~1", "/").replaceAll("~0", "~");
    if (!node || typeof node !== "object" || !Object.hasOwn(node, key)) return undefined;
    node = node[key];
  }
  return node;
}

describe("OpenAPI documents for client generators", () => {
  const docs = new Map<Document, UncheckedJson>();

  before(
    async () => {
      const built = await buildOpenApiDocuments();
      docs.set("/v1/openapi.json", built.payments);
      docs.set("/energy/openapi.json", built.energy);
    },
    { timeout: 180_000 },
  );

  for (const path of Object.keys(PUBLIC) as Document[]) {
    it(`${path}: every operation and webhook has an operationId, unique in the document, usable as a method name`, () => {
      const doc = docs.get(path);
      const operations = operationsOf(doc);
      assert.ok(operations.filter((o) => !o.webhook).length >= (path === "/v1/openapi.json" ? 38 : 10), "every route is listed");
      const missing = operations.filter((o) => typeof o.operation.operationId !== "string").map((o) => o.key);
      assert.deepEqual(missing, [], "operations without an operationId");
      const byId = new Map<string, string[]>();
      for (const o of operations) byId.set(o.operation.operationId, [...(byId.get(o.operation.operationId) ?? []), o.key]);
      const duplicates = [...byId].filter(([, keys]) => keys.length > 1);
      assert.deepEqual(duplicates, [], "operationIds used more than once");
      // lowerCamelCase, starting with a verb-like word: a valid identifier in every language a generator emits.
      const unfit = operations.map((o) => o.operation.operationId as string).filter((id) => !/^[a-z][a-z]*(?:[A-Z][a-z0-9]*)*$/.test(id));
      assert.deepEqual(unfit, [], "operationIds that are not lowerCamelCase");
    });

    it(`${path}: every public operation has security: [], and only those`, () => {
      const doc = docs.get(path);
      const operations = operationsOf(doc).filter((o) => !o.webhook);
      const keys = new Set(operations.map((o) => o.key));
      for (const key of PUBLIC[path]) assert.ok(keys.has(key), `${key} is documented`);
      const publicOps = new Set<string>(PUBLIC[path]);
      for (const o of operations) {
        if (publicOps.has(o.key)) assert.deepEqual(o.operation.security, [], `${o.key} is public: security []`);
        else {
          assert.ok(Array.isArray(o.operation.security) && o.operation.security.length > 0, `${o.key} names the credentials it takes`);
          for (const requirement of o.operation.security) {
            for (const scheme of Object.keys(requirement)) {
              assert.ok(doc.components?.securitySchemes?.[scheme], `${o.key}: security scheme ${scheme} is defined`);
            }
          }
        }
      }
    });

    it(`${path}: every $ref resolves`, () => {
      const doc = docs.get(path);
      const refs = refsOf(doc);
      assert.ok(refs.length > 0, "the document uses $refs");
      const broken = refs.filter(({ ref }) => resolve(doc, ref) === undefined).map(({ ref, where }) => `${where}: ${ref}`);
      assert.deepEqual(broken, [], "$refs that resolve to nothing");
    });
  }

  it("/v1/openapi.json documents every webhook event of the catalogue, each with its own operationId", () => {
    const webhooks = operationsOf(docs.get("/v1/openapi.json")).filter((o) => o.webhook);
    assert.deepEqual(webhooks.map((o) => o.key.replace(/^POST /, "")).sort(), Object.keys(EVENT_CATALOGUE).sort());
    assert.equal(webhooks.find((o) => o.key === "POST payment.succeeded")?.operation.operationId, "receivePaymentSucceededEvent");
  });
});
