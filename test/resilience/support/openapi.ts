// The relayer's two interfaces as their OpenAPI documents describe them: every operation (method, path,
// parameters, body, security), schemas with their $refs resolved, values that satisfy a schema, and whether
// a value surely breaks one. The resilience suite builds its requests from these, so a route added to either
// document is covered without editing the tests.
import type { UncheckedJson } from "../../support/unchecked-json.ts";

export type Api = "payments" | "energy";
/** A schema of an OpenAPI document, as parsed from its JSON. */
export type Schema = { [key: string]: UncheckedJson };
export type Param = { name: string; in: "path" | "query" | "header"; required: boolean; schema: Schema };

export type Operation = {
  api: Api;
  /** "POST /v1/quote" */
  id: string;
  method: string;
  /** The interface's base path ("/v1", "/energy/v1"), from the document's server URL. */
  base: string;
  /** The documented path, relative to the base ("/orders/{id}"). */
  path: string;
  params: Param[];
  body?: { contentType: string; schema: Schema; required: boolean };
  /** Security schemes that each give access ([]: public). */
  security: string[];
  /** The roles of the `apiKey` requirement (any one of them gives access; [] when it has none). */
  apiKeyRoles: string[];
  /** The success answer is an event stream. */
  stream: boolean;
  responses: string[];
};

export type ApiDocs = { payments: UncheckedJson; energy: UncheckedJson; operations: Operation[] };

/** Where each interface serves its document. */
export const DOCUMENTS: Record<Api, string> = { payments: "/v1/openapi.json", energy: "/energy/openapi.json" };

export async function loadApiDocs(relayerUrl: string): Promise<ApiDocs> {
  const docs = {} as Record<Api, UncheckedJson>;
  for (const api of Object.keys(DOCUMENTS) as Api[]) {
    const response = await fetch(`${relayerUrl}${DOCUMENTS[api]}`);
    if (!response.ok) throw new Error(`${DOCUMENTS[api]} answered ${response.status}`);
    docs[api] = await response.json();
  }
  const operations = (Object.keys(docs) as Api[]).flatMap((api) => operationsOf(api, docs[api]));
  return { payments: docs.payments, energy: docs.energy, operations };
}

const METHODS = ["get", "post", "put", "patch", "delete"];

function operationsOf(api: Api, doc: UncheckedJson): Operation[] {
  const base = new URL(doc.servers[0].url).pathname.replace(/\/$/, "");
  const out: Operation[] = [];
  for (const [path, item] of Object.entries(doc.paths as Record<string, Record<string, UncheckedJson>>)) {
    for (const method of METHODS) {
      const op = item[method];
      if (!op) continue;
      const params: Param[] = [...(item.parameters ?? []), ...(op.parameters ?? [])].map((p: UncheckedJson) => {
        const param = deref(doc, p);
        return { name: param.name, in: param.in, required: Boolean(param.required), schema: deref(doc, param.schema ?? {}) };
      });
      let body: Operation["body"];
      if (op.requestBody) {
        const requestBody = deref(doc, op.requestBody);
        const [contentType, media] = Object.entries(requestBody.content as Record<string, UncheckedJson>)[0];
        body = { contentType, schema: deref(doc, media.schema ?? {}), required: Boolean(requestBody.required) };
      }
      const requirements: Array<Record<string, string[]>> = op.security ?? doc.security ?? [];
      const security = requirements.flatMap((s) => Object.keys(s));
      const apiKeyRoles = requirements.flatMap((s) => s.apiKey ?? []);
      const ok = Object.entries(op.responses as Record<string, UncheckedJson>).find(([status]) => status.startsWith("2"));
      out.push({
        api,
        id: `${method.toUpperCase()} ${base}${path}`,
        method: method.toUpperCase(),
        base,
        path,
        params,
        body,
        security,
        apiKeyRoles,
        stream: Boolean(ok && ok[1].content?.["text/event-stream"]),
        responses: Object.keys(op.responses),
      });
    }
  }
  return out;
}

/** `value` with every $ref of `doc` resolved (the documents have no cycles). */
export function deref(doc: UncheckedJson, value: UncheckedJson, depth = 0): UncheckedJson {
  if (depth > 40) throw new Error("$ref nesting too deep");
  if (Array.isArray(value)) return value.map((v) => deref(doc, v, depth + 1));
  if (!value || typeof value !== "object") return value;
  if (typeof value.$ref === "string") {
    const target = value.$ref
      .replace(/^#\//, "")
      .split("/")
      .reduce((node: UncheckedJson, key: string) => node?.[key.replaceAll("~1", "/").replaceAll("~0", "~")], doc);
    if (target === undefined) throw new Error(`unresolved ${value.$ref}`);
    const { $ref: _ref, ...rest } = value;
    return deref(doc, { ...target, ...rest }, depth + 1);
  }
  return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, deref(doc, v, depth + 1)]));
}

