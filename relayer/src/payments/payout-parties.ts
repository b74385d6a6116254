// Each device's payout parties (the recipients of its asset-owner and operator legs) and its own split: an
// AssetSplitFactory clone at the address of the device's asset key, which commits to the split's first
// recipients (splitAssetKey of the device's chainDeviceId, asset owner and operator), so that nobody can create
// the device's split for recipients of their own. Creation needs no factory role: the split is created on demand
// (a quote for the device, or the provisioner's pass over the devices) through the durable transaction sender,
// once: the creation's ref is the split's address, so a second request or a second relayer finds the same
// transaction, and a crash between signing and broadcasting sends the same signed transaction again.
//
// A split is never taken as created on the strength of a receipt or of SplitAlreadyCreated alone: its recipients
// are read on-chain (legs()) and compared with the device's payout parties. A split that pays anyone else is a
// mismatch: an alert (payg_split_recipients_mismatch_total, payg_split_recipients_mismatched_devices and an error
// line), and the device's quotes and orders are refused (409 split_recipients_mismatch) until the split pays the
// device's parties again.
//
// The hot wallet cannot change a split's recipients (it holds no factory role). A payout change of a device whose
// split exists is recorded as pending; the split manager (an offline key) proposes it with `npm run splits --
// propose`, anyone executes it after the factory's delay, and the provisioner's watch of such devices moves it to
// the device's parties once the split pays them; the factory's events are followed too (split-events.ts), so a
// change nobody requested is an alert when proposed and a mismatch when executed. What the old recipients earned stays theirs (the contract
// credits each settlement's legs when it settles). A change closes the cash rail to the device for
// PAYOUT_CHANGE_DELAY_SECONDS from the request, and again from the moment the split pays the new parties
// (payments/cash-limits.ts).
import { and, asc, eq } from "drizzle-orm";
import { type Address, type Hex, encodeFunctionData } from "viem";
import { assetSplitFactoryAbi } from "../../../generated/abis.ts";
import { splitAssetKey } from "../chain/split-address.ts";
import { type ChainTransaction, enqueueTransaction } from "../chain/tx-sender.ts";
import type { DbOrTx } from "../db/client.ts";
import { devices, splitDue, splitWatched } from "../db/schema.ts";
import { ServiceError, errors } from "../errors.ts";
import { newId } from "../ids.ts";
import { createWorker } from "../jobs/worker.ts";
import type { Services } from "../services.ts";
import { checksummed } from "../representation.ts";
import { followSplitEvents } from "./split-events.ts";
import { checkRecipients, recordRecipients } from "./split-recipients.ts";

export const CREATE_SPLIT_TX_KIND = "create_split";

/** How long a quote waits for its device's split to be created before answering 409 split_not_ready. */
export const SPLIT_WAIT_MS = 5_000;
/** The Retry-After (seconds) of a 409 split_not_ready. */
export const SPLIT_RETRY_AFTER_SECONDS = 2;
const SPLIT_POLL_MS = 100;

type DeviceRow = typeof devices.$inferSelect;
type Recipients = { assetOwner: Address; operator: Address };

export function splitNotReady(deviceId: string, why: string): ServiceError {
  return errors.conflict("split_not_ready", `the split of device ${deviceId} ${why}; retry shortly`, {
    retryAfterSeconds: SPLIT_RETRY_AFTER_SECONDS,
  });
}

/** 409 split_recipients_mismatch: the device's split pays recipients other than its payout parties. */
export function splitRecipientsMismatch(deviceId: string): ServiceError {
  return errors.conflict(
    "split_recipients_mismatch",
    `the split of device ${deviceId} pays recipients other than the device's payout parties; the device takes no payment until the operator resolves it`,
  );
}

/** The device's payout parties and split, as the device routes show them. */
export function payoutView(row: DeviceRow) {
  return {
    assetOwner: row.assetOwner === null ? null : checksummed(row.assetOwner),
    operator: row.operator === null ? null : checksummed(row.operator),
    split: row.splitAddress === null ? null : checksummed(row.splitAddress),
    splitStatus: row.splitStatus ?? ("none" as const),
    assetKey: row.assetKey,
    pendingChange:
      row.pendingAssetOwner && row.pendingOperator
        ? { assetOwner: checksummed(row.pendingAssetOwner), operator: checksummed(row.pendingOperator) }
        : null,
  };
}

