// Malformed requests for every operation of the OpenAPI documents, generated from their schemas by a seeded
// generator (same seed, same requests): each case breaks one thing of an otherwise well-formed request
// (a path parameter, a query parameter, a header, the body as a whole, one body field, the method). A case
// knows whether the document surely refuses it (`invalid`). `prepare` makes its request: an invalid case or a
// read names existing resources; a well-formed write names a resource that does not exist or, on a route
// without path parameters, is marked `mayWrite` (it may create something).
//
// Besides wrong types, missing and unknown fields and hostile text, every operation gets the classes of input
// that broke the service before, so they cannot come back unnoticed: names every object inherits
// (`constructor`, `__proto__`, ...) in every string field, path, query and header parameter; date-times and
// numbers at and beyond the edges of what a Date, a double, an int4 or an int8 holds in every date-time and
// number field; and pathological text as large as the body limit allows (up to 1 MiB) in every string field
// and as the body itself (a backslash run after `\u`, long runs of one character, 10,000-deep and
// body-deep nesting, a key repeated to the limit), and 15,000-byte values of the headers any route may read.
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
import { seededRandom } from "../../support/seeded-random.ts";

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

/** Names every JavaScript object inherits (or that reach its prototype): as a value looked up in a plain
 * object (`prices[tier]`, `handlers[type]`) each finds something that is not an entry. Every string field,
 * path parameter, query parameter and header parameter gets each of them. */
export const INHERITED_KEYS = ["__proto__", "constructor", "prototype", "toString", "hasOwnProperty", "valueOf", "__defineGetter__"];

/** Date-times that the RFC 3339 grammar allows, or nearly, but that a database timestamp or a JavaScript
 * Date cannot hold or places elsewhere: year 0, a -23:59 offset that lands in year 10000 in UTC, the last
 * instant a Date holds written with an expanded year, one second before the Unix epoch, a leap second, and a
 * day February does not have. Every date-time field gets each of them. */
export const EXTREME_DATES = [
  "0000-01-01T00:00:00Z",
  "9999-12-31T23:59:59-23:59",
  "+275760-09-13T00:00:00Z",
  "1969-12-31T23:59:59Z",
  "2016-12-31T23:59:60Z",
  "2024-02-30T00:00:00Z",
];

/** Numbers at the edges of the types that hold them, as written in the JSON text (or the query): 2^31 and
 * -2^31-1 (int4), 2^53 and 2^53+1 (the last safe integer and beyond), 2^63 and -2^63-1 (int8), the largest
 * doubles, exponents JSON.parse turns into Infinity, negative zero, tiny and inexact fractions, an exponent
 * that is an integer. Every number and integer field gets each of them. */
export const EXTREME_NUMBERS = [
  "2147483648",
  "-2147483649",
  "9007199254740992",
  "9007199254740993",
  "9223372036854775808",
  "-9223372036854775809",
  "1e308",
  "-1e308",
  "1e999",
  "-1e999",
  "-0",
  "1e-7",
  "0.30000000000000004",
  "1E2",
];

/** Nesting depth of the deeply nested arrays and objects. */
const DEEP_LEVELS = 10_000;
const deepArray = (levels: number) => `${"[".repeat(levels)}${"]".repeat(levels)}`;
const deepObject = (levels: number) => `${'{"a":'.repeat(levels)}1${"}".repeat(levels)}`;

/** Bytes of the pathological bodies: up to the body limit of the route, and never more than 1 MiB. */
export const PATHOLOGICAL_BODY_BYTES = 1024 * 1024;

/** Strings that make a backtracking regular expression or a naive scanner take time that grows faster than
 * the text, by how each is built for `n` repetitions: a run of backslashes after `\u` (the text guard's old
 * pattern was quadratic on it: 80,000 backslashes held the event loop for about half a minute), runs of one
 * character that end in one that breaks the run (nested quantifiers such as `(a+)+$`, trimming with
 * `\s+$`, digit patterns). Sent as large as the body limit allows. */
const PATHOLOGICAL_TEXT: Array<[string, (n: number) => string]> = [
  ["\\u then backslashes", (n) => `\\u${"\\".repeat(n)}`],
  ['a run of "a" then "!"', (n) => `${"a".repeat(n)}!`],
  ["a run of spaces then x", (n) => `${" ".repeat(n)}x`],
  ['a run of "0" then x', (n) => `${"0".repeat(n)}x`],
];

