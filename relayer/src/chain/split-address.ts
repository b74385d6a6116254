// Where AssetSplitFactory puts an asset's split, computed off-chain with the factory's formula
// (contracts/libraries/SplitAddress.sol): the implementation is the factory's first CREATE (nonce 1), the
// split an EIP-1167 clone of it at CREATE2 with salt keccak256(abi.encode(token, assetKey)), where the asset key
// commits to the split's first recipients: keccak256(abi.encode(deviceKey, assetOwner, operator)).
import { type Address, type Hex, concatHex, encodeAbiParameters, getAddress, getContractAddress, keccak256 } from "viem";

/** The asset key of the split of `deviceKey` (a device's chainDeviceId) created with `assetOwner` and `operator`
 * as its first recipients: the device id of the router's orders (SplitAddress.assetKeyOf). */
export function splitAssetKey(deviceKey: Hex, assetOwner: Address, operator: Address): Hex {
  return keccak256(encodeAbiParameters([{ type: "bytes32" }, { type: "address" }, { type: "address" }], [deviceKey, assetOwner, operator]));
}

/** The implementation `factory` deployed in its constructor. */
export function splitImplementationOf(factory: Address): Address {
  return getContractAddress({ opcode: "CREATE", from: factory, nonce: 1n });
}

/** keccak256 of the init code of `factory`'s splits (an EIP-1167 clone of its implementation), by lower-case
 * factory address: the same for every split of the factory, so computed once. */
const initCodeHashes = new Map<string, string>();

function splitInitCodeHash(factory: Address): string {
  const key = factory.toLowerCase();
  let hash = initCodeHashes.get(key);
  if (hash === undefined) {
    const initCode = concatHex([
      "0x3d602d80600a3d3981f3363d3d373d3d3d363d73",
      splitImplementationOf(factory),
      "0x5af43d82803e903d91602b57fd5bf3",
    ]);
    hash = keccak256(initCode).slice(2);
    initCodeHashes.set(key, hash);
  }
  return hash;
}

/** Predicted split addresses, by factory, token and asset key: a pure function, asked for every device of a tenant
 * on each revenue read (each device's splits in the second stablecoins), so remembered for the most recent. */
const predicted = new Map<string, Address>();
const PREDICTED_CACHE_SIZE = 200_000;

/** The address of the split of `assetKey` (the bytes32 device id of the router's orders) that `factory`
 * creates, or created, for `token`: the factory's predictSplit. */
export function predictSplitAddress(factory: Address, token: Address, assetKey: Hex): Address {
  const key = `${factory}${token}${assetKey}`.toLowerCase();
  let split = predicted.get(key);
  if (split === undefined) {
    // salt = keccak256(abi.encode(token, assetKey)): two 32-byte words; the address is the last 20 bytes of
    // keccak256(0xff ‖ factory ‖ salt ‖ initCodeHash) (CREATE2).
    const salt = keccak256(`0x${token.slice(2).toLowerCase().padStart(64, "0")}${assetKey.slice(2).toLowerCase()}`).slice(2);
    split = getAddress(`0x${keccak256(`0xff${factory.slice(2).toLowerCase()}${salt}${splitInitCodeHash(factory)}`).slice(26)}`);
    if (predicted.size >= PREDICTED_CACHE_SIZE) predicted.delete(predicted.keys().next().value!);
    predicted.set(key, split);
  }
  return split;
}
