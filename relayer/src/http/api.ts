// The factory of every /v1 router: zod validation of all inputs, failures answered 422 in the envelope.
import { OpenAPIHono, z } from "@hono/zod-openapi";
import type { Context } from "hono";
import { errors } from "../errors.ts";
import { errorBody, zodDetails } from "./errors.ts";
import type { AppEnv } from "./env.ts";

/** What a route takes no query parameter of: no key at all. */
const NoQuery = z.object({}).strict();

/** For a route that takes no query parameter: throws the same 422 as the routes' own validation gives a
 * request that sends one (see defaultHook below). Called by the handler instead of declaring
 * `request: { query }`, which puts a validation layer in front of every request: the public statistics are
 * the busiest public GET routes, and almost none of their requests has a query to check. */
export function assertNoQuery(c: Context): void {
  if (!c.req.url.includes("?")) return;
  const result = NoQuery.safeParse(c.req.query());
  if (!result.success) throw errors.invalid("invalid query", zodDetails(result.error));
}

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