/** The text `build(n)` for the largest `n` whose UTF-8 size is at most `bytes` (`build` grows linearly in n). */
function sized(build: (n: number) => string, bytes: number): string {
  const base = Buffer.byteLength(build(0));
  const step = Buffer.byteLength(build(1)) - base;
  return build(Math.max(0, Math.floor((bytes - base) / Math.max(1, step))));
}

/** Header values of this size reach the application: with the request's other headers they stay within
 * Node's limit of 16 KiB for the whole head. */
const LONG_HEADER_BYTES = 15_000;

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

const JSON_SYNTAX_ERRORS = [
  "{",
  '{"a":',
  "[",
  "nul",
  "{'a':1}",
  '{"a":1,}',
  "NaN",
  '{"a":"\u0001"}',
  "{} {}",
  '{"a":1}}',
  "undefined",
  '{"a" 1}',
];

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
    const second = pick(
      values.filter((v) => v !== first),
      rnd,
    );
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

export type GenerateOptions = {
  seed?: number;
  /** The body limit of an operation (default 1 MiB): pathological bodies are as large as it allows, up to
   * PATHOLOGICAL_BODY_BYTES. */
  bodyLimit?: (op: Operation) => number;
};

/** Every case for every operation (and the undocumented methods of each documented path). */
export function generateCases(operations: Operation[], opts: GenerateOptions = {}): Case[] {
  const rnd = seededRandom(opts.seed ?? 20261101);
  const cases: Case[] = [];
  for (const op of operations) {
    const bodyBytes = Math.min(PATHOLOGICAL_BODY_BYTES, opts.bodyLimit?.(op) ?? PATHOLOGICAL_BODY_BYTES);
    for (const param of op.params.filter((p) => p.in === "path")) cases.push(...pathCases(operations, op, param, rnd));
    const query = op.params.filter((p) => p.in === "query");
    for (const param of query) cases.push(...queryCases(op, param, rnd));
    cases.push(...unknownQueryCases(op));
    for (const param of op.params.filter((p) => p.in === "header")) cases.push(...headerCases(op, param, rnd));
    cases.push(...longHeaderCases(op));
    if (op.body) cases.push(...(isForm(op) ? formCases(op, rnd, bodyBytes) : jsonCases(op, rnd, bodyBytes)));
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
  for (const key of INHERITED_KEYS) values.push([`inherited key ${show(key)}`, encodeURIComponent(key)]);
  for (const value of extremeValues(param.schema)) values.push([`edge value ${show(value)}`, encodeURIComponent(value)]);
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
  values.push(...INHERITED_KEYS, ...extremeValues(s));
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
    ...INHERITED_KEYS.filter((key) => key !== "__proto__").map((key) => `${key}=1`),
  ];
  return queries.map((query) => ({ op, what: `unknown query ${show(query)}`, invalid: false, query }));
}

/** Header values: visible ASCII only (Node refuses others before sending). */
const headerSafe = (value: string) => /^[\x20-\x7e]*$/.test(value);

function headerCases(op: Operation, param: Param, rnd: () => number): Case[] {
  const s = mainSchema(param.schema);
  const values = ["", " ", "x".repeat(Math.min(6000, (s.maxLength ?? 300) + 1)), "x".repeat(6000), "-1", "1.5", "99999999999999999999999"];
  for (const [, value] of hostileSample(rnd)) if (headerSafe(value)) values.push(value);
  values.push(...INHERITED_KEYS, ...extremeValues(s));
  return values.map((value) => ({
    op,
    what: `header ${param.name}: ${show(value)}`,
    // The server reads the value without the spaces around it, as HTTP has it.
    invalid: violates(s, value.trim()),
    headers: { [param.name]: value },
  }));
}

/** The edge values of a schema's kind, as text (a path segment, a query or header value): out-of-range
 * date-times for a date-time, numbers at the edges of their types for a number or an integer. */
function extremeValues(schema: Schema): string[] {
  const s = mainSchema(schema);
  const types = typesOf(s);
  if (s.format === "date-time") return EXTREME_DATES;
  if (types.has("integer") || types.has("number")) return EXTREME_NUMBERS;
  return [];
}

/** Headers that any route may read, whether or not its document names them: credentials, the request id,
 * an event stream's resume point, an idempotency key, the body's media type. */
const LONG_HEADERS = ["authorization", "x-request-id", "last-event-id", "idempotency-key", "content-type"];

