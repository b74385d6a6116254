// One representation per concept (relayer/src/representation.ts, docs/payment-service.md "Representation"):
// every response schema and every webhook payload of each OpenAPI document is walked, and a field name that
// has two different shapes anywhere in the same document fails - `grossUsd` a number in one answer and a
// string in another, `token` an object here and an address there. Then the rules themselves: US-dollar
// fields are numbers, token amounts strings of base units, `token` is {symbol, address}, addresses are
// checksummed (the schema says so: the webhook tests parse every delivery with these schemas and the
// end-to-end tests check every /v1 answer), `leg` is the one SplitLeg enum, and every error response of /v1
// lists the codes it can carry as an enum. The documents are built in this process (scripts/openapi-documents.ts).
import assert from "node:assert/strict";
import { readFile, readdir } from "node:fs/promises";
import { before, describe, it } from "node:test";
import { type OpenApiDocumentName, buildOpenApiDocuments } from "../../scripts/openapi-documents.ts";
import { ERROR_CODES } from "../../relayer/src/http/errors.ts";
import { SPLIT_LEGS } from "../../relayer/src/representation.ts";
import type { UncheckedJson } from "../support/unchecked-json.ts";

const METHODS = ["get", "put", "post", "delete", "patch"];

/** Objects whose field names are fixed by a standard, not by this service: they are not walked.
 * - EIP-712 typed data a wallet signs (PaymentDetails.order, .permit, .authorization, .permit2): their messages
 *   mirror the Solidity structs (PaymentRouter.PaymentOrder; EIP-2612's Permit; EIP-3009's
 *   ReceiveWithAuthorization; Permit2's PermitWitnessTransferFrom with the PaymentOrder as its witness),
 *   whose member names and ABI types (`token` an address, `value`, `deadline` uint256 as decimal strings) are
 *   what the signature covers: renamed or reshaped, the signature would not verify. */
const NOT_WALKED = [/^PaymentDetails\.(order|permit|authorization|permit2)$/];

/** Fields allowed a shape of their own, by path, each with the reason: only where a specification fixes a
 * field's name and shape, and only as far as a conflict needs (an allowed path's shape is not compared, so an entry that no
 * longer needs to be here would hide the next field that takes the other shape). A field of this service's own
 * choosing that would reuse a word for another concept is named after its own concept instead
 * (`Order.settlement`, `LoginResponse.accessToken`, the sandbox's `ReadingIssue.outcome`; docs/payment-service.md,
 * "Representation"): so the sandbox's BatchAccepted (`rejected` a count, `verification` an object, both the
 * interface's) needs no entry. */
const ALLOWED: Array<{ path: RegExp; why: string }> = [
  {
    path: /^\w*Event\.data$|^WebhookDeliveryDetail\.payload\.data$/,
    why:
      "the interface's delivery envelope: `data` is an object, the event's payload (its shape per event type), as the " +
      "events API's Event and a delivery's payload repeat it; the lists' `data` is their items",
  },
  {
    path: /^PublicStats\.devices\.online$/,
    why: "the interface's network statistics: devices.online is the number of devices online, where a device's `online` is a boolean",
  },
];

type Found = { shape: string; where: string };

function deref(doc: UncheckedJson, schema: UncheckedJson): { schema: UncheckedJson; name?: string } {
  let name: string | undefined;
  let s = schema;
  for (let depth = 0; s && typeof s.$ref === "string" && depth < 20; depth++) {
    name = s.$ref.split("/").pop();
    s = s.$ref
      .slice(2)
      .split("/")
      .reduce((node: UncheckedJson, key: string) => node?.[key], doc);
    assert.ok(s, `${schema.$ref} resolves`);
  }
  return { schema: s, name };
}

/** The schema with allOf merged (properties of every part; later parts win, as in an intersection of
 * the envelope with its narrowed code) and null alternatives dropped (a nullable string is a string). */