/** The JSON types a schema allows (anyOf/oneOf flattened). */
export function typesOf(schema: Schema): Set<string> {
  const alternatives = schema.anyOf ?? schema.oneOf;
  if (alternatives) return new Set(alternatives.flatMap((s: Schema) => [...typesOf(s)]));
  const types = new Set<string>(Array.isArray(schema.type) ? schema.type : schema.type ? [schema.type] : []);
  if (schema.enum) for (const v of schema.enum) types.add(v === null ? "null" : Array.isArray(v) ? "array" : typeof v);
  if ("const" in schema) types.add(schema.const === null ? "null" : typeof schema.const);
  if (schema.nullable) types.add("null");
  if (types.size === 0 && schema.properties) types.add("object");
  return types;
}

/** The first non-null alternative of a schema (anyOf/oneOf), or the schema. */
export function mainSchema(schema: Schema): Schema {
  const alternatives: Schema[] | undefined = schema.anyOf ?? schema.oneOf;
  if (!alternatives) return schema;
  return (
    alternatives.find((s) => !(s.type === "null" || (Array.isArray(s.enum) && s.enum.every((v: unknown) => v === null)))) ?? alternatives[0]
  );
}

function mainType(schema: Schema): string | undefined {
  const s = mainSchema(schema);
  const types = Array.isArray(s.type) ? s.type : s.type ? [s.type] : [];
  return (
    types.find((t: string) => t !== "null") ??
    (s.properties ? "object" : s.enum ? typeof s.enum.find((v: unknown) => v !== null) : undefined)
  );
}

/** A value that satisfies `schema` (required object properties only; all of them when none is required). */
export function sampleValue(schema: Schema): unknown {
  const s = mainSchema(schema);
  if (s.example !== undefined && !violates(s, s.example)) return structuredClone(s.example);
  if ("const" in s) return s.const;
  if (Array.isArray(s.enum)) return s.enum.find((v: unknown) => v !== null) ?? null;
  if (s.default !== undefined && !violates(s, s.default)) return structuredClone(s.default);
  switch (mainType(s)) {
    case "string": {
      if (s.format === "email") return "dev@example.com";
      if (s.format === "uri" || s.format === "url") return "https://example.com/hook";
      if (s.format === "date-time") return new Date().toISOString();
      if (s.pattern) {
        const fromPattern = sampleFromPattern(s.pattern);
        if (fromPattern !== undefined) return fromPattern;
      }
      return "x".repeat(Math.max(1, s.minLength ?? 1));
    }
    case "integer":
    case "number": {
      if (typeof s.minimum === "number") return s.minimum;
      if (typeof s.exclusiveMinimum === "number") return s.exclusiveMinimum + 1;
      return typeof s.maximum === "number" ? Math.min(1, s.maximum) : 1;
    }
    case "boolean":
      return true;
    case "array":
      return Array.from({ length: Math.max(1, s.minItems ?? 1) }, () => sampleValue(s.items ?? {}));
    case "object": {
      const properties: Record<string, Schema> = s.properties ?? {};
      const required: string[] = s.required ?? [];
      const names = required.length > 0 ? required : Object.keys(properties);
      return Object.fromEntries(names.map((name) => [name, sampleValue(properties[name] ?? {})]));
    }
    default:
      return "x";
  }
}

const ISO_DATE_TIME = /^\d{4}-\d\d-\d\dT\d\d:\d\d(:\d\d(\.\d+)?)?(Z|[+-]\d\d:?\d\d)$/i;

/** Text that no string field accepts: NUL, or half of a surrogate pair (PostgreSQL stores neither). */
export function unstorable(text: string): boolean {
  return /\u0000|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/.test(text);
}

/** Whether `value` surely breaks `schema` (true only when certain: a value this calls valid may still be
 * refused by the service, never the other way round). Unstorable text breaks every string. */