/** Each of LONG_HEADERS, LONG_HEADER_BYTES long, in the shapes of PATHOLOGICAL_TEXT that a header can carry
 * (visible ASCII and spaces), after a prefix that gets it past a first check (a scheme, a media type). */
function longHeaderCases(op: Operation): Case[] {
  const prefixes: Record<string, string> = { authorization: "Bearer ", "content-type": "application/json;" };
  const cases: Case[] = [];
  for (const name of LONG_HEADERS) {
    const prefix = prefixes[name] ?? "";
    const documented = op.params.find((p) => p.in === "header" && p.name.toLowerCase() === name);
    const values: Array<[string, string]> = PATHOLOGICAL_TEXT.filter(([, build]) => headerSafe(build(1))).map(([kind, build]) => [
      kind,
      sized((n) => `${prefix}${build(n)}`, LONG_HEADER_BYTES),
    ]);
    if (name === "content-type") values.push(["2,500 parameters", `application/json${"; a=b".repeat(2_500)}`]);
    for (const [kind, value] of values) {
      // A credential this long is no credential: a route that needs one refuses the request.
      // (The server reads the value without the spaces around it, as HTTP has it.)
      const invalid = name === "authorization" ? op.security.length > 0 : documented ? violates(documented.schema, value.trim()) : false;
      const what = `header ${name}: ${kind} (${value.length} bytes)`;
      // The content type goes where prepare() puts the body's (it would replace a header of that name).
      cases.push(name === "content-type" ? { op, what, invalid, contentType: value } : { op, what, invalid, headers: { [name]: value } });
    }
  }
  return cases;
}

// --- JSON bodies -------------------------------------------------------------------------------------

const RAW = "\u0001raw\u0001";

/** An object or an array of a JSON body, indexed by one step of a path. */
type JsonContainer = Record<string | number, unknown>;

/** `root` as JSON with the value at `path` replaced (or deleted with `del`); `rawToken` is written into the
 * JSON text as is (a number JSON.stringify cannot produce). */
function withField(root: unknown, path: Array<string | number>, value: unknown, opts: { del?: boolean; rawToken?: string } = {}): string {
  const copy = structuredClone(root);
  let node = copy as JsonContainer;
  for (const key of path.slice(0, -1)) node = node[key] as JsonContainer;
  const last = path[path.length - 1];
  if (opts.del) {
    if (Array.isArray(node)) node.splice(Number(last), 1);
    else delete node[last];
  } else node[last] = opts.rawToken ? RAW : value;
  const text = JSON.stringify(copy);
  return opts.rawToken ? text.replace(JSON.stringify(RAW), opts.rawToken) : text;
}

function getField(root: unknown, path: Array<string | number>) {
  return path.reduce<unknown>((node, key) => (node as JsonContainer | undefined)?.[key], root);
}

