// How a client authenticates to POST /auth/token (RFC 6749 section 2.3.1), one way per request:
// - client_secret_post, the interface's own: client_id and client_secret as form fields;
// - client_secret_basic, what most OAuth client libraries send by default: HTTP Basic, `Authorization: Basic
//   base64(client_id ":" client_secret)`, each of the two form-urlencoded before encoding. The body then
//   carries grant_type only; a client_id in it is allowed if it is the same client.
// Sending a client_secret in the body and Basic credentials is refused (RFC 6749: "MUST NOT use more than one
// authentication method in each request"). Any other Authorization scheme is ignored, as before: the route is
// public. A decision without I/O: the route verifies the credentials it returns.
import { sandboxErrors } from "../errors.ts";
import { SandboxHttpError } from "../routes/envelope.ts";
import { MAX_CLIENT_SECRET_LENGTH, MAX_ID_LENGTH } from "../schemas.ts";

/** The challenge of a 401 to a client that authenticated with HTTP Basic (RFC 6749 section 5.2). */
export const BASIC_CHALLENGE = { "www-authenticate": 'Basic realm="energy-sandbox", charset="UTF-8"' };

export type ClientCredentials = { clientId: string; clientSecret: string; method: "client_secret_basic" | "client_secret_post" };

/** The body's fields, as validated by the route's schema (each optional there). */
export type TokenForm = { client_id?: string; client_secret?: string };

/** `Basic <token68>`: the scheme is case-insensitive (RFC 9110 section 11.1). Linear: disjoint classes. */
const BASIC_SCHEME = /^basic(?:[ \t]|$)/i;
const BASIC_CREDENTIALS = /^basic[ \t]+([A-Za-z0-9+/]+={0,2})[ \t]*$/i;

function invalidBasic(reason: string): SandboxHttpError {
  return new SandboxHttpError(401, "unauthorized", `invalid HTTP Basic client credentials: ${reason}`, BASIC_CHALLENGE);
}

/** application/x-www-form-urlencoded decoding of one value (RFC 6749 appendix B); undefined when malformed. */
function formDecode(value: string): string | undefined {
  try {
    return decodeURIComponent(value.replaceAll("+", " "));
  } catch {
    return undefined;
  }
}

/** The client id and secret of an `Authorization: Basic` header; undefined for another scheme or none. Throws
 * 401 unauthorized (with the Basic challenge) for Basic credentials that cannot be a client's. */
export function basicClientCredentials(authorization: string | undefined): { clientId: string; clientSecret: string } | undefined {
  if (authorization === undefined || !BASIC_SCHEME.test(authorization)) return undefined;
  const token = BASIC_CREDENTIALS.exec(authorization)?.[1];
  if (!token) throw invalidBasic("expected Basic base64(client_id:client_secret)");
  let decoded: string;
  try {
    decoded = new TextDecoder("utf-8", { fatal: true }).decode(Buffer.from(token, "base64"));
  } catch {
    throw invalidBasic("not UTF-8 once base64-decoded");
  }
  const colon = decoded.indexOf(":");
  if (colon < 0) throw invalidBasic("no colon between client_id and client_secret");
  const clientId = formDecode(decoded.slice(0, colon));
  const clientSecret = formDecode(decoded.slice(colon + 1));
  if (clientId === undefined || clientSecret === undefined) throw invalidBasic("malformed percent-encoding");
  if (clientId.length === 0 || clientSecret.length === 0) throw invalidBasic("empty client_id or client_secret");
  if (
    clientId.length > MAX_ID_LENGTH ||
    clientSecret.length > MAX_CLIENT_SECRET_LENGTH ||
    `${clientId}${clientSecret}`.includes("\u0000")
  ) {
    // No client has such an id or secret (and the database could not hold a NUL character).
    throw invalidBasic("no client has such a client_id or client_secret");
  }
  return { clientId, clientSecret };
}

/** The credentials a token request authenticates with, by exactly one method. Throws 400 invalid_request
 * (the interface's answer to a body that fails validation) for two methods at once, or for a body without
 * its credentials when there is no Basic header; 401 for malformed Basic credentials. */
export function clientCredentialsOf(authorization: string | undefined, form: TokenForm): ClientCredentials {
  const basic = basicClientCredentials(authorization);
  if (basic) {
    if (form.client_secret !== undefined) {
      throw sandboxErrors.invalidRequest(
        "use one client authentication method: HTTP Basic (Authorization header) or client_id and client_secret in the body, not both",
      );
    }
    if (form.client_id !== undefined && form.client_id !== basic.clientId) {
      throw sandboxErrors.invalidRequest("the body's client_id is not the client of the HTTP Basic credentials");
    }
    return { ...basic, method: "client_secret_basic" };
  }
  const missing = (["client_id", "client_secret"] as const).filter((field) => form[field] === undefined);
  if (missing.length > 0) {
    throw sandboxErrors.invalidRequest(
      `invalid body: ${missing.map((field) => `${field}: required (or authenticate with HTTP Basic)`).join("; ")}`,
    );
  }
  return { clientId: form.client_id!, clientSecret: form.client_secret!, method: "client_secret_post" };
}