function normalise(doc: UncheckedJson, raw: UncheckedJson): { schema: UncheckedJson; name?: string } {
  const { schema, name } = deref(doc, raw);
  if (Array.isArray(schema?.allOf)) {
    const merged: UncheckedJson = { type: "object", properties: {}, required: [] };
    for (const part of schema.allOf) {
      const p = normalise(doc, part).schema;
      Object.assign(merged.properties, p.properties ?? {});
    }
    return { schema: merged, name };
  }
  const alternatives = schema?.anyOf ?? schema?.oneOf;
  if (Array.isArray(alternatives)) {
    const rest = alternatives.filter((a: UncheckedJson) => deref(doc, a).schema?.type !== "null");
    if (rest.length === 1) return normalise(doc, rest[0]);
  }
  if (Array.isArray(schema?.type)) {
    const types = schema.type.filter((t: string) => t !== "null");
    if (types.length === 1) return { schema: { ...schema, type: types[0] }, name };
  }
  return { schema, name };
}

/** A field's shape: its JSON type (integer and number apart); for an array, its items' shape. Not the
 * fields of an object (an object's fields are walked and compared by name themselves: `device` of an order
 * and of a receipt may show more or less of the device), nor enum members, patterns and descriptions (a
 * `status` of orders and of relays differ in values, not in representation); the Token's fields and `leg`'s
 * enum are checked on their own below. */
function shapeOf(doc: UncheckedJson, raw: UncheckedJson, depth = 0): string {
  const { schema } = normalise(doc, raw);
  if (!schema || depth > 8) return "any";
  const alternatives = schema.anyOf ?? schema.oneOf;
  if (Array.isArray(alternatives)) {
    return `oneOf(${alternatives
      .map((a: UncheckedJson) => shapeOf(doc, a, depth + 1))
      .sort()
      .join("|")})`;
  }
  const type = schema.type ?? (schema.properties ? "object" : schema.enum ? typeof schema.enum[0] : "any");
  if (type === "object") return "object";
  if (type === "array") return `${shapeOf(doc, schema.items ?? {}, depth + 1)}[]`;
  return type;
}

/** Every field under `raw`, with its path from `where`. */
function walk(
  doc: UncheckedJson,
  raw: UncheckedJson,
  where: string,
  visit: (name: string, schema: UncheckedJson, where: string) => void,
  depth = 0,
) {
  if (depth > 12) return;
  const { schema, name } = normalise(doc, raw);
  if (!schema) return;
  const here = name ?? where;
  const alternatives = schema.anyOf ?? schema.oneOf;
  if (Array.isArray(alternatives)) {
    for (const a of alternatives) walk(doc, a, here, visit, depth + 1);
    return;
  }
  if (schema.items) walk(doc, schema.items, here, visit, depth + 1);
  for (const [field, child] of Object.entries((schema.properties ?? {}) as Record<string, UncheckedJson>)) {
    const path = `${here}.${field}`;
    if (NOT_WALKED.some((pattern) => pattern.test(path))) continue;
    visit(field, child, path);
    walk(doc, child, path, visit, depth + 1);
  }
}

/** Whether `schema` is the /v1 error envelope (the Error component, or it narrowed by allOf). */
function isErrorEnvelope(schema: UncheckedJson): boolean {
  const ERROR = "#/components/schemas/Error";
  return schema?.$ref === ERROR || (Array.isArray(schema?.allOf) && schema.allOf.some((part: UncheckedJson) => part.$ref === ERROR));
}

/** Error answers that are not the envelope: GET /v1/health/ready's 503 is its readiness report. */
const NOT_ENVELOPES = new Set(["GET /health/ready 503"]);

/** Every response schema (every status, every media type) and every webhook's payload, with where it is;
 * `error`: an error answer (a status of 400 or more). */
function payloadsOf(doc: UncheckedJson): Array<{ where: string; schema: UncheckedJson; error: boolean }> {
  const out: Array<{ where: string; schema: UncheckedJson; error: boolean }> = [];
  for (const [path, item] of Object.entries((doc.paths ?? {}) as Record<string, UncheckedJson>)) {
    for (const method of METHODS) {
      const op = item[method];
      if (!op) continue;
      for (const [status, response] of Object.entries((op.responses ?? {}) as Record<string, UncheckedJson>)) {
        for (const [type, media] of Object.entries((deref(doc, response).schema.content ?? {}) as Record<string, UncheckedJson>)) {
          if (media.schema && type.includes("json")) {
            out.push({ where: `${method.toUpperCase()} ${path} ${status}`, schema: media.schema, error: Number(status) >= 400 });
          }
        }
      }
    }
  }
  for (const [type, item] of Object.entries((doc.webhooks ?? {}) as Record<string, UncheckedJson>)) {
    const schema = item.post?.requestBody?.content?.["application/json"]?.schema;
    if (schema) out.push({ where: `webhook ${type}`, schema, error: false });
  }
  return out;
}

