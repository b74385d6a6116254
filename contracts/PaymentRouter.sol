// SPDX-License-Identifier: MIT
pragma solidity ^0.8.28;

import {AccessControlDefaultAdminRules} from
    "@openzeppelin/contracts/access/extensions/AccessControlDefaultAdminRules.sol";
import {IERC3009} from "@openzeppelin/contracts/interfaces/draft-IERC3009.sol";
import {IERC20} from "@openzeppelin/contracts/token/ERC20/IERC20.sol";
import {IERC20Permit} from "@openzeppelin/contracts/token/ERC20/extensions/IERC20Permit.sol";
import {SafeERC20} from "@openzeppelin/contracts/token/ERC20/utils/SafeERC20.sol";
import {ECDSA} from "@openzeppelin/contracts/utils/cryptography/ECDSA.sol";
import {SignatureChecker} from "@openzeppelin/contracts/utils/cryptography/SignatureChecker.sol";
import {EIP712} from "@openzeppelin/contracts/utils/cryptography/EIP712.sol";
import {MessageHashUtils} from "@openzeppelin/contracts/utils/cryptography/MessageHashUtils.sol";
import {Pausable} from "@openzeppelin/contracts/utils/Pausable.sol";
import {ReentrancyGuardTransient} from "@openzeppelin/contracts/utils/ReentrancyGuardTransient.sol";
import {IAssetSplit} from "./interfaces/IAssetSplit.sol";
import {IAssetSplitFactory} from "./interfaces/IAssetSplitFactory.sol";
import {IERC20PermitBytes, IERC3009Bytes} from "./interfaces/IFiatTokenSignatures.sol";
import {SplitAddress} from "./libraries/SplitAddress.sol";
import {Erc6492AccountDeployer} from "./utils/Erc6492AccountDeployer.sol";
import {OrderDeposit} from "./utils/OrderDeposit.sol";
import {Create2} from "@openzeppelin/contracts/utils/Create2.sol";
import {ISignatureTransfer} from "@uniswap/v4-periphery/lib/permit2/src/interfaces/ISignatureTransfer.sol";

