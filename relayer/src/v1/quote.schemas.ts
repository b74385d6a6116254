// Schemas of POST /v1/quote.
import { z } from "@hono/zod-openapi";
import { errorResponseWith } from "../http/errors.ts";
import { SPLIT_RETRY_AFTER_SECONDS, SPLIT_WAIT_MS } from "../payments/payout-parties.ts";
import { Token } from "../representation.ts";
import { DeviceId } from "./shared-schemas.ts";
import { QUOTE_EXAMPLE, QUOTE_REQUEST_EXAMPLE } from "./examples.ts";

export const QuoteRequest = z
  .object({
    deviceId: DeviceId,
    chain: z
      .string()
      .min(1)
      .max(32)
      .openapi({
        description:
          "The chain's name: the relayer's CHAIN_NAME setting (`local` on a local stack). Any other value is 422 " +
          "`invalid_parameters`, whose message lists the allowed one.",
        example: "local",
      }),
    token: z
      .string()
      .min(1)
      .max(16)
      .openapi({
        description:
          "Stablecoin symbol: one the deployment's splits settle in, read from the chain (`USDC`). Any other value is 422 " +
          "`invalid_parameters`, whose message lists the allowed ones.",
        example: "USDC",
      }),
    tier: z.string().min(1).max(32).openapi({ description: "Session duration tier", example: "1h" }),
  })
  .strict()
  .openapi("QuoteRequest", { example: QUOTE_REQUEST_EXAMPLE });

export const Quote = z
  .object({
    quoteId: z.string().openapi({ example: "qt_01JD2Y6Y8X3K5V4Q9T7R2M1N0P" }),
    deviceId: z.string(),
    chain: z.string(),
    token: Token,
    tier: z.string(),
    durationSeconds: z.number().int(),
    amountUsd: z.number().openapi({ description: "Price locked by the server, in US dollars", example: 0.5 }),
    tokenAmount: z.string().openapi({ description: "The same amount in the token's base units", example: "500000" }),
    tokenDecimals: z.number().int(),
    expiresAt: z.string().openapi({ description: "After this time the quote cannot become an order (409)" }),
  })
  .openapi("Quote", { example: QUOTE_EXAMPLE });

/** The 409 of POST /v1/quote (and POST /v1/orders) while the device's own split is not on-chain. */
export const splitNotReadyResponse = errorResponseWith(["split_not_ready", "split_recipients_mismatch"], {
  description:
    `The device's own split contract is not on-chain yet. The quote asks for its creation and waits up to ` +
    `${SPLIT_WAIT_MS / 1000} s for it; if it is still on its way (or the device has no payout parties, or the creation failed), ` +
    `409 with a retry-after header (${SPLIT_RETRY_AFTER_SECONDS} s): retry then. split_recipients_mismatch (no retry-after): ` +
    `the device's split pays recipients other than its payout parties; the device takes no payment until the operator resolves it.`,
  retryAfter: true,
});
