// The factory of every /energy/v1 router: zod validation of all inputs, failures answered 400
// invalid_request in the sandbox's envelope (never the payment API's).
import { OpenAPIHono, type z } from "@hono/zod-openapi";
import type { AppEnv } from "../http/env.ts";
import { sandboxErrorBody } from "./routes/envelope.ts";

export type EnergyEnv = {
  Variables: AppEnv["Variables"] & {
    /** The OAuth client behind the bearer token. */
    energyClientId: string;
  };
};

const MAX_LISTED_ISSUES = 10;

/** "readings.3.device_ts: must be ...; device_id: required" (the first few issues). */
export function describeIssues(error: z.ZodError): string {
  const issues = error.issues.map((issue) => {
    const where = issue.path.map(String).join(".");
    return where ? `${where}: ${issue.message}` : issue.message;
  });
  const listed = issues.slice(0, MAX_LISTED_ISSUES).join("; ");
  return issues.length > MAX_LISTED_ISSUES ? `${listed}; and ${issues.length - MAX_LISTED_ISSUES} more` : listed;
}

export function createSandboxApi() {
  return new OpenAPIHono<EnergyEnv>({
    defaultHook: (result, c) => {
      if (!result.success) {
        const where = result.target === "json" || result.target === "form" ? "body" : result.target;
        return c.json(sandboxErrorBody("invalid_request", `invalid ${where}: ${describeIssues(result.error)}`), 400);
      }
    },
  });
}

export type SandboxApi = ReturnType<typeof createSandboxApi>;
