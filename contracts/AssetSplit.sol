// SPDX-License-Identifier: MIT
pragma solidity ^0.8.28;

import {AccessControlDefaultAdminRules} from
    "@openzeppelin/contracts/access/extensions/AccessControlDefaultAdminRules.sol";
import {IERC20} from "@openzeppelin/contracts/token/ERC20/IERC20.sol";
import {SafeERC20} from "@openzeppelin/contracts/token/ERC20/utils/SafeERC20.sol";
import {SafeCast} from "@openzeppelin/contracts/utils/math/SafeCast.sol";
import {Pausable} from "@openzeppelin/contracts/utils/Pausable.sol";
import {ReentrancyGuardTransient} from "@openzeppelin/contracts/utils/ReentrancyGuardTransient.sol";
import {IAssetSplit} from "./interfaces/IAssetSplit.sol";

/// @title AssetSplit
/// @notice Holds one stablecoin and splits every settlement between three legs: the asset owner, the
/// operator and the protocol (50/40/10 at deployment). Each leg's share is credited to its recipient, who
/// withdraws it, or anyone pushes it to them. A recipient that cannot receive (a blocklisted address, a
/// reverting contract) therefore never blocks a payment.
/// @dev Settlements only add to three packed per-leg accruals (two storage slots); the accruals are moved
/// to the recipients' credit at the next withdrawal or leg change, so each settlement is credited to the
/// recipients in place when it happened. Invariant: the token balance is at least the sum of all credits
/// and accruals (equal, unless someone sent tokens here directly).
/// Roles: the default admin (two-step transfer with a delay) changes the legs; the depositor role
/// (the payment router, batch depositors) records settlements; the pauser stops new settlements.
/// Withdrawals are never paused: credited funds always stay reachable by their recipients.
contract AssetSplit is IAssetSplit, AccessControlDefaultAdminRules, Pausable, ReentrancyGuardTransient {
    using SafeERC20 for IERC20;

    /// @notice Role allowed to record settlements.
    bytes32 public constant DEPOSITOR_ROLE = keccak256("DEPOSITOR_ROLE");
    /// @notice Role allowed to pause and unpause settlements.
    bytes32 public constant PAUSER_ROLE = keccak256("PAUSER_ROLE");

    /// @notice Index of the asset-owner leg; it also receives the rounding remainder.
    uint256 public constant LEG_ASSET_OWNER = 0;
    /// @notice Index of the operator leg.
    uint256 public constant LEG_OPERATOR = 1;
    /// @notice Index of the protocol leg.
    uint256 public constant LEG_PROTOCOL = 2;
    /// @notice The sum of the legs' shares.
    uint16 public constant TOTAL_BPS = 10_000;

    /// @dev What settlements touch, packed in two slots: the amounts each leg accrued since the last
    /// checkpoint, and the operator and protocol shares (the asset-owner share is the rest of 10,000).
    /// Accruals move to their recipients' credit at a checkpoint: before any withdrawal or leg change.
    /// `held` is what this contract owes in total (credits and accruals): every settlement must be backed by
    /// tokens beyond it, so `asset.balanceOf(this) >= held` always holds; the rest is surplus.
    struct Accrual {
        uint128 assetOwner;
        uint128 operator;
        uint128 protocol;
        uint16 operatorBps;
        uint16 protocolBps;
        uint96 held;
    }

    IERC20 private immutable _asset;
    Accrual private _accrual;
    address[3] private _recipients;
    mapping(address recipient => uint256) private _credited;

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
    ) AccessControlDefaultAdminRules(adminTransferDelay, initialAdmin) {
        if (address(asset_) == address(0)) revert InvalidAsset();
        _asset = asset_;
        _setLegs(recipients, bps);
    }

    /// @inheritdoc IAssetSplit
    function asset() external view returns (IERC20) {
        return _asset;
    }

    /// @notice Recipients and shares of the three legs (asset owner, operator, protocol).
    /// @return recipients The legs' recipients, in that order.
    /// @return bps The legs' shares in basis points, in the same order (sum 10,000).
    function legs() external view returns (address[3] memory recipients, uint16[3] memory bps) {
        Accrual memory a = _accrual;
        recipients = _recipients;
        bps = [TOTAL_BPS - a.operatorBps - a.protocolBps, a.operatorBps, a.protocolBps];
    }

    /// @notice The three leg amounts of a settlement of `gross`. They sum to `gross` exactly: the operator
    /// and protocol legs are rounded down and the asset-owner leg takes the remainder.
    /// @param gross The settlement's amount.
    /// @return amounts The asset-owner, operator and protocol legs' amounts, in that order.
    function previewSplit(uint256 gross) external view returns (uint256[3] memory amounts) {
        Accrual memory a = _accrual;
        (amounts[LEG_ASSET_OWNER], amounts[LEG_OPERATOR], amounts[LEG_PROTOCOL]) = _legAmounts(gross, a);
    }

    /// @inheritdoc IAssetSplit
    function claimable(address recipient) external view returns (uint256 amount) {
        amount = _credited[recipient];
        Accrual memory a = _accrual;
        if (_recipients[LEG_ASSET_OWNER] == recipient) amount += a.assetOwner;
        if (_recipients[LEG_OPERATOR] == recipient) amount += a.operator;
        if (_recipients[LEG_PROTOCOL] == recipient) amount += a.protocol;
    }

    /// @notice Tokens held beyond what is owed (sent here directly): recoverable by the admin only. Zero if the
    /// token took some of the balance away (a rebase, a seizure): settlements then revert until it is restored.
    function surplus() public view returns (uint256) {
        uint256 balance = _asset.balanceOf(address(this));
        uint256 held = _accrual.held;
        return balance > held ? balance - held : 0;
    }

    /// @inheritdoc IAssetSplit
    /// @dev Reverts with {UnbackedSettlement} unless the balance covers everything owed plus `gross`.
    function settle(bytes32 ref, uint256 gross) external onlyRole(DEPOSITOR_ROLE) whenNotPaused {
        uint256 available = surplus();
        if (available < gross) revert UnbackedSettlement(gross, available);
        _split(ref, gross);
    }

    /// @inheritdoc IAssetSplit
    function deposit(bytes32 ref, uint256 gross) external onlyRole(DEPOSITOR_ROLE) whenNotPaused nonReentrant {
        uint256 before = _asset.balanceOf(address(this));
        _asset.safeTransferFrom(msg.sender, address(this), gross);
        uint256 received = _asset.balanceOf(address(this)) - before;
        if (received != gross) revert UnexpectedBalance(gross, received);
        _split(ref, gross);
    }

    /// @inheritdoc IAssetSplit
    function withdraw(address to) external nonReentrant returns (uint256) {
        return _payOut(msg.sender, to);
    }

    /// @inheritdoc IAssetSplit
    function release(address recipient) external nonReentrant returns (uint256) {
        return _payOut(recipient, recipient);
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
        amount = surplus();
        if (amount == 0) revert NothingToWithdraw(address(this));
        emit SurplusRecovered(to, amount);
        _asset.safeTransfer(to, amount);
    }

    /// @notice Stops new settlements and deposits. Withdrawals stay open.
    function pause() external onlyRole(PAUSER_ROLE) {
        _pause();
    }

    /// @notice Resumes settlements and deposits.
    function unpause() external onlyRole(PAUSER_ROLE) {
        _unpause();
    }

    function _split(bytes32 ref, uint256 gross) private {
        if (gross == 0) revert ZeroAmount();
        Accrual memory a = _accrual;
        (uint256 assetOwner, uint256 operator, uint256 protocol) = _legAmounts(gross, a);
        a.assetOwner = SafeCast.toUint128(a.assetOwner + assetOwner);
        a.operator = SafeCast.toUint128(a.operator + operator);
        a.protocol = SafeCast.toUint128(a.protocol + protocol);
        a.held = SafeCast.toUint96(a.held + gross);
        _accrual = a;
        emit YieldDeposited(ref, msg.sender, gross, assetOwner, operator, protocol);
    }

    function _legAmounts(uint256 gross, Accrual memory a)
        private
        pure
        returns (uint256 assetOwner, uint256 operator, uint256 protocol)
    {
        operator = gross * a.operatorBps / TOTAL_BPS;
        protocol = gross * a.protocolBps / TOTAL_BPS;
        assetOwner = gross - operator - protocol;
    }

    /// @dev Moves every leg's accrual to its current recipient's credit.
    function _checkpoint() private {
        Accrual memory a = _accrual;
        if (a.assetOwner == 0 && a.operator == 0 && a.protocol == 0) return;
        _credited[_recipients[LEG_ASSET_OWNER]] += a.assetOwner;
        _credited[_recipients[LEG_OPERATOR]] += a.operator;
        _credited[_recipients[LEG_PROTOCOL]] += a.protocol;
        (a.assetOwner, a.operator, a.protocol) = (0, 0, 0);
        _accrual = a;
    }

    function _payOut(address recipient, address to) private returns (uint256 amount) {
        _checkpoint();
        amount = _credited[recipient];
        if (amount == 0) revert NothingToWithdraw(recipient);
        _credited[recipient] = 0;
        _accrual.held -= uint96(amount);
        emit Withdrawn(recipient, to, amount);
        _asset.safeTransfer(to, amount);
    }

    function _setLegs(address[3] memory recipients, uint16[3] memory bps) private {
        uint256 sum;
        for (uint256 i; i < 3; ++i) {
            if (recipients[i] == address(0)) revert InvalidRecipient(i);
            sum += bps[i];
        }
        if (sum != TOTAL_BPS) revert InvalidBasisPoints(sum);
        _checkpoint();
        _recipients = recipients;
        _accrual.operatorBps = bps[LEG_OPERATOR];
        _accrual.protocolBps = bps[LEG_PROTOCOL];
        emit LegsUpdated(recipients, bps);
    }
}
