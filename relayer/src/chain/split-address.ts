// Where AssetSplitFactory puts an asset's split, computed off-chain with the factory's formula
// (contracts/libraries/SplitAddress.sol): the implementation is the factory's first CREATE (nonce 1), the
// split an EIP-1167 clone of it at CREATE2 with salt keccak256(abi.encode(token, assetKey)), where the asset key
// commits to the split's first recipients: keccak256(abi.encode(deviceKey, assetOwner, operator)).
import { type Address, type Hex, concatHex, encodeAbiParameters, getContractAddress, keccak256 } from "viem";

/** The asset key of the split of `deviceKey` (a device's chainDeviceId) created with `assetOwner` and `operator`
 * as its first recipients: the device id of the router's orders (SplitAddress.assetKeyOf). */
export function splitAssetKey(deviceKey: Hex, assetOwner: Address, operator: Address): Hex {
  return keccak256(encodeAbiParameters([{ type: "bytes32" }, { type: "address" }, { type: "address" }], [deviceKey, assetOwner, operator]));
}

/** The implementation `factory` deployed in its constructor. */
export function splitImplementationOf(factory: Address): Address {
  return getContractAddress({ opcode: "CREATE", from: factory, nonce: 1n });
}

/** The address of the split of `assetKey` (the bytes32 device id of the router's orders) that `factory`
 * creates, or created, for `token`: the factory's predictSplit. */
export function predictSplitAddress(factory: Address, token: Address, assetKey: Hex): Address {
  const salt = keccak256(encodeAbiParameters([{ type: "address" }, { type: "bytes32" }], [token, assetKey]));
  const initCode = concatHex([
    "0x3d602d80600a3d3981f3363d3d373d3d3d363d73",
    splitImplementationOf(factory),
    "0x5af43d82803e903d91602b57fd5bf3",
  ]);
  return getContractAddress({ opcode: "CREATE2", from: factory, salt, bytecodeHash: keccak256(initCode) });
}
