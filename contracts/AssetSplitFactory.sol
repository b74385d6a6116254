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
/// Roles (the default admin has a two-step transfer with a delay):
/// - split creator (the service's hot wallet): creates an asset's split with its asset-owner and operator
///   recipients. Nobody else can, so nobody can take an asset key for recipients of their own.
/// - split manager (the service, on behalf of the asset's tenant): replaces a split's asset-owner and operator
///   recipients. Amounts accrued before stay with the recipients of the time. It cannot touch the protocol
///   leg or the shares: no role can, they are fixed at the factory's deployment.
/// - pauser: pauses and unpauses one split's settlements (withdrawals stay open).
/// - depositor: settles and deposits into any split besides the router (batch settlement).
/// - default admin: grants the roles and recovers a split's surplus (tokens sent to it directly).
///
/// Creation is once per asset key: creating an existing split reverts with {SplitAlreadyCreated}, which a
/// sender that retries can take as done ({isSplitCreated} tells beforehand).
contract AssetSplitFactory is IAssetSplitFactory, AccessControlDefaultAdminRules {
    /// @notice Role allowed to create splits.
    bytes32 public constant SPLIT_CREATOR_ROLE = keccak256("SPLIT_CREATOR_ROLE");
    /// @notice Role allowed to replace a split's asset-owner and operator recipients.
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

    /// @notice Deploys the factory and, as its first contract creation, the splits' implementation.
    /// @param token_ The stablecoin the splits settle in.
    /// @param router_ The payment router allowed to settle through the splits.
    /// @param protocolRecipient_ Recipient of every split's protocol leg.
    /// @param bps Shares of the asset-owner, operator and protocol legs in basis points (sum 10,000).
    /// @param initialAdmin Holder of the default admin role.
    /// @param adminTransferDelay Delay of a default admin transfer, in seconds.
    constructor(
        IERC20 token_,
        address router_,
        address protocolRecipient_,
        uint16[3] memory bps,
        address initialAdmin,
        uint48 adminTransferDelay
    ) AccessControlDefaultAdminRules(adminTransferDelay, initialAdmin) {
        _token = token_;
        _router = router_;
        _protocolRecipient = protocolRecipient_;
        (_assetOwnerBps, _operatorBps, _protocolBps) = (bps[0], bps[1], bps[2]);
        // Must stay the constructor's first (and only) contract creation: see SplitAddress.implementationOf.
        // The implementation checks the token, the router, the protocol recipient and the shares.
        _implementation = address(new AssetSplit(token_, router_, protocolRecipient_, bps));
    }

    /// @notice Creates and initialises the split of `assetKey`. Only for the split creator.
    /// @param assetKey The asset's key (the device id of the router's orders).
    /// @param assetOwner Recipient of the asset-owner leg.
    /// @param operator Recipient of the operator leg.
    /// @return split The split's address ({predictSplit} of `assetKey`).
    function createSplit(bytes32 assetKey, address assetOwner, address operator)
        external
        onlyRole(SPLIT_CREATOR_ROLE)
        returns (address split)
    {
        split = predictSplit(assetKey);
        // Checked first: CREATE2 onto an existing contract would fail only after burning the call's gas.
        if (split.code.length != 0) revert SplitAlreadyCreated(assetKey, split);
        Clones.cloneDeterministic(_implementation, SplitAddress.salt(address(_token), assetKey));
        AssetSplit(split).initialize(assetOwner, operator);
        emit SplitCreated(split, assetKey, assetOwner, operator, _protocolRecipient, address(_token));
    }

    /// @notice Replaces the asset-owner and operator recipients of `assetKey`'s split; the protocol leg and the
    /// shares stay. Amounts accrued before stay with their recipients. Only for the split manager.
    /// @param assetKey The asset's key.
    /// @param assetOwner New recipient of the asset-owner leg.
    /// @param operator New recipient of the operator leg.
    function setRecipients(bytes32 assetKey, address assetOwner, address operator)
        external
        onlyRole(SPLIT_MANAGER_ROLE)
    {
        _createdSplit(assetKey).setRecipients(assetOwner, operator);
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

    function _createdSplit(bytes32 assetKey) private view returns (AssetSplit split) {
        split = AssetSplit(predictSplit(assetKey));
        if (address(split).code.length == 0) revert SplitNotFound(assetKey, address(split));
    }
}
