// The signed-in portal user of a request that requireUser (auth/middleware.ts) let through.
import type { Identity } from "../http/env.ts";
import { errors } from "../errors.ts";

export function portalUser(c: { get(key: "identity"): Identity }): Extract<Identity, { kind: "user" }> {
  const identity = c.get("identity");
  if (identity.kind !== "user") throw errors.unauthorized();
  return identity;
}