export function violates(schema: Schema, value: unknown): boolean {
  const alternatives: Schema[] | undefined = schema.anyOf ?? schema.oneOf;
  if (alternatives) return alternatives.every((alternative) => violates(alternative, value));
  const s = schema;
  if ("const" in s && value !== s.const) return true;
  if (Array.isArray(s.enum) && !s.enum.some((v: unknown) => v === value)) return true;
  const types = typesOf(s);
  if (types.size === 0) return typeof value === "string" && unstorable(value);
  const kind = value === null ? "null" : Array.isArray(value) ? "array" : typeof value;
  if (kind === "number") {
    if (!Number.isFinite(value)) return true;
    if (!types.has("number") && !(types.has("integer") && Number.isInteger(value))) return true;
    if (types.has("integer") && !types.has("number") && !Number.isSafeInteger(value)) return true;
    const n = value as number;
    if (typeof s.minimum === "number" && n < s.minimum) return true;
    if (typeof s.maximum === "number" && n > s.maximum) return true;
    if (typeof s.exclusiveMinimum === "number" && n <= s.exclusiveMinimum) return true;
    if (typeof s.exclusiveMaximum === "number" && n >= s.exclusiveMaximum) return true;
    return false;
  }
  if (!types.has(kind)) return true;
  if (kind === "string") {
    const text = value as string;
    if (unstorable(text)) return true;
    if (typeof s.minLength === "number" && text.length < s.minLength) return true;
    // A string of more than twice maxLength UTF-16 units has more than maxLength code points: no need to
    // count those of a megabyte of text.
    if (typeof s.maxLength === "number" && (text.length > 2 * s.maxLength || [...text].length > s.maxLength)) return true;
    if (s.pattern && !new RegExp(s.pattern).test(text)) return true;
    if (s.format === "email" && !/^[^@\s]+@[^@\s]+$/.test(text)) return true;
    if ((s.format === "uri" || s.format === "url") && !/^[a-z][a-z0-9+.-]*:[^\s]*$/i.test(text)) return true;
    if (s.format === "date-time" && !ISO_DATE_TIME.test(text)) return true;
    return false;
  }
  if (kind === "array") {
    const items = value as unknown[];
    if (typeof s.minItems === "number" && items.length < s.minItems) return true;
    if (typeof s.maxItems === "number" && items.length > s.maxItems) return true;
    return s.items ? items.some((item) => violates(s.items, item)) : false;
  }
  if (kind === "object") {
    const object = value as Record<string, unknown>;
    const properties: Record<string, Schema> = s.properties ?? {};
    if ((s.required ?? []).some((name: string) => !(name in object))) return true;
    for (const [name, v] of Object.entries(object)) {
      if (properties[name]) {
        if (violates(properties[name], v)) return true;
      } else if (s.additionalProperties === false) return true;
    }
    return false;
  }
  return false;
}

/** A string matching a regular expression of the documents' kind (literals, classes, escapes, groups with
 * alternatives, quantifiers): the shortest one, with the first character of each class. */
export function sampleFromPattern(pattern: string): string | undefined {
  let i = 0;
  const src = pattern;
  const escape = (): string => {
    const c = src[i + 1];
    i += 2;
    if (c === "d") return "0";
    if (c === "w") return "a";
    if (c === "s") return " ";
    if (c === "x") {
      const hex = src.slice(i, i + 2);
      i += 2;
      return String.fromCharCode(parseInt(hex, 16));
    }
    if (c === "u") {
      const hex = src.slice(i, i + 4);
      i += 4;
      return String.fromCharCode(parseInt(hex, 16));
    }
    return c;
  };
  const charClass = (): string => {
    i++; // [
    if (src[i] === "^") throw new Error("negated class");
    const first = src[i] === "\\" ? escape() : src[i++];
    while (i < src.length && src[i] !== "]") {
      if (src[i] === "\\") i += 2;
      else i++;
    }
    i++; // ]
    return first;
  };
  const sequence = (): string => {
    let out = "";
    while (i < src.length && src[i] !== "|" && src[i] !== ")") {
      const c = src[i];
      let atom: string;
      if (c === "^" || c === "$") {
        i++;
        continue;
      }
      if (c === "(") {
        i++;
        if (src.startsWith("?:", i)) i += 2;
        atom = alternatives();
        i++; // )
      } else if (c === "[") atom = charClass();
      else if (c === "\\") atom = escape();
      else if (c === ".") {
        i++;
        atom = "a";
      } else {
        i++;
        atom = c;
      }
      let count = 1;
      if (src[i] === "*" || src[i] === "?") {
        count = 0;
        i++;
      } else if (src[i] === "+") i++;
      else if (src[i] === "{") {
        const m = /^\{(\d+)(,\d*)?\}/.exec(src.slice(i));
        if (m) {
          count = Number(m[1]);
          i += m[0].length;
        }
      }
      if (src[i] === "?") i++;
      out += atom.repeat(count);
    }
    return out;
  };
  const alternatives = (): string => {
    const first = sequence();
    while (src[i] === "|") {
      i++;
      sequence();
    }
    return first;
  };
  try {
    const sample = alternatives();
    return new RegExp(pattern).test(sample) ? sample : undefined;
  } catch {
    return undefined;
  }
}

/** The operation that `method` on the (normalised) `path` reaches, with its path parameters (decoded). */
export function matchOperation(
  operations: Operation[],
  method: string,
  path: string,
): { op: Operation; params: Record<string, string> } | undefined {
  for (const op of operations) {
    if (op.method !== method) continue;
    const names: string[] = [];
    const source = `${op.base}${op.path}`
      .split(/(\{[^}]+\})/)
      .map((part) => {
        const m = /^\{([^}]+)\}$/.exec(part);
        if (!m) return part.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
        names.push(m[1]);
        return "([^/]+)";
      })
      .join("");
    const m = new RegExp(`^${source}$`).exec(path);
    if (!m) continue;
    const params: Record<string, string> = {};
    names.forEach((name, k) => {
      try {
        params[name] = decodeURIComponent(m[k + 1]);
      } catch {
        params[name] = m[k + 1];
      }
    });
    return { op, params };
  }
  return undefined;
}

/** `path` as any HTTP client and the relayer see it: dot segments resolved (percent-encoded ones too). */
export function normalisePath(rawPath: string): string {
  try {
    return new URL(rawPath, "http://relayer.invalid").pathname;
  } catch {
    return rawPath.split("?")[0];
  }
}
