// SPDX-License-Identifier: MIT
pragma solidity ^0.8.28;

import {Clones} from "@openzeppelin/contracts/proxy/Clones.sol";

/// @title SplitAddress
/// @notice Where {AssetSplitFactory} puts the split of an asset, shared by the factory
/// ({AssetSplitFactory-predictSplit}) and the router (which derives the address of an order's split from the
/// order instead of a registry).
///
/// For a factory at `factory` settling in `token`:
///
///     implementation = address(keccak256(0xd6 ‖ 0x94 ‖ factory ‖ 0x01)[12:])
///     salt           = keccak256(abi.encode(token, assetKey))
///     initCodeHash   = keccak256(0x3d602d80600a3d3981f3363d3d373d3d3d363d73 ‖ implementation ‖
///                                0x5af43d82803e903d91602b57fd5bf3)
///     split          = address(keccak256(0xff ‖ factory ‖ salt ‖ initCodeHash)[12:])
///
/// The implementation is the factory's first contract creation (CREATE with the factory's nonce 1, in its
/// constructor), the split an EIP-1167 clone of it deployed with CREATE2. The token is in the salt so that an
/// address derived for one token is never the split of another.
///
/// The asset key commits to the split's first recipients:
///
///     assetKey       = keccak256(abi.encode(deviceKey, assetOwner, operator))
///
/// so anyone may create a split ({AssetSplitFactory-createSplit}) and nobody can take a device's address for
/// recipients of their own: other recipients give another asset key, hence another split.
library SplitAddress {
    /// @notice The implementation a factory deployed in its constructor: its first CREATE (nonce 1).
    /// @param factory The factory.
    function implementationOf(address factory) internal pure returns (address) {
        return address(uint160(uint256(keccak256(abi.encodePacked(bytes2(0xd694), factory, bytes1(0x01))))));
    }

    /// @notice The asset key of the split of `deviceKey` created with `assetOwner` and `operator` as its first
    /// recipients (the device id of the router's orders).
    /// @param deviceKey The device's own key (keccak256 of its id in the relayer).
    /// @param assetOwner First recipient of the asset-owner leg.
    /// @param operator First recipient of the operator leg.
    function assetKeyOf(bytes32 deviceKey, address assetOwner, address operator) internal pure returns (bytes32) {
        return keccak256(abi.encode(deviceKey, assetOwner, operator));
    }

    /// @notice The CREATE2 salt of the split of `assetKey` settling in `token`.
    /// @param token The stablecoin the split settles in.
    /// @param assetKey The asset's key (the device id of the router's orders).
    function salt(address token, bytes32 assetKey) internal pure returns (bytes32) {
        return keccak256(abi.encode(token, assetKey));
    }

    /// @notice The address of the split of `assetKey` that `factory` creates (or created) for `token`.
    /// @param factory The factory.
    /// @param token The stablecoin the split settles in.
    /// @param assetKey The asset's key.
    function predict(address factory, address token, bytes32 assetKey) internal pure returns (address) {
        return Clones.predictDeterministicAddress(implementationOf(factory), salt(token, assetKey), factory);
    }
}
