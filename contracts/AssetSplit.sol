// SPDX-License-Identifier: MIT
pragma solidity ^0.8.28;

import {AccessControlDefaultAdminRules} from
    "@openzeppelin/contracts/access/extensions/AccessControlDefaultAdminRules.sol";
import {IERC20} from "@openzeppelin/contracts/token/ERC20/IERC20.sol";
import {SplitLedger} from "./base/SplitLedger.sol";

/// @title AssetSplit
/// @notice A split deployed on its own and administered by its own roles, registered with the payment router by
/// hand ({PaymentRouter-registerSplit}). It holds one stablecoin and splits every settlement between the asset
/// owner, the operator and the protocol (50/40/10 at deployment); the accounting is {SplitLedger}'s.
/// Per-asset splits are {AssetSplitClone}s created by {AssetSplitFactory} instead.
/// @dev Roles: the default admin (two-step transfer with a delay) changes the legs and recovers the surplus; the
/// depositor role (the payment router, batch depositors) records settlements; the pauser stops new settlements.
/// Withdrawals are never paused: credited funds always stay reachable by their recipients.
contract AssetSplit is SplitLedger, AccessControlDefaultAdminRules {
    /// @notice Role allowed to record settlements.
    bytes32 public constant DEPOSITOR_ROLE = keccak256("DEPOSITOR_ROLE");
    /// @notice Role allowed to pause and unpause settlements.
    bytes32 public constant PAUSER_ROLE = keccak256("PAUSER_ROLE");

    address[3] private _legRecipients;

    /// @notice Deploys the split with its asset and its three legs; only the default admin holds a role.
    /// @param asset_ The stablecoin settled in.
    /// @param initialAdmin Holder of the default admin role.
    /// @param adminTransferDelay Delay of a default admin transfer, in seconds.
    /// @param recipients Recipients of the asset-owner, operator and protocol legs.
    /// @param bps Shares of those legs in basis points (sum 10,000).
    constructor(
        IERC20 asset_,
        address initialAdmin,
        uint48 adminTransferDelay,
        address[3] memory recipients,
        uint16[3] memory bps
    ) SplitLedger(asset_) AccessControlDefaultAdminRules(adminTransferDelay, initialAdmin) {
        _setLegs(recipients, bps);
    }

    /// @notice Replaces the legs' recipients and shares. Amounts credited before stay with their recipients.
    /// @param recipients Recipients of the asset-owner, operator and protocol legs.
    /// @param bps Shares of those legs in basis points (sum 10,000).
    function setLegs(address[3] calldata recipients, uint16[3] calldata bps) external onlyRole(DEFAULT_ADMIN_ROLE) {
        _setLegs(recipients, bps);
    }

    /// @notice Sends the surplus (tokens sent here directly, owed to no one) to `to`. Only for the admin.
    /// @param to The account to send it to.
    /// @return amount The amount sent.
    function recoverSurplus(address to) external onlyRole(DEFAULT_ADMIN_ROLE) nonReentrant returns (uint256 amount) {
        return _recoverSurplus(to);
    }

    /// @notice Stops new settlements and deposits. Withdrawals stay open.
    function pause() external onlyRole(PAUSER_ROLE) {
        _pause();
    }

    /// @notice Resumes settlements and deposits.
    function unpause() external onlyRole(PAUSER_ROLE) {
        _unpause();
    }

    function _authorizeDepositor() internal view override {
        _checkRole(DEPOSITOR_ROLE);
    }

    function _recipients() internal view override returns (address[3] memory) {
        return _legRecipients;
    }

    function _setLegs(address[3] memory recipients, uint16[3] memory bps) private {
        for (uint256 i; i < 3; ++i) {
            _checkRecipient(i, recipients[i]);
        }
        _setShares(bps);
        _checkpoint();
        _legRecipients = recipients;
        emit LegsUpdated(recipients, bps);
    }
}