/** Every field name of `doc`'s answers with the shapes it has and where each is first seen. The error
 * envelope is one shape shared by every error response (checked by the last test), not walked here: its
 * `error` object is the envelope's, where `error` in an answer is a failure's text. */
function fieldShapes(doc: UncheckedJson): Map<string, Map<string, string>> {
  const byName = new Map<string, Map<string, string>>();
  for (const payload of payloadsOf(doc).filter((p) => !isErrorEnvelope(p.schema))) {
    walk(doc, payload.schema, payload.where, (name, schema, where) => {
      if (ALLOWED.some((allowed) => allowed.path.test(where))) return;
      const shapes = byName.get(name) ?? new Map<string, string>();
      const shape = shapeOf(doc, schema);
      if (!shapes.has(shape)) shapes.set(shape, where);
      byName.set(name, shapes);
    });
  }
  return byName;
}

function fieldsNamed(doc: UncheckedJson, test: (name: string) => boolean): Array<Found & { schema: UncheckedJson }> {
  const out: Array<Found & { schema: UncheckedJson }> = [];
  for (const payload of payloadsOf(doc)) {
    walk(doc, payload.schema, payload.where, (name, schema, where) => {
      if (test(name) && !ALLOWED.some((allowed) => allowed.path.test(where)))
        out.push({ shape: shapeOf(doc, schema), where, schema: normalise(doc, schema).schema });
    });
  }
  return out;
}

