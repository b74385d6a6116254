// Schemas of the revenue routes: /v1/revenue/splits and /v1/participants/{id}/earnings (developer API key),
// /v1/revenue/overview (portal JWT).
import { z } from "@hono/zod-openapi";
import { ORDER_ID_PATTERN } from "../ids.ts";
import { ChecksummedAddress, SplitLeg as Leg, Token, checksummedAddress } from "../representation.ts";
import { DeviceId, pathIdParam } from "./shared-schemas.ts";
import { EARNINGS_EXAMPLE, REVENUE_OVERVIEW_EXAMPLE, REVENUE_SPLIT_EXAMPLE, REVENUE_SPLIT_PAGE_EXAMPLE } from "./examples.ts";

const SplitLeg = z.object({
  leg: Leg,
  recipient: ChecksummedAddress,
  amount: z.string().openapi({ description: "Token base units" }),
});

const AssetRef = z
  .object({
    deviceId: z.string().nullable().openapi({ description: "The tenant's device the split belongs to" }),
    chainDeviceId: z.string().nullable().openapi({ description: "keccak256 of the device id: the device's own key" }),
  })
  .openapi("AssetRef");

export const RevenueSplit = z
  .object({
    orderId: z.string(),
    deviceId: z.string(),
    ref: z.string().openapi({ description: "The on-chain settlement reference: bytes32 of the order's on-chain id" }),
    split: checksummedAddress("The device's own split contract that settled"),
    asset: AssetRef,
    token: Token,
    gross: z.string().openapi({ description: "Token base units" }),
    grossUsd: z.number().openapi({ description: "US dollars, at most 6 decimals (as amountUsd): the gross the split settled" }),
    legs: z.array(SplitLeg),
    transactionHash: z.string(),
    blockNumber: z.number().int(),
    settledAt: z.string(),
  })
  .openapi("RevenueSplit", { example: REVENUE_SPLIT_EXAMPLE });

export const RevenueSplitPage = z
  .object({ data: z.array(RevenueSplit), nextCursor: z.string().nullable() })
  .openapi({ example: REVENUE_SPLIT_PAGE_EXAMPLE });

export const SplitsQuery = z
  .object({
    limit: z.coerce.number().int().min(1).max(100).default(20),
    cursor: z.string().regex(ORDER_ID_PATTERN).optional().openapi({ description: "The nextCursor of the previous page" }),
    deviceId: DeviceId.optional(),
  })
  .strict();

export const ParticipantParam = pathIdParam(
  "A participant id (pt_ followed by 26 characters) or the participant's address (0x and 40 hex digits)",
  "pt_01JD2Y6Y8X3K5V4Q9T7R2M1N0P",
  "^(pt_[0-9A-Z]{26}|0x[0-9a-fA-F]{40})$",
);

export const Earnings = z
  .object({
    participant: z.object({ id: z.string(), name: z.string(), address: ChecksummedAddress }),
    earnings: z.array(
      z.object({
        token: Token,
        credited: z.string(),
        withdrawn: z.string(),
        claimable: z.string(),
        byLeg: z.object({ assetOwner: z.string(), operator: z.string(), protocol: z.string() }),
        settlements: z.number().int(),
        withdrawals: z.number().int(),
        bySplit: z
          .array(
            z.object({
              split: ChecksummedAddress,
              asset: AssetRef,
              credited: z.string(),
              withdrawn: z.string(),
              claimable: z.string(),
              settlements: z.number().int(),
            }),
          )
          .openapi({ description: "The same, per split of the tenant's devices (the totals above are their sums)" }),
      }),
    ),
    latestSettlements: z
      .array(
        z.object({
          orderId: z.string().nullable(),
          split: ChecksummedAddress,
          asset: AssetRef,
          token: Token,
          gross: z.string(),
          credited: z.string().openapi({ description: "What this settlement credited the participant (all its legs naming it)" }),
          transactionHash: z.string(),
          settledAt: z.string(),
        }),
      )
      .openapi({ description: "The newest settlements (up to 20) of the tenant's splits that credited the participant" }),
  })
  .openapi("Earnings", { example: EARNINGS_EXAMPLE });

export const OverviewQuery = z.object({ range: z.enum(["24h", "7d", "30d"]).default("7d") }).strict();

const OverviewLeg = z.object({ leg: Leg, recipient: ChecksummedAddress, amount: z.string() });

export const RevenueOverview = z
  .object({
    range: z.enum(["24h", "7d", "30d"]),
    bucket: z.enum(["hour", "day"]),
    from: z.string(),
    to: z.string(),
    totals: z.object({ orders: z.number().int(), grossUsd: z.number() }),
    series: z
      .array(z.object({ start: z.string(), orders: z.number().int(), grossUsd: z.number() }))
      .openapi({ description: "One entry per hour (24h) or UTC day (7d, 30d), oldest first, empty buckets included" }),
    byDevice: z.array(z.object({ deviceId: z.string(), orders: z.number().int(), grossUsd: z.number() })),
    recentSplits: z.array(
      z.object({
        orderId: z.string(),
        deviceId: z.string(),
        paidAt: z.string(),
        amountUsd: z.number(),
        token: Token,
        tokenAmount: z.string(),
        transactionHash: z.string(),
        ref: z.string().nullable(),
        legs: z.array(OverviewLeg),
      }),
    ),
    participants: z.array(
      z.object({
        id: z.string(),
        name: z.string(),
        address: ChecksummedAddress,
        earnings: z.array(
          z.object({
            token: Token,
            tokenDecimals: z.number().int(),
            credited: z.string(),
            withdrawn: z.string(),
            claimable: z.string(),
          }),
        ),
      }),
    ),
    indexerAvailable: z.boolean().openapi({
      description: "false: the indexer (or the chain, for the tokens of earnings) did not answer; splits and earnings are empty",
    }),
  })
  .openapi("RevenueOverview", { example: REVENUE_OVERVIEW_EXAMPLE });
