// Schemas of the asset routes (/v1/assets, portal JWT): each device's payout parties and split.
import { z } from "@hono/zod-openapi";
import { PayoutParties } from "./devices.schemas.ts";
import { pathIdParam } from "./shared-schemas.ts";
import { ASSET_EXAMPLE, ASSET_LIST_EXAMPLE, CHANGED_PAYOUT_PARTIES_EXAMPLE, CHANGE_PAYOUT_PARTIES_EXAMPLE } from "./examples.ts";

export const Asset = z
  .object({
    deviceId: z.string().openapi({ example: "kiosk-nbo-001" }),
    name: z.string(),
    region: z.string(),
    chainDeviceId: z.string().openapi({ description: "keccak256 of the device id: the device's own key (payout.assetKey is its split's)" }),
    payout: PayoutParties,
  })
  .openapi("Asset", { example: ASSET_EXAMPLE });

export const AssetList = z.object({ data: z.array(Asset) }).openapi("AssetList", { example: ASSET_LIST_EXAMPLE });

const PayoutAddress = z.string().max(42).openapi({
  description: "An address: 0x and 40 hex digits; mixed case must carry a valid EIP-55 checksum. Not the zero address.",
  example: "0x90F79bf6EB2c4f870365E785982E1f101E93b906",
});

export const ChangePayoutParties = z
  .object({ assetOwner: PayoutAddress, operator: PayoutAddress })
  .strict()
  .openapi("ChangePayoutParties", { example: CHANGE_PAYOUT_PARTIES_EXAMPLE });

export const ChangedPayoutParties = Asset.extend({
  transactionId: z.string().nullable().openapi({
    description:
      "Always null: the relayer sends nothing for a payout change. A device without a split takes the parties at once; one with a split records them as payout.pendingChange, which the split manager proposes on-chain and which takes effect after the split factory's delay",
  }),
}).openapi("ChangedPayoutParties", { example: CHANGED_PAYOUT_PARTIES_EXAMPLE });

export const AssetIdParam = pathIdParam(
  "A device id: 1 to 64 letters, digits, '.', '_' or '-', starting with a letter or digit",
  "kiosk-nbo-001",
  "^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$",
);
