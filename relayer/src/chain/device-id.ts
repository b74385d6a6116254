// The on-chain id of a device, apart from the chain connection so that what only needs the id (seeding) does
// not load the contracts' ABIs.
import { type Hex, keccak256, toHex } from "viem";

/** The on-chain device id an order carries: keccak256 of the public device id. */
export function chainDeviceId(deviceId: string): Hex {
  return keccak256(toHex(deviceId));
}
