// Malformed requests for every operation of the OpenAPI documents, generated from their schemas by a seeded
// generator (same seed, same requests): each case breaks one thing of an otherwise well-formed request
// (a path parameter, a query parameter, a header, the body as a whole, one body field, the method). A case
// knows whether the document surely refuses it (`invalid`). `prepare` makes its request: an invalid case or a
// read names existing resources; a well-formed write names a resource that does not exist or, on a route
// without path parameters, is marked `mayWrite` (it may create something).
import type { RawRequest } from "./http.ts";
import {
  type Operation,
  type Param,
  type Schema,
  mainSchema,
  matchOperation,
  normalisePath,
  sampleFromPattern,
  sampleValue,
  typesOf,
  violates,
} from "./openapi.ts";

export type Case = {
  op: Operation;
  /** What is wrong with the request (for failure messages). */
  what: string;
  /** The document surely refuses it: it may name live resources, and a write must answer 4xx. */
  invalid: boolean;
  method?: string;
  /** Path parameters, raw (sent as written). */
  path?: Record<string, string>;
  /** The query string (without "?"). */
  query?: string;
  headers?: Record<string, string>;
  /** The body (replaces the template's). */
  body?: string | Buffer;
  /** Send no body at all. */
  noBody?: boolean;
  /** The content type (null: none). */
  contentType?: string | null;
  chunked?: boolean;
  /** The status this case must get, when there is only one right answer. */
  expectStatus?: number;
};

export type Context = {
  /** A value naming an existing resource for a path parameter (undefined: none known). */
  live(op: Operation, param: Param): string | undefined;
  /** The Authorization header of valid credentials for the operation (undefined: a public operation). */
  credential(op: Operation): string | undefined;
};

/** A seeded pseudo-random generator (mulberry32). */
export function seeded(seed: number) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Hostile strings, by kind. The first kind (NUL, unpaired surrogates) cannot be stored, so every field
 * refuses it; the rest are text that must stay text. */
export const HOSTILE: Record<string, string[]> = {
  unstorable: ["\u0000", "a\u0000b", "kiosk-nbo-001\u0000", "\ud800", "x\udfffy"],
  sql: ["' OR '1'='1", "1; DROP TABLE orders; --", '" OR ""="', "1' UNION SELECT NULL,NULL--", "admin'--", "'); DELETE FROM api_keys; --"],
  traversal: ["../../../../etc/passwd", "..\\..\\..\\windows\\win.ini", "....//....//etc/passwd", "/etc/passwd", "%2e%2e%2f%2e%2e%2f"],
  markup: ["<script>alert(1)</script>", '"><img src=x onerror=alert(1)>', "{{7*7}}", "${7*7}", "${jndi:ldap://127.0.0.1:9/a}"],
  shell: ["$(id)", "`id`", "; cat /etc/passwd", "| id", "&& id"],
  format: ["%s%s%s%s%s%n", "%x%x%x%x", "%d%d"],
  unicode: ["\u202eexe.txt", "😀".repeat(20), "\ufeffbom", "Ω≈ç√∫˜µ≤", "e\u0301\u0301\u0301", "\u00a0\u2028\u2029"],
  control: ["\r\n\r\nHTTP/1.1 200 OK", "\t\b\f\v", "\u001b[31mred", "line\nbreak"],
  json: ['{"$gt":""}', "[object Object]", "__proto__", "constructor", "null", "undefined", "NaN", "-1"],
};

/** Raw path segments: traversal, bad percent-encoding, separators (sent exactly as written). */
const RAW_SEGMENTS = [
  "..",
  "../..",
  "../../../../etc/passwd",
  "..%2f..%2f..%2fetc%2fpasswd",
  "%2e%2e",
  "%2e%2e%2f%2e%2e%2f%2e%2e",
  "..%5c..%5c",
  "..;",
  ".",
  "%00",
  "a%00b",
  "%zz",
  "%",
  "%E0%A4%A",
  "%C0%AE%C0%AE",
  "%252e%252e%252f",
  "a%2Fb",
  "a%3Fb%3D1",
  "%23frag",
  "%20",
  "",
  "~",
  "x".repeat(3000),
];

