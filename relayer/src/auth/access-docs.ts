// Who may call each /v1 operation, stated in its OpenAPI description from its security requirement (the
// requirement and the middleware that enforces it are set side by side on each route; the API's tests call
// every documented operation with every kind of credential against the same table).
//
// The rule: a public operation (no security requirement) ignores any credential sent to it. Otherwise a
// request that carries none of the credential kinds the operation takes is 401 `unauthorized` (no
// credential; an unknown, revoked or malformed one; a portal JWT where an API key is needed; an API key
// where a portal session is needed: a key is not a session), and an API key whose role the operation does
// not take is 403 `forbidden`. The roles an operation takes are the list of its `apiKey` requirement
// (OpenAPI 3.1 lets a requirement of a non-OAuth scheme list the roles it needs): any one of them will do.
import type { Api } from "../http/api.ts";

export type Role = "developer" | "agent";
export type SecurityRequirement = Record<string, string[]>;

/** The roles of an API key, and what each may do. */
export const ROLE_SCOPES: Record<Role, string> = {
  developer: "read the tenant's devices, revenue splits, participants' earnings and webhook events, and manage its webhook subscriptions",
  agent: "confirm cash payments and read the tenant's devices (not its revenue)",
};

const UNAUTHORIZED = "no credential, or an unknown, expired, revoked or malformed one";

/** The sentence that opens the description of an operation with `security`. */
export function accessSentence(security: SecurityRequirement[] | undefined): string {
  const requirements = security ?? [];
  if (requirements.length === 0) {
    return "**Access: public.** No credential is needed; an `Authorization` header sent anyway is ignored.";
  }
  const jwt = requirements.some((r) => Object.hasOwn(r, "bearerJwt"));
  const keyRequirement = requirements.find((r) => Object.hasOwn(r, "apiKey"));
  const roles = (keyRequirement?.apiKey ?? []) as Role[];
  const everyRole = roles.includes("developer") && roles.includes("agent");
  if (jwt && !keyRequirement) {
    return (
      "**Access: a portal JWT** (the session token of POST /auth/login, as `Authorization: Bearer`). " +
      `401 \`unauthorized\`: ${UNAUTHORIZED}, or an API key (a key is not a session).`
    );
  }
  if (jwt && roles.length === 1) {
    const [role] = roles;
    const others = (Object.keys(ROLE_SCOPES) as Role[]).filter((r) => r !== role);
    return (
      `**Access: a portal JWT or an API key with the ${role} role.** 401 \`unauthorized\`: ${UNAUTHORIZED}. ` +
      `403 \`forbidden\`: a key with the ${others.join(" or ")} role.`
    );
  }
  if (jwt && everyRole) {
    return `**Access: a portal JWT or an API key** (developer or agent role). 401 \`unauthorized\`: ${UNAUTHORIZED}.`;
  }
  if (!jwt && everyRole) {
    return `**Access: an API key, developer or agent role.** 401 \`unauthorized\`: ${UNAUTHORIZED}, or a portal JWT.`;
  }
  if (!jwt && roles.length === 1) {
    const [role] = roles;
    const others = (Object.keys(ROLE_SCOPES) as Role[]).filter((r) => r !== role);
    return (
      `**Access: an API key with the ${role} role.** 401 \`unauthorized\`: ${UNAUTHORIZED}, or a portal JWT. ` +
      `403 \`forbidden\`: a key with the ${others.join(" or ")} role.`
    );
  }
  throw new Error(`no access sentence for the security requirement ${JSON.stringify(requirements)}`);
}

/** Opens the description of every operation registered in `registry` with its access sentence. Called
 * once, after every route is registered (the document is generated from the registry when asked for). */
export function documentAccess(registry: Api["openAPIRegistry"]) {
  for (const definition of registry.definitions) {
    if (definition.type !== "route") continue;
    const route = definition.route;
    const sentence = accessSentence(route.security);
    route.security ??= [];
    route.description = route.description ? `${sentence}\n\n${route.description}` : sentence;
  }
}
