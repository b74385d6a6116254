// The factory of every /v1 router: zod validation of all inputs, failures answered 422 in the envelope.
import { OpenAPIHono } from "@hono/zod-openapi";
import { errorBody, zodDetails } from "./errors.ts";
import type { AppEnv } from "./env.ts";

export function createApi() {
  return new OpenAPIHono<AppEnv>({
    defaultHook: (result, c) => {
      if (!result.success) {
        const details = zodDetails(result.error);
        const where = result.target === "json" ? "body" : result.target;
        return c.json(errorBody(c, "invalid_parameters", `invalid ${where}`, details), 422);
      }
    },
  });
}

export type Api = ReturnType<typeof createApi>;
