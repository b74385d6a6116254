// Who made a request that a portal JWT or an API key let through, as the webhook routes record it.
import type { Identity } from "../http/env.ts";

export type Caller = {
  tenantId: string;
  /** The portal user's id, or the API key's (key_...). */
  id: string;
  /** The caller in a sentence: "dev@example.com", or "API key key_...". */
  label: string;
};

export function callerOf(c: { get(key: "identity"): Identity }): Caller {
  const identity = c.get("identity");
  if (identity.kind === "user") return { tenantId: identity.tenantId, id: identity.userId, label: identity.email };
  return { tenantId: identity.tenantId, id: identity.keyId, label: `API key ${identity.keyId}` };
}
