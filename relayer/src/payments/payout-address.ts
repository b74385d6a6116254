// Reading a payout party's address, apart from the split provisioning (payout-parties.ts) so that what only
// reads addresses (seeding) does not load the contracts' ABIs and the transaction sender.
import { type Address, getAddress, isAddress, zeroAddress } from "viem";

/** `text` as a payout address (EIP-55: a mixed-case address must carry a valid checksum), checksummed;
 * undefined if it is none or the zero address. */
export function payoutAddress(text: string): Address | undefined {
  if (text.length !== 42 || !isAddress(text, { strict: true })) return undefined;
  const address = getAddress(text);
  return address === zeroAddress ? undefined : address;
}