const JSON_SYNTAX_ERRORS = ['{', '{"a":', "[", "nul", "{'a':1}", '{"a":1,}', "NaN", '{"a":"\u0001"}', "{} {}", '{"a":1}}', "undefined", '{"a" 1}'];

const HUGE_BODY_BYTES = 3 * 1024 * 1024;

/** encodeURIComponent, also for lone surrogates (written as the invalid UTF-8 of their code unit). */
export function encodeAny(value: string): string {
  let out = "";
  for (const char of value) {
    const code = char.codePointAt(0)!;
    if (code >= 0xd800 && code <= 0xdfff) {
      out += [0xe0 | (code >> 12), 0x80 | ((code >> 6) & 0x3f), 0x80 | (code & 0x3f)]
        .map((byte) => `%${byte.toString(16).toUpperCase()}`)
        .join("");
    } else out += encodeURIComponent(char);
  }
  return out;
}

const pick = <T>(items: T[], rnd: () => number): T => items[Math.floor(rnd() * items.length)];

/** Every unstorable value, and two of each other hostile kind (chosen by `rnd`). */
function hostileSample(rnd: () => number): Array<[string, string]> {
  return Object.entries(HOSTILE).flatMap(([kind, values]): Array<[string, string]> => {
    if (kind === "unstorable") return values.map((value) => [kind, value]);
    const first = pick(values, rnd);
    const second = pick(values.filter((v) => v !== first), rnd);
    return [
      [kind, first],
      [kind, second],
    ];
  });
}

const show = (value: unknown) => {
  const text = typeof value === "string" ? JSON.stringify(value) : Buffer.isBuffer(value) ? "<bytes>" : JSON.stringify(value);
  return text.length > 60 ? `${text.slice(0, 57)}...` : text;
};

/** Every case for every operation (and the undocumented methods of each documented path). */
export function generateCases(operations: Operation[], seed = 20261101): Case[] {
  const rnd = seeded(seed);
  const cases: Case[] = [];
  for (const op of operations) {
    for (const param of op.params.filter((p) => p.in === "path")) cases.push(...pathCases(operations, op, param, rnd));
    const query = op.params.filter((p) => p.in === "query");
    for (const param of query) cases.push(...queryCases(op, param, rnd));
    cases.push(...unknownQueryCases(op));
    for (const param of op.params.filter((p) => p.in === "header")) cases.push(...headerCases(op, param, rnd));
    if (op.body) cases.push(...(isForm(op) ? formCases(op, rnd) : jsonCases(op, rnd)));
  }
  cases.push(...methodCases(operations));
  return cases;
}

function isForm(op: Operation) {
  return op.body?.contentType === "application/x-www-form-urlencoded";
}

// --- path parameters ---------------------------------------------------------------------------------

function ghostValue(param: Param): string {
  const s = mainSchema(param.schema);
  return (s.pattern && sampleFromPattern(s.pattern)) || "no-such-resource-0";
}

function pathCases(operations: Operation[], op: Operation, param: Param, rnd: () => number): Case[] {
  const values: Array<[string, string]> = RAW_SEGMENTS.map((raw) => [`raw path segment ${show(raw)}`, raw]);
  for (const [kind, value] of hostileSample(rnd)) values.push([`${kind} string ${show(value)} (encoded)`, encodeAny(value)]);
  values.push(["1,000 × é (6,000 characters encoded)", encodeURIComponent("é".repeat(1000))]);
  return values.map(([what, raw]) => {
    const substituted = `${op.base}${op.path}`.replace(/\{([^}]+)\}/g, (_, name) =>
      name === param.name ? raw : ghostValue(op.params.find((p) => p.name === name)!),
    );
    const match = matchOperation(operations, op.method, normalisePath(substituted));
    let invalid: boolean;
    if (!match) invalid = true;
    else if (match.op !== op) invalid = false;
    else {
      let decodable = true;
      try {
        decodeURIComponent(raw);
      } catch {
        decodable = false;
      }
      invalid = !decodable || violates(param.schema, match.params[param.name]);
    }
    return { op, what: `path ${param.name}: ${what}`, invalid, path: { [param.name]: raw } };
  });
}

// --- query and headers --------------------------------------------------------------------------------