function jsonCases(op: Operation, rnd: () => number, bodyBytes: number): Case[] {
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
  for (const type of [
    null,
    "text/plain",
    "application/xml",
    "multipart/form-data; boundary=zzz",
    "application/x-www-form-urlencoded",
    "text/json",
    "application/jsonx",
    "application/json; charset=utf-16",
  ]) {
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
  for (const key of INHERITED_KEYS) add(`inherited key ${show(key)} as a field`, strict, { body: withExtra(`${JSON.stringify(key)}:"x"`) });

  // The body as a whole, pathological and as large as the route's limit allows.
  const large = (what: string, build: (n: number) => string, invalid?: boolean) => {
    const text = sized(build, bodyBytes);
    const refused = (): boolean => {
      try {
        return violates(schema, JSON.parse(text));
      } catch {
        return true;
      }
    };
    add(`${what} (${text.length.toLocaleString("en")} bytes)`, invalid ?? refused(), { body: text });
  };
  large("not JSON: \\u then backslashes", (n) => `{"${first ?? "x"}":"\\u${"\\".repeat(n)}"}`, true);
  large("the template after a run of spaces", (n) => `${" ".repeat(n)}${template}`);
  large("the template after a run of mixed whitespace", (n) => `${" \t\r\n".repeat(n)}${template}`);
  add(`${DEEP_LEVELS.toLocaleString("en")} nested arrays`, true, { body: deepArray(DEEP_LEVELS) });
  add(`${DEEP_LEVELS.toLocaleString("en")} nested objects`, violates(schema, { a: 1 }), { body: deepObject(DEEP_LEVELS) });
  large("nested arrays", (n) => deepArray(n), true);
  large("nested objects", (n) => deepObject(n), violates(schema, { a: 1 }));
  if (first)
    large(
      `${first} repeated`,
      (n) => `{${`${JSON.stringify(first)}:${JSON.stringify((root as JsonContainer)[first])},`.repeat(n)}${template.slice(1)}`,
    );
  large("__proto__ repeated", (n) => `{${'"__proto__":{"polluted":true},'.repeat(n)}${template.slice(1)}`, strict);
  // Fixed-width names, so that the size grows linearly: k0000, k0001, ... (base 36).
  const names = (n: number) => Array.from({ length: n }, (_, i) => `"k${i.toString(36).padStart(4, "0")}":0,`).join("");
  large("distinct unknown fields", (n) => `{${names(n)}${template.slice(1)}`, strict);

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
      if (s.format === "date-time")
        for (const v of ["yesterday", "2026-13-45T99:99:99Z", "1700000000", "2026-02-30T00:00:00Z"]) field(`= ${show(v)}`, v);
      if (s.format === "email") for (const v of ["not-an-email", "a@", "@b", "a@b@c"]) field(`= ${show(v)}`, v);
      if (s.format === "uri" || s.format === "url") {
        for (const v of ["not a uri", "javascript:alert(1)", "file:///etc/passwd", "http://[::1", "//no-scheme"]) field(`= ${show(v)}`, v);
      }
      for (const [kind, value] of hostileSample(rnd)) field(`${kind} string ${show(value)}`, value);
      for (const key of INHERITED_KEYS) field(`= inherited key ${show(key)}`, key);
      if (s.format === "date-time") for (const v of EXTREME_DATES) field(`= ${show(v)}`, v);
      for (const [kind, build] of PATHOLOGICAL_TEXT) {
        const text = sized((n) => withField(root, path, build(n)), bodyBytes);
        add(`${label} ${kind} (${text.length.toLocaleString("en")} bytes)`, violates(schema, JSON.parse(text)), { body: text });
      }
      field(`= ${DEEP_LEVELS.toLocaleString("en")} nested arrays`, undefined, {
        rawToken: deepArray(DEEP_LEVELS),
        invalid: !types.has("array"),
      });
      field(`= ${DEEP_LEVELS.toLocaleString("en")} nested objects`, undefined, {
        rawToken: deepObject(DEEP_LEVELS),
        invalid: !types.has("object"),
      });
    }
    if (types.has("integer") || types.has("number")) {
      const numbers: number[] = [-1, 0, 1e308, -1e308];
      if (typeof s.minimum === "number") numbers.push(s.minimum - 1);
      if (typeof s.exclusiveMinimum === "number") numbers.push(s.exclusiveMinimum);
      if (typeof s.maximum === "number") numbers.push(s.maximum + 1);
      if (types.has("integer") && !types.has("number")) numbers.push(2.5);
      for (const n of numbers) if (violates(fieldSchema, n)) field(`= ${n}`, n);
      for (const token of new Set([...EXTREME_NUMBERS, "1e400", "-1e400", "0.0000001"])) {
        const value = Number(token);
        field(`= ${token} (as written)`, value, { rawToken: token, invalid: violates(fieldSchema, value) });
      }
    }
    if (types.has("array")) {
      const current = getField(root, path) as unknown[];
      if ((s.minItems ?? 0) > 0) field("= []", []);
      if (typeof s.maxItems === "number" && s.maxItems <= 5_000)
        field(
          `${s.maxItems + 1} items`,
          Array.from({ length: s.maxItems + 1 }, () => current[0]),
        );
    }
    if (types.has("object") && s.additionalProperties === false)
      field("with an unknown field", { ...(getField(root, path) as object), unexpected: 1 });
  });
  return cases;
}

/** Calls `visit` for every field of an object schema, nested objects and the first item of arrays
 * included (the template has one item). */
