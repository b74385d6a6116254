// SPDX-License-Identifier: MIT
pragma solidity ^0.8.28;

import {IAccessControl} from "@openzeppelin/contracts/access/IAccessControl.sol";
import {IERC20} from "@openzeppelin/contracts/token/ERC20/IERC20.sol";
import {SplitLedger} from "./base/SplitLedger.sol";

/// @title AssetSplit
/// @notice The split of one asset, an EIP-1167 clone created by {AssetSplitFactory} at an address anyone can
/// predict from the asset's key ({AssetSplitFactory-predictSplit}): it holds one stablecoin and splits every
/// settlement between the asset owner, the operator and the protocol (50/40/10 as deployed). Its accounting is
/// {SplitLedger}'s. The payment router pays only through splits its factory created.
///
/// Trust model. A clone has no roles of its own: it takes orders from its factory only, which checks the
/// factory's roles.
/// - The payment router settles (it is fixed at the factory's deployment); the factory's depositor role may
///   settle and deposit too (batch settlement of revenue collected elsewhere).
/// - The factory replaces the asset-owner and operator recipients when a change its split manager proposed is
///   executed after the factory's delay (the asset owner may cancel it, or lock the recipients for good);
///   amounts accrued before stay with the recipients of the time.
/// - The protocol recipient and the shares are the factory's, fixed when the factory was deployed: no role can
///   change them for an existing split.
/// - The factory's pauser pauses new settlements, its default admin recovers the surplus (tokens sent here
///   directly, owed to no one).
/// - A leg recipient (the asset owner, the operator, the protocol) can only withdraw its own credit, to any
///   address but zero and the split; anyone may push a recipient's credit to it ({release}).
///
/// @dev The implementation is deployed by the factory's constructor; the asset, the router, the factory, the
/// protocol recipient and the shares are immutables of the implementation, so a clone reads them from code, not
/// storage. A clone writes two fresh slots when initialised: the asset owner (with the initialised flag) and the
/// operator. The implementation itself is marked initialised by its constructor.
contract AssetSplit is SplitLedger {
    /// @notice The factory role (on {AssetSplitFactory}) allowed to record settlements and deposits besides the
    /// router.
    bytes32 public constant DEPOSITOR_ROLE = keccak256("DEPOSITOR_ROLE");

    address private immutable _router;
    address private immutable _factory;
    address private immutable _protocolRecipient;
    uint16 private immutable _operatorBps;
    uint16 private immutable _protocolBps;

    address private _assetOwner;
    bool private _initialized;
    address private _operator;

    /// @notice A call only the factory may make.
    error OnlyFactory(address caller);
    /// @notice A caller that is neither the router nor a depositor of the factory.
    error NotDepositor(address caller);
    /// @notice The split (or the implementation) was initialised already.
    error AlreadyInitialized();
    /// @notice A router of address zero.
    error InvalidRouter();

    modifier onlyFactory() {
        if (msg.sender != _factory) revert OnlyFactory(msg.sender);
        _;
    }

    /// @notice Deploys the implementation of a factory's splits; the caller is the factory. The implementation
    /// can never be initialised.
    /// @param asset_ The stablecoin the splits settle in.
    /// @param router_ The payment router allowed to settle.
    /// @param protocolRecipient_ Recipient of every split's protocol leg.
    /// @param bps Shares of every split's asset-owner, operator and protocol legs in basis points (sum 10,000).
    constructor(IERC20 asset_, address router_, address protocolRecipient_, uint16[3] memory bps)
        SplitLedger(asset_)
    {
        if (router_ == address(0)) revert InvalidRouter();
        if (protocolRecipient_ == address(0)) revert InvalidRecipient(LEG_PROTOCOL);
        _checkShares(bps);
        _router = router_;
        _factory = msg.sender;
        _protocolRecipient = protocolRecipient_;
        (_operatorBps, _protocolBps) = (bps[LEG_OPERATOR], bps[LEG_PROTOCOL]);
        _initialized = true;
    }

    /// @notice Sets the split's asset-owner and operator recipients, once, right after the factory created it.
    /// Only for the factory.
    /// @param assetOwner Recipient of the asset-owner leg.
    /// @param operator Recipient of the operator leg.
    function initialize(address assetOwner, address operator) external onlyFactory {
        if (_initialized) revert AlreadyInitialized();
        _checkRecipient(LEG_ASSET_OWNER, assetOwner);
        _checkRecipient(LEG_OPERATOR, operator);
        (_assetOwner, _initialized, _operator) = (assetOwner, true, operator);
        emit LegsUpdated([assetOwner, operator, _protocolRecipient], _legShares());
    }

    /// @notice Replaces the asset-owner and operator recipients; the protocol leg and the shares stay. Amounts
    /// accrued before stay with their recipients. Only for the factory (an executed recipient change).
    /// @param assetOwner Recipient of the asset-owner leg.
    /// @param operator Recipient of the operator leg.
    function setRecipients(address assetOwner, address operator) external onlyFactory {
        _checkRecipient(LEG_ASSET_OWNER, assetOwner);
        _checkRecipient(LEG_OPERATOR, operator);
        _checkpoint();
        (_assetOwner, _operator) = (assetOwner, operator);
        emit LegsUpdated([assetOwner, operator, _protocolRecipient], _legShares());
    }

    /// @notice Sends the surplus (tokens sent here directly, owed to no one) to `to`. Only for the factory (its
    /// default admin).
    /// @param to The account to send it to.
    /// @return amount The amount sent.
    function recoverSurplus(address to) external onlyFactory nonReentrant returns (uint256 amount) {
        return _recoverSurplus(to);
    }

    /// @notice Stops new settlements and deposits. Withdrawals stay open. Only for the factory (its pauser).
    function pause() external onlyFactory {
        _pause();
    }

    /// @notice Resumes settlements and deposits. Only for the factory (its pauser).
    function unpause() external onlyFactory {
        _unpause();
    }

    /// @notice The payment router allowed to settle.
    function router() external view returns (address) {
        return _router;
    }

    /// @notice The factory that created this split and administers it.
    function factory() external view returns (address) {
        return _factory;
    }

    /// @dev The router, or a holder of the factory's depositor role (only asked when the caller is not the router).
    function _authorizeDepositor() internal view override {
        if (msg.sender != _router && !IAccessControl(_factory).hasRole(DEPOSITOR_ROLE, msg.sender)) {
            revert NotDepositor(msg.sender);
        }
    }

    function _recipients() internal view override returns (address[3] memory) {
        return [_assetOwner, _operator, _protocolRecipient];
    }

    /// @dev The implementation's fixed shares (immutables).
    function _shares() internal view override returns (uint16, uint16) {
        return (_operatorBps, _protocolBps);
    }
}
