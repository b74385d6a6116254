// GET /projects/{project_id}, GET /devices/{device_id}, GET /distributions/{distribution_id} and
// GET /evidence/{evidence_ref}: bearer routes over the sample data and the devices' records.
import { createRoute, z } from "@hono/zod-openapi";
import type { MiddlewareHandler } from "hono";
import type { Services } from "../../services.ts";
import { findDevice, sandboxDeviceView } from "../devices.ts";
import { sandboxErrors } from "../errors.ts";
import { bearerErrors, errorResponse } from "./envelope.ts";
import { evidenceView } from "../evidence.ts";
import { SAMPLE_DISTRIBUTIONS, SAMPLE_PROJECTS } from "../sample-data.ts";
import { type EnergyEnv, createSandboxApi } from "../sandbox-api.ts";
import { Distribution, Evidence, Project, SandboxDevice } from "../schemas.ts";

const pathParam = (name: string, example: string) => z.object({ [name]: z.string().openapi({ param: { name, in: "path" }, example }) });

const notFound = errorResponse(["not_found"], "No such resource in the sandbox.");
const security = [{ sandboxToken: [] }];

export function sandboxResourceRoutes(services: Services, auth: MiddlewareHandler<EnergyEnv>) {
  const api = createSandboxApi();
  const {
    database: { db },
    config,
  } = services;

  api.openapi(
    createRoute({
      method: "get",
      path: "/projects/{project_id}",
      operationId: "getProject",
      tags: ["Projects"],
      summary: "A project",
      security,
      middleware: [auth] as const,
      request: { params: pathParam("project_id", "prj_kibera_solar") },
      responses: {
        200: { description: "The project", content: { "application/json": { schema: Project } } },
        ...bearerErrors,
        404: notFound,
      },
    }),
    (c) => {
      const id = c.req.valid("param").project_id;
      const project = SAMPLE_PROJECTS.find((p) => p.project_id === id);
      if (!project) throw sandboxErrors.notFound(`project ${id} not found`);
      const { unit_token_id, ...fields } = project;
      return c.json({ ...fields, chain_refs: { chain: config.CHAIN_NAME, unit_token: { token_id: unit_token_id } } }, 200);
    },
  );

  api.openapi(
    createRoute({
      method: "get",
      path: "/devices/{device_id}",
      operationId: "getDevice",
      tags: ["Devices"],
      summary: "A device's record, as its accepted readings left it",
      security,
      middleware: [auth] as const,
      request: { params: pathParam("device_id", "mtr-kibera-001") },
      responses: {
        200: { description: "The device", content: { "application/json": { schema: SandboxDevice } } },
        ...bearerErrors,
        404: errorResponse(["device_not_found"], "Unknown or deregistered device."),
      },
    }),
    async (c) => {
      const id = c.req.valid("param").device_id;
      const row = await findDevice(db, id);
      if (!row) throw sandboxErrors.deviceNotFound(id);
      return c.json(sandboxDeviceView(row), 200);
    },
  );

  api.openapi(
    createRoute({
      method: "get",
      path: "/distributions/{distribution_id}",
      operationId: "getDistribution",
      tags: ["Distributions"],
      summary: "A distribution and its waterfall",
      security,
      middleware: [auth] as const,
      request: { params: pathParam("distribution_id", "dst_kibera_2026_02") },
      responses: {
        200: { description: "The distribution", content: { "application/json": { schema: Distribution } } },
        ...bearerErrors,
        404: notFound,
      },
    }),
    (c) => {
      const id = c.req.valid("param").distribution_id;
      const distribution = SAMPLE_DISTRIBUTIONS.find((d) => d.distribution_id === id);
      if (!distribution) throw sandboxErrors.notFound(`distribution ${id} not found`);
      return c.json(distribution, 200);
    },
  );

  api.openapi(
    createRoute({
      method: "get",
      path: "/evidence/{evidence_ref}",
      operationId: "getEvidence",
      tags: ["Evidence"],
      summary: "Evidence resolved from an evidence reference, in four clusters",
      security,
      middleware: [auth] as const,
      request: { params: pathParam("evidence_ref", "ev_kibera_2026_02") },
      responses: {
        200: { description: "The evidence", content: { "application/json": { schema: Evidence } } },
        ...bearerErrors,
        404: notFound,
      },
    }),
    async (c) => {
      const ref = c.req.valid("param").evidence_ref;
      const evidence = await evidenceView(db, config.CHAIN_NAME, ref);
      if (!evidence) throw sandboxErrors.notFound(`evidence ${ref} not found`);
      return c.json(evidence, 200);
    },
  );

  return api;
}
