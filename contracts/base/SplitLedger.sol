// SPDX-License-Identifier: MIT
pragma solidity ^0.8.28;

import {IERC20} from "@openzeppelin/contracts/token/ERC20/IERC20.sol";
import {SafeERC20} from "@openzeppelin/contracts/token/ERC20/utils/SafeERC20.sol";
import {SafeCast} from "@openzeppelin/contracts/utils/math/SafeCast.sol";
import {Pausable} from "@openzeppelin/contracts/utils/Pausable.sol";
import {ReentrancyGuardTransient} from "@openzeppelin/contracts/utils/ReentrancyGuardTransient.sol";
import {IAssetSplit} from "../interfaces/IAssetSplit.sol";

/// @title SplitLedger
/// @notice The accounting every split shares: one stablecoin, three legs (asset owner, operator, protocol), each
/// settlement split between them and credited to their recipients, who withdraw it, or anyone pushes it to them.
/// A recipient that cannot receive (a blocklisted address, a reverting contract) therefore never blocks a payment.
/// @dev Settlements only add to the accruals of {Ledger} (one storage slot, which also holds the pause flag and
/// the total owed); the accruals move to the recipients' credit at the next withdrawal or recipient change
/// (a checkpoint), so each settlement is credited to the recipients in place when it happened. Invariant: the
/// token balance is at least the sum of all credits and accruals (equal, unless someone sent tokens here
/// directly). Who settles, who changes the legs, who pauses, and where the recipients and shares live is the
/// derived contract's ({AssetSplit}): {_authorizeDepositor}, {_recipients} and {_shares}. Withdrawals are never
/// paused.
abstract contract SplitLedger is IAssetSplit, Pausable, ReentrancyGuardTransient {
    using SafeERC20 for IERC20;

    /// @notice Index of the asset-owner leg; it also receives the rounding remainder.
    uint256 public constant LEG_ASSET_OWNER = 0;
    /// @notice Index of the operator leg.
    uint256 public constant LEG_OPERATOR = 1;
    /// @notice Index of the protocol leg.
    uint256 public constant LEG_PROTOCOL = 2;
    /// @notice The sum of the legs' shares.
    uint16 public constant TOTAL_BPS = 10_000;

    /// @dev Everything a settlement reads and writes, in one slot (one cold read and one write per payment
    /// instead of two of each): what this contract owes in total (`held`: credits and accruals), the amounts
    /// the operator and protocol legs accrued since the last checkpoint, and the pause flag. The asset-owner
    /// leg's accrual is not stored: it is the rest of what was settled since the checkpoint,
    /// `held - credited - operator - protocol` ({Credits}), exactly the sum of the asset-owner legs of those
    /// settlements, since every settlement adds `gross` to `held` and its other two legs to their fields.
    /// `held` must be backed by tokens: every settlement needs tokens beyond it, so
    /// `asset.balanceOf(this) >= held` always holds; the rest is surplus. A uint96 `held` caps what the split
    /// can owe; an accrual that would not fit its uint72 is credited straight away instead ({_split}).
    struct Ledger {
        uint96 held;
        uint72 operator;
        uint72 protocol;
        bool paused;
    }

    /// @dev Written only at checkpoints and payouts, never by a settlement: the sum of all recipients' credits.
    /// `credited <= held`.
    struct Credits {
        uint96 credited;
    }

    IERC20 private immutable _asset;
    Ledger private _ledger;
    Credits private _credits;
    mapping(address recipient => uint256) private _credited;

    /// @notice Sets the stablecoin settled in.
    /// @param asset_ The stablecoin settled in.
    constructor(IERC20 asset_) {
        if (address(asset_) == address(0)) revert InvalidAsset();
        _asset = asset_;
    }

    /// @inheritdoc IAssetSplit
    function asset() external view returns (IERC20) {
        return _asset;
    }

    /// @notice Recipients and shares of the three legs (asset owner, operator, protocol).
    /// @return recipients The legs' recipients, in that order.
    /// @return bps The legs' shares in basis points, in the same order (sum 10,000).
    function legs() external view returns (address[3] memory recipients, uint16[3] memory bps) {
        return (_recipients(), _legShares());
    }

    /// @notice The three leg amounts of a settlement of `gross`. They sum to `gross` exactly: the operator
    /// and protocol legs are rounded down and the asset-owner leg takes the remainder.
    /// @param gross The settlement's amount.
    /// @return amounts The asset-owner, operator and protocol legs' amounts, in that order.
    function previewSplit(uint256 gross) external view returns (uint256[3] memory amounts) {
        (amounts[LEG_ASSET_OWNER], amounts[LEG_OPERATOR], amounts[LEG_PROTOCOL]) = _legAmounts(gross);
    }

    /// @inheritdoc IAssetSplit
    function claimable(address recipient) external view returns (uint256 amount) {
        amount = _credited[recipient];
        (uint256 assetOwner, uint256 operator, uint256 protocol) = _accruals(_ledger);
        address[3] memory r = _recipients();
        if (r[LEG_ASSET_OWNER] == recipient) amount += assetOwner;
        if (r[LEG_OPERATOR] == recipient) amount += operator;
        if (r[LEG_PROTOCOL] == recipient) amount += protocol;
    }

    /// @notice Tokens held beyond what is owed (sent here directly): recoverable by the admin only. Zero if the
    /// token took some of the balance away (a rebase, a seizure): settlements then revert until it is restored.
    function surplus() public view returns (uint256) {
        return _surplus(_ledger.held);
    }

    /// @notice Whether settlements and deposits are stopped. The flag lives in the settlement slot, so a payment
    /// reads it for free.
    function paused() public view override returns (bool) {
        return _ledger.paused;
    }

    /// @inheritdoc IAssetSplit
    /// @dev Reverts with {UnbackedSettlement} unless the balance covers everything owed plus `gross`. The
    /// settlement slot is read once, for the pause flag, the backing check and the accruals.
    function settle(bytes32 ref, uint256 gross) external {
        _authorizeDepositor();
        Ledger memory ledger = _ledger;
        if (ledger.paused) revert EnforcedPause();
        uint256 available = _surplus(ledger.held);
        if (available < gross) revert UnbackedSettlement(gross, available);
        _split(ledger, ref, gross);
    }

    /// @inheritdoc IAssetSplit
    function deposit(bytes32 ref, uint256 gross) external nonReentrant {
        _authorizeDepositor();
        _requireNotPaused();
        uint256 before = _asset.balanceOf(address(this));
        _asset.safeTransferFrom(msg.sender, address(this), gross);
        uint256 received = _asset.balanceOf(address(this)) - before;
        if (received != gross) revert UnexpectedBalance(gross, received);
        _split(_ledger, ref, gross);
    }

    /// @inheritdoc IAssetSplit
    function withdraw(address to) external nonReentrant returns (uint256) {
        return _payOut(msg.sender, to);
    }

    /// @inheritdoc IAssetSplit
    function release(address recipient) external nonReentrant returns (uint256) {
        return _payOut(recipient, recipient);
    }

    /// @dev Reverts unless the caller may record settlements and deposits.
    function _authorizeDepositor() internal view virtual;

    /// @dev The current recipients of the asset-owner, operator and protocol legs.
    function _recipients() internal view virtual returns (address[3] memory);

    /// @dev Sends the surplus (tokens sent here directly, owed to no one) to `to`; the caller checks who may.
    function _recoverSurplus(address to) internal returns (uint256 amount) {
        amount = surplus();
        if (amount == 0) revert NothingToWithdraw(address(this));
        emit SurplusRecovered(to, amount);
        _asset.safeTransfer(to, amount);
    }

    /// @dev Moves every leg's accrual to its current recipient's credit. Call it before any recipient changes.
    function _checkpoint() internal {
        Ledger memory ledger = _ledger;
        (uint256 assetOwner, uint256 operator, uint256 protocol) = _accruals(ledger);
        if (assetOwner == 0 && operator == 0 && protocol == 0) return;
        _credit(assetOwner, operator, protocol);
        _credits.credited = ledger.held;
        (ledger.operator, ledger.protocol) = (0, 0);
        _ledger = ledger;
    }

    /// @dev The operator and protocol shares in force (the asset owner's is the rest of 10,000).
    function _shares() internal view virtual returns (uint16 operatorBps, uint16 protocolBps);

    /// @dev The shares of the asset-owner, operator and protocol legs in basis points (sum 10,000).
    function _legShares() internal view returns (uint16[3] memory) {
        (uint16 operatorBps, uint16 protocolBps) = _shares();
        return [TOTAL_BPS - operatorBps - protocolBps, operatorBps, protocolBps];
    }

    /// @dev Reverts with {InvalidBasisPoints} unless the three shares sum to 10,000.
    function _checkShares(uint16[3] memory bps) internal pure {
        uint256 sum = uint256(bps[LEG_ASSET_OWNER]) + bps[LEG_OPERATOR] + bps[LEG_PROTOCOL];
        if (sum != TOTAL_BPS) revert InvalidBasisPoints(sum);
    }

    /// @dev Reverts with {InvalidRecipient} for a recipient of address zero or this contract.
    function _checkRecipient(uint256 leg, address recipient) internal view {
        if (recipient == address(0) || recipient == address(this)) revert InvalidRecipient(leg);
    }

    /// @dev Stops settlements; the flag shares the settlement slot (Pausable's own flag is never used).
    function _pause() internal override whenNotPaused {
        _ledger.paused = true;
        emit Paused(msg.sender);
    }

    /// @dev Resumes settlements.
    function _unpause() internal override whenPaused {
        _ledger.paused = false;
        emit Unpaused(msg.sender);
    }

    /// @dev Records a settlement of `gross` on `ledger`, the settlement slot as read by the caller. The asset
    /// owner's leg needs no write: it is the rest of `held` ({Ledger}).
    function _split(Ledger memory ledger, bytes32 ref, uint256 gross) private {
        if (gross == 0) revert ZeroAmount();
        (uint256 assetOwner, uint256 operator, uint256 protocol) = _legAmounts(gross);
        // Checked first: a settlement that would make the split owe more than a uint96 is refused whole.
        uint96 held = SafeCast.toUint96(ledger.held + gross);
        uint256 operatorAccrued = ledger.operator + operator;
        uint256 protocolAccrued = ledger.protocol + protocol;
        // Both fit a uint72 when neither has a bit above the 72nd.
        if ((operatorAccrued | protocolAccrued) >> 72 == 0) {
            (ledger.held, ledger.operator, ledger.protocol) = (held, uint72(operatorAccrued), uint72(protocolAccrued));
            _ledger = ledger;
        } else {
            // An accrual would not fit (only with a token of many decimals, after a very large sum): credit the
            // accruals so far and this settlement's legs to the recipients now, exactly what a checkpoint right
            // after the settlement would credit. Rare, and it keeps settlements open without a withdrawal.
            _checkpoint();
            _credit(assetOwner, operator, protocol);
            _credits.credited = held;
            _ledger.held = held;
        }
        emit YieldDeposited(ref, msg.sender, gross, assetOwner, operator, protocol);
    }

    /// @dev Adds the three amounts to the credit of the current recipients of the asset-owner, operator and
    /// protocol legs; the caller updates the credits total.
    function _credit(uint256 assetOwner, uint256 operator, uint256 protocol) private {
        address[3] memory r = _recipients();
        _credited[r[LEG_ASSET_OWNER]] += assetOwner;
        _credited[r[LEG_OPERATOR]] += operator;
        _credited[r[LEG_PROTOCOL]] += protocol;
    }

    /// @dev The asset-owner, operator and protocol legs' accruals since the last checkpoint ({Ledger}).
    function _accruals(Ledger memory ledger)
        private
        view
        returns (uint256 assetOwner, uint256 operator, uint256 protocol)
    {
        (operator, protocol) = (ledger.operator, ledger.protocol);
        assetOwner = ledger.held - _credits.credited - operator - protocol;
    }

    /// @dev The balance beyond `held`, or zero if the balance is short of it.
    function _surplus(uint256 held) private view returns (uint256) {
        uint256 balance = _asset.balanceOf(address(this));
        return balance > held ? balance - held : 0;
    }

    function _legAmounts(uint256 gross) private view returns (uint256 assetOwner, uint256 operator, uint256 protocol) {
        (uint256 operatorBps, uint256 protocolBps) = _shares();
        operator = gross * operatorBps / TOTAL_BPS;
        protocol = gross * protocolBps / TOTAL_BPS;
        assetOwner = gross - operator - protocol;
    }

    function _payOut(address recipient, address to) private returns (uint256 amount) {
        if (to == address(0) || to == address(this)) revert InvalidPayee(to);
        _checkpoint();
        amount = _credited[recipient];
        if (amount == 0) revert NothingToWithdraw(recipient);
        _credited[recipient] = 0;
        // Both totals cover this credit: it is part of `credited`, which is part of `held`.
        _ledger.held -= uint96(amount);
        _credits.credited -= uint96(amount);
        emit Withdrawn(recipient, to, amount);
        _asset.safeTransfer(to, amount);
    }
}
