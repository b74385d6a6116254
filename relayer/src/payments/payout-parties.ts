// Each device's payout parties (the recipients of its asset-owner and operator legs) and its own split: an
// AssetSplitFactory clone at an address predicted from the device's on-chain id. The split is created on
// demand (a quote for the device, or the provisioner's pass over the devices when a relayer starts) through
// the durable transaction sender, once: the creation's ref is the split's address, so a second request or a
// second relayer finds the same transaction, a crash between signing and broadcasting sends the same signed
// transaction again, and a split that exists already (isSplitCreated, or the factory's SplitAlreadyCreated)
// counts as created. A change of the parties replaces the split's recipients through the same sender; what
// the old recipients earned stays theirs (the contract credits each settlement's legs when it settles). A
// change also closes the cash rail to the device for PAYOUT_CHANGE_DELAY_SECONDS (payments/cash-limits.ts).
import { and, asc, eq } from "drizzle-orm";
import { type Address, type Hex, encodeFunctionData } from "viem";
import { assetSplitFactoryAbi } from "../../../generated/abis.ts";
import { type ChainTransaction, enqueueTransaction } from "../chain/tx-sender.ts";
import type { DbOrTx } from "../db/client.ts";
import { devices, splitDue } from "../db/schema.ts";
import { ServiceError, errors } from "../errors.ts";
import { newId } from "../ids.ts";
import { createWorker } from "../jobs/worker.ts";
import type { Services } from "../services.ts";
import { checksummed } from "../representation.ts";

export const CREATE_SPLIT_TX_KIND = "create_split";
export const SET_RECIPIENTS_TX_KIND = "set_split_recipients";

/** How long a quote waits for its device's split to be created before answering 409 split_not_ready. */
export const SPLIT_WAIT_MS = 5_000;
/** The Retry-After (seconds) of a 409 split_not_ready. */
export const SPLIT_RETRY_AFTER_SECONDS = 2;
const SPLIT_POLL_MS = 100;

type DeviceRow = typeof devices.$inferSelect;

export function splitNotReady(deviceId: string, why: string): ServiceError {
  return errors.conflict("split_not_ready", `the split of device ${deviceId} ${why}; retry shortly`, {
    retryAfterSeconds: SPLIT_RETRY_AFTER_SECONDS,
  });
}

/** The device's payout parties and split, as the device routes show them. */
export function payoutView(row: DeviceRow) {
  return {
    assetOwner: row.assetOwner === null ? null : checksummed(row.assetOwner),
    operator: row.operator === null ? null : checksummed(row.operator),
    split: row.splitAddress === null ? null : checksummed(row.splitAddress),
    splitStatus: row.splitStatus ?? ("none" as const),
  };
}

/** Asks for the device's split: records its predicted address and queues its creation unless it exists
 * (then it is marked created). Returns the device as it is now. Nothing to do for a device without payout
 * parties, or whose split is created or being created. */
export async function requestSplit(services: Services, device: DeviceRow): Promise<DeviceRow> {
  if (!device.assetOwner || !device.operator) return device;
  if (device.splitStatus === "created" || device.splitStatus === "pending") return device;
  const {
    chain,
    database: { db },
  } = services;
  const assetKey = device.chainDeviceId as Hex;
  const { split } = await chain.splitOf(assetKey);
  if (await chain.isSplitCreated(assetKey)) return markCreated(db, device.id, split);
  const data = encodeFunctionData({
    abi: assetSplitFactoryAbi,
    functionName: "createSplit",
    args: [assetKey, device.assetOwner as Address, device.operator as Address],
  });
  return db.transaction(async (tx) => {
    // The row lock orders concurrent requests: the second sees the first's pending status.
    const [current] = await tx.select().from(devices).where(eq(devices.id, device.id)).for("update");
    if (current.splitStatus === "created" || current.splitStatus === "pending") return current;
    // A failed creation is asked for again under a new ref (the old one stays the failed transaction's).
    const ref =
      current.splitStatus === "failed" ? `${CREATE_SPLIT_TX_KIND}:${split}:${newId("retry")}` : `${CREATE_SPLIT_TX_KIND}:${split}`;
    await enqueueTransaction(tx, { kind: CREATE_SPLIT_TX_KIND, ref, to: chain.splitFactory, data });
    const [updated] = await tx
      .update(devices)
      .set({ splitAddress: split, splitStatus: "pending" })
      .where(eq(devices.id, device.id))
      .returning();
    return updated;
  });
}

async function markCreated(db: DbOrTx, deviceId: string, split: Address): Promise<DeviceRow> {
  const [updated] = await db
    .update(devices)
    .set({ splitAddress: split, splitStatus: "created" })
    .where(eq(devices.id, deviceId))
    .returning();
  return updated;
}

/** The device's split, created on-chain: asks for it if needed and waits up to SPLIT_WAIT_MS; then 409
 * split_not_ready (Retry-After). */
