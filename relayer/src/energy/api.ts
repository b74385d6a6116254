// The energy cash-flow sandbox interface, mounted at /energy/v1: the ten routes of the interface and
// nothing else (any other method or path under the base is 404 not_found), its own authentication
// (client credentials -> bearer token), its own error envelope and its own devices. Its OpenAPI 3.1
// document and reference page live outside the base, at /energy/openapi.json and /energy/docs.
import { Hono, type MiddlewareHandler } from "hono";
import { bodyLimit } from "hono/body-limit";
import { docsPage } from "../http/docs-page.ts";
import { requestGuards } from "../http/request-guards.ts";
import { UNSTORABLE_TEXT_MESSAGE } from "../http/text-guard.ts";
import type { Services } from "../services.ts";
import { requireToken } from "./auth/require-token.ts";
import { createSandboxTokens } from "./auth/tokens.ts";
import { ENVIRONMENT, SandboxErrorEnvelope, payloadTooLarge, sandboxErrorBody, toSandboxResponse } from "./routes/envelope.ts";
import { sandboxAuthRoutes } from "./routes/auth.ts";
import { sandboxPublicRoutes } from "./routes/public.ts";
import { sandboxResourceRoutes } from "./routes/resources.ts";
import { sandboxTelemetryRoutes } from "./routes/telemetry.ts";
import { sandboxWebhookRoutes } from "./routes/webhooks.ts";
import { type EnergyEnv, type SandboxApi, createSandboxApi } from "./sandbox-api.ts";
import {
  DRIFT_LIMIT_SECONDS,
  MAX_READINGS_PER_BATCH,
  SMALL_BODY_BYTES,
  TELEMETRY_MAX_BODY_BYTES,
  TOKEN_LIFETIME_SECONDS,
  TOKEN_RATE_BURST,
  TOKEN_RATE_PER_MINUTE,
} from "./schemas.ts";
import { SPEC_VERSION } from "./sample-data.ts";

export const ENERGY_BASE_PATH = "/energy/v1";

function limitBodies(): MiddlewareHandler<EnergyEnv> {
  const limit = (maxSize: number) => bodyLimit({ maxSize, onError: (c) => payloadTooLarge(c, maxSize) });
  const telemetry = limit(TELEMETRY_MAX_BODY_BYTES);
  const other = limit(SMALL_BODY_BYTES);
  return (c, next) => (c.req.path.endsWith("/telemetry:batch") ? telemetry(c, next) : other(c, next));
}

/** The /energy/v1 router. */
export function energyApi(services: Services): SandboxApi {
  const api = createSandboxApi();
  api.onError((error, c) => {
    if ((error as Error).name === "BodyLimitError") return payloadTooLarge(c);
    return toSandboxResponse(c, error);
  });
  // No sandbox id holds a NUL character, and no body may: 404 for a path, 400 for a body (the query is unread).
  api.use(
    "*",
    requestGuards<EnergyEnv>({
      limitBody: limitBodies(),
      refuseText: (c, where) =>
        where === "path"
          ? c.json(sandboxErrorBody("not_found", `no such resource: ${UNSTORABLE_TEXT_MESSAGE}`), 404)
          : where === "body"
            ? c.json(sandboxErrorBody("invalid_request", `invalid body: ${UNSTORABLE_TEXT_MESSAGE}`), 400)
            : undefined,
      refuseJson: (c, message) => c.json(sandboxErrorBody("invalid_request", `invalid body: ${message}`), 400),
    }),
  );

  const tokens = createSandboxTokens(services.config.JWT_SECRET, TOKEN_LIFETIME_SECONDS);
  const auth = requireToken(services.database.db, tokens);

  api.openAPIRegistry.registerComponent("securitySchemes", "sandboxToken", {
    type: "oauth2",
    description:
      "POST /auth/token with the client_credentials grant, then Authorization: Bearer <access_token>. Tokens are " +
      `valid for ${TOKEN_LIFETIME_SECONDS} s and carry no scopes.`,
    flows: { clientCredentials: { tokenUrl: `${services.config.publicBaseUrl}${ENERGY_BASE_PATH}/auth/token`, scopes: {} } },
  });
  api.openAPIRegistry.register("SandboxError", SandboxErrorEnvelope);

  api.route("/", sandboxPublicRoutes(services));
  api.route("/", sandboxAuthRoutes(services, tokens));
  api.route("/", sandboxResourceRoutes(services, auth));
  api.route("/", sandboxTelemetryRoutes(services, auth));
  api.route("/", sandboxWebhookRoutes(services, auth));

  // Only the interface's routes are callable: everything else under the base is 404 not_found.
  api.all("*", (c) => c.json(sandboxErrorBody("not_found", `no route ${c.req.method} ${c.req.path} in the sandbox interface`), 404));
  return api;
}

