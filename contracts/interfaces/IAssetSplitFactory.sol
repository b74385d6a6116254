// SPDX-License-Identifier: MIT
pragma solidity ^0.8.28;

import {IERC20} from "@openzeppelin/contracts/token/ERC20/IERC20.sol";

/// @title IAssetSplitFactory
/// @notice Creates one split per asset ({AssetSplit}) at an address derived from the asset's key, and
/// administers them: recipient changes (two-step, delayed, cancellable, lockable), pauses, surplus.
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

    /// @notice Emitted when the split manager proposes new recipients for a split.
    /// @param assetKey The split's asset key.
    /// @param split The split.
    /// @param assetOwner Proposed recipient of the asset-owner leg.
    /// @param operator Proposed recipient of the operator leg.
    /// @param executableAt When anyone may execute the change (unix seconds).
    event RecipientsProposed(
        bytes32 indexed assetKey, address indexed split, address assetOwner, address operator, uint48 executableAt
    );

    /// @notice Emitted when a proposed change is executed: the split's recipients are the proposed ones.
    /// @param assetKey The split's asset key.
    /// @param split The split.
    /// @param assetOwner New recipient of the asset-owner leg.
    /// @param operator New recipient of the operator leg.
    event RecipientsExecuted(bytes32 indexed assetKey, address indexed split, address assetOwner, address operator);

    /// @notice Emitted when a proposed change is cancelled (by the split's asset owner or the split manager).
    /// @param assetKey The split's asset key.
    /// @param split The split.
    /// @param by The account that cancelled it.
    event RecipientsCancelled(bytes32 indexed assetKey, address indexed split, address by);

    /// @notice Emitted when the split's asset owner locks its recipients for good.
    /// @param assetKey The split's asset key.
    /// @param split The split.
    event RecipientsLocked(bytes32 indexed assetKey, address indexed split);

    /// @notice The asset's split exists already (creation is once per asset key).
    error SplitAlreadyCreated(bytes32 assetKey, address split);
    /// @notice The asset has no split yet.
    error SplitNotFound(bytes32 assetKey, address split);

    /// @notice The split's recipients are locked: no change can be proposed or executed.
    error RecipientsAreLocked(bytes32 assetKey);
    /// @notice No change of the split's recipients is pending.
    error NoPendingRecipients(bytes32 assetKey);
    /// @notice The pending change may be executed from `executableAt` only.
    error RecipientsChangeNotReady(bytes32 assetKey, uint48 executableAt);
    /// @notice A proposed recipient of address zero or the split itself.
    error InvalidProposedRecipients(address assetOwner, address operator);
    /// @notice The caller is neither the split's asset-owner recipient nor (where allowed) the split manager.
    error NotAssetOwner(bytes32 assetKey, address caller);

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
