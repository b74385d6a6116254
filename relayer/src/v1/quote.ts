// POST /v1/quote: the server prices a session and locks the amount.
import { createRoute } from "@hono/zod-openapi";
import { createApi } from "../http/api.ts";
import { errorResponses } from "../http/errors.ts";
import { splitNotReadyResponse } from "./quote.schemas.ts";
import { rateLimit } from "../http/middleware.ts";
import { createQuote } from "../payments/orders.ts";
import type { Services } from "../services.ts";
import { Quote, QuoteRequest } from "./quote.schemas.ts";

export function quoteRoutes(services: Services) {
  const api = createApi();
  api.openapi(
    createRoute({
      method: "post",
      path: "/quote",
      operationId: "createQuote",
      tags: ["Payments"],
      summary: "Price a session: the server locks the amount for the quote's lifetime (QUOTE_TTL_SECONDS)",
      middleware: [rateLimit({ capacity: 60, perSecond: 20 })] as const,
      request: { body: { content: { "application/json": { schema: QuoteRequest } }, required: true } },
      responses: {
        201: { description: "The quote", content: { "application/json": { schema: Quote } } },
        ...errorResponses(400, 404, 422, 429, 503),
        409: splitNotReadyResponse,
      },
    }),
    async (c) => c.json(await createQuote(services, c.req.valid("json")), 201),
  );
  return api;
}
