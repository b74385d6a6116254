// API keys of the signed-in user's tenant (portal JWT): create (the key is shown once), list, revoke.
import { createRoute } from "@hono/zod-openapi";
import { and, desc, eq } from "drizzle-orm";
import { generateApiKey, hashApiKey } from "../auth/api-keys.ts";
import { requireUser } from "../auth/middleware.ts";
import { apiKeys } from "../db/schema.ts";
import { createApi } from "../http/api.ts";
import { errorResponses } from "../http/errors.ts";
import { errors } from "../errors.ts";
import { newId } from "../ids.ts";
import type { Services } from "../services.ts";
import { ApiKey, ApiKeyList, CreateApiKey, CreatedApiKey, KeyIdParam } from "./api-keys.schemas.ts";

type KeyRow = typeof apiKeys.$inferSelect;
function view(row: KeyRow) {
  return {
    id: row.id,
    name: row.name,
    role: row.role,
    prefix: "payg_" as const,
    last4: row.last4,
    createdAt: row.createdAt.toISOString(),
    lastUsedAt: row.lastUsedAt?.toISOString() ?? null,
    revokedAt: row.revokedAt?.toISOString() ?? null,
  };
}

export function apiKeyRoutes(services: Services) {
  const api = createApi();
  const {
    database: { db },
    jwt,
  } = services;
  const portal = requireUser(db, jwt);

  api.openapi(
    createRoute({
      method: "post",
      path: "/api-keys",
      operationId: "createApiKey",
      tags: ["Portal"],
      summary: "Create an API key; the response is the only time the key is shown",
      security: [{ bearerJwt: [] }],
      middleware: [portal] as const,
      request: { body: { content: { "application/json": { schema: CreateApiKey } }, required: true } },
      responses: {
        201: {
          description: "Created",
          content: { "application/json": { schema: CreatedApiKey } },
        },
        ...errorResponses(400, 401, 422),
      },
    }),
    async (c) => {
      const identity = c.get("identity");
      if (identity.kind !== "user") throw errors.unauthorized();
      const body = c.req.valid("json");
      const key = generateApiKey();
      const [row] = await db
        .insert(apiKeys)
        .values({
          id: newId("key"),
          tenantId: identity.tenantId,
          name: body.name,
          role: body.role,
          keyHash: hashApiKey(key),
          last4: key.slice(-4),
          createdBy: identity.userId,
        })
        .returning();
      c.get("logger").info("API key created", { keyId: row.id, role: row.role });
      return c.json({ ...view(row), key }, 201);
    },
  );

  api.openapi(
    createRoute({
      method: "get",
      path: "/api-keys",
      operationId: "listApiKeys",
      tags: ["Portal"],
      summary: "List the tenant's API keys (never the keys themselves)",
      security: [{ bearerJwt: [] }],
      middleware: [portal] as const,
      responses: {
        200: { description: "Keys, newest first", content: { "application/json": { schema: ApiKeyList } } },
        ...errorResponses(401),
      },
    }),
    async (c) => {
      const rows = await db
        .select()
        .from(apiKeys)
        .where(eq(apiKeys.tenantId, c.get("identity").tenantId))
        .orderBy(desc(apiKeys.createdAt));
      return c.json({ data: rows.map(view) }, 200);
    },
  );

  api.openapi(
    createRoute({
      method: "delete",
      path: "/api-keys/{id}",
      operationId: "revokeApiKey",
      tags: ["Portal"],
      summary: "Revoke an API key: it is rejected from the next request on",
      security: [{ bearerJwt: [] }],
      middleware: [portal] as const,
      request: { params: KeyIdParam },
      responses: {
        200: { description: "Revoked", content: { "application/json": { schema: ApiKey } } },
        ...errorResponses(401, 404),
      },
    }),
    async (c) => {
      const { id } = c.req.valid("param");
      const tenantId = c.get("identity").tenantId;
      const [row] = await db
        .select()
        .from(apiKeys)
        .where(and(eq(apiKeys.id, id), eq(apiKeys.tenantId, tenantId)));
      if (!row) throw errors.notFound(`API key ${id}`);
      if (row.revokedAt) return c.json(view(row), 200);
      const [revoked] = await db.update(apiKeys).set({ revokedAt: new Date() }).where(eq(apiKeys.id, id)).returning();
      c.get("logger").info("API key revoked", { keyId: id });
      return c.json(view(revoked), 200);
    },
  );

  return api;
}