/** Whether the device's split exists on-chain as the relayer knows it (created, or paying other recipients). */
const splitExists = (row: DeviceRow) => (row.splitStatus === "created" || row.splitStatus === "mismatch") && row.assetKey !== null;

/** Asks for the device's split: computes its asset key from its parties, records the predicted address and
 * queues its creation unless it exists (then its recipients are read and recorded). Returns the device as it is
 * now. Nothing to do for a device without payout parties, or whose split exists or is being created. */
export async function requestSplit(services: Services, device: DeviceRow): Promise<DeviceRow> {
  if (!device.assetOwner || !device.operator) return device;
  if (splitExists(device) || device.splitStatus === "pending") return device;
  const {
    chain,
    database: { db },
  } = services;
  const [assetOwner, operator] = [device.assetOwner as Address, device.operator as Address];
  const assetKey = splitAssetKey(device.chainDeviceId as Hex, assetOwner, operator);
  const { split } = await chain.splitOf(assetKey);
  if (await chain.isSplitCreated(assetKey)) {
    await db.update(devices).set({ splitAddress: split, assetKey }).where(eq(devices.id, device.id));
    return checkRecipients(services, device.id, split);
  }
  const data = encodeFunctionData({
    abi: assetSplitFactoryAbi,
    functionName: "createSplit",
    args: [device.chainDeviceId as Hex, assetOwner, operator],
  });
  return db.transaction(async (tx) => {
    // The row lock orders concurrent requests: the second sees the first's pending status.
    const [current] = await tx.select().from(devices).where(eq(devices.id, device.id)).for("update");
    if (splitExists(current) || current.splitStatus === "pending") return current;
    // The parties changed since they were read: the next request derives the key from the new ones.
    if (current.assetOwner !== device.assetOwner || current.operator !== device.operator) return current;
    const creation = { kind: CREATE_SPLIT_TX_KIND, to: chain.splitFactory, data };
    const { row, created } = await enqueueTransaction(tx, { ...creation, ref: `${CREATE_SPLIT_TX_KIND}:${split}` });
    // A creation of this split that failed before (the device's parties may have changed and come back since) is
    // asked for again under a new ref (the old one stays the failed transaction's).
    if (!created && (row.status === "failed" || row.status === "reverted")) {
      await enqueueTransaction(tx, { ...creation, ref: `${CREATE_SPLIT_TX_KIND}:${split}:${newId("retry")}` });
    }
    const [updated] = await tx
      .update(devices)
      .set({ splitAddress: split, assetKey, splitStatus: "pending" })
      .where(eq(devices.id, device.id))
      .returning();
    return updated;
  });
}

/** The device's split, created on-chain and paying its parties, with its asset key (the device id of the
 * device's orders): asks for it if needed and waits up to SPLIT_WAIT_MS; then 409 split_not_ready (Retry-After).
 * A split paying other recipients: 409 split_recipients_mismatch. */
export async function readySplit(services: Services, device: DeviceRow): Promise<{ split: Address; assetKey: Hex }> {
  const ready = (row: DeviceRow) =>
    row.splitStatus === "created" && row.splitAddress && row.assetKey
      ? { split: row.splitAddress as Address, assetKey: row.assetKey as Hex }
      : undefined;
  if (device.splitStatus === "mismatch") throw splitRecipientsMismatch(device.id);
  const done = ready(device);
  if (done) return done;
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
  if (current.splitStatus === "mismatch") throw splitRecipientsMismatch(device.id);
  const created = ready(current);
  if (created) return created;
  throw splitNotReady(device.id, current.splitStatus === "failed" ? "could not be created" : "is being created");
}

/** Replaces the device's payout parties. A device without a split takes them at once (its split is created with
 * them later). A device whose split exists keeps paying its parties: the new ones are recorded as a pending
 * change for the split manager (the hot wallet cannot change a split), and parties equal to the current ones drop
 * a pending change. While its creation is in flight: 409 split_not_ready. Returns the device and the relayer
 * transaction sent for it (always null: nothing is sent for a change). */
