// POST /webhooks: a registration is validated, stored and echoed; the sandbox never delivers to it.
import { createRoute } from "@hono/zod-openapi";
import type { MiddlewareHandler } from "hono";
import { energyWebhooks } from "../../db/schema.ts";
import { newId } from "../../ids.ts";
import type { Services } from "../../services.ts";
import { bearerErrors, errorResponse } from "./envelope.ts";
import { type EnergyEnv, createSandboxApi } from "../sandbox-api.ts";
import { WebhookRegistered, WebhookRegistration } from "../schemas.ts";

export function sandboxWebhookRoutes(services: Services, auth: MiddlewareHandler<EnergyEnv>) {
  const api = createSandboxApi();

  api.openapi(
    createRoute({
      method: "post",
      path: "/webhooks",
      operationId: "registerWebhook",
      tags: ["Webhooks"],
      summary: "Register a webhook (echoed back; never delivered)",
      security: [{ sandboxToken: [] }],
      middleware: [auth] as const,
      request: { body: { content: { "application/json": { schema: WebhookRegistration } }, required: true } },
      responses: {
        201: { description: "Registered", content: { "application/json": { schema: WebhookRegistered } } },
        400: errorResponse(
          ["invalid_request"],
          "Not JSON, or invalid: url must be an absolute http(s) URL; events 1 to 4 distinct kinds; no other field.",
        ),
        ...bearerErrors,
        413: errorResponse(["payload_too_large"], "The body exceeds 64 KiB."),
      },
    }),
    async (c) => {
      const registration = c.req.valid("json");
      const [row] = await services.database.db
        .insert(energyWebhooks)
        .values({
          webhookId: newId("whk"),
          clientId: c.get("energyClientId"),
          url: registration.url,
          events: registration.events,
        })
        .returning();
      return c.json(
        {
          webhook_id: row.webhookId,
          url: row.url,
          events: registration.events,
          created_at: row.createdAt.toISOString(),
          delivery: "never" as const,
        },
        201,
      );
    },
  );

  return api;
}
