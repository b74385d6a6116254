// GET /health, GET /version, GET /capabilities: public.
import { createRoute } from "@hono/zod-openapi";
import type { Services } from "../../services.ts";
import { capabilities } from "../capabilities.ts";
import { errorResponse } from "./envelope.ts";
import { SPEC_VERSION } from "../sample-data.ts";
import { createSandboxApi } from "../sandbox-api.ts";
import { Capabilities, Health, Version } from "../schemas.ts";

const serverError = { 500: errorResponse(["internal_error"], "An unexpected failure; retry later.") };

export function sandboxPublicRoutes(services: Services) {
  const api = createSandboxApi();

  api.openapi(
    createRoute({
      method: "get",
      path: "/health",
      operationId: "getHealth",
      security: [],
      tags: ["Operations"],
      summary: "Liveness: 200 when the service is alive",
      responses: { 200: { description: "Alive", content: { "application/json": { schema: Health } } } },
    }),
    (c) => c.json({ status: "ok" as const, environment: "sandbox" as const }, 200),
  );

  api.openapi(
    createRoute({
      method: "get",
      path: "/version",
      operationId: "getVersion",
      security: [],
      tags: ["Operations"],
      summary: "The specification version this sandbox implements",
      responses: { 200: { description: "Versions", content: { "application/json": { schema: Version } } } },
    }),
    (c) => c.json({ specification_version: SPEC_VERSION, api_version: "v1" as const, environment: "sandbox" as const }, 200),
  );

  api.openapi(
    createRoute({
      method: "get",
      path: "/capabilities",
      operationId: "getCapabilities",
      security: [],
      tags: ["Operations"],
      summary: "What this environment implements, simulates and omits, its limits and its sample data",
      responses: {
        // The example is this sandbox's own report, as the route answers it.
        200: { description: "The report", content: { "application/json": { schema: Capabilities, example: capabilities(services) } } },
        ...serverError,
      },
    }),
    (c) => c.json(capabilities(services), 200),
  );

  return api;
}