export async function changePayoutParties(
  services: Services,
  tenantId: string,
  deviceId: string,
  parties: Recipients,
): Promise<{ device: DeviceRow; transactionId: string | null }> {
  const {
    database: { db },
  } = services;
  return db.transaction(async (tx) => {
    const [device] = await tx
      .select()
      .from(devices)
      .where(and(eq(devices.id, deviceId), eq(devices.tenantId, tenantId)))
      .for("update");
    if (!device) throw errors.notFound(`device ${deviceId}`);
    if (device.splitStatus === "pending") throw splitNotReady(device.id, "is being created");
    const changed = device.assetOwner !== parties.assetOwner || device.operator !== parties.operator;
    let set: Partial<DeviceRow>;
    if (splitExists(device)) {
      const pending = changed ? parties : null;
      const requested =
        pending !== null && (device.pendingAssetOwner !== pending.assetOwner || device.pendingOperator !== pending.operator);
      set = { pendingAssetOwner: pending?.assetOwner ?? null, pendingOperator: pending?.operator ?? null };
      // A new request starts the delay during which the cash rail refuses the device's orders (cash-limits.ts).
      if (requested) {
        set.payoutChangedAt = new Date();
        services.logger.info("a payout change waits for the split manager (npm run splits -- propose)", {
          deviceId: device.id,
          assetKey: device.assetKey,
          split: device.splitAddress,
          ...parties,
        });
      }
    } else {
      set = { assetOwner: parties.assetOwner, operator: parties.operator, ...(changed ? { payoutChangedAt: new Date() } : {}) };
    }
    const [updated] = await tx.update(devices).set(set).where(eq(devices.id, device.id)).returning();
    return { device: updated, transactionId: null };
  });
}

/** The split address a creation transaction is for (its ref). */
function splitOfCreation(row: ChainTransaction): string {
  return row.ref.split(":")[1];
}

/** How many devices one pass of the provisioner asks splits for, or watches. */
const PROVISION_BATCH = 500;

/** The devices that still need their split asked for (payout parties set, split not requested or its creation
 * failed), by id: read through the partial index devices_split_due_idx, whose predicate is `splitDue`. */
export function splitsDue(db: DbOrTx) {
  return db.select().from(devices).where(splitDue).orderBy(asc(devices.id)).limit(PROVISION_BATCH);
}

/** The devices whose split's recipients are watched (a pending payout change, or a mismatch), by id: read
 * through the partial index devices_split_watch_idx, whose predicate is `splitWatched`. */
export function splitsWatched(db: DbOrTx) {
  return db.select().from(devices).where(splitWatched).orderBy(asc(devices.id)).limit(PROVISION_BATCH);
}

/** Registers what follows a split creation; asks for the split of every device with payout parties that has
 * none, and watches the splits whose recipients should change (or pay the wrong ones). */
export function createSplitProvisioner(services: Services) {
  const {
    database: { db },
    txSender,
  } = services;
  const logger = services.logger.child({ worker: "split-provisioner" });

  txSender.onFinal(CREATE_SPLIT_TX_KIND, async (row, tx) => {
    // Created, by this transaction or before it (the sender does not send one that would revert): either way its
    // recipients are read before the device is marked created.
    const created = row.status === "mined" || (row.lastError ?? "").startsWith("SplitAlreadyCreated(");
    const split = splitOfCreation(row);
    const waiting = await tx
      .select({ id: devices.id })
      .from(devices)
      .where(and(eq(devices.splitAddress, split), eq(devices.splitStatus, "pending")));
    if (!created) {
      await tx
        .update(devices)
        .set({ splitStatus: "failed" })
        .where(and(eq(devices.splitAddress, split), eq(devices.splitStatus, "pending")));
      logger.warn("a device's split was not created", { ref: row.ref, status: row.status, error: row.lastError });
      return;
    }
    if (waiting.length === 0) return;
    const onChain = await services.chain.splitRecipients(split as Address);
    for (const { id } of waiting) await recordRecipients(services, tx, id, onChain, logger);
  });

  let provisionedAt = Number.NEGATIVE_INFINITY;
  async function tick(): Promise<number> {
    if (Date.now() - provisionedAt >= PROVISION_INTERVAL_MS) {
      for (const device of await splitsDue(db)) await requestSplit(services, device);
      provisionedAt = Date.now();
    }
    await followSplitEvents(services, logger);
    for (const device of await splitsWatched(db)) {
      if (device.splitAddress) await checkRecipients(services, device.id, device.splitAddress as Address, logger);
    }
    return WATCH_INTERVAL_MS;
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

/** Failed creations are asked for again this often (quotes ask at once). */
const PROVISION_INTERVAL_MS = 60_000;
/** The factory's events and the watched splits are read this often: an executed change is picked up, and a
 * proposal nobody requested alerted on, within it (a partial-index read, eth_blockNumber and eth_getLogs). */
const WATCH_INTERVAL_MS = 5_000;
const PROVISION_RETRY_MS = 5_000;