function queryCases(op: Operation, param: Param, rnd: () => number): Case[] {
  const s = mainSchema(param.schema);
  const types = typesOf(s);
  const values: string[] = [];
  if (types.has("integer") || types.has("number")) {
    values.push("abc", "1.5", "-1", "0", "", "1e400", "99999999999999999999", "0x10", " 1 ", "NaN", "Infinity", "[]", "{}");
    if (typeof s.maximum === "number") values.push(String(s.maximum + 1), String(s.maximum * 1000));
    if (typeof s.minimum === "number") values.push(String(s.minimum - 1));
  } else if (types.has("boolean")) {
    values.push("maybe", "2", "");
  } else {
    values.push("", "x".repeat(3000), "NOT_A_MEMBER");
    if (Array.isArray(s.enum)) values.push(String(s.enum[0]).toUpperCase(), `${s.enum[0]} `);
    for (const [, value] of hostileSample(rnd)) values.push(value);
  }
  const cases: Case[] = values.map((value) => ({
    op,
    what: `query ${param.name}=${show(value)}`,
    invalid: queryViolates(s, value),
    query: `${encodeURIComponent(param.name)}=${encodeAny(value)}`,
  }));
  cases.push({
    op,
    what: `query ${param.name} twice`,
    invalid: true,
    query: `${param.name}=${encodeURIComponent(String(sampleValue(s)))}&${param.name}=${encodeURIComponent(String(sampleValue(s)))}`,
  });
  cases.push({ op, what: `query ${param.name}[]`, invalid: false, query: `${param.name}%5B%5D=1` });
  return cases;
}

/** Whether a query value surely breaks the schema (numbers as the service coerces them). */
function queryViolates(schema: Schema, value: string): boolean {
  const types = typesOf(schema);
  if (types.has("integer") || types.has("number")) {
    if (!/^-?\d+(\.\d+)?$/.test(value)) return true;
    return violates(schema, Number(value));
  }
  return violates(schema, value);
}

/** Unknown query parameters: refused where the operation declares its parameters, ignored elsewhere (the
 * document does not say which), so these count as well-formed. */
function unknownQueryCases(op: Operation): Case[] {
  const queries = [
    "unexpected=1",
    "__proto__=1",
    "__proto__%5Bpolluted%5D=1",
    "constructor%5Bprototype%5D%5Bpolluted%5D=1",
    "x%5B%5D=1&x%5B%5D=2",
    "%zz=1",
    "a=%zz",
    "=&&=&",
    `${"k".repeat(2000)}=v`,
    "a=%00",
    "callback=alert(1)",
  ];
  return queries.map((query) => ({ op, what: `unknown query ${show(query)}`, invalid: false, query }));
}

/** Header values: visible ASCII only (Node refuses others before sending). */
const headerSafe = (value: string) => /^[\x20-\x7e]*$/.test(value);

function headerCases(op: Operation, param: Param, rnd: () => number): Case[] {
  const s = mainSchema(param.schema);
  const values = ["", " ", "x".repeat(Math.min(6000, (s.maxLength ?? 300) + 1)), "x".repeat(6000), "-1", "1.5", "99999999999999999999999"];
  for (const [, value] of hostileSample(rnd)) if (headerSafe(value)) values.push(value);
  return values.map((value) => ({
    op,
    what: `header ${param.name}: ${show(value)}`,
    invalid: violates(s, value),
    headers: { [param.name]: value },
  }));
}

// --- JSON bodies -------------------------------------------------------------------------------------

const RAW = "\u0001raw\u0001";

/** `root` as JSON with the value at `path` replaced (or deleted with `del`); `rawToken` is written into the
 * JSON text as is (a number JSON.stringify cannot produce). */
function withField(root: unknown, path: Array<string | number>, value: unknown, opts: { del?: boolean; rawToken?: string } = {}): string {
  const copy = structuredClone(root) as any;
  let node = copy;
  for (const key of path.slice(0, -1)) node = node[key];
  const last = path[path.length - 1];
  if (opts.del) {
    if (Array.isArray(node)) node.splice(Number(last), 1);
    else delete node[last];
  } else node[last] = opts.rawToken ? RAW : value;
  const text = JSON.stringify(copy);
  return opts.rawToken ? text.replace(JSON.stringify(RAW), opts.rawToken) : text;
}

function getField(root: unknown, path: Array<string | number>) {
  return path.reduce((node: any, key) => node?.[key], root);
}

