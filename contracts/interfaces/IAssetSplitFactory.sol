// SPDX-License-Identifier: MIT
pragma solidity ^0.8.28;

import {IERC20} from "@openzeppelin/contracts/token/ERC20/IERC20.sol";

/// @title IAssetSplitFactory
/// @notice Creates one split per asset ({AssetSplit}) at an address derived from the asset's key, and
/// administers them: recipients, pauses, surplus.
interface IAssetSplitFactory {
    /// @notice Emitted once per asset, when its split is created and initialised.
    /// @param split The split's address ({predictSplit} of `assetKey`).
    /// @param assetKey The asset's key (the device id of the router's orders).
    /// @param assetOwner Recipient of the asset-owner leg.
    /// @param operator Recipient of the operator leg.
    /// @param protocol Recipient of the protocol leg (the factory's).
    /// @param token The stablecoin the split settles in (the factory's).
    event SplitCreated(
        address indexed split,
        bytes32 indexed assetKey,
        address assetOwner,
        address operator,
        address protocol,
        address token
    );

    /// @notice The asset's split exists already (creation is once per asset key).
    error SplitAlreadyCreated(bytes32 assetKey, address split);
    /// @notice The asset has no split yet.
    error SplitNotFound(bytes32 assetKey, address split);

    /// @notice The stablecoin every split of this factory settles in.
    function token() external view returns (IERC20);

    /// @notice The payment router allowed to settle through every split of this factory.
    function router() external view returns (address);

    /// @notice The implementation the splits are clones of (deployed by the factory's constructor).
    function implementation() external view returns (address);

    /// @notice The address of the split of `assetKey`, whether it was created yet or not.
    /// @param assetKey The asset's key.
    function predictSplit(bytes32 assetKey) external view returns (address);
}
