// A device's split in a stablecoin other than the main one (USDT beside USDC): the split of the same asset key at
// that token's own factory (the router takes one factory per token). The device's main split is the one the
// relayer records and watches (payout-parties.ts); the split in another token is created on demand, by the first
// quote for the device in that token, through the durable transaction sender (ref: the split's address, as for
// the main split), and is used only while it pays the device's payout parties:
// - created: with the device's first recipients (its asset key commits to them), which are the device's parties
//   as long as they never changed; a device whose parties changed since its main split was created is paid in the
//   main stablecoin only (422), since the new split would start with the old recipients;
// - before every quote and order, its recipients are compared with the device's payout parties (remembered for
//   RECIPIENTS_TTL_MS): a split that pays anyone else is refused (409 split_recipients_mismatch) until the split
//   manager changes it at its token's factory as at the main one (`npm run splits -- propose ... --factory
//   AssetSplitFactory_USDT`).
import { and, eq, like, notInArray, or } from "drizzle-orm";
import { type Address, type Hex, encodeFunctionData, isAddressEqual } from "viem";
import { assetSplitFactoryAbi } from "../../../generated/abis.ts";
import type { StablecoinInfo } from "../chain/payments-chain.ts";
import { splitAssetKey } from "../chain/split-address.ts";
import { enqueueTransaction } from "../chain/tx-sender.ts";
import { chainTransactions, type devices } from "../db/schema.ts";
import { errors } from "../errors.ts";
import { newId } from "../ids.ts";
import type { Services } from "../services.ts";
import { CREATE_SPLIT_TX_KIND, SPLIT_WAIT_MS, readySplit, splitNotReady, splitRecipientsMismatch } from "./payout-parties.ts";

type DeviceRow = typeof devices.$inferSelect;

/** How long a split found paying the device's parties is taken as such without reading it again. */
const RECIPIENTS_TTL_MS = 30_000;
const RECIPIENTS_CACHE_SIZE = 10_000;
const SPLIT_POLL_MS = 200;

/** Splits found paying the given parties ("owner:operator"), and when: one map per chain connection. */
const verifiedByChain = new WeakMap<object, Map<Address, { parties: string; at: number }>>();

/** The device's split in `token`, created on-chain and paying the device's payout parties, with its asset key
 * (the device id of the device's orders). The main stablecoin's is the device's own split (readySplit). */
export async function readyTokenSplit(
  services: Services,
  device: DeviceRow,
  token: StablecoinInfo,
): Promise<{ split: Address; assetKey: Hex }> {
  const main = await readySplit(services, device);
  const { chain } = services;
  if (token.factory === chain.splitFactory) return main;
  const { split } = await chain.splitOf(main.assetKey, token);
  let verified = verifiedByChain.get(chain);
  if (!verified) verifiedByChain.set(chain, (verified = new Map()));
  const [assetOwner, operator] = [device.assetOwner as Address, device.operator as Address];
  const parties = `${assetOwner}:${operator}`.toLowerCase();
  const known = verified.get(split);
  if (known && known.parties === parties && Date.now() - known.at < RECIPIENTS_TTL_MS) return { split, assetKey: main.assetKey };

  const unreachable = () => {
    throw errors.unavailable("the chain is not reachable; retry shortly");
  };
  if (!(await chain.isSplitCreated(main.assetKey, token.factory).catch(unreachable))) {
    await requestTokenSplit(services, device, token, main.assetKey, split);
    const deadline = Date.now() + SPLIT_WAIT_MS;
    let created = false;
    while (!created && Date.now() < deadline) {
      services.txSender.wake();
      await new Promise((resolve) => setTimeout(resolve, SPLIT_POLL_MS));
      created = await chain.isSplitCreated(main.assetKey, token.factory).catch(unreachable);
    }
    if (!created) throw splitNotReady(device.id, `in ${token.symbol} is being created`);
  }
  const onChain = await chain.splitRecipients(split).catch(unreachable);
  if (!isAddressEqual(onChain.assetOwner, assetOwner) || !isAddressEqual(onChain.operator, operator)) {
    services.logger.error("a device's split in a second stablecoin pays other recipients than its payout parties", {
      deviceId: device.id,
      token: token.symbol,
      split,
      onChain,
      parties: { assetOwner, operator },
    });
    throw splitRecipientsMismatch(device.id);
  }
  if (verified.size >= RECIPIENTS_CACHE_SIZE) verified.delete(verified.keys().next().value!);
  verified.set(split, { parties, at: Date.now() });
  return { split, assetKey: main.assetKey };
}

/** Queues the creation of the device's split in `token` (once: its ref is the split's address; a failed creation
 * is asked for again under a new ref). */
async function requestTokenSplit(services: Services, device: DeviceRow, token: StablecoinInfo, assetKey: Hex, split: Address) {
  const [assetOwner, operator] = [device.assetOwner as Address, device.operator as Address];
  // The factory derives the asset key from the first recipients: only the device's parties of its main split's
  // creation give the same key.
  if (splitAssetKey(device.chainDeviceId as Hex, assetOwner, operator).toLowerCase() !== assetKey.toLowerCase()) {
    throw errors.invalid(
      `device ${device.id} takes no payment in ${token.symbol}, only in the main stablecoin: its payout parties changed after its split was created`,
      [{ path: "token", message: `device ${device.id} has no split in ${token.symbol}` }],
    );
  }
  const data = encodeFunctionData({
    abi: assetSplitFactoryAbi,
    functionName: "createSplit",
    args: [device.chainDeviceId as Hex, assetOwner, operator],
  });
  const creation = { kind: CREATE_SPLIT_TX_KIND, to: token.factory, data };
  const ref = `${CREATE_SPLIT_TX_KIND}:${split}`;
  const { db } = services.database;
  const { created } = await enqueueTransaction(db, { ...creation, ref });
  if (created) return;
  // Asked for before: again under a new ref if every creation so far failed (none queued, sent or mined).
  const [live] = await db
    .select({ id: chainTransactions.id })
    .from(chainTransactions)
    .where(
      and(
        or(eq(chainTransactions.ref, ref), like(chainTransactions.ref, `${ref}:%`)),
        notInArray(chainTransactions.status, ["failed", "reverted"]),
      ),
    )
    .limit(1);
  if (!live) await enqueueTransaction(db, { ...creation, ref: `${ref}:${newId("retry")}` });
}