function jsonCases(op: Operation, rnd: () => number): Case[] {
  const body = op.body!;
  const schema = mainSchema(body.schema);
  const root = sampleValue(schema);
  const template = JSON.stringify(root);
  const strict = schema.additionalProperties === false;
  const cases: Case[] = [];
  const add = (what: string, invalid: boolean, extra: Partial<Case>) => cases.push({ op, what: `body: ${what}`, invalid, ...extra });

  for (const text of JSON_SYNTAX_ERRORS) add(`not JSON ${show(text)}`, true, { body: text });
  add("invalid UTF-8", true, { body: Buffer.from([0x7b, 0x22, 0xff, 0xfe, 0x22, 0x3a, 0x31, 0x7d]) });
  for (const text of ["null", "[]", '"text"', "123", "true", `[${template}]`]) {
    add(`JSON ${show(text)} instead of an object`, violates(schema, JSON.parse(text)), { body: text });
  }
  add("empty", true, { body: "" });
  add("absent", body.required, { noBody: true, contentType: null });
  for (const type of [null, "text/plain", "application/xml", "multipart/form-data; boundary=zzz", "application/x-www-form-urlencoded", "text/json", "application/jsonx", "application/json; charset=utf-16"]) {
    // A charset parameter does not change the media type: that request is well-formed.
    const wellFormed = type !== null && type.startsWith("application/json;");
    add(`content type ${type ?? "(none)"}`, body.required && !wellFormed, { body: template, contentType: type });
  }
  const first = typeof root === "object" && root && !Array.isArray(root) ? Object.keys(root)[0] : undefined;
  const withExtra = (prefix: string) => (first ? template.replace(/^\{/, `{${prefix},`) : `{${prefix}}`);
  const deep = `${"[".repeat(20_000)}${"]".repeat(20_000)}`;
  add("20,000-deep array in an unknown field", strict, { body: withExtra(`"nested":${deep}`) });
  const many = Array.from({ length: 3000 }, (_, i) => `"k${i}":${i}`).join(",");
  add("3,000 unknown fields", strict, { body: withExtra(many) });
  add("__proto__ field", strict, { body: withExtra('"__proto__":{"polluted":true,"isAdmin":true}') });
  add("constructor.prototype field", strict, { body: withExtra('"constructor":{"prototype":{"polluted":true}}') });
  if (first) {
    const fieldSchema = schema.properties?.[first] ?? {};
    add(`duplicate ${first}, the second an object`, violates(fieldSchema, { dup: true }), {
      body: template.replace(/\}$/, `,"${first}":{"dup":true}}`),
    });
  }
  const huge = `{"pad":"${"x".repeat(HUGE_BODY_BYTES)}"}`;
  add("3 MiB (content-length)", true, { body: huge, expectStatus: 413 });
  add("3 MiB (chunked)", true, { body: huge, chunked: true, expectStatus: 413 });

  walk(schema, [], (path, fieldSchema, required) => {
    const label = path.join(".");
    const field = (what: string, value: unknown, opts: { del?: boolean; rawToken?: string; invalid?: boolean } = {}) => {
      const text = withField(root, path, value, opts);
      const invalid = opts.invalid ?? violates(schema, JSON.parse(text));
      add(`${label} ${what}`, invalid, { body: text });
    };
    if (required) field("missing", undefined, { del: true });
    const s = mainSchema(fieldSchema);
    const types = typesOf(fieldSchema);
    for (const value of [null, "text", 12345, 1.5, true, [], {}, [1, "a"]]) {
      if (violates(fieldSchema, value)) field(`= ${show(value)}`, value);
    }
    if (types.has("string")) {
      if ((s.minLength ?? 0) > 0) field('= ""', "");
      if (typeof s.maxLength === "number" && s.maxLength < 100_000) field(`${s.maxLength + 1} characters`, "y".repeat(s.maxLength + 1));
      field("50,000 characters", "z".repeat(50_000));
      if (Array.isArray(s.enum)) {
        field("not a member", "NOT_A_MEMBER");
        const member = s.enum.find((v: unknown) => typeof v === "string");
        if (member) field("a member in upper case", member.toUpperCase() === member ? `${member}X` : member.toUpperCase());
      }
      if (s.format === "date-time") for (const v of ["yesterday", "2026-13-45T99:99:99Z", "1700000000", "2026-02-30T00:00:00Z"]) field(`= ${show(v)}`, v);
      if (s.format === "email") for (const v of ["not-an-email", "a@", "@b", "a@b@c"]) field(`= ${show(v)}`, v);
      if (s.format === "uri" || s.format === "url") {
        for (const v of ["not a uri", "javascript:alert(1)", "file:///etc/passwd", "http://[::1", "//no-scheme"]) field(`= ${show(v)}`, v);
      }
      for (const [kind, value] of hostileSample(rnd)) field(`${kind} string ${show(value)}`, value);
    }
    if (types.has("integer") || types.has("number")) {
      const numbers: number[] = [-1, 0, 1e308, -1e308];
      if (typeof s.minimum === "number") numbers.push(s.minimum - 1);
      if (typeof s.exclusiveMinimum === "number") numbers.push(s.exclusiveMinimum);
      if (typeof s.maximum === "number") numbers.push(s.maximum + 1);
      if (types.has("integer") && !types.has("number")) numbers.push(2.5);
      for (const n of numbers) if (violates(fieldSchema, n)) field(`= ${n}`, n);
      for (const token of ["1e400", "-1e400", "9007199254740993", "-0", "1E2", "0.0000001"]) {
        const value = Number(token);
        field(`= ${token} (as written)`, value, { rawToken: token, invalid: violates(fieldSchema, value) });
      }
    }
    if (types.has("array")) {
      const current = getField(root, path) as unknown[];
      if ((s.minItems ?? 0) > 0) field("= []", []);
      if (typeof s.maxItems === "number" && s.maxItems <= 5_000) field(`${s.maxItems + 1} items`, Array.from({ length: s.maxItems + 1 }, () => current[0]));
    }
    if (types.has("object") && s.additionalProperties === false) field("with an unknown field", { ...(getField(root, path) as object), unexpected: 1 });
  });
  return cases;
}

