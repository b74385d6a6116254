// Follows the split factories' recipient-change events on-chain (one block cursor per factory in sync_state, read
// in ranges of at most MAX_RANGE blocks from the factory's deployment block), so that a change nobody asked for is
// seen whoever made it, in any stablecoin's factory:
// - RecipientsProposed for a device whose pending change it is not: an alert (error line and
//   payg_split_unrequested_proposals_total) while the asset owner can still cancel it (the factory's delay);
// - RecipientsExecuted at the main factory: the device's split's recipients are read again and recorded
//   (split-recipients.ts: its pending change takes effect, or it is a mismatch and the device's payments are
//   refused). A split in another stablecoin is read before each of its quotes and orders (token-splits.ts).
// Several relayer processes may read the same range: what they do is idempotent (alerts may repeat). Blocks are
// read up to the head; a reorganisation that drops an event loses only its alert (the next executed change of the
// device reads the split again).
import { eq } from "drizzle-orm";
import { type Address, type Hex, isAddressEqual } from "viem";
import { assetSplitFactoryAbi } from "../../../generated/abis.ts";
import { splitFactoriesOf } from "../../../ignition/deployment-records.ts";
import { devices, syncState } from "../db/schema.ts";
import type { Logger } from "../logger.ts";
import type { Services } from "../services.ts";
import { checkRecipients } from "./split-recipients.ts";

const CURSOR = "split_events_next_block";
const MAX_RANGE = 5_000n;

/** Reads the next range of each factory's events and acts on them. */
export async function followSplitEvents(services: Services, logger: Logger): Promise<void> {
  for (const factory of splitFactoriesOf(services.chain.deployment)) {
    const main = factory.address === services.chain.splitFactory;
    // The main factory's cursor keeps the name it always had.
    await followFactoryEvents(
      services,
      logger,
      factory.address,
      BigInt(factory.startBlock),
      main ? CURSOR : `${CURSOR}:${factory.address}`,
      main,
    );
  }
}

async function followFactoryEvents(services: Services, logger: Logger, factory: Address, start: bigint, cursorName: string, main: boolean) {
  const {
    chain,
    database: { db },
  } = services;
  await db.insert(syncState).values({ name: cursorName, value: start.toString() }).onConflictDoNothing();
  const [cursor] = await db.select().from(syncState).where(eq(syncState.name, cursorName));
  const from = BigInt(cursor.value);
  const head = await chain.publicClient.getBlockNumber({ cacheTime: 0 });
  if (from > head) return;
  const to = head < from + MAX_RANGE - 1n ? head : from + MAX_RANGE - 1n;
  const logs = await chain.publicClient.getContractEvents({
    address: factory,
    abi: assetSplitFactoryAbi,
    fromBlock: from,
    toBlock: to,
  });
  for (const log of logs) {
    if (log.eventName !== "RecipientsProposed" && log.eventName !== "RecipientsExecuted") continue;
    const assetKey = log.args.assetKey as Hex;
    const [device] = await db.select().from(devices).where(eq(devices.assetKey, assetKey));
    if (!device) continue;
    const where = { deviceId: device.id, assetKey, factory, split: log.args.split, transactionHash: log.transactionHash };
    if (log.eventName === "RecipientsExecuted") {
      if (main && device.splitAddress) await checkRecipients(services, device.id, device.splitAddress as Address, logger);
      continue;
    }
    const proposed = log.args as { assetOwner: Address; operator: Address; executableAt: number };
    const requested =
      device.pendingAssetOwner !== null &&
      device.pendingOperator !== null &&
      isAddressEqual(device.pendingAssetOwner as Address, proposed.assetOwner) &&
      isAddressEqual(device.pendingOperator as Address, proposed.operator);
    if (requested) {
      logger.info("the split manager proposed a device's pending payout change", where);
    } else {
      services.metrics.splitUnrequestedProposals.inc();
      logger.error(
        "a recipient change nobody requested was proposed for a device's split: the asset owner can cancel it until executableAt",
        {
          ...where,
          proposed: { assetOwner: proposed.assetOwner, operator: proposed.operator },
          executableAt: new Date(Number(proposed.executableAt) * 1000).toISOString(),
        },
      );
    }
  }
  await db
    .update(syncState)
    .set({ value: (to + 1n).toString(), updatedAt: new Date() })
    .where(eq(syncState.name, cursorName));
}
