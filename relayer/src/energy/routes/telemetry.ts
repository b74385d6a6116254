// POST /telemetry:batch: a batch of readings for a registered device (the colon is part of the path).
import { createRoute, z } from "@hono/zod-openapi";
import type { Context, MiddlewareHandler } from "hono";
import type { ContentfulStatusCode } from "hono/utils/http-status";
import { rateLimit } from "../../http/middleware.ts";
import type { Services } from "../../services.ts";
import type { StoredResponse } from "../telemetry/idempotency.ts";
import { type IngestOutcome, ingestTelemetry } from "../telemetry/ingest.ts";
import { bearerErrors, errorResponse, sandboxErrorBody, sandboxStatusOf } from "./envelope.ts";
import { type EnergyEnv, createSandboxApi } from "../sandbox-api.ts";
import { BatchAccepted, MAX_READINGS_PER_BATCH, TELEMETRY_MAX_BODY_BYTES, TelemetryBatch } from "../schemas.ts";
import { isSvcCode } from "../errors.ts";
import { IDEMPOTENCY_KEY_PATTERN } from "../telemetry/idempotency.ts";

/** Reads the body as text first, so that the exact bytes a device signature signs are kept (the JSON
 * validator then parses the same text). */
const keepRawBody: MiddlewareHandler<EnergyEnv> = async (c, next) => {
  await c.req.text();
  await next();
};

const Headers = z.object({
  "Idempotency-Key": z
    .string()
    .regex(IDEMPOTENCY_KEY_PATTERN, "1 to 255 visible ASCII characters")
    .optional()
    .openapi({
      description:
        "Makes a retry safe: a request with a key used before (by the same client, within 24 hours) and the same " +
        "body gets the original status and body back, byte for byte, with the header Idempotent-Replayed: true, " +
        "and nothing is stored again. The same key with another body is 422 idempotency_key_reused. Requests " +
        "that fail validation (400) or authentication (401 unauthorized) do not use up the key; every other outcome " +
        "(200, 401 signature_invalid, 404, 409, 422 counter_regression) is stored and replayed.",
      example: "batch-mtr-kibera-001-4321",
    }),
  "Device-Signature": z
    .string()
    .max(200)
    .optional()
    .openapi({
      description:
        "Sandbox signing scheme: the base64 (or base64url) Ed25519 signature of the exact request body bytes by " +
        "the device's key. Verified only for devices with a registered public key; see verification.signature.",
    }),
});

/** The answer to a batch: 200 with the batch's report, or the envelope of the error it was refused with, at
 * the status of its code. (Stored with an Idempotency-Key: a retry is answered the same, byte for byte.) */
function answer(outcome: IngestOutcome): StoredResponse {
  if ("taken" in outcome) return { status: 200, body: JSON.stringify(outcome.taken) };
  const { code, message } = outcome.refused;
  if (!isSvcCode(code)) throw outcome.refused;
  return { status: sandboxStatusOf(code), body: JSON.stringify(sandboxErrorBody(code, message)) };
}

/** A token bucket per OAuth client (after authentication, so the key is the client id, not the address):
 * ENERGY_INGEST_BURST batches at once, then ENERGY_INGEST_PER_SECOND a second; beyond that 429. */
function ingestRateLimit(services: Services): MiddlewareHandler<EnergyEnv> {
  const { ENERGY_INGEST_BURST: burst, ENERGY_INGEST_PER_SECOND: perSecond } = services.config;
  const limit = rateLimit({
    capacity: burst,
    perSecond,
    key: (c) => (c as Context<EnergyEnv>).get("energyClientId"),
    onLimited: (c, retryAfter) =>
      c.json(sandboxErrorBody("rate_limited", `too many telemetry batches from this client; retry in ${retryAfter} s`), 429, {
        "retry-after": String(retryAfter),
      }),
  });
  return (c, next) => limit(c as Context, next);
}

