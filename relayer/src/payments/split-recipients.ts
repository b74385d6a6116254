// What a device's split pays on-chain, recorded against the device's payout parties (payout-parties.ts says
// why): the parties (created), its pending change (which then takes effect), or anyone else (mismatch: an alert,
// and the device's quotes and orders are refused).
import { eq } from "drizzle-orm";
import { type Address, isAddressEqual } from "viem";
import type { DbOrTx } from "../db/client.ts";
import { devices } from "../db/schema.ts";
import type { Logger } from "../logger.ts";
import type { Services } from "../services.ts";

type DeviceRow = typeof devices.$inferSelect;
type Recipients = { assetOwner: Address; operator: Address };

const same = (a: string | null, b: string) => a !== null && isAddressEqual(a as Address, b as Address);
const pays = (onChain: Recipients, assetOwner: string | null, operator: string | null) =>
  same(assetOwner, onChain.assetOwner) && same(operator, onChain.operator);

/** Records what the device's split pays on-chain (`onChain`, just read) against the device's parties, in `tx` with
 * the device's row locked: the parties (created), a pending change (it took effect: the change becomes the
 * parties and the cash rail's delay starts again), or anyone else (mismatch, an alert). Returns the device. */
export async function recordRecipients(services: Services, tx: DbOrTx, deviceId: string, onChain: Recipients, logger: Logger) {
  const [device] = await tx.select().from(devices).where(eq(devices.id, deviceId)).for("update");
  let set: Partial<DeviceRow>;
  if (pays(onChain, device.pendingAssetOwner, device.pendingOperator)) {
    set = {
      assetOwner: device.pendingAssetOwner,
      operator: device.pendingOperator,
      pendingAssetOwner: null,
      pendingOperator: null,
      splitStatus: "created",
      payoutChangedAt: new Date(),
    };
    logger.info("a payout change took effect on-chain", { deviceId, split: device.splitAddress, ...onChain });
  } else if (pays(onChain, device.assetOwner, device.operator)) {
    set = { splitStatus: "created" };
    if (device.splitStatus === "mismatch")
      logger.info("a device's split pays its payout parties again", { deviceId, split: device.splitAddress });
  } else {
    set = { splitStatus: "mismatch" };
    if (device.splitStatus !== "mismatch") {
      services.metrics.splitRecipientsMismatch.inc();
      logger.error("a device's split pays recipients other than its payout parties: its payments are refused", {
        deviceId,
        split: device.splitAddress,
        onChain,
        parties: { assetOwner: device.assetOwner, operator: device.operator },
      });
    }
  }
  const [updated] = await tx.update(devices).set(set).where(eq(devices.id, deviceId)).returning();
  return updated;
}

/** Reads the recipients of the device's split on-chain and records them (recordRecipients). */
export async function checkRecipients(services: Services, deviceId: string, split: Address, logger = services.logger): Promise<DeviceRow> {
  const onChain = await services.chain.splitRecipients(split);
  return services.database.db.transaction((tx) => recordRecipients(services, tx, deviceId, onChain, logger));
}
