// The tenant's assets (its devices) and their payout parties (portal JWT): list them, and change a device's
// asset owner and operator. A device without a split takes the change at once; one with a split records it as
// pending: the hot wallet cannot change a split, the split manager (an offline key) proposes it on-chain and it
// takes effect after the split factory's delay. What the former recipients earned before stays theirs.
import { createRoute } from "@hono/zod-openapi";
import { asc, eq } from "drizzle-orm";
import type { Address } from "viem";
import { requireUser } from "../auth/middleware.ts";
import { devices } from "../db/schema.ts";
import { createApi } from "../http/api.ts";
import { errorResponses } from "../http/errors.ts";
import { errors } from "../errors.ts";
import { rateLimit } from "../http/middleware.ts";
import { payoutAddress } from "../payments/payout-address.ts";
import { changePayoutParties, payoutView } from "../payments/payout-parties.ts";
import type { Services } from "../services.ts";
import { AssetIdParam, AssetList, ChangePayoutParties, ChangedPayoutParties } from "./assets.schemas.ts";
import { portalUser } from "./portal-user.ts";

type DeviceRow = typeof devices.$inferSelect;

function assetView(row: DeviceRow) {
  return { deviceId: row.id, name: row.name, region: row.region, chainDeviceId: row.chainDeviceId, payout: payoutView(row) };
}

export function assetRoutes(services: Services) {
  const api = createApi();
  const {
    database: { db },
    jwt,
  } = services;
  const portal = requireUser(db, jwt);
  /** Payout changes (each may lead to a split creation, a transaction of the hot wallet): limited per tenant
   * (after requireUser). */
  const tenantChainWrites = rateLimit({
    capacity: services.config.TENANT_CHAIN_WRITES_PER_MINUTE,
    perSecond: services.config.TENANT_CHAIN_WRITES_PER_MINUTE / 60,
    key: (c) => `tenant:${c.get("identity").tenantId}`,
  });

  api.openapi(
    createRoute({
      method: "get",
      path: "/assets",
      operationId: "listAssets",
      tags: ["Portal"],
      summary: "The tenant's assets (devices) with their payout parties and own split, by device id",
      security: [{ bearerJwt: [] }],
      middleware: [portal] as const,
      responses: {
        200: { description: "Assets", content: { "application/json": { schema: AssetList } } },
        ...errorResponses(401),
      },
    }),
    async (c) => {
      const rows = await db
        .select()
        .from(devices)
        .where(eq(devices.tenantId, portalUser(c).tenantId))
        .orderBy(asc(devices.id));
      return c.json({ data: rows.map(assetView) }, 200);
    },
  );

  api.openapi(
    createRoute({
      method: "put",
      path: "/assets/{id}/payout",
      operationId: "setAssetPayout",
      tags: ["Portal"],
      summary:
        "Change a device's payout parties (asset owner and operator): later payments credit the new recipients, " +
        "earlier ones stay with the recipients of their time. A device whose split is not created yet takes them " +
        "at once. A device with a split keeps paying its current parties: the new ones are recorded as " +
        "payout.pendingChange, proposed on-chain by the split manager and effective after the split factory's " +
        "delay (the relayer then shows them as the parties); parties equal to the current ones drop a pending " +
        "change. The protocol leg and the 50/40/10 shares cannot change. A change closes the cash rail to the " +
        "device for PAYOUT_CHANGE_DELAY_SECONDS from the request and again from the moment it takes effect " +
        "(POST /v1/orders/{id}/cash: 409 payout_change_pending). A tenant may make " +
        "TENANT_CHAIN_WRITES_PER_MINUTE a minute (a burst of as many) per relayer process, beyond that 429 " +
        "`rate_limited` with Retry-After.",
      security: [{ bearerJwt: [] }],
      middleware: [portal, tenantChainWrites] as const,
      request: { params: AssetIdParam, body: { content: { "application/json": { schema: ChangePayoutParties } }, required: true } },
      responses: {
        200: { description: "Changed", content: { "application/json": { schema: ChangedPayoutParties } } },
        ...errorResponses(400, 401, 404, { 409: ["split_not_ready"] }, 422, 429),
      },
    }),
    async (c) => {
      const { id } = c.req.valid("param");
      const body = c.req.valid("json");
      const parties = { assetOwner: payoutAddress(body.assetOwner), operator: payoutAddress(body.operator) };
      const invalid = (["assetOwner", "operator"] as const).filter((field) => !parties[field]);
      if (invalid.length > 0) {
        throw errors.invalid(
          "payout parties must be addresses (EIP-55 checksum if mixed-case), not the zero address",
          invalid.map((field) => ({ path: field, message: "not a valid address" })),
        );
      }
      const { device, transactionId } = await changePayoutParties(services, portalUser(c).tenantId, id, {
        assetOwner: parties.assetOwner as Address,
        operator: parties.operator as Address,
      });
      c.get("logger").info("payout parties changed", { deviceId: id, transactionId });
      return c.json({ ...assetView(device), transactionId }, 200);
    },
  );

  return api;
}
