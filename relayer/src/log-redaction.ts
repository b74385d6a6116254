// What the logger never writes: secrets. Redaction happens in the logger itself, so a careless call site
// cannot leak one. Two rules, applied to every field at any depth (error messages and stacks included):
//   - by name: the value of a field whose name says it holds a secret (authorization and cookie headers,
//     passwords, secrets, tokens, API keys, private keys, signatures) is replaced whatever it holds;
//   - by shape: inside any text, the credentials this service issues or handles are replaced where they
//     appear: API keys (payg_ + 38 characters), webhook signing secrets (whsec_...), JWTs (the portal's and
//     the sandbox's tokens), and hex strings of 65 bytes or more (ECDSA signatures, and calldata carrying them).
// Transaction hashes and addresses (32 and 20 bytes) stay readable: operators need them.

export const REDACTED = "[redacted]";

/** Field names (lower case, without - and _) whose values are secrets. */
const SECRET_FIELDS = new Set([
  "authorization",
  "proxyauthorization",
  "cookie",
  "setcookie",
  "xapikey",
  "apikey",
  "password",
  "newpassword",
  "currentpassword",
  "passwordhash",
  "secret",
  "clientsecret",
  "webhooksecret",
  "signingsecret",
  "token",
  "accesstoken",
  "refreshtoken",
  "idtoken",
  "jwt",
  "bearer",
  "privatekey",
  "mnemonic",
  "seed",
  "signature",
  "permitsignature",
  "sig",
]);

function normaliseName(name: string): string {
  let out = "";
  for (const ch of name.toLowerCase()) if (ch !== "-" && ch !== "_") out += ch;
  return out;
}

/** Answers for field names seen before: the logger asks for the same few dozen names on every line. Names
 * can come from request data (a logged body's keys), so the memory is bounded: past its size, names are
 * checked without being remembered. */
const secretFieldMemo = new Map<string, boolean>();
const SECRET_FIELD_MEMO_SIZE = 1_000;

/** Whether a field of this name holds a secret. */
export function isSecretField(name: string): boolean {
  const known = secretFieldMemo.get(name);
  if (known !== undefined) return known;
  const secret = SECRET_FIELDS.has(normaliseName(name));
  if (secretFieldMemo.size < SECRET_FIELD_MEMO_SIZE) secretFieldMemo.set(name, secret);
  return secret;
}

// Each pattern is anchored on a literal prefix and made of one character class per part, with literal
// separators that the classes do not contain: linear time on any text.
const SECRET_SHAPES: Array<[RegExp, string]> = [
  [/payg_[0-9A-Za-z]{38}/g, `payg_${REDACTED}`],
  [/whsec_[0-9A-Za-z+/=]{16,}/g, `whsec_${REDACTED}`],
  [/eyJ[\w-]{4,}\.[\w-]{4,}\.[\w-]{4,}/g, `jwt${REDACTED}`],
  [/0x[0-9a-fA-F]{130,}/g, `0x${REDACTED}`],
];

/** `text` with every secret-shaped part replaced. */
export function redactText(text: string): string {
  if (!text.includes("payg_") && !text.includes("whsec_") && !text.includes("eyJ") && !text.includes("0x")) return text;
  let out = text;
  for (const [pattern, replacement] of SECRET_SHAPES) out = out.replace(pattern, replacement);
  return out;
}

const MAX_DEPTH = 8;

/** A copy of a field's value fit for the log: secrets redacted, errors as {name, message, stack}, bigints
 * as decimal strings. */
export function redactValue(value: unknown, depth = 0): unknown {
  if (typeof value === "string") return redactText(value);
  if (typeof value === "bigint") return value.toString();
  if (value === null || typeof value !== "object") return value;
  if (depth >= MAX_DEPTH) return "[too deep to log]";
  if (value instanceof Error) {
    return { name: value.name, message: redactText(value.message), stack: value.stack === undefined ? undefined : redactText(value.stack) };
  }
  if (Array.isArray(value)) return value.map((item) => redactValue(item, depth + 1));
  if (value instanceof Date) return value.toISOString();
  return redactFields(value as Record<string, unknown>, depth + 1);
}

/** The fields of a log line with secrets redacted (see the header). */
export function redactFields(fields: Record<string, unknown>, depth = 0): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  // Object.keys rather than Object.entries: no [key, value] pair made per field (the access log redacts
  // one set of fields per request).
  for (const key of Object.keys(fields)) {
    const value = fields[key];
    out[key] = isSecretField(key) && value !== undefined && value !== null ? REDACTED : redactValue(value, depth);
  }
  return out;
}