export async function readySplit(services: Services, device: DeviceRow): Promise<Address> {
  if (device.splitStatus === "created" && device.splitAddress) return device.splitAddress as Address;
  if (!device.assetOwner || !device.operator) throw splitNotReady(device.id, "cannot be created: the device has no payout parties");
  let current = await requestSplit(services, device).catch((error: unknown) => {
    services.logger.warn("cannot request a device's split", { deviceId: device.id, error: (error as Error).message });
    throw errors.unavailable("the chain is not reachable; retry shortly");
  });
  const deadline = Date.now() + SPLIT_WAIT_MS;
  while (current.splitStatus === "pending" && Date.now() < deadline) {
    services.txSender.wake();
    await new Promise((resolve) => setTimeout(resolve, SPLIT_POLL_MS));
    [current] = await services.database.db.select().from(devices).where(eq(devices.id, device.id));
  }
  if (current.splitStatus === "created" && current.splitAddress) return current.splitAddress as Address;
  throw splitNotReady(device.id, current.splitStatus === "failed" ? "could not be created" : "is being created");
}

/** Replaces the device's payout parties. A split that exists gets the new recipients on-chain (queued with
 * the sender); a split not requested yet is created with them later. While its creation is in flight: 409
 * split_not_ready. Returns the device and the queued transaction's id (null: nothing to send). */
export async function changePayoutParties(
  services: Services,
  tenantId: string,
  deviceId: string,
  parties: { assetOwner: Address; operator: Address },
): Promise<{ device: DeviceRow; transactionId: string | null }> {
  const {
    database: { db },
    chain,
  } = services;
  return db.transaction(async (tx) => {
    const [device] = await tx
      .select()
      .from(devices)
      .where(and(eq(devices.id, deviceId), eq(devices.tenantId, tenantId)))
      .for("update");
    if (!device) throw errors.notFound(`device ${deviceId}`);
    if (device.splitStatus === "pending") throw splitNotReady(device.id, "is being created");
    let transactionId: string | null = null;
    const changed = device.assetOwner !== parties.assetOwner || device.operator !== parties.operator;
    if (device.splitStatus === "created" && changed) {
      const data = encodeFunctionData({
        abi: assetSplitFactoryAbi,
        functionName: "setRecipients",
        args: [device.chainDeviceId as Hex, parties.assetOwner, parties.operator],
      });
      const { row } = await enqueueTransaction(tx, {
        kind: SET_RECIPIENTS_TX_KIND,
        ref: `${SET_RECIPIENTS_TX_KIND}:${device.id}:${newId("chg")}`,
        to: chain.splitFactory,
        data,
      });
      transactionId = row.id;
    }
    // A change starts the delay during which the cash rail refuses the device's orders (cash-limits.ts).
    const [updated] = await tx
      .update(devices)
      .set({ assetOwner: parties.assetOwner, operator: parties.operator, ...(changed ? { payoutChangedAt: new Date() } : {}) })
      .where(eq(devices.id, device.id))
      .returning();
    return { device: updated, transactionId };
  });
}

/** The split address a creation transaction is for (its ref). */
function splitOfCreation(row: ChainTransaction): string {
  return row.ref.split(":")[1];
}

/** How many devices one pass of the provisioner asks splits for. */
const PROVISION_BATCH = 500;

/** The devices that still need their split asked for (payout parties set, split not requested or its creation
 * failed), by id: read through the partial index devices_split_due_idx, whose predicate is `splitDue`. */
export function splitsDue(db: DbOrTx) {
  return db.select().from(devices).where(splitDue).orderBy(asc(devices.id)).limit(PROVISION_BATCH);
}

/** Registers what follows a split creation, and on start asks for the split of every device with payout
 * parties that has none (the seeded devices' splits are created up front). */
export function createSplitProvisioner(services: Services) {
  const {
    database: { db },
    txSender,
  } = services;
  const logger = services.logger.child({ worker: "split-provisioner" });

  txSender.onFinal(CREATE_SPLIT_TX_KIND, async (row, tx) => {
    // Created, by this transaction or before it (the sender does not send one that would revert).
    const created = row.status === "mined" || (row.lastError ?? "").startsWith("SplitAlreadyCreated(");
    await tx
      .update(devices)
      .set({ splitStatus: created ? "created" : "failed" })
      .where(and(eq(devices.splitAddress, splitOfCreation(row)), eq(devices.splitStatus, "pending")));
    if (!created) logger.warn("a device's split was not created", { ref: row.ref, status: row.status, error: row.lastError });
  });
  txSender.onFinal(SET_RECIPIENTS_TX_KIND, async (row) => {
    if (row.status !== "mined")
      logger.warn("a split's recipients were not replaced", { ref: row.ref, status: row.status, error: row.lastError });
  });

  async function tick(): Promise<number> {
    for (const device of await splitsDue(db)) await requestSplit(services, device);
    return PROVISION_INTERVAL_MS;
  }

  return createWorker({
    name: "split-provisioner",
    tick,
    onError(error) {
      logger.warn("split provisioning failed", { error: (error as Error).message });
      return PROVISION_RETRY_MS;
    },
  });
}

/** After a pass: failed creations are asked for again this often (quotes ask at once). */
const PROVISION_INTERVAL_MS = 60_000;
const PROVISION_RETRY_MS = 5_000;