/** The OpenAPI 3.1 document of the sandbox interface. */
export function energyOpenApiDocument(api: SandboxApi, services: Services) {
  return api.getOpenAPI31Document({
    openapi: "3.1.0",
    info: {
      title: "Energy cash-flow service: sandbox interface",
      version: SPEC_VERSION,
      description: [
        "Telemetry ingest, projects, devices, distributions with their waterfall, evidence, and webhook registration, " +
          "on fixed sample data. Only the routes below are callable; any other method or path under the base address " +
          "is 404 not_found.",
        "",
        `Errors share one envelope: \`{"error": {"svc_code", "message"}, "environment": "${ENVIRONMENT}"}\`. Beyond ` +
          "the interface's Errors table this sandbox uses 413 payload_too_large (body over the route's limit), " +
          `422 idempotency_key_reused, 429 rate_limited (POST /auth/token: a burst of ${TOKEN_RATE_BURST} requests per client ` +
          `address, then ${TOKEN_RATE_PER_MINUTE} a minute; Retry-After gives the seconds to wait), 500 internal_error, and ` +
          "503 service_unavailable (with Retry-After) on any route while the sandbox's database cannot be reached.",
        "",
        `Limits: 1 to ${MAX_READINGS_PER_BATCH} readings and ${TELEMETRY_MAX_BODY_BYTES} bytes per telemetry batch; ` +
          `${SMALL_BODY_BYTES} bytes for any other body; device_ts drift beyond ±${DRIFT_LIMIT_SECONDS} s is flagged; ` +
          `tokens live ${TOKEN_LIFETIME_SECONDS} s; Idempotency-Key records are kept 24 hours.`,
        "",
        "Authentication: POST /auth/token (client_credentials) gives a bearer token for every other route but the " +
          "public ones. Tokens carry no scopes; client credentials are issued by the sandbox's operator (seeding), " +
          "not through this interface.",
        "",
        "Versioning: the base address carries /v1 and GET /version reports the specification version. Within v1 " +
          "changes are additive (new optional fields); the sandbox has no deprecation schedule of its own.",
        "",
        "Attestation: every attested batch's readings become a Merkle tree (OpenZeppelin's standard tree), the batch " +
          "root. Each leaf is abi.encode(chain id, keccak256(project_id), keccak256(device_id), batch sequence, reading_id, " +
          "sequence_number, meter_epoch, energy_wh_cumulative, device_ts in Unix milliseconds, supersedes_reading_id or " +
          '""), hashed twice with keccak256. The batches waiting are then the leaves of a batches tree (same kind; each leaf ' +
          "abi.encode(keccak256(project_id), keccak256(device_id), batch sequence, batch root, readings)) whose root the " +
          "TelemetryAnchor contract anchors in one transaction (event BatchesAnchored(batchesRoot, batches)). The energy " +
          "cluster of a project's latest evidence gives the batch's root, device, batch sequence, batches root and proof; " +
          "TelemetryAnchor.verifyReading(reading, readingProof, batch, batchProof) checks a reading through both trees. " +
          "GET /capabilities names the chain and the contract and spells the verification out.",
      ].join("\n"),
    },
    servers: [{ url: `${services.config.publicBaseUrl}${ENERGY_BASE_PATH}`, description: "Sandbox" }],
    tags: [
      { name: "Operations", description: "Public: liveness, the specification version, and what this sandbox supports." },
      { name: "Authentication", description: "The OAuth 2.0 client credentials grant that issues bearer tokens." },
      { name: "Telemetry", description: "Meter readings in batches, idempotent by Idempotency-Key." },
      { name: "Projects", description: "A project's devices and its cash-flow settings." },
      { name: "Devices", description: "A device's registration and its latest reading." },
      { name: "Distributions", description: "Cash-flow distributions computed from attested energy." },
      { name: "Evidence", description: "Attestation evidence: Merkle proofs of readings anchored on-chain." },
      { name: "Webhooks", description: "Callback subscriptions for the sandbox's events." },
    ],
  });
}

/** /energy/openapi.json and /energy/docs (outside the base address, which has the interface's routes only). */
export function energyDocs(api: SandboxApi, services: Services) {
  const app = new Hono();
  let document: ReturnType<typeof energyOpenApiDocument> | undefined;
  app.get("/openapi.json", (c) => c.json((document ??= energyOpenApiDocument(api, services))));
  app.route("/docs", docsPage("Energy cash-flow sandbox reference", "/energy/openapi.json"));
  return app;
}