/// @title PaymentRouter
/// @notice Pays device orders whose price the service has locked, and settles each payment through the
/// order's split in the same transaction.
///
/// The service's quote signer signs each order as EIP-712 typed data (a voucher): order id, device id,
/// token, split, amount and expiry, bound by the domain to this chain and this router. A voucher pays once,
/// before its expiry, unless its order id was cancelled ({cancelOrder}). The split must be the {AssetSplit} of
/// the order's device created by the router's split factory of the order's token ({setSplitFactory}: one factory
/// per token, the first one set being the main one): the router derives its address from the order's device id and
/// token ({SplitAddress}), so no split is registered and a voucher can only ever pay the device's own split.
///
/// Six rails end in the same {OrderPaid} event:
/// - {payWithPermit}: the payer signs one EIP-2612 permit; anyone (a relayer) submits the call and pays gas.
/// - {payWithAuthorization}: the payer signs one EIP-3009 receive authorization (USDC's own gasless
///   transfer); anyone submits the call and pays gas.
/// - {payWithPermit2}: the payer signs one Permit2 transfer with the order as its witness, for tokens without
///   EIP-2612 or EIP-3009 (the payer approved Permit2 once); anyone submits the call and pays gas.
/// - {pay}: the caller pays from an allowance it gave beforehand (smart-contract wallets).
/// - {payCash}: an agent who took cash pays from its own stablecoin float.
/// - {payFromDeposit}: the payer sent the order amount with a plain ERC-20 transfer to the order's deposit
///   address ({depositAddress}), as any wallet does from an EIP-681 payment request; anyone submits the call.
///
/// Both gasless rails take the payer's signature as bytes: 65 bytes (r, s, v) go to the token's `v, r, s` function,
/// which every EIP-2612 and EIP-3009 token has (USDC checks ERC-1271 there too); any other length goes to the
/// `bytes` overload of Circle's FiatToken v2.2 (USDC), where a smart-contract account's ERC-1271 signature of
/// any length verifies. An ERC-6492 signature of an account not deployed yet is unwrapped first: its factory call
/// runs (through {accountDeployer}), then the account's own signature goes to the token.
///
/// @dev The permit's `deadline` must equal {permitDeadline} of the order, and the authorization's `nonce`
/// {authorizationNonce} of the order: both are the order's EIP-712 digest, so a permit or authorization
/// signature can only ever pay the order it was signed for. That is what lets anyone relay it.
contract PaymentRouter is AccessControlDefaultAdminRules, Pausable, ReentrancyGuardTransient, EIP712 {
    using SafeERC20 for IERC20;

    /// @notice How an order was paid.
    enum Rail {
        Permit,
        Approval,
        Cash,
        Authorization,
        Permit2,
        Transfer
    }

    /// @notice A price-locked order, signed by the quote signer.
    /// @param orderId The order's on-chain key, unique per router.
    /// @param deviceId The device the order powers.
    /// @param token The stablecoin paid in.
    /// @param split The split that settles the payment: the factory split of (`token`, `deviceId`).
    /// @param amount Amount in the token's base units.
    /// @param expiry Last second (unix time) at which the order can be paid.
    /// @dev The fields are in the order of the EIP-712 type ({PAYMENT_ORDER_TYPEHASH}) that wallets and the SDK
    /// sign. The struct only ever travels in calldata, where every field takes a 32-byte word: packing would
    /// save nothing.
    struct PaymentOrder { // solhint-disable-line gas-struct-packing
        uint256 orderId;
        bytes32 deviceId;
        address token;
        address split;
        uint256 amount;
        uint64 expiry;
    }

    /// @notice Role whose signatures lock order prices.
    bytes32 public constant QUOTE_SIGNER_ROLE = keccak256("QUOTE_SIGNER_ROLE");
    /// @notice Role allowed to pay confirmed cash orders from its own float.
    bytes32 public constant AGENT_ROLE = keccak256("AGENT_ROLE");
    /// @notice Role allowed to pause and unpause payments.
    bytes32 public constant PAUSER_ROLE = keccak256("PAUSER_ROLE");
    /// @notice Role allowed to void unpaid orders ({cancelOrder}) and nothing else: it moves no funds and
    /// cannot make a voucher pay. The service's hot wallet holds it, so that the service can void an order
    /// its integrator cancels while its quote signer keeps sending no transaction.
    bytes32 public constant ORDER_CANCELLER_ROLE = keccak256("ORDER_CANCELLER_ROLE");

    /// @notice EIP-712 type hash of {PaymentOrder}.
    bytes32 public constant PAYMENT_ORDER_TYPEHASH = keccak256(
        "PaymentOrder(uint256 orderId,bytes32 deviceId,address token,address split,uint256 amount,uint64 expiry)"
    );
    /// @notice Uniswap's Permit2, at the same address on every chain it is deployed to (the local chains install it
    /// there too).
    ISignatureTransfer public constant PERMIT2 = ISignatureTransfer(0x000000000022D473030F116dDEE9F6B43aC78BA3);
    /// @notice The rest of the EIP-712 type of a Permit2 transfer whose witness is the {PaymentOrder}: what a
    /// wallet signs is `PermitWitnessTransferFrom(TokenPermissions permitted,address spender,uint256 nonce,
    /// uint256 deadline,` followed by this.
    string public constant PERMIT2_WITNESS_TYPE = "PaymentOrder witness)"
        "PaymentOrder(uint256 orderId,bytes32 deviceId,address token,address split,uint256 amount,uint64 expiry)"
        "TokenPermissions(address token,uint256 amount)";
    /// @dev The suffix that marks an ERC-6492 signature (of an account that may not be deployed yet).
    bytes32 private constant _ERC6492_MAGIC = 0x6492649264926492649264926492649264926492649264926492649264926492;
    bytes32 private constant _PERMIT_TYPEHASH =
        keccak256("Permit(address owner,address spender,uint256 value,uint256 nonce,uint256 deadline)");

    /// @dev Read by every payment in one slot: the pause flag (Pausable's own flag is never used) and the main
    /// split factory (the first set), whose splits the router derives without reading another slot.
    struct Config {
        address splitFactory;
        bool paused;
    }

    /// @notice The contract that runs the account factory call of an ERC-6492 signature (never the router itself).
    Erc6492AccountDeployer public immutable accountDeployer;

    Config private _config;
    /// @dev The split factory of each token the router takes (the main factory's token included): a payment in a
    /// token other than the main factory's reads its factory here (one more slot).
    mapping(address token => address factory) private _splitFactories;
    /// @dev One bit per order id, set once the order is paid or cancelled: sequential ids share a word, so
    /// most payments update a warm slot.
    mapping(uint256 word => uint256 bits) private _usedBitmap;
    /// @dev One bit per cancelled order id (read only by views and reverts, never by a payment).
    mapping(uint256 word => uint256 bits) private _cancelledBitmap;

    /// @notice Emitted for every paid order, whatever the rail.
    /// @param orderId The order's on-chain key.
    /// @param deviceId The device the order powers.
    /// @param payer The account the tokens came from (the permit's or authorization's signer, the caller, or the
    /// agent).
    /// @param token The stablecoin paid.
    /// @param split The {AssetSplit} that settled it.
    /// @param amount Amount in the token's base units.
    /// @param rail How the order was paid.
    event OrderPaid(
        uint256 indexed orderId,
        bytes32 indexed deviceId,
        address indexed payer,
        address token,
        address split,
        uint256 amount,
        Rail rail
    );

    /// @notice Emitted when the admin sets (or, with address zero, removes) the split factory of a token.
    /// @param factory The {AssetSplitFactory} whose splits the router pays through in `token` from now on (zero:
    /// none, the token is no longer taken).
    /// @param token The stablecoin its splits settle in.
    event SplitFactorySet(address indexed factory, address indexed token);
    /// @notice Emitted when an order is cancelled before it was paid; it can no longer be paid on any rail.
    /// @param orderId The order's on-chain key.
    /// @param by The quote signer, order canceller or admin who cancelled it.
    event OrderCancelled(uint256 indexed orderId, address indexed by);
    /// @notice Emitted when the admin sends away tokens transferred to the router by mistake.
    /// @param token The token recovered.
    /// @param to The account it was sent to.
    /// @param amount Amount in the token's base units.
    event TokensRecovered(address indexed token, address indexed to, uint256 amount);
    /// @notice Emitted when the admin sends away tokens an order's deposit address held that the order did not
    /// take (an overpayment, a payment after its expiry or cancellation, a second payment).
    /// @param orderId The order's on-chain key.
    /// @param deposit The order's deposit address ({depositAddress}).
    /// @param to The account the tokens were sent to.
    /// @param token The order's token.
    /// @param amount Amount in the token's base units.
    event DepositRecovered(
        uint256 indexed orderId, address indexed deposit, address indexed to, address token, uint256 amount
    );

    /// @notice The order's expiry has passed.
    error OrderExpired(uint256 orderId, uint64 expiry);
    /// @notice The order was paid already.
    error OrderAlreadyPaid(uint256 orderId);
    /// @notice The order's split is not the factory split of its device and token (or the router has no split
    /// factory for the token).
    error TokenNotAllowed(address token, address split);
    /// @notice The order's split is the factory split of its device and token, but was not created yet.
    error SplitNotCreated(address split);
    /// @notice The order was cancelled.
    error OrderIsCancelled(uint256 orderId);
    /// @notice A split factory that does not settle through this router, or whose implementation is not its
    /// first contract creation (the router could not derive its splits).
    error InvalidSplitFactory(address factory);
    /// @notice The router has no split factory for the token.
    error NoSplitFactory(address token);
    /// @notice An order amount of zero.
    error ZeroAmount();
    /// @notice The voucher was not signed by an account with the quote-signer role.
    error InvalidVoucherSigner(address recovered);
    /// @notice The permit neither executed nor was consumed earlier for this very order (with the allowance it
    /// set still in place).
    error InvalidPermit(address payer);
    /// @notice The token refused the receive authorization: its signature, amount, nonce or validity does not match
    /// the order, it was used or cancelled, the token refused the transfer (a blocklisted account, a balance too
    /// low), or the token has no EIP-3009.
    error InvalidAuthorization(address payer);
    /// @notice Permit2 refused the payer's transfer: its signature is not the payer's for this order (amount, token,
    /// nonce = order id, deadline = expiry, the order as witness), the order id was used as a Permit2 nonce already,
    /// or the payer has not approved Permit2 for the token or cannot cover the amount.
    error InvalidPermit2(address payer);
    /// @notice An ERC-6492 signature whose wrapper does not decode (factory, factory calldata, signature).
    error InvalidErc6492Signature(address payer);
    /// @notice The split factory's token has no code, or it returned from a permit or a receive authorization whose
    /// signature cannot be valid (a fallback that accepts any call, or a function that checks nothing): the router
    /// would take that for the payer's consent ({setSplitFactory}).
    error TokenAcceptsInvalidSignature(address token);
    /// @notice The order's deposit address holds less than the order amount.
    /// @param deposit The order's deposit address ({depositAddress}).
    /// @param have Its balance of the order's token.
    /// @param want The order amount.
    error DepositShort(address deposit, uint256 have, uint256 want);
    /// @notice The order can still be paid from its deposit address ({payFromDeposit}): it is neither paid,
    /// cancelled nor expired, so what the address holds is not the admin's to recover yet.
    error DepositStillPayable(uint256 orderId);

    /// @notice Deploys the router with no split factory and no role granted but the default admin's.
    /// @param initialAdmin Holder of the default admin role.
    /// @param adminTransferDelay Delay of a default admin transfer, in seconds.
    constructor(address initialAdmin, uint48 adminTransferDelay)
        AccessControlDefaultAdminRules(adminTransferDelay, initialAdmin)
        EIP712("PaymentRouter", "1")
    {
        accountDeployer = new Erc6492AccountDeployer();
    }

    /// @notice Pays `order` with one EIP-2612 permit signed by `payer`, and settles it through its split.
    /// Anyone may submit it. The permit must grant this router `order.amount` with the deadline
    /// {permitDeadline}(order). If someone submitted that permit to the token first, the payment still goes
    /// through on the allowance it created, provided that allowance is still exactly `order.amount` (a payer
    /// who changed it since, e.g. to cancel, is not charged from another approval).
    /// @dev A permit call that returns is taken as executed: the order's token is its split factory's, whose permit
    /// {setSplitFactory} checked refuses a signature that cannot be valid.
    /// @param order The price-locked order.
    /// @param voucherSignature The quote signer's signature of `order`.
    /// @param payer The permit's owner, who pays: an account without code or a smart-contract account (ERC-1271,
    /// deployed or not: ERC-6492).
    /// @param signature The permit's signature: 65 bytes (r, s, v), or any other signature the token's `bytes`
    /// overload takes, or either wrapped in ERC-6492.
    function payWithPermit(
        PaymentOrder calldata order,
        bytes calldata voucherSignature,
        address payer,
        bytes calldata signature
    ) external whenNotPaused nonReentrant {
        uint256 deadline = uint256(_acceptOrder(order, voucherSignature));
        // A permit that returned is the token's word that the payer signed this order's permit, which set the
        // allowance the transfer spends: {setSplitFactory} refused every token whose permit returns on a signature
        // that cannot be valid (a fallback accepting any call), so the payer's nonce is not read around the call.
        bytes memory accountSignature;
        bool executed;
        if (signature.length == 65) {
            executed = _permitVrs(order, payer, deadline, signature);
        } else {
            accountSignature = _unwrapErc6492(payer, signature);
            executed = _permitBytes(order, payer, deadline, accountSignature);
        }
        if (!executed) {
            if (signature.length == 65) accountSignature = signature;
            if (
                !_permitWasConsumed(order.token, payer, order.amount, deadline, accountSignature)
                    || IERC20(order.token).allowance(payer, address(this)) != order.amount
            ) revert InvalidPermit(payer);
        }
        _collect(order, payer, Rail.Permit);
    }

    /// @notice Pays `order` with one EIP-3009 receive authorization signed by `payer`, and settles it through its
    /// split. Anyone may submit it. The authorization must move `order.amount` from `payer` to this router, be
    /// valid after 0 and before `order.expiry`, and carry the nonce {authorizationNonce}(order). Only this
    /// router can use it (the token lets only the payee submit a receive authorization), so nobody can spend it
    /// on anything but this order; the payer can still void it with the token's `cancelAuthorization`.
    /// @dev The token checks `block.timestamp < validBefore`: on this rail an order can be paid until the second
    /// before its expiry. The tokens pass through this router within the call. An authorization call that returns
    /// is taken as executed: the order's token is its split factory's, whose receiveWithAuthorization
    /// {setSplitFactory} checked refuses a signature that cannot be valid.
    /// @param order The price-locked order.
    /// @param voucherSignature The quote signer's signature of `order`.
    /// @param payer The authorization's signer, who pays: an account without code or a smart-contract account
    /// (ERC-1271, deployed or not: ERC-6492).
    /// @param signature The authorization's signature: 65 bytes (r, s, v), or any other signature the token's
    /// `bytes` overload takes, or either wrapped in ERC-6492.
    function payWithAuthorization(
        PaymentOrder calldata order,
        bytes calldata voucherSignature,
        address payer,
        bytes calldata signature
    ) external whenNotPaused nonReentrant {
        bytes32 nonce = _acceptOrder(order, voucherSignature);
        // An authorization that returned is the token's word that it moved the order amount from the payer to this
        // router: {setSplitFactory} refused every token whose receiveWithAuthorization returns on a signature that
        // cannot be valid (a fallback accepting any call), so the router reads no balance around the call and
        // never pays the split from tokens it holds by mistake.
        bool received = signature.length == 65
            ? _receiveVrs(order, payer, nonce, signature)
            : _receiveBytes(order, payer, nonce, _unwrapErc6492(payer, signature));
        if (!received) revert InvalidAuthorization(payer);
        _collect(order, payer, Rail.Authorization);
    }

    /// @notice Pays `order` with one Permit2 signature of `payer`, and settles it through its split. Anyone may
    /// submit it. The payer approved Permit2 for the token once; the signature is a `PermitWitnessTransferFrom`
    /// of `order.amount` of `order.token` to this router as spender, with nonce `order.orderId`, deadline
    /// `order.expiry` and the order as witness ({PERMIT2_WITNESS_TYPE}): it pays exactly this order, once (Permit2
    /// spends the nonce), and expires with it. Permit2 moves the tokens straight from the payer to the split.
    /// @param order The price-locked order.
    /// @param voucherSignature The quote signer's signature of `order`.
    /// @param payer The signer, who pays: an account without code or a smart-contract account (ERC-1271, deployed
    /// or not: ERC-6492).
    /// @param signature The Permit2 signature (Permit2 checks ECDSA, or ERC-1271 for a contract), or it wrapped in
    /// ERC-6492.
    function payWithPermit2(
        PaymentOrder calldata order,
        bytes calldata voucherSignature,
        address payer,
        bytes calldata signature
    ) external whenNotPaused nonReentrant {
        (, bytes32 witness) = _acceptOrderAndHash(order, voucherSignature);
        ISignatureTransfer.PermitTransferFrom memory permit = ISignatureTransfer.PermitTransferFrom({
            permitted: ISignatureTransfer.TokenPermissions({token: order.token, amount: order.amount}),
            nonce: order.orderId,
            deadline: order.expiry
        });
        ISignatureTransfer.SignatureTransferDetails memory transfer =
            ISignatureTransfer.SignatureTransferDetails({to: order.split, requestedAmount: order.amount});
        bool transferred = signature.length == 65
            ? _permit2Transfer(permit, transfer, payer, witness, signature)
            : _permit2Transfer(permit, transfer, payer, witness, _unwrapErc6492(payer, signature));
        if (!transferred) revert InvalidPermit2(payer);
        _settle(order, payer, Rail.Permit2);
    }

    /// @notice Pays `order` from the caller's allowance to this router, and settles it through its split.
    /// @param order The price-locked order.
    /// @param voucherSignature The quote signer's signature of `order`.
    function pay(PaymentOrder calldata order, bytes calldata voucherSignature) external whenNotPaused nonReentrant {
        _acceptOrder(order, voucherSignature);
        _collect(order, msg.sender, Rail.Approval);
    }

    /// @notice Pays a cash order from the calling agent's float (its allowance to this router), and settles
    /// it through its split. Only for the agent role.
    /// @param order The price-locked order.
    /// @param voucherSignature The quote signer's signature of `order`.
    function payCash(PaymentOrder calldata order, bytes calldata voucherSignature)
        external
        whenNotPaused
        nonReentrant
        onlyRole(AGENT_ROLE)
    {
        _acceptOrder(order, voucherSignature);
        _collect(order, msg.sender, Rail.Cash);
    }

    /// @notice Pays `order` from its deposit address ({depositAddress}), to which the payer transferred the order
    /// amount of its token with a plain ERC-20 transfer (what a wallet sends for an EIP-681 payment request), and
    /// settles it through its split. Anyone may submit it (the relayer does, once it sees the deposit). The first
    /// payment from the address creates its {OrderDeposit} there (CREATE2), which grants this router the
    /// allowance it collects with; the router is the only account that can ever move the address's tokens.
    /// {OrderPaid} names the deposit address as the payer, on the {Rail-Transfer} rail.
    /// @dev Reverts with {DepositShort} if the address holds less than the amount, before anything is created.
    /// Whatever the address holds beyond the amount stays there, for {recoverDeposit}. A token that lowers even
    /// an unlimited allowance (USDC) leaves it at 2^256 - 1 minus what was collected, never short of an order.
    /// @param order The price-locked order.
    /// @param voucherSignature The quote signer's signature of `order`.
    function payFromDeposit(PaymentOrder calldata order, bytes calldata voucherSignature)
        external
        whenNotPaused
        nonReentrant
    {
        bytes32 digest = _acceptOrder(order, voucherSignature);
        IERC20 token = IERC20(order.token);
        address deposit = _depositAddress(digest, order.token);
        uint256 held = token.balanceOf(deposit);
        if (held < order.amount) revert DepositShort(deposit, held, order.amount);
        _openDeposit(token, digest, deposit, order.amount);
        token.safeTransferFrom(deposit, order.split, order.amount);
        _settle(order, deposit, Rail.Transfer);
    }

    /// @notice Sends `amount` of the order's token that `order`'s deposit address holds but the order did not take
    /// (an overpayment, a transfer after the order's expiry or cancellation, a second transfer) to `to`, creating
    /// the address's {OrderDeposit} first if no payment did. Only for the default admin, and only once the order
    /// can no longer be paid (paid, cancelled or expired): until then the address's tokens are the order's.
    /// @dev Tokens other than the order's token sent to the address cannot be moved: the deposit only ever grants
    /// an allowance of the order's token.
    /// @param order The order whose deposit address holds the tokens.
    /// @param to The account to send them to.
    /// @param amount Amount in the token's base units.
    function recoverDeposit(PaymentOrder calldata order, address to, uint256 amount)
        external
        nonReentrant
        onlyRole(DEFAULT_ADMIN_ROLE)
    {
        bool expired = block.timestamp > order.expiry;
        if (!expired && !_isUsed(order.orderId)) revert DepositStillPayable(order.orderId);
        bytes32 digest = hashOrder(order);
        IERC20 token = IERC20(order.token);
        address deposit = _depositAddress(digest, order.token);
        _openDeposit(token, digest, deposit, amount);
        token.safeTransferFrom(deposit, to, amount);
        emit DepositRecovered(order.orderId, deposit, to, order.token, amount);
    }

    /// @notice Voids the order with on-chain key `orderId` before it is paid: no voucher for it pays on any rail
    /// from now on. The quote signer keeps its role. Only for the quote signer, an order canceller or the
    /// default admin.
    /// @dev Reverts with {OrderAlreadyPaid} for a paid order and {OrderIsCancelled} for a cancelled one, so a
    /// sender that retries can tell it is done.
    /// @param orderId The order's on-chain key.
    function cancelOrder(uint256 orderId) external {
        address caller = _msgSender();
        if (
            !hasRole(ORDER_CANCELLER_ROLE, caller) && !hasRole(QUOTE_SIGNER_ROLE, caller)
                && !hasRole(DEFAULT_ADMIN_ROLE, caller)
        ) {
            revert AccessControlUnauthorizedAccount(caller, ORDER_CANCELLER_ROLE);
        }
        _use(orderId);
        _cancelledBitmap[orderId >> 8] |= 1 << (orderId & 0xff);
        emit OrderCancelled(orderId, caller);
    }

    /// @notice Whether the order with on-chain key `orderId` has been paid.
    /// @param orderId The order's on-chain key.
    function isPaid(uint256 orderId) public view returns (bool) {
        uint256 bit = 1 << (orderId & 0xff);
        return _usedBitmap[orderId >> 8] & bit != 0 && !isCancelled(orderId);
    }

    /// @notice Whether the order with on-chain key `orderId` was cancelled.
    /// @param orderId The order's on-chain key.
    function isCancelled(uint256 orderId) public view returns (bool) {
        return _cancelledBitmap[orderId >> 8] & (1 << (orderId & 0xff)) != 0;
    }

    /// @notice Whether the router is paused. The flag shares the slot of {splitFactory}, which every payment
    /// reads too.
    function paused() public view override returns (bool) {
        return _config.paused;
    }

    /// @notice The main {AssetSplitFactory}: the first one set and not removed since (zero: none). Payments in its
    /// token read no slot but the one they share with the pause flag.
    function splitFactory() external view returns (address) {
        return _config.splitFactory;
    }

    /// @notice The {AssetSplitFactory} whose splits the router pays through in `token` (zero: the token is not
    /// taken).
    /// @param token The stablecoin.
    function tokenSplitFactory(address token) external view returns (address) {
        return _splitFactories[token];
    }

    /// @notice The EIP-712 digest of `order` under this router's domain.
    /// @param order The order.
    function hashOrder(PaymentOrder calldata order) public view returns (bytes32) {
        return _hashTypedDataV4(_hashOrderStruct(order));
    }

    /// @notice The deposit address of `order`: where a payer transfers the order amount of its token to pay it
    /// with {payFromDeposit}. The CREATE2 address of an {OrderDeposit} of the order's token created by this router
    /// with the order's EIP-712 digest as salt: one address per order, which holds nothing but what is sent to it
    /// and from which only this router can move tokens.
    /// @param order The order.
    function depositAddress(PaymentOrder calldata order) external view returns (address) {
        return _depositAddress(hashOrder(order), order.token);
    }

    /// @notice The `deadline` a payer's permit must carry to pay `order`: the order's EIP-712 digest.
    /// @param order The order.
    function permitDeadline(PaymentOrder calldata order) external view returns (uint256) {
        return uint256(hashOrder(order));
    }

    /// @notice The `nonce` a payer's receive authorization must carry to pay `order`: the order's EIP-712 digest.
    /// @param order The order.
    function authorizationNonce(PaymentOrder calldata order) external view returns (bytes32) {
        return hashOrder(order);
    }

    /// @notice Makes the router pay through every split `factory` creates, in the factory's token, without
    /// registering them: an order whose split is the factory split of its device id and token ({SplitAddress}) is
    /// accepted. The router takes one factory per token: this replaces the token's previous factory, whose splits
    /// can then no longer be paid (their credits stay withdrawable). The first factory set is the main one
    /// ({splitFactory}); a payment in another token reads one more slot. The factory must settle through this
    /// router and have deployed its implementation as its first contract creation, and its token must refuse a
    /// permit and a receive authorization whose signature cannot be valid ({TokenAcceptsInvalidSignature}). Only
    /// for the default admin.
    /// @dev The token check is what lets {payWithPermit} and {payWithAuthorization} take a call to the token that
    /// returned as the payer's consent, without reading the payer's nonce or the router's balance around it: a token
    /// without EIP-2612 or EIP-3009 whose fallback accepts any call (WETH9's), or whose permit or authorization
    /// returns without checking, is refused here, so no payment in it can spend an allowance the payer gave for
    /// something else, nor tokens the router holds by mistake. A token without those functions and without such a
    /// fallback passes (its calls revert): it is paid on the other rails (Permit2, prior approval, cash). The check
    /// cannot see a token that refuses the check's signature and accepts a payer's invalid one: the admin's choice
    /// of token is trusted, as it is for the token's transfers.
    ///
    /// Another factory's split is never accepted for a token: a factory creates splits only in its own token, with
    /// the token in the salt, so the address derived from the main factory for another token has no code.
    /// @param factory The {AssetSplitFactory}.
    function setSplitFactory(IAssetSplitFactory factory) external onlyRole(DEFAULT_ADMIN_ROLE) {
        if (
            address(factory) == address(0) || factory.router() != address(this)
                || factory.implementation() != SplitAddress.implementationOf(address(factory))
        ) revert InvalidSplitFactory(address(factory));
        address token = address(factory.token());
        if (_acceptsInvalidSignature(token)) revert TokenAcceptsInvalidSignature(token);
        address main = _config.splitFactory;
        if (main == address(0) || _splitFactories[token] == main) _config.splitFactory = address(factory);
        _splitFactories[token] = address(factory);
        emit SplitFactorySet(address(factory), token);
    }

    /// @notice Stops payments in `token`: the router no longer pays through its factory's splits (their credits
    /// stay withdrawable). If it was the main factory, the router has no main factory until the next
    /// {setSplitFactory}; the other tokens' payments go on. Only for the default admin.
    /// @param token The stablecoin.
    function removeSplitFactory(address token) external onlyRole(DEFAULT_ADMIN_ROLE) {
        address factory = _splitFactories[token];
        if (factory == address(0)) revert NoSplitFactory(token);
        delete _splitFactories[token];
        if (_config.splitFactory == factory) _config.splitFactory = address(0);
        emit SplitFactorySet(address(0), token);
    }

    /// @notice Sends tokens that were transferred to this router by mistake to `to`. The router never holds
    /// tokens of its own (payments go straight from the payer to the split, or on the authorization rail through
    /// the router within the payment's call), so nothing owed is at stake.
    /// @param token The token to recover.
    /// @param to The account to send it to.
    /// @param amount Amount in the token's base units.
    function recoverERC20(IERC20 token, address to, uint256 amount) external onlyRole(DEFAULT_ADMIN_ROLE) {
        token.safeTransfer(to, amount);
        emit TokensRecovered(address(token), to, amount);
    }

    /// @notice Stops all payments.
    function pause() external onlyRole(PAUSER_ROLE) {
        _pause();
    }

    /// @notice Resumes payments.
    function unpause() external onlyRole(PAUSER_ROLE) {
        _unpause();
    }

    /// @dev Stops payments; the flag shares the slot of the split factory.
    function _pause() internal override whenNotPaused {
        _config.paused = true;
        emit Paused(_msgSender());
    }

    /// @dev Resumes payments.
    function _unpause() internal override whenPaused {
        _config.paused = false;
        emit Unpaused(_msgSender());
    }

    /// @dev Checks the order and its voucher, marks the order paid and returns the order's digest.
    function _acceptOrder(PaymentOrder calldata order, bytes calldata voucherSignature)
        private
        returns (bytes32 digest)
    {
        (digest,) = _acceptOrderAndHash(order, voucherSignature);
    }

    /// @dev {_acceptOrder}, also returning the order's EIP-712 struct hash (the Permit2 witness).
    function _acceptOrderAndHash(PaymentOrder calldata order, bytes calldata voucherSignature)
        private
        returns (bytes32 digest, bytes32 structHash)
    {
        if (block.timestamp > order.expiry) revert OrderExpired(order.orderId, order.expiry);
        if (order.amount == 0) revert ZeroAmount();
        if (order.token == address(0)) revert TokenNotAllowed(order.token, order.split);
        _checkSplit(order);
        structHash = _hashOrderStruct(order);
        digest = _hashTypedDataV4(structHash);
        // Read straight from calldata: copying the signature to memory first costs about 150 gas a payment.
        (address signer,,) = ECDSA.tryRecoverCalldata(digest, voucherSignature);
        if (signer == address(0) || !hasRole(QUOTE_SIGNER_ROLE, signer)) revert InvalidVoucherSigner(signer);
        _use(order.orderId);
    }

    /// @dev Accepts only the factory split of the order's device and token, once created (the factory's splits
    /// settle only in its token and only for this router; for another token the derived address is never created).
    /// The main factory's is tried first, from the slot every payment reads; then the token's own factory.
    function _checkSplit(PaymentOrder calldata order) private view {
        address factory = _config.splitFactory;
        if (factory == address(0) || order.split != SplitAddress.predict(factory, order.token, order.deviceId)) {
            factory = _splitFactories[order.token];
            if (factory == address(0) || order.split != SplitAddress.predict(factory, order.token, order.deviceId)) {
                revert TokenNotAllowed(order.token, order.split);
            }
        }
        // Also warms the split's account for the settlement call.
        if (order.split.code.length == 0) revert SplitNotCreated(order.split);
    }

    /// @dev Whether `orderId` was used (paid or cancelled).
    function _isUsed(uint256 orderId) private view returns (bool) {
        return _usedBitmap[orderId >> 8] & (1 << (orderId & 0xff)) != 0;
    }

    /// @dev The CREATE2 address of the {OrderDeposit} of `token` with salt `digest` (an order's EIP-712 digest).
    function _depositAddress(bytes32 digest, address token) private view returns (address) {
        return Create2.computeAddress(
            digest, keccak256(abi.encodePacked(type(OrderDeposit).creationCode, abi.encode(token)))
        );
    }

    /// @dev Creates the {OrderDeposit} at `deposit` unless its allowance to this router already covers `amount`
    /// (it was created before: a second creation at the address would fail).
    function _openDeposit(IERC20 token, bytes32 digest, address deposit, uint256 amount) private {
        if (token.allowance(deposit, address(this)) < amount) new OrderDeposit{salt: digest}(token);
    }

    /// @dev Marks `orderId` used (paid or cancelled); reverts if it was already.
    function _use(uint256 orderId) private {
        uint256 word = orderId >> 8;
        uint256 bit = 1 << (orderId & 0xff);
        uint256 bits = _usedBitmap[word];
        if (bits & bit != 0) {
            if (isCancelled(orderId)) revert OrderIsCancelled(orderId);
            revert OrderAlreadyPaid(orderId);
        }
        _usedBitmap[word] = bits | bit;
    }

    /// @dev Moves the order amount to the split and records the settlement of `payer`'s payment. The amount comes
    /// straight from `payer` (its allowance to this router), or on the authorization rail from this router, to
    /// which the authorization delivered it. The source follows from the rail, never from an address a caller
    /// passes, so no other rail can spend tokens the router holds.
    function _collect(PaymentOrder calldata order, address payer, Rail rail) private {
        IERC20 token = IERC20(order.token);
        if (rail == Rail.Authorization) token.safeTransfer(order.split, order.amount);
        else token.safeTransferFrom(payer, order.split, order.amount);
        _settle(order, payer, rail);
    }

    /// @dev Records the settlement of the order amount the split just received, and emits {OrderPaid}. The split
    /// checks that its balance backs every settlement (`UnbackedSettlement`): a token that delivered less than the
    /// amount (fee on transfer) or took tokens out of the split fails there, unless the split holds a surplus (tokens
    /// sent to it directly, owed to no one) that covers the difference, which then pays it. The router checks no
    /// balance of its own: that would read the split's balance twice on every payment for that edge only.
    ///
    /// The call is made in assembly, without Solidity's check that the split has code: every payment checked that
    /// already ({_checkSplit}). A revert of the split is passed on as it is.
    function _settle(PaymentOrder calldata order, address payer, Rail rail) private {
        address split = order.split;
        uint256 orderId = order.orderId;
        uint256 amount = order.amount;
        bytes4 selector = IAssetSplit.settle.selector;
        // solhint-disable-next-line no-inline-assembly
        assembly ("memory-safe") {
            let ptr := mload(0x40)
            mstore(ptr, selector)
            mstore(add(ptr, 0x04), orderId)
            mstore(add(ptr, 0x24), amount)
            if iszero(call(gas(), split, 0, ptr, 0x44, 0, 0)) {
                returndatacopy(ptr, 0, returndatasize())
                revert(ptr, returndatasize())
            }
        }
        emit OrderPaid(orderId, order.deviceId, payer, order.token, split, amount, rail);
    }

    /// @dev Has Permit2 move the order amount from `payer` to the split with `payer`'s signature of the order's
    /// transfer; false if Permit2 refused it (a signature that does not verify, a used nonce, a payer that has not
    /// approved Permit2 or cannot cover the amount).
    function _permit2Transfer(
        ISignatureTransfer.PermitTransferFrom memory permit,
        ISignatureTransfer.SignatureTransferDetails memory transfer,
        address payer,
        bytes32 witness,
        bytes memory signature
    ) private returns (bool) {
        try PERMIT2.permitWitnessTransferFrom(permit, transfer, payer, witness, PERMIT2_WITNESS_TYPE, signature) {
            return true;
        } catch {
            return false;
        }
    }

    /// @dev The EIP-712 struct hash of `order` (without the domain): keccak256 of the type hash followed by the
    /// order's six words as they are in calldata (a static struct, encoded in place), which is its `abi.encode`.
    /// A payment reads `token`, `split` and `expiry` through Solidity before it hashes, which reverts on a word
    /// with dirty high bits, so the words hashed are the clean ones a signer signed.
    function _hashOrderStruct(PaymentOrder calldata order) private pure returns (bytes32 structHash) {
        bytes32 typeHash = PAYMENT_ORDER_TYPEHASH;
        // solhint-disable-next-line no-inline-assembly
        assembly ("memory-safe") {
            let ptr := mload(0x40)
            mstore(ptr, typeHash)
            calldatacopy(add(ptr, 0x20), order, 0xc0)
            structHash := keccak256(ptr, 0xe0)
        }
    }

    /// @dev Submits the order's permit with a 65-byte signature to the token's `v, r, s` function; false if the
    /// token refused it.
    function _permitVrs(PaymentOrder calldata order, address payer, uint256 deadline, bytes calldata signature)
        private
        returns (bool)
    {
        (uint8 v, bytes32 r, bytes32 s) = _vrs(signature);
        try IERC20Permit(order.token).permit(payer, address(this), order.amount, deadline, v, r, s) {
            return true;
        } catch {
            return false;
        }
    }

    /// @dev Submits the order's permit with a signature of another length to the token's `bytes` overload; false
    /// if the token refused it (or has no such overload).
    function _permitBytes(PaymentOrder calldata order, address payer, uint256 deadline, bytes memory signature)
        private
        returns (bool)
    {
        try IERC20PermitBytes(order.token).permit(payer, address(this), order.amount, deadline, signature) {
            return true;
        } catch {
            return false;
        }
    }

    /// @dev Submits the order's receive authorization with a 65-byte signature to the token's `v, r, s` function;
    /// false if the token refused it.
    function _receiveVrs(PaymentOrder calldata order, address payer, bytes32 nonce, bytes calldata signature)
        private
        returns (bool)
    {
        (uint8 v, bytes32 r, bytes32 s) = _vrs(signature);
        try IERC3009(order.token).receiveWithAuthorization(
            payer, address(this), order.amount, 0, order.expiry, nonce, v, r, s
        ) {
            return true;
        } catch {
            return false;
        }
    }

    /// @dev Submits the order's receive authorization with a signature of another length to the token's `bytes`
    /// overload; false if the token refused it (or has no such overload).
    function _receiveBytes(PaymentOrder calldata order, address payer, bytes32 nonce, bytes memory signature)
        private
        returns (bool)
    {
        try IERC3009Bytes(order.token).receiveWithAuthorization(
            payer, address(this), order.amount, 0, order.expiry, nonce, signature
        ) {
            return true;
        } catch {
            return false;
        }
    }

    /// @dev Whether `token` has no code, or returns from a permit or a receive authorization of this router's own
    /// tokens to itself whose signature recovers no one, on the `v, r, s` function or the `bytes` overload (the
    /// payments call both): a token that checks signatures reverts on all four (ECDSA finds no signer, ERC-1271
    /// finds no `isValidSignature` on the router), and so does a token without them and without a fallback.
    function _acceptsInvalidSignature(address token) private returns (bool) {
        // A call to an address without code returns.
        if (token.code.length == 0) return true;
        address self = address(this);
        uint256 forever = type(uint256).max;
        return _returns(token, abi.encodeCall(IERC20Permit.permit, (self, self, 1, forever, 27, 0, 0)))
            || _returns(token, abi.encodeCall(IERC20PermitBytes.permit, (self, self, 1, forever, "")))
            || _returns(
                token, abi.encodeCall(IERC3009.receiveWithAuthorization, (self, self, 1, 0, forever, 0, 27, 0, 0))
            ) || _returns(
                token, abi.encodeCall(IERC3009Bytes.receiveWithAuthorization, (self, self, 1, 0, forever, 0, ""))
            );
    }

    /// @dev Whether the call `data` to `token` returned (rather than reverted).
    function _returns(address token, bytes memory data) private returns (bool success) {
        // solhint-disable-next-line avoid-low-level-calls
        (success,) = token.call(data);
    }

    /// @dev The signature the token must check: `signature` itself, or, for an ERC-6492 signature, the account's
    /// signature inside it, after the account's factory call ran if `payer` has no code yet.
    function _unwrapErc6492(address payer, bytes calldata signature) private returns (bytes memory) {
        uint256 length = signature.length;
        if (length < 32 || bytes32(signature[length - 32:]) != _ERC6492_MAGIC) return signature;
        try accountDeployer.deployAndUnwrap(payer, signature[:length - 32]) returns (bytes memory inner) {
            return inner;
        } catch {
            revert InvalidErc6492Signature(payer);
        }
    }

    /// @dev The `v, r, s` of a 65-byte signature (r, s, v), read from calldata.
    function _vrs(bytes calldata signature) private pure returns (uint8 v, bytes32 r, bytes32 s) {
        r = bytes32(signature[:32]);
        s = bytes32(signature[32:64]);
        v = uint8(signature[64]);
    }

    /// @dev True when the payer's latest permit nonce was consumed by exactly this signature, i.e. someone
    /// submitted this order's permit to the token before this call. The signature is checked as the token checks
    /// it: by ECDSA for an account without code, by ERC-1271 for a smart-contract account.
    function _permitWasConsumed(
        address token,
        address owner,
        uint256 value,
        uint256 deadline,
        bytes memory signature
    ) private view returns (bool) {
        uint256 nonce = IERC20Permit(token).nonces(owner);
        if (nonce == 0 || owner == address(0)) return false;
        bytes32 structHash = keccak256(abi.encode(_PERMIT_TYPEHASH, owner, address(this), value, nonce - 1, deadline));
        bytes32 digest = MessageHashUtils.toTypedDataHash(IERC20Permit(token).DOMAIN_SEPARATOR(), structHash);
        return SignatureChecker.isValidSignatureNow(owner, digest, signature);
    }
}