export function sandboxTelemetryRoutes(services: Services, auth: MiddlewareHandler<EnergyEnv>) {
  const api = createSandboxApi();
  const { ENERGY_INGEST_BURST: burst, ENERGY_INGEST_PER_SECOND: perSecond } = services.config;

  api.openapi(
    createRoute({
      method: "post",
      path: "/telemetry:batch",
      operationId: "ingestTelemetryBatch",
      tags: ["Telemetry"],
      summary: "Ingest a batch of meter readings for a registered device",
      description:
        `Readings are checked in array order against the device's record and each other. Accepted readings are stored ` +
        `durably before the response; rejected ones are listed in errors. 200 is not the end of the story: the batch ` +
        `is anchored asynchronously (attestation.status pending; follow the energy cluster of the project's latest ` +
        `evidence). At most ${MAX_READINGS_PER_BATCH} readings and ${TELEMETRY_MAX_BODY_BYTES} bytes per request.`,
      security: [{ sandboxToken: [] }],
      middleware: [auth, ingestRateLimit(services), keepRawBody] as const,
      request: {
        headers: Headers,
        body: { content: { "application/json": { schema: TelemetryBatch } }, required: true },
      },
      responses: {
        200: {
          description: "Verified synchronously; anchoring pending",
          content: { "application/json": { schema: BatchAccepted } },
        },
        400: errorResponse(
          ["invalid_request"],
          "The body is not JSON, or failed validation (a field's type, an RFC 3339 time, an enumeration, no reading, " +
            `more than ${MAX_READINGS_PER_BATCH} readings, an unknown field), or the Idempotency-Key header is malformed.`,
        ),
        401: errorResponse(
          ["unauthorized", "signature_invalid"],
          "unauthorized: missing, malformed, expired or unknown bearer token. signature_invalid: a Device-Signature was " +
            "sent for a device with a registered public key and does not verify against it.",
        ),
        404: errorResponse(["device_not_found"], "Unknown or deregistered device_id."),
        409: errorResponse(
          ["baseline_incomplete"],
          "The device was in its baseline window when the batch arrived: its acceptable readings were stored (they " +
            "count towards the window and the device's record follows them) but the batch is not attested.",
        ),
        413: errorResponse(["payload_too_large"], `The body exceeds ${TELEMETRY_MAX_BODY_BYTES} bytes.`),
        422: errorResponse(
          ["counter_regression", "idempotency_key_reused"],
          "counter_regression: no reading of the batch was accepted, and at least one had a cumulative value below the " +
            "last accepted one in the same meter_epoch; nothing was stored. (When other readings are accepted, the " +
            "regressed ones are rejected in errors and continuity is regression, with 200.) idempotency_key_reused: " +
            "the Idempotency-Key was used before with another body.",
        ),
        429: {
          ...errorResponse(
            ["rate_limited"],
            `More than ${burst} batches from one client at once, or ${perSecond} a second after that ` +
              "(ENERGY_INGEST_BURST, ENERGY_INGEST_PER_SECOND; per relayer process). Nothing of the batch was stored " +
              "and an Idempotency-Key is not used up: retry the same request after Retry-After seconds.",
          ),
          headers: { "Retry-After": { description: "Seconds to wait before the next batch.", schema: { type: "integer" as const } } },
        },
        500: bearerErrors[500],
      },
    }),
    async (c) => {
      const headers = c.req.valid("header");
      const result = await ingestTelemetry(services, {
        clientId: c.get("energyClientId"),
        batch: c.req.valid("json"),
        rawBody: await c.req.text(),
        signature: headers["Device-Signature"],
        idempotencyKey: headers["Idempotency-Key"],
        answer,
      });
      const responseHeaders: Record<string, string> = { "content-type": "application/json" };
      if (result.replayed) responseHeaders["idempotent-replayed"] = "true";
      return c.body(result.body, result.status as ContentfulStatusCode, responseHeaders) as never;
    },
  );

  return api;
}
