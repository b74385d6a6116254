// Schemas of the device routes (/v1/devices).
import { z } from "@hono/zod-openapi";
import { DeviceId } from "./shared-schemas.ts";
import { DEVICE_EXAMPLE, DEVICE_LIST_EXAMPLE, DEVICE_STATUS_EXAMPLE } from "./examples.ts";

export const PayoutParties = z
  .object({
    assetOwner: z.string().nullable().openapi({ description: "Recipient of the asset-owner leg (50%), EIP-55; null: none set" }),
    operator: z.string().nullable().openapi({ description: "Recipient of the operator leg (40%), EIP-55; null: none set" }),
    split: z
      .string()
      .nullable()
      .openapi({ description: "The device's own split contract (predicted address, EIP-55); null until first requested" }),
    splitStatus: z.enum(["none", "pending", "created", "failed", "mismatch"]).openapi({
      description:
        "none: not requested yet; pending: its creation is on its way on-chain; created: payments can settle through it (its recipients read on-chain are the parties above); failed: the creation failed (asked for again on the next quote); mismatch: the split pays other recipients, the device's quotes and orders are refused (409 split_recipients_mismatch) until resolved",
    }),
    assetKey: z.string().nullable().openapi({
      description:
        "The split's asset key, keccak256(abi.encode(chainDeviceId, first asset owner, first operator)): the device id on-chain orders carry. Null until the split is first requested",
    }),
    pendingChange: z
      .object({
        assetOwner: z.string().openapi({ description: "The asset owner requested (EIP-55)" }),
        operator: z.string().openapi({ description: "The operator requested (EIP-55)" }),
      })
      .nullable()
      .openapi({
        description:
          "Payout parties requested for a device whose split exists: they take effect when the split manager's change is executed on-chain (after the split factory's delay). Null: none",
      }),
  })
  .openapi("PayoutParties");

export const Device = z
  .object({
    id: z.string(),
    name: z.string(),
    deviceClass: z.string().openapi({ example: "solar-kiosk" }),
    region: z.string().openapi({ example: "KE-30" }),
    chainDeviceId: z
      .string()
      .openapi({ description: "keccak256 of the id: the device's own key, from which its split's asset key (payout.assetKey) is derived" }),
    tiers: z.array(z.object({ tier: z.string(), durationSeconds: z.number().int(), priceUsd: z.number() })),
    payout: PayoutParties,
    createdAt: z.string(),
  })
  .openapi("Device", { example: DEVICE_EXAMPLE });

export const DeviceList = z
  .object({
    data: z.array(Device),
    nextCursor: z.string().nullable().openapi({ description: "Pass as `cursor` for the next page; null on the last" }),
  })
  .openapi("DeviceList", { example: DEVICE_LIST_EXAMPLE });

export const DeviceListQuery = z
  .object({
    limit: z.coerce.number().int().min(1).max(100).default(20),
    cursor: DeviceId.optional().openapi({ description: "The nextCursor of the previous page" }),
    region: z.string().min(1).max(64).optional(),
    deviceClass: z.string().min(1).max(64).optional(),
  })
  .strict();

export const DeviceStatus = z
  .object({
    deviceId: z.string(),
    online: z.boolean(),
    poweredOn: z.boolean(),
    sessionEndsAt: z.string().nullable(),
    checkedAt: z.string(),
  })
  .openapi("DeviceStatus", { example: DEVICE_STATUS_EXAMPLE });
