// What the logger never writes: secrets. Redaction happens in the logger itself, so a careless call site
// cannot leak one. Three rules, applied to every field at any depth (error messages and stacks included):
//   - by name: the value of a field whose name says it holds a secret (authorization and cookie headers,
//     passwords, passphrases, credentials, secrets, tokens, API keys, private keys, signatures; also any name
//     ending in password, passphrase, secret, private key, credential(s) or mnemonic, an encoding suffix such
//     as Hex or Pem aside: privateKeyHex, dbPassword, appSecret) is replaced whatever it holds;
//   - by shape: inside any text, the credentials this service issues or handles are replaced where they
//     appear: API keys (payg_ + 38 characters), webhook signing secrets (whsec_..., percent-encoded too),
//     JWTs (the portal's and the sandbox's tokens), hex strings of 65 bytes or more after 0x (ECDSA
//     signatures, and calldata carrying them), and runs of 64 or more hex digits without 0x (private keys,
//     HMAC digests, signatures written bare);
//   - request paths (a field named path whose value starts with /): each segment is logged only if it is
//     harmless: a route word, one of the service's ids (ord_ + ULID...), an address or 32-byte hex value
//     with 0x, or a short name such as a device id. A segment that is percent-encoded into something else,
//     has characters outside letters, digits and . _ - : ~, looks like a credential, or mixes upper and lower
//     case over 12 characters or more (random tokens, client secrets, most passwords) is replaced.
// What tells a key from a transaction hash: the service writes transaction hashes, order ids on chain and
// addresses (32 and 20 bytes) with 0x, and they stay readable (operators need them); bare 64-hex is never
// one of them. A 32-byte private key written with 0x cannot be told from a hash by its shape: it is caught
// by its field's name (privateKey, privateKeyHex...), which is how the service's own code handles keys.

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
  "pwd",
  "passwd",
  "passphrase",
  "credentials",
  "credential",
  "privkey",
  "sessionsecret",
]);

/** Endings of field names (normalised as above) that say the field holds a secret, whatever comes before:
 * dbPassword, relayerPrivateKey, appSecret. A name that only starts with one (passwordScryptN) is not one. */
const SECRET_NAME_ENDINGS = [
  "password",
  "passwd",
  "passphrase",
  "secret",
  "privatekey",
  "secretkey",
  "credential",
  "credentials",
  "mnemonic",
  "mnemonicphrase",
  "seedphrase",
];
/** How a secret's encoding may end its field's name (privateKeyHex, signatureB64): looked past. */
const ENCODING_SUFFIXES = ["hex", "pem", "base64", "b64", "bytes"];

function secretName(normalised: string): boolean {
  let name = normalised;
  for (const suffix of ENCODING_SUFFIXES) {
    if (name.length > suffix.length && name.endsWith(suffix)) {
      name = name.slice(0, -suffix.length);
      break;
    }
  }
  if (SECRET_FIELDS.has(normalised) || SECRET_FIELDS.has(name)) return true;
  for (const ending of SECRET_NAME_ENDINGS) if (name.endsWith(ending)) return true;
  return false;
}

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

/** Whether a field of this name holds a request path (when its value starts with /). */
function isPathField(name: string): boolean {
  return name === "path" || PATH_FIELDS.has(normaliseName(name));
}

/** Whether a field of this name holds a secret. */
export function isSecretField(name: string): boolean {
  const known = secretFieldMemo.get(name);
  if (known !== undefined) return known;
  const secret = secretName(normaliseName(name));
  if (secretFieldMemo.size < SECRET_FIELD_MEMO_SIZE) secretFieldMemo.set(name, secret);
  return secret;
}

// Each pattern is anchored on a literal prefix and made of one character class per part, with literal
// separators that the classes do not contain: linear time on any text. The bare hex one has no prefix: its
// look-behind lets a match start only where a run of letters and digits starts (so each run is tried once)
// and its look-ahead keeps a longer word (a hash inside an identifier) whole.
const SECRET_SHAPES: Array<[RegExp, string]> = [
  [/payg_[0-9A-Za-z]{38}/g, `payg_${REDACTED}`],
  [/whsec_[0-9A-Za-z+/=%]{16,}/g, `whsec_${REDACTED}`],
  [/eyJ[\w-]{4,}\.[\w-]{4,}\.[\w-]{4,}/g, `jwt${REDACTED}`],
  [/0x[0-9a-fA-F]{130,}/g, `0x${REDACTED}`],
];
const BARE_HEX = /(?<![0-9A-Za-z])[0-9a-fA-F]{64,}(?![0-9A-Za-z])/g;
const BARE_HEX_DIGITS = 64;

/** Whether `text` has a run of at least BARE_HEX_DIGITS hex digits (one pass, no regular expression: the
 * logger asks this of every string it writes). */
function hasLongHexRun(text: string): boolean {
  let run = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if ((c >= 48 && c <= 57) || (c >= 97 && c <= 102) || (c >= 65 && c <= 70)) {
      if (++run >= BARE_HEX_DIGITS) return true;
    } else run = 0;
  }
  return false;
}

/** `text` with every secret-shaped part replaced. */
export function redactText(text: string): string {
  let out = text;
  if (text.includes("payg_") || text.includes("whsec_") || text.includes("eyJ") || text.includes("0x")) {
    for (const [pattern, replacement] of SECRET_SHAPES) out = out.replace(pattern, replacement);
  }
  if (hasLongHexRun(out)) out = out.replace(BARE_HEX, REDACTED);
  return out;
}

/** Path segments logged as they are: the service's ids, addresses and 32-byte values with 0x. */
const KNOWN_SEGMENT = /^(?:[a-z]{2,5}_[0-9A-Z]{26}|0x[0-9a-fA-F]{40}|0x[0-9a-fA-F]{64})$/;
/** Characters of a segment that may be logged (after percent-decoding): letters, digits, . _ - : ~ */
const PLAIN_SEGMENT = /^[A-Za-z0-9._:~-]{1,128}$/;
/** Mixed case over this many characters reads as a random token (a client secret, a password). */
const MIXED_CASE_MIN = 12;

function safeSegment(segment: string): boolean {
  if (segment === "" || KNOWN_SEGMENT.test(segment)) return true;
  let plain = segment;
  if (segment.includes("%")) {
    try {
      plain = decodeURIComponent(segment);
    } catch {
      return false;
    }
  }
  if (!PLAIN_SEGMENT.test(plain) || redactText(plain) !== plain) return false;
  return plain.length < MIXED_CASE_MIN || plain.toLowerCase() === plain || plain.toUpperCase() === plain;
}

/** A request path fit for the log: each segment kept only if it is harmless (see the header), otherwise
 * replaced by [redacted]. The query string, if any, is dropped. */
export function redactPath(path: string): string {
  const query = path.indexOf("?");
  const segments = (query === -1 ? path : path.slice(0, query)).split("/");
  let out = segments[0] === "" || safeSegment(segments[0]) ? segments[0] : REDACTED;
  for (let i = 1; i < segments.length; i++) out += `/${safeSegment(segments[i]) ? segments[i] : REDACTED}`;
  return query === -1 ? out : `${out}?${REDACTED}`;
}

/** Field names (normalised) whose string values starting with / are request paths. */
const PATH_FIELDS = new Set(["path", "pathname", "requestpath", "urlpath"]);

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
    if (isSecretField(key) && value !== undefined && value !== null) out[key] = REDACTED;
    else if (typeof value === "string" && value.startsWith("/") && isPathField(key)) out[key] = redactPath(value);
    else out[key] = redactValue(value, depth);
  }
  return out;
}
