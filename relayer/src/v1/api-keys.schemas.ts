// Schemas of the API key routes (/v1/api-keys, portal JWT).
import { z } from "@hono/zod-openapi";
import { ROLE_SCOPES } from "../auth/access-docs.ts";
import { pathIdParam } from "./shared-schemas.ts";
import { API_KEY_EXAMPLE, API_KEY_LIST_EXAMPLE, CREATED_API_KEY_EXAMPLE, CREATE_API_KEY_EXAMPLE } from "./examples.ts";

export const ApiKey = z
  .object({
    id: z.string(),
    name: z.string(),
    role: z.enum(["developer", "agent"]),
    prefix: z.literal("payg_"),
    last4: z.string(),
    createdAt: z.string(),
    lastUsedAt: z.string().nullable(),
    revokedAt: z.string().nullable(),
  })
  .openapi("ApiKey", { example: API_KEY_EXAMPLE });

/** The answer to POST /v1/api-keys: the only time the key itself is shown. */
export const CreatedApiKey = ApiKey.extend({ key: z.string() }).openapi("CreatedApiKey", { example: CREATED_API_KEY_EXAMPLE });

export const CreateApiKey = z
  .object({
    // maxLength holds for the name as sent, before the spaces around it are trimmed.
    name: z.string().max(80).trim().min(1),
    role: z
      .enum(["developer", "agent"])
      .default("developer")
      .openapi({
        description: `developer: ${ROLE_SCOPES.developer}; agent: ${ROLE_SCOPES.agent}`,
      }),
  })
  .strict()
  .openapi("CreateApiKey", { example: CREATE_API_KEY_EXAMPLE });

export const ApiKeyList = z.object({ data: z.array(ApiKey) }).openapi({ example: API_KEY_LIST_EXAMPLE });

export const KeyIdParam = pathIdParam(
  "An API key id: key_ followed by 26 characters",
  "key_01JD2Y6Y8X3K5V4Q9T7R2M1N0P",
  "^key_[0-9A-Z]{26}$",
);
