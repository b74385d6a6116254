// SPDX-License-Identifier: MIT
pragma solidity ^0.8.28;

import {IERC20} from "@openzeppelin/contracts/token/ERC20/IERC20.sol";

/// @title IAssetSplit
/// @notice A vault for one stablecoin that splits every settlement between three legs and credits each
/// leg's recipient, who withdraws later (pull accounting). Implemented by {AssetSplit} (one per asset, created by
/// {AssetSplitFactory}).
interface IAssetSplit {
    /// @notice Emitted for every settlement: `gross` and the three legs it was split into.
    /// @dev `assetOwnerAmount + operatorAmount + protocolAmount == gross` always holds; the rounding
    /// remainder goes to the asset-owner leg.
    /// @param ref Settlement reference: the order id for router payments, a caller-chosen batch id for deposits.
    /// @param depositor The account that settled (the payment router, or an authorised batch depositor).
    /// @param gross The amount settled, in the asset's base units.
    /// @param assetOwnerAmount The asset-owner leg's share of `gross`.
    /// @param operatorAmount The operator leg's share of `gross`.
    /// @param protocolAmount The protocol leg's share of `gross`.
    event YieldDeposited(
        bytes32 indexed ref,
        address indexed depositor,
        uint256 gross,
        uint256 assetOwnerAmount,
        uint256 operatorAmount,
        uint256 protocolAmount
    );

    /// @notice Emitted at initialisation and whenever the recipients change.
    /// @param recipients Recipients of the asset-owner, operator and protocol legs, in that order.
    /// @param bps Share of each leg in basis points, in the same order; they sum to 10,000.
    event LegsUpdated(address[3] recipients, uint16[3] bps);

    /// @notice Emitted when `amount` credited to `recipient` is paid out to `to`.
    /// @param recipient The leg recipient whose credit was paid out.
    /// @param to The account that received it.
    /// @param amount The amount paid out.
    event Withdrawn(address indexed recipient, address indexed to, uint256 amount);

    /// @notice Emitted when the factory's admin recovers tokens sent here directly (owed to no one).
    /// @param to The account that received them.
    /// @param amount The amount recovered.
    event SurplusRecovered(address indexed to, uint256 amount);

    /// @notice Settlement amount of zero.
    error ZeroAmount();
    /// @notice A leg recipient of address zero, or the split itself.
    error InvalidRecipient(uint256 leg);
    /// @notice A payout to address zero or to the split itself (which would turn a credit into surplus).
    error InvalidPayee(address to);
    /// @notice Leg shares that do not sum to 10,000 basis points.
    error InvalidBasisPoints(uint256 sum);
    /// @notice The tokens received differ from the amount declared (fee-on-transfer or rebasing token).
    error UnexpectedBalance(uint256 expected, uint256 received);
    /// @notice A settlement that the tokens held do not back: `available` is the balance beyond what is owed.
    error UnbackedSettlement(uint256 gross, uint256 available);
    /// @notice An asset of address zero.
    error InvalidAsset();
    /// @notice Nothing to withdraw.
    error NothingToWithdraw(address recipient);

    /// @notice The factory role allowed to record settlements and deposits besides the router.
    function DEPOSITOR_ROLE() external view returns (bytes32);

    /// @notice The stablecoin this contract settles in.
    function asset() external view returns (IERC20);

    /// @notice Records a settlement whose `gross` tokens the caller has already transferred to this contract.
    /// @dev Only for the router and the factory's depositors. Reverts unless the tokens held beyond what is owed
    /// cover `gross`.
    /// @param ref Settlement reference (the order id for router payments).
    /// @param gross The amount settled, in the asset's base units.
    function settle(bytes32 ref, uint256 gross) external;

    /// @notice Pulls `gross` tokens from the caller and records them as one settlement (batch settlement of
    /// revenue collected elsewhere). Only for the router and the factory's depositors.
    /// @param ref Settlement reference: a caller-chosen batch id.
    /// @param gross The amount pulled and settled, in the asset's base units.
    function deposit(bytes32 ref, uint256 gross) external;

    /// @notice Amount credited to `recipient` and not yet withdrawn.
    /// @param recipient A leg recipient, current or former.
    function claimable(address recipient) external view returns (uint256);

    /// @notice Pays the caller's claimable amount to `to`. Reverts with {InvalidPayee} for address zero or the
    /// split itself.
    /// @param to The account to pay.
    /// @return amount The amount paid.
    function withdraw(address to) external returns (uint256 amount);

    /// @notice Pays `recipient`'s claimable amount to `recipient`. Anyone may call it. Reverts with
    /// {InvalidPayee} for address zero or the split itself.
    /// @param recipient The recipient to pay.
    /// @return amount The amount paid.
    function release(address recipient) external returns (uint256 amount);
}