/** Calls `visit` for every field of an object schema, nested objects and the first item of arrays
 * included (the template has one item). */
function walk(schema: Schema, path: Array<string | number>, visit: (path: Array<string | number>, schema: Schema, required: boolean) => void) {
  const s = mainSchema(schema);
  const properties: Record<string, Schema> = s.properties ?? {};
  for (const [name, fieldSchema] of Object.entries(properties)) {
    const fieldPath = [...path, name];
    const required = (s.required ?? []).includes(name);
    visit(fieldPath, fieldSchema, required);
    const inner = mainSchema(fieldSchema);
    if (inner.properties && required) walk(inner, fieldPath, visit);
    if (inner.items && required) {
      visit([...fieldPath, 0], inner.items, true);
      if (mainSchema(inner.items).properties) walk(inner.items, [...fieldPath, 0], visit);
    }
  }
}

// --- form bodies -------------------------------------------------------------------------------------

function formCases(op: Operation, rnd: () => number): Case[] {
  const schema = mainSchema(op.body!.schema);
  const root = sampleValue(schema) as Record<string, string>;
  const encode = (fields: Array<[string, string]>) => fields.map(([k, v]) => `${encodeAny(k)}=${encodeAny(v)}`).join("&");
  const template = encode(Object.entries(root));
  const cases: Case[] = [];
  const add = (what: string, invalid: boolean, extra: Partial<Case>) => cases.push({ op, what: `form: ${what}`, invalid, ...extra });
  add("a JSON body", true, { body: JSON.stringify(root) });
  add("JSON content type", true, { body: JSON.stringify(root), contentType: "application/json" });
  add("text/plain", true, { body: template, contentType: "text/plain" });
  add("multipart", true, { body: `--zzz\r\nContent-Disposition: form-data; name="grant_type"\r\n\r\nx\r\n--zzz--\r\n`, contentType: "multipart/form-data; boundary=zzz" });
  add("no content type", true, { body: template, contentType: null });
  add("empty", true, { body: "" });
  add("absent", true, { noBody: true, contentType: null });
  add("malformed percent-encoding", true, { body: "%&%zz=%&=&&" });
  add("3 MiB (content-length)", true, { body: `${template}&pad=${"x".repeat(HUGE_BODY_BYTES)}`, expectStatus: 413 });
  add("3 MiB (chunked)", true, { body: `${template}&pad=${"x".repeat(HUGE_BODY_BYTES)}`, chunked: true, expectStatus: 413 });
  for (const [name, fieldSchema] of Object.entries((schema.properties ?? {}) as Record<string, Schema>)) {
    const others = Object.entries(root).filter(([k]) => k !== name);
    const required = (schema.required ?? []).includes(name);
    const field = (what: string, fields: Array<[string, string]>, invalid: boolean) => add(`${name} ${what}`, invalid, { body: encode(fields) });
    if (required) field("missing", others, true);
    field("twice", [...others, [name, root[name] ?? "a"], [name, root[name] ?? "b"]], true);
    field("as name[]", [...others, [`${name}[]`, root[name] ?? "a"]], required);
    const values = ["", "x".repeat(((mainSchema(fieldSchema).maxLength as number | undefined) ?? 300) + 1), ...hostileSample(rnd).map(([, v]) => v)];
    for (const value of values) field(`= ${show(value)}`, [...others, [name, value]], violates(fieldSchema, value));
  }
  return cases;
}