describe("one representation per concept in the OpenAPI documents", () => {
  let docs: Record<OpenApiDocumentName, UncheckedJson>;
  before(
    async () => {
      docs = await buildOpenApiDocuments();
    },
    { timeout: 180_000 },
  );

  for (const name of ["payments", "energy"] as const) {
    it(`${name}: no field name has two shapes across the responses${name === "payments" ? " and webhooks" : ""}`, () => {
      const shapes = fieldShapes(docs[name]);
      assert.ok(shapes.size > (name === "payments" ? 100 : 30), `the walk finds the document's fields (${shapes.size})`);
      const conflicts = [...shapes]
        .filter(([, found]) => found.size > 1)
        .map(([field, found]) => `${field}: ${[...found].map(([shape, where]) => `${shape} (${where})`).join(" vs ")}`);
      assert.deepEqual(conflicts, [], "field names with more than one shape");
    });
  }

  it("payments: US dollars are numbers, token amounts are strings of base units", () => {
    const doc = docs.payments;
    const usd = fieldsNamed(doc, (n) => /Usd$/.test(n));
    assert.ok(usd.length >= 10, "the walk finds the US-dollar fields");
    assert.deepEqual(
      usd.filter((f) => f.shape !== "number").map((f) => `${f.where}: ${f.shape}`),
      [],
      "US-dollar fields that are not numbers",
    );
    const BASE_UNITS = new Set(["amount", "tokenAmount", "gross", "credited", "withdrawn", "claimable"]);
    const units = fieldsNamed(doc, (n) => BASE_UNITS.has(n));
    assert.ok(units.length >= 10, "the walk finds the token-amount fields");
    assert.deepEqual(
      units.filter((f) => f.shape !== "string").map((f) => `${f.where}: ${f.shape}`),
      [],
      "token amounts that are not strings",
    );
  });

  it("payments: every token is the Token component {symbol, address}, every leg the SplitLeg enum", () => {
    const doc = docs.payments;
    assert.deepEqual(Object.keys(doc.components.schemas.Token.properties).sort(), ["address", "symbol"]);
    const tokens = fieldsNamed(doc, (n) => n === "token");
    assert.ok(tokens.length >= 8, "responses and webhooks carry tokens");
    assert.deepEqual(
      tokens
        .filter(
          (f) =>
            f.shape !== "object" ||
            Object.keys(f.schema.properties ?? {})
              .sort()
              .join() !== "address,symbol",
        )
        .map((f) => `${f.where}: ${f.shape}`),
      [],
      "tokens that are not {symbol, address}",
    );
    const legs = fieldsNamed(doc, (n) => n === "leg");
    assert.ok(legs.length >= 4, "receipts, splits, the overview and the settlement webhooks carry legs");
    assert.deepEqual(
      legs.filter((f) => JSON.stringify(f.schema.enum) !== JSON.stringify(SPLIT_LEGS)).map((f) => f.where),
      [],
      "legs that are not the SplitLeg enum",
    );
  });

  it("payments: addresses in answers and webhooks are documented as EIP-55", () => {
    const doc = docs.payments;
    // An address field: a string of 0x and 40 hex digits by its pattern, or by its name.
    const NAMED = new Set(["address", "payer", "recipient", "router", "split", "assetOwner", "operator"]);
    const addresses = fieldsNamed(doc, () => true).filter(
      (f) =>
        f.shape === "string" &&
        (f.schema.pattern === "^0x[0-9a-fA-F]{40}$" || (NAMED.has(f.where.split(".").pop()!) && !/byLeg/.test(f.where))),
    );
    assert.ok(addresses.length >= 15, `the walk finds the address fields (${addresses.length})`);
    assert.deepEqual(
      [...new Set(addresses.filter((f) => !/EIP-55/.test(f.schema.description ?? "")).map((f) => f.where))],
      [],
      "address fields whose schema does not say EIP-55",
    );
  });

  it("payments: every conflict or refusal code the relayer's code throws is listed by some operation's error responses", async () => {
    const doc = docs.payments;
    const listed = new Set<string>();
    for (const payload of payloadsOf(doc).filter((p) => p.error && isErrorEnvelope(p.schema))) {
      const code = normalise(doc, normalise(doc, payload.schema).schema.properties.error).schema.properties.code;
      for (const c of code?.enum ?? []) listed.add(c);
    }
    const thrown = new Set<string>();
    for (const file of await readdir("relayer/src", { recursive: true })) {
      if (!file.endsWith(".ts") || file.startsWith("energy")) continue;
      const text = await readFile(`relayer/src/${file}`, "utf8");
      for (const match of text.matchAll(/errors\.(?:conflict|refused)\(\s*"([a-z_]+)"/g)) thrown.add(match[1]);
    }
    assert.ok(thrown.size >= 10, `codes found in the source (${[...thrown]})`);
    assert.deepEqual(
      [...thrown].filter((code) => !listed.has(code)),
      [],
      "codes thrown that no operation documents",
    );
  });

  it("payments: every error response lists the codes it can carry as an enum, each a known code; 409 says which", () => {
    const doc = docs.payments;
    const errors = payloadsOf(doc).filter((p) => p.error && !NOT_ENVELOPES.has(p.where));
    assert.ok(errors.length > 50, "the operations document their errors");
    for (const payload of errors) {
      assert.ok(isErrorEnvelope(payload.schema), `${payload.where}: the error envelope`);
      const code = normalise(doc, normalise(doc, payload.schema).schema.properties.error).schema.properties.code;
      assert.ok(Array.isArray(code?.enum) && code.enum.length > 0, `${payload.where}: error.code is an enum`);
      for (const c of code.enum) assert.ok(Object.hasOwn(ERROR_CODES, c), `${payload.where}: ${c} is a documented code`);
    }
    for (const [path, item] of Object.entries(doc.paths as Record<string, UncheckedJson>)) {
      for (const method of METHODS) {
        const conflict = item[method]?.responses?.["409"];
        if (!conflict) continue;
        assert.doesNotMatch(conflict.description, /Conflict with the resource's state/, `${method} ${path}`);
        assert.match(conflict.description, /`[a-z_]+`/, `${method} ${path}: the 409 names its codes`);
      }
    }
  });
});
