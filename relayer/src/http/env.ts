// Types of the Hono context shared by every route.
import type { Logger } from "../logger.ts";
import type { ClientNetwork } from "./client-address.ts";

/** Who made the request: an API key (server-to-server) or a portal user (JWT). */
export type Identity =
  | { kind: "api_key"; tenantId: string; keyId: string; role: "developer" | "agent" }
  | { kind: "user"; tenantId: string; userId: string; email: string; name: string; sessionId: string };

export type AppEnv = {
  Variables: {
    requestId: string;
    logger: Logger;
    identity: Identity;
    /** The trusted proxies the client's address is read through (http/client-address.ts). */
    clientNetwork: ClientNetwork;
  };
};