function walk(
  schema: Schema,
  path: Array<string | number>,
  visit: (path: Array<string | number>, schema: Schema, required: boolean) => void,
) {
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

function formCases(op: Operation, rnd: () => number, bodyBytes: number): Case[] {
  const schema = mainSchema(op.body!.schema);
  const root = sampleValue(schema) as Record<string, string>;
  const encode = (fields: Array<[string, string]>) => fields.map(([k, v]) => `${encodeAny(k)}=${encodeAny(v)}`).join("&");
  const template = encode(Object.entries(root));
  const cases: Case[] = [];
  const add = (what: string, invalid: boolean, extra: Partial<Case>) => cases.push({ op, what: `form: ${what}`, invalid, ...extra });
  add("a JSON body", true, { body: JSON.stringify(root) });
  add("JSON content type", true, { body: JSON.stringify(root), contentType: "application/json" });
  add("text/plain", true, { body: template, contentType: "text/plain" });
  add("multipart", true, {
    body: `--zzz\r\nContent-Disposition: form-data; name="grant_type"\r\n\r\nx\r\n--zzz--\r\n`,
    contentType: "multipart/form-data; boundary=zzz",
  });
  add("no content type", true, { body: template, contentType: null });
  add("empty", true, { body: "" });
  add("absent", true, { noBody: true, contentType: null });
  add("malformed percent-encoding", true, { body: "%&%zz=%&=&&" });
  // The body as a whole, pathological and as large as the route's limit allows; unknown fields are ignored.
  const large = (what: string, build: (n: number) => string, invalid: boolean) => {
    const text = sized(build, bodyBytes);
    add(`${what} (${text.length.toLocaleString("en")} bytes)`, invalid, { body: text });
  };
  const first = Object.keys(root)[0];
  large(`${first} repeated`, (n) => `${template}${`&${encodeAny(first)}=${encodeAny(root[first])}`.repeat(n)}`, true);
  large(
    "distinct unknown fields",
    (n) => `${template}${Array.from({ length: n }, (_, i) => `&k${i.toString(36).padStart(4, "0")}=1`).join("")}`,
    false,
  );
  large("a key nested in brackets", (n) => `${template}&a${"%5Ba%5D".repeat(n)}=1`, false);
  large("a key nested in brackets, unencoded", (n) => `${template}&a${"[a]".repeat(n)}=1`, false);
  large("a run of separators", (n) => `${template}${"&".repeat(n)}`, false);
  for (const key of INHERITED_KEYS) add(`inherited key ${show(key)} as a field`, false, { body: `${template}&${encodeAny(key)}=x` });
  add("3 MiB (content-length)", true, { body: `${template}&pad=${"x".repeat(HUGE_BODY_BYTES)}`, expectStatus: 413 });
  add("3 MiB (chunked)", true, { body: `${template}&pad=${"x".repeat(HUGE_BODY_BYTES)}`, chunked: true, expectStatus: 413 });
  for (const [name, fieldSchema] of Object.entries((schema.properties ?? {}) as Record<string, Schema>)) {
    const others = Object.entries(root).filter(([k]) => k !== name);
    const required = (schema.required ?? []).includes(name);
    const field = (what: string, fields: Array<[string, string]>, invalid: boolean) =>
      add(`${name} ${what}`, invalid, { body: encode(fields) });
    if (required) field("missing", others, true);
    field("twice", [...others, [name, root[name] ?? "a"], [name, root[name] ?? "b"]], true);
    field("as name[]", [...others, [`${name}[]`, root[name] ?? "a"]], required);
    const values = [
      "",
      "x".repeat(((mainSchema(fieldSchema).maxLength as number | undefined) ?? 300) + 1),
      ...hostileSample(rnd).map(([, v]) => v),
    ];
    for (const value of [...values, ...INHERITED_KEYS]) field(`= ${show(value)}`, [...others, [name, value]], violates(fieldSchema, value));
    for (const [kind, build] of PATHOLOGICAL_TEXT) {
      const text = sized((n) => encode([...others, [name, build(n)]]), bodyBytes);
      const value = new URLSearchParams(text).get(name) ?? "";
      add(`${name} ${kind} (${text.length.toLocaleString("en")} bytes)`, violates(fieldSchema, value), { body: text });
    }
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
      cases.push({
        op: ops[0],
        what: `method ${method}`,
        invalid: true,
        method,
        body: method === "GET" || method === "OPTIONS" ? undefined : "{}",
        expectStatus: 404,
      });
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
  // A case that brings its own authorization header is sent with it instead of the credential.
  if (credential && !opts.anonymous && headers.authorization === undefined) headers.authorization = credential;

  let body: string | Buffer | undefined;
  let contentType: string | null | undefined;
  if (!c.noBody) {
    if (c.body !== undefined) body = c.body;
    else if (op.body && !c.method) {
      const sample = sampleValue(op.body.schema);
      body = isForm(op) ? new URLSearchParams(Object.entries(sample as Record<string, string>)).toString() : JSON.stringify(sample);
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
