// SPDX-License-Identifier: MIT
pragma solidity ^0.8.28;

import {AccessControlDefaultAdminRules} from
    "@openzeppelin/contracts/access/extensions/AccessControlDefaultAdminRules.sol";
import {Clones} from "@openzeppelin/contracts/proxy/Clones.sol";
import {IERC20} from "@openzeppelin/contracts/token/ERC20/IERC20.sol";
import {AssetSplit} from "./AssetSplit.sol";
import {IAssetSplitFactory} from "./interfaces/IAssetSplitFactory.sol";
import {SplitAddress} from "./libraries/SplitAddress.sol";

/// @title AssetSplitFactory
/// @notice Creates the split of each asset: an {AssetSplit} (EIP-1167) at a CREATE2 address anyone can
/// compute from the asset's key ({predictSplit}, formula in {SplitAddress}), settling in the factory's token,
/// through the factory's router, with the factory's protocol recipient and shares (50/40/10). The router pays
/// through any split its factory created without registering it: it derives the split's address from the order.
///
/// Creation is permissionless and cannot be squatted: a split's asset key commits to its first recipients
/// ({assetKeyOf}: keccak256 of the device key, the asset owner and the operator), so a creation with other
/// recipients lands at another address, which no order of the device names. Anyone may create a split, once
/// per asset key: creating an existing one reverts with {SplitAlreadyCreated} (a sender that retries reads the
/// split's recipients, {AssetSplit-legs}, before taking it as done).
///
/// Recipient changes are two-step: the split manager proposes ({proposeRecipients}), anyone executes after the
/// delay fixed at deployment ({executeRecipients}); until then the split's current asset-owner recipient or the
/// manager may cancel ({cancelRecipients}). The asset-owner recipient may lock the split's recipients for good
/// ({lockRecipients}). Amounts accrued before a change stay with the recipients of the time. No role can touch
/// the protocol leg or the shares: they are fixed at the factory's deployment.
///
/// Roles (the default admin has a two-step transfer with a delay). None of them belongs on the service's hot
/// wallet, which needs none: it sends creations, which anyone may.
/// - split manager (an offline signer: hardware key, KMS or multisig): proposes recipient changes.
/// - pauser: pauses and unpauses one split's settlements (withdrawals stay open).
/// - depositor: settles and deposits into any split besides the router (batch settlement).
/// - default admin: grants the roles and recovers a split's surplus (tokens sent to it directly).
contract AssetSplitFactory is IAssetSplitFactory, AccessControlDefaultAdminRules {
    /// @notice Role allowed to propose a change of a split's asset-owner and operator recipients.
    bytes32 public constant SPLIT_MANAGER_ROLE = keccak256("SPLIT_MANAGER_ROLE");
    /// @notice Role allowed to pause and unpause a split.
    bytes32 public constant PAUSER_ROLE = keccak256("PAUSER_ROLE");
    /// @notice Role allowed to settle and deposit into the splits besides the router.
    bytes32 public constant DEPOSITOR_ROLE = keccak256("DEPOSITOR_ROLE");

    IERC20 private immutable _token;
    address private immutable _router;
    address private immutable _implementation;
    address private immutable _protocolRecipient;
    uint16 private immutable _assetOwnerBps;
    uint16 private immutable _operatorBps;
    uint16 private immutable _protocolBps;
    uint48 private immutable _recipientChangeDelay;

    /// @dev A split's pending recipient change (zero `executableAt`: none) and its lock, in two slots.
    struct RecipientChange {
        address assetOwner;
        uint48 executableAt;
        bool locked;
        address operator;
    }

    mapping(bytes32 assetKey => RecipientChange) private _changes;

    /// @notice Deploys the factory and, as its first contract creation, the splits' implementation.
    /// @param token_ The stablecoin the splits settle in.
    /// @param router_ The payment router allowed to settle through the splits.
    /// @param protocolRecipient_ Recipient of every split's protocol leg.
    /// @param bps Shares of the asset-owner, operator and protocol legs in basis points (sum 10,000).
    /// @param initialAdmin Holder of the default admin role.
    /// @param adminTransferDelay Delay of a default admin transfer, in seconds.
    /// @param recipientChangeDelay_ Delay between the proposal of a recipient change and its execution, in seconds
    /// (fixed: long enough for an asset owner to see and cancel a change it did not want).
    constructor(
        IERC20 token_,
        address router_,
        address protocolRecipient_,
        uint16[3] memory bps,
        address initialAdmin,
        uint48 adminTransferDelay,
        uint48 recipientChangeDelay_
    ) AccessControlDefaultAdminRules(adminTransferDelay, initialAdmin) {
        _token = token_;
        _router = router_;
        _protocolRecipient = protocolRecipient_;
        (_assetOwnerBps, _operatorBps, _protocolBps) = (bps[0], bps[1], bps[2]);
        _recipientChangeDelay = recipientChangeDelay_;
        // Must stay the constructor's first (and only) contract creation: see SplitAddress.implementationOf.
        // The implementation checks the token, the router, the protocol recipient and the shares.
        _implementation = address(new AssetSplit(token_, router_, protocolRecipient_, bps));
    }

    /// @notice Creates and initialises the split of `deviceKey` with `assetOwner` and `operator` as its first
    /// recipients, at the asset key {assetKeyOf} gives them. Anyone may call it: other recipients give another
    /// asset key, so a creation can never take the split of someone else's recipients.
    /// @param deviceKey The device's own key.
    /// @param assetOwner Recipient of the asset-owner leg.
    /// @param operator Recipient of the operator leg.
    /// @return split The split's address ({predictSplit} of the asset key).
    function createSplit(bytes32 deviceKey, address assetOwner, address operator) external returns (address split) {
        bytes32 assetKey = SplitAddress.assetKeyOf(deviceKey, assetOwner, operator);
        split = predictSplit(assetKey);
        // Checked first: CREATE2 onto an existing contract would fail only after burning the call's gas.
        if (split.code.length != 0) revert SplitAlreadyCreated(assetKey, split);
        Clones.cloneDeterministic(_implementation, SplitAddress.salt(address(_token), assetKey));
        AssetSplit(split).initialize(assetOwner, operator);
        emit SplitCreated(split, assetKey, assetOwner, operator, _protocolRecipient, address(_token));
    }

    /// @notice Proposes new asset-owner and operator recipients for `assetKey`'s split, executable by anyone
    /// after {recipientChangeDelay}. Replaces a pending proposal (and restarts its delay). Only for the split
    /// manager, and not once the split's recipients are locked.
    /// @param assetKey The split's asset key.
    /// @param assetOwner Proposed recipient of the asset-owner leg.
    /// @param operator Proposed recipient of the operator leg.
    /// @return executableAt When the change may be executed (unix seconds).
    function proposeRecipients(bytes32 assetKey, address assetOwner, address operator)
        external
        onlyRole(SPLIT_MANAGER_ROLE)
        returns (uint48 executableAt)
    {
        address split = address(_createdSplit(assetKey));
        RecipientChange storage change = _changes[assetKey];
        if (change.locked) revert RecipientsAreLocked(assetKey);
        if (assetOwner == address(0) || operator == address(0) || assetOwner == split || operator == split) {
            revert InvalidProposedRecipients(assetOwner, operator);
        }
        executableAt = uint48(block.timestamp) + _recipientChangeDelay;
        (change.assetOwner, change.executableAt, change.operator) = (assetOwner, executableAt, operator);
        emit RecipientsProposed(assetKey, split, assetOwner, operator, executableAt);
    }

    /// @notice Executes the pending recipient change of `assetKey`'s split once its delay has passed. Anyone may
    /// call it. Amounts accrued before stay with their recipients.
    /// @param assetKey The split's asset key.
    function executeRecipients(bytes32 assetKey) external {
        AssetSplit split = _createdSplit(assetKey);
        RecipientChange memory change = _changes[assetKey];
        if (change.executableAt == 0) revert NoPendingRecipients(assetKey);
        if (block.timestamp < change.executableAt) revert RecipientsChangeNotReady(assetKey, change.executableAt);
        _clearPending(assetKey);
        split.setRecipients(change.assetOwner, change.operator);
        emit RecipientsExecuted(assetKey, address(split), change.assetOwner, change.operator);
    }

    /// @notice Cancels the pending recipient change of `assetKey`'s split. Only for the split's current
    /// asset-owner recipient and the split manager.
    /// @param assetKey The split's asset key.
    function cancelRecipients(bytes32 assetKey) external {
        AssetSplit split = _createdSplit(assetKey);
        if (!hasRole(SPLIT_MANAGER_ROLE, msg.sender)) _checkAssetOwner(assetKey, split);
        if (_changes[assetKey].executableAt == 0) revert NoPendingRecipients(assetKey);
        _clearPending(assetKey);
        emit RecipientsCancelled(assetKey, address(split), msg.sender);
    }

    /// @notice Makes the recipients of `assetKey`'s split immutable, for good, and drops a pending change. Only
    /// for the split's current asset-owner recipient.
    /// @param assetKey The split's asset key.
    function lockRecipients(bytes32 assetKey) external {
        AssetSplit split = _createdSplit(assetKey);
        _checkAssetOwner(assetKey, split);
        if (_changes[assetKey].locked) revert RecipientsAreLocked(assetKey);
        _changes[assetKey] = RecipientChange(address(0), 0, true, address(0));
        emit RecipientsLocked(assetKey, address(split));
    }

    /// @notice Stops new settlements through `assetKey`'s split (withdrawals stay open). Only for the pauser.
    /// @param assetKey The asset's key.
    function pauseSplit(bytes32 assetKey) external onlyRole(PAUSER_ROLE) {
        _createdSplit(assetKey).pause();
    }

    /// @notice Resumes settlements through `assetKey`'s split. Only for the pauser.
    /// @param assetKey The asset's key.
    function unpauseSplit(bytes32 assetKey) external onlyRole(PAUSER_ROLE) {
        _createdSplit(assetKey).unpause();
    }

    /// @notice Sends the surplus of `assetKey`'s split (tokens sent to it directly, owed to no one) to `to`.
    /// Only for the default admin.
    /// @param assetKey The asset's key.
    /// @param to The account to send it to.
    /// @return amount The amount sent.
    function recoverSurplus(bytes32 assetKey, address to) external onlyRole(DEFAULT_ADMIN_ROLE) returns (uint256) {
        return _createdSplit(assetKey).recoverSurplus(to);
    }

    /// @inheritdoc IAssetSplitFactory
    function token() external view returns (IERC20) {
        return _token;
    }

    /// @inheritdoc IAssetSplitFactory
    function router() external view returns (address) {
        return _router;
    }

    /// @inheritdoc IAssetSplitFactory
    function implementation() external view returns (address) {
        return _implementation;
    }

    /// @notice Recipient of every split's protocol leg.
    function protocolRecipient() external view returns (address) {
        return _protocolRecipient;
    }

    /// @notice The asset key of the split of `deviceKey` created with `assetOwner` and `operator` as its first
    /// recipients ({SplitAddress-assetKeyOf}).
    /// @param deviceKey The device's own key.
    /// @param assetOwner First recipient of the asset-owner leg.
    /// @param operator First recipient of the operator leg.
    function assetKeyOf(bytes32 deviceKey, address assetOwner, address operator) external pure returns (bytes32) {
        return SplitAddress.assetKeyOf(deviceKey, assetOwner, operator);
    }

    /// @notice The pending recipient change of `assetKey`'s split (all zero: none).
    /// @param assetKey The split's asset key.
    /// @return assetOwner Proposed recipient of the asset-owner leg.
    /// @return operator Proposed recipient of the operator leg.
    /// @return executableAt When it may be executed (unix seconds; zero: nothing pending).
    function pendingRecipients(bytes32 assetKey)
        external
        view
        returns (address assetOwner, address operator, uint48 executableAt)
    {
        RecipientChange memory change = _changes[assetKey];
        return (change.assetOwner, change.operator, change.executableAt);
    }

    /// @notice Whether the recipients of `assetKey`'s split are locked for good.
    /// @param assetKey The split's asset key.
    function recipientsLocked(bytes32 assetKey) external view returns (bool) {
        return _changes[assetKey].locked;
    }

    /// @notice Delay between the proposal of a recipient change and its execution, in seconds.
    function recipientChangeDelay() external view returns (uint48) {
        return _recipientChangeDelay;
    }

    /// @notice Whether the split of `assetKey` was created.
    /// @param assetKey The asset's key.
    function isSplitCreated(bytes32 assetKey) external view returns (bool) {
        return predictSplit(assetKey).code.length != 0;
    }

    /// @inheritdoc IAssetSplitFactory
    function predictSplit(bytes32 assetKey) public view returns (address) {
        return SplitAddress.predict(address(this), address(_token), assetKey);
    }

    /// @notice Shares of every split's asset-owner, operator and protocol legs in basis points (sum 10,000).
    function legShares() external view returns (uint16[3] memory) {
        return [_assetOwnerBps, _operatorBps, _protocolBps];
    }

    function _clearPending(bytes32 assetKey) private {
        RecipientChange storage change = _changes[assetKey];
        (change.assetOwner, change.executableAt, change.operator) = (address(0), 0, address(0));
    }

    /// @dev The split's current asset-owner recipient only (read from the split: it follows executed changes).
    function _checkAssetOwner(bytes32 assetKey, AssetSplit split) private view {
        (address[3] memory recipients,) = split.legs();
        if (msg.sender != recipients[0]) revert NotAssetOwner(assetKey, msg.sender);
    }

    function _createdSplit(bytes32 assetKey) private view returns (AssetSplit split) {
        split = AssetSplit(predictSplit(assetKey));
        if (address(split).code.length == 0) revert SplitNotFound(assetKey, address(split));
    }
}