// --- methods -----------------------------------------------------------------------------------------

function methodCases(operations: Operation[]): Case[] {
  const byPath = new Map<string, Operation[]>();
  for (const op of operations) byPath.set(`${op.base}${op.path}`, [...(byPath.get(`${op.base}${op.path}`) ?? []), op]);
  const cases: Case[] = [];
  for (const ops of byPath.values()) {
    const documented = new Set(ops.map((op) => op.method));
    for (const method of ["GET", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"]) {
      if (documented.has(method)) continue;
      cases.push({ op: ops[0], what: `method ${method}`, invalid: true, method, body: method === "GET" || method === "OPTIONS" ? undefined : "{}", expectStatus: 404 });
    }
  }
  return cases;
}

// --- requests ----------------------------------------------------------------------------------------

export type Prepared = {
  request: RawRequest;
  /** live: path parameters name existing resources; ghost: resources that do not exist. */
  template: "live" | "ghost";
  anonymous: boolean;
  /** A write the document may accept (a well-formed request with hostile text): it may create something. */
  mayWrite: boolean;
};

/** The request of a case, with credentials unless `anonymous`. Invalid cases and reads name existing
 * resources; a well-formed write names a resource that does not exist, or, for a route without path
 * parameters, is marked `mayWrite`. */
export function prepare(c: Case, ctx: Context, opts: { anonymous: boolean }): Prepared {
  const { op } = c;
  const method = c.method ?? op.method;
  const reads = method === "GET" || method === "OPTIONS";
  const pathParams = op.params.filter((p) => p.in === "path");
  let template: "live" | "ghost" = "live";
  let mayWrite = false;
  if (!c.invalid && !reads) {
    if (pathParams.some((p) => !c.path?.[p.name])) template = "ghost";
    else mayWrite = true;
  }

  const path = `${op.base}${op.path}`.replace(/\{([^}]+)\}/g, (_, name: string) => {
    if (c.path?.[name] !== undefined) return c.path[name];
    const param = pathParams.find((p) => p.name === name)!;
    const live = template === "live" ? ctx.live(op, param) : undefined;
    return live !== undefined ? encodeURIComponent(live) : ghostValue(param);
  });
  const headers: Record<string, string> = { ...c.headers };
  const credential = ctx.credential(op);
  if (credential && !opts.anonymous) headers.authorization = credential;

  let body: string | Buffer | undefined;
  let contentType: string | null | undefined;
  if (!c.noBody) {
    if (c.body !== undefined) body = c.body;
    else if (op.body && !c.method) {
      const sample = sampleValue(op.body.schema);
      body = isForm(op)
        ? new URLSearchParams(Object.entries(sample as Record<string, string>)).toString()
        : JSON.stringify(sample);
    }
    contentType = c.contentType !== undefined ? c.contentType : body !== undefined ? (op.body?.contentType ?? "application/json") : null;
  }
  if (contentType) headers["content-type"] = contentType;
  return {
    request: { method, path: c.query !== undefined ? `${path}?${c.query}` : path, headers, body, chunked: c.chunked },
    template,
    anonymous: opts.anonymous,
    mayWrite: mayWrite && !(opts.anonymous && op.security.length > 0),
  };
}
