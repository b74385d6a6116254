// SPDX-License-Identifier: MIT
pragma solidity ^0.8.28;

import {Ownable} from "@openzeppelin/contracts/access/Ownable.sol";
import {IERC3009, IERC3009Cancel} from "@openzeppelin/contracts/interfaces/draft-IERC3009.sol";
import {ERC20} from "@openzeppelin/contracts/token/ERC20/ERC20.sol";
import {IERC20Permit} from "@openzeppelin/contracts/token/ERC20/extensions/IERC20Permit.sol";
import {MessageHashUtils} from "@openzeppelin/contracts/utils/cryptography/MessageHashUtils.sol";
import {SignatureChecker} from "@openzeppelin/contracts/utils/cryptography/SignatureChecker.sol";
import {Nonces} from "@openzeppelin/contracts/utils/Nonces.sol";

/// @title RehearsalUsdc
/// @notice A stand-in for Circle's USDC (FiatToken v2.2, as deployed on Base Sepolia) on the rehearsal chain and
/// in tests: the same name, symbol, decimals and EIP-712 domain ("USDC", version "2"), EIP-2612 permits,
/// EIP-3009 transfer, receive and cancel authorizations, and a blocklist. Only its owner mints. Never deploy it
/// where real value is at stake.
///
/// @dev Like USDC, and unlike OpenZeppelin's {EIP712}, it does not implement ERC-5267 (`eip712Domain()`): a
/// client must know the domain's version ("2") rather than read it. The domain separator is therefore written
/// by hand. Signatures are checked with {SignatureChecker}, so a smart-contract account signs through
/// ERC-1271, as with USDC v2.2, and every signed function has USDC v2.2's overload that takes the signature as
/// `bytes` (a smart-contract account's signature is often longer than 65 bytes).
contract RehearsalUsdc is ERC20, Ownable, Nonces, IERC20Permit, IERC3009, IERC3009Cancel {
    /// @notice EIP-2612 permit type hash.
    bytes32 public constant PERMIT_TYPEHASH =
        keccak256("Permit(address owner,address spender,uint256 value,uint256 nonce,uint256 deadline)");
    /// @notice EIP-3009 type hash of {transferWithAuthorization}.
    bytes32 public constant TRANSFER_WITH_AUTHORIZATION_TYPEHASH = keccak256(
        "TransferWithAuthorization(address from,address to,uint256 value,"
        "uint256 validAfter,uint256 validBefore,bytes32 nonce)"
    );
    /// @notice EIP-3009 type hash of {receiveWithAuthorization}.
    bytes32 public constant RECEIVE_WITH_AUTHORIZATION_TYPEHASH = keccak256(
        "ReceiveWithAuthorization(address from,address to,uint256 value,"
        "uint256 validAfter,uint256 validBefore,bytes32 nonce)"
    );
    /// @notice EIP-3009 type hash of {cancelAuthorization}.
    bytes32 public constant CANCEL_AUTHORIZATION_TYPEHASH =
        keccak256("CancelAuthorization(address authorizer,bytes32 nonce)");

    bytes32 private constant _DOMAIN_TYPEHASH =
        keccak256("EIP712Domain(string name,string version,uint256 chainId,address verifyingContract)");
    bytes32 private constant _HASHED_NAME = keccak256("USDC");
    bytes32 private constant _HASHED_VERSION = keccak256("2");

    bytes32 private immutable _cachedDomainSeparator;
    uint256 private immutable _cachedChainId;

    /// @notice The account allowed to blacklist and unblacklist accounts.
    address public blacklister;
    mapping(address account => bool) private _blacklisted;
    mapping(address authorizer => mapping(bytes32 nonce => bool used)) private _authorizationStates;

    /// @notice Emitted when `account` is blacklisted.
    /// @param account The account that can no longer send, receive or approve.
    event Blacklisted(address indexed account);
    /// @notice Emitted when `account` is removed from the blacklist.
    /// @param account The account that can send, receive and approve again.
    event UnBlacklisted(address indexed account);
    /// @notice Emitted when the owner hands the blacklister role to `newBlacklister`.
    /// @param newBlacklister The new blacklister.
    event BlacklisterChanged(address indexed newBlacklister);

    /// @notice `account` is blacklisted.
    error AccountBlacklisted(address account);
    /// @notice The caller is not the blacklister.
    error CallerNotBlacklister(address caller);
    /// @notice The new blacklister is address zero.
    error InvalidBlacklister();
    /// @notice The permit's deadline has passed.
    error PermitExpired(uint256 deadline);
    /// @notice The signature is not the signer's for this message.
    error InvalidSignature();
    /// @notice The authorization's `validAfter` has not passed yet.
    error AuthorizationNotYetValid(uint256 validAfter);
    /// @notice The authorization's `validBefore` has been reached.
    error AuthorizationExpired(uint256 validBefore);
    /// @notice The authorization's nonce was used or cancelled already.
    error AuthorizationUsedOrCanceled(address authorizer, bytes32 nonce);
    /// @notice A receive authorization submitted by someone other than its payee.
    error CallerNotPayee(address caller, address payee);

    modifier notBlacklisted(address account) {
        if (_blacklisted[account]) revert AccountBlacklisted(account);
        _;
    }

    /// @notice Deploys the token with no supply; `initialOwner` mints and is the first blacklister.
    /// @param initialOwner The account allowed to mint and to choose the blacklister.
    constructor(address initialOwner) ERC20("USDC", "USDC") Ownable(initialOwner) {
        _cachedChainId = block.chainid;
        _cachedDomainSeparator = _buildDomainSeparator();
        blacklister = initialOwner;
        emit BlacklisterChanged(initialOwner);
    }

    /// @notice Six decimals, as USDC.
    function decimals() public pure override returns (uint8) {
        return 6;
    }

    /// @notice The EIP-712 domain version of permits and authorizations, as USDC's `version()`.
    function version() external pure returns (string memory) {
        return "2";
    }

    /// @notice Mints `amount` base units to `to`. Only for the owner.
    /// @param to The account credited.
    /// @param amount Amount in base units.
    function mint(address to, uint256 amount) external onlyOwner {
        _mint(to, amount);
    }

    /// @notice The EIP-712 domain separator: name "USDC", version "2", this chain and this token.
    function DOMAIN_SEPARATOR() public view returns (bytes32) { // solhint-disable-line func-name-mixedcase
        return block.chainid == _cachedChainId ? _cachedDomainSeparator : _buildDomainSeparator();
    }

    /// @notice Lets `spender` spend `value` of `owner`'s tokens with `owner`'s EIP-2612 signature.
    /// @param owner The account whose tokens are approved.
    /// @param spender The account approved.
    /// @param value The allowance set.
    /// @param deadline Last second (unix time) at which the permit can be used.
    /// @param v Signature `v`.
    /// @param r Signature `r`.
    /// @param s Signature `s`.
    function permit(address owner, address spender, uint256 value, uint256 deadline, uint8 v, bytes32 r, bytes32 s)
        external
    {
        _permit(owner, spender, value, deadline, abi.encodePacked(r, s, v));
    }

    /// @notice {permit} with the signature as bytes (USDC v2.2): 65 bytes (r, s, v) for an account without code,
    /// any ERC-1271 signature for a contract.
    /// @param owner The account whose tokens are approved.
    /// @param spender The account approved.
    /// @param value The allowance set.
    /// @param deadline Last second (unix time) at which the permit can be used.
    /// @param signature `owner`'s signature.
    function permit(address owner, address spender, uint256 value, uint256 deadline, bytes calldata signature)
        external
    {
        _permit(owner, spender, value, deadline, signature);
    }

    /// @notice The permit nonce `owner` must sign next.
    /// @param owner The account.
    function nonces(address owner) public view override(IERC20Permit, Nonces) returns (uint256) {
        return super.nonces(owner);
    }

    /// @notice Whether `authorizer`'s authorization with `nonce` was used or cancelled.
    /// @param authorizer The account that signed the authorization.
    /// @param nonce The authorization's nonce.
    function authorizationState(address authorizer, bytes32 nonce) external view returns (bool) {
        return _authorizationStates[authorizer][nonce];
    }

    /// @notice Moves `value` from `from` to `to` with `from`'s signed authorization; anyone may submit it.
    /// @param from The payer, who signed.
    /// @param to The payee.
    /// @param value Amount in base units.
    /// @param validAfter The authorization is valid after this second (unix time).
    /// @param validBefore The authorization is valid before this second (unix time).
    /// @param nonce A unique nonce chosen by the payer.
    /// @param v Signature `v`.
    /// @param r Signature `r`.
    /// @param s Signature `s`.
    function transferWithAuthorization(
        address from,
        address to,
        uint256 value,
        uint256 validAfter,
        uint256 validBefore,
        bytes32 nonce,
        uint8 v,
        bytes32 r,
        bytes32 s
    ) external {
        _useAuthorization(
            TRANSFER_WITH_AUTHORIZATION_TYPEHASH,
            from,
            to,
            value,
            validAfter,
            validBefore,
            nonce,
            abi.encodePacked(r, s, v)
        );
    }

    /// @notice {transferWithAuthorization} with the signature as bytes (USDC v2.2).
    /// @param from The payer, who signed.
    /// @param to The payee.
    /// @param value Amount in base units.
    /// @param validAfter The authorization is valid after this second (unix time).
    /// @param validBefore The authorization is valid before this second (unix time).
    /// @param nonce A unique nonce chosen by the payer.
    /// @param signature `from`'s signature: 65 bytes (r, s, v), or any ERC-1271 signature for a contract.
    function transferWithAuthorization(
        address from,
        address to,
        uint256 value,
        uint256 validAfter,
        uint256 validBefore,
        bytes32 nonce,
        bytes calldata signature
    ) external {
        _useAuthorization(
            TRANSFER_WITH_AUTHORIZATION_TYPEHASH, from, to, value, validAfter, validBefore, nonce, signature
        );
    }

    /// @notice Moves `value` from `from` to the caller with `from`'s signed authorization. Only the payee may
    /// submit it, so that nobody who sees the signature can front-run the payee's own call (a contract that
    /// acts on the funds it receives).
    /// @param from The payer, who signed.
    /// @param to The payee, who must be the caller.
    /// @param value Amount in base units.
    /// @param validAfter The authorization is valid after this second (unix time).
    /// @param validBefore The authorization is valid before this second (unix time).
    /// @param nonce A unique nonce chosen by the payer.
    /// @param v Signature `v`.
    /// @param r Signature `r`.
    /// @param s Signature `s`.
    function receiveWithAuthorization(
        address from,
        address to,
        uint256 value,
        uint256 validAfter,
        uint256 validBefore,
        bytes32 nonce,
        uint8 v,
        bytes32 r,
        bytes32 s
    ) external {
        _receiveWithAuthorization(from, to, value, validAfter, validBefore, nonce, abi.encodePacked(r, s, v));
    }

    /// @notice {receiveWithAuthorization} with the signature as bytes (USDC v2.2). Only the payee may submit it.
    /// @param from The payer, who signed.
    /// @param to The payee, who must be the caller.
    /// @param value Amount in base units.
    /// @param validAfter The authorization is valid after this second (unix time).
    /// @param validBefore The authorization is valid before this second (unix time).
    /// @param nonce A unique nonce chosen by the payer.
    /// @param signature `from`'s signature: 65 bytes (r, s, v), or any ERC-1271 signature for a contract.
    function receiveWithAuthorization(
        address from,
        address to,
        uint256 value,
        uint256 validAfter,
        uint256 validBefore,
        bytes32 nonce,
        bytes calldata signature
    ) external {
        _receiveWithAuthorization(from, to, value, validAfter, validBefore, nonce, signature);
    }

    /// @notice Voids `authorizer`'s unused authorization with `nonce`, with `authorizer`'s signature.
    /// @param authorizer The account that signed the authorization.
    /// @param nonce The authorization's nonce.
    /// @param v Signature `v`.
    /// @param r Signature `r`.
    /// @param s Signature `s`.
    function cancelAuthorization(address authorizer, bytes32 nonce, uint8 v, bytes32 r, bytes32 s) external {
        _cancelAuthorization(authorizer, nonce, abi.encodePacked(r, s, v));
    }

    /// @notice {cancelAuthorization} with the signature as bytes (USDC v2.2).
    /// @param authorizer The account that signed the authorization.
    /// @param nonce The authorization's nonce.
    /// @param signature `authorizer`'s signature: 65 bytes (r, s, v), or any ERC-1271 signature for a contract.
    function cancelAuthorization(address authorizer, bytes32 nonce, bytes calldata signature) external {
        _cancelAuthorization(authorizer, nonce, signature);
    }

    /// @notice Whether `account` is blacklisted.
    /// @param account The account.
    function isBlacklisted(address account) external view returns (bool) {
        return _blacklisted[account];
    }

    /// @notice Stops `account` from sending, receiving and approving. Only for the blacklister.
    /// @param account The account.
    function blacklist(address account) external {
        _checkBlacklister();
        _blacklisted[account] = true;
        emit Blacklisted(account);
    }

    /// @notice Lets `account` send, receive and approve again. Only for the blacklister.
    /// @param account The account.
    function unBlacklist(address account) external {
        _checkBlacklister();
        _blacklisted[account] = false;
        emit UnBlacklisted(account);
    }

    /// @notice Hands the blacklister role to `newBlacklister`. Only for the owner.
    /// @param newBlacklister The new blacklister.
    function updateBlacklister(address newBlacklister) external onlyOwner {
        if (newBlacklister == address(0)) revert InvalidBlacklister();
        blacklister = newBlacklister;
        emit BlacklisterChanged(newBlacklister);
    }

    /// @dev Blacklisted accounts neither send nor receive (minting to one included).
    function _update(address from, address to, uint256 value)
        internal
        override
        notBlacklisted(from)
        notBlacklisted(to)
    {
        super._update(from, to, value);
    }

    /// @dev Blacklisted accounts neither approve nor get approved (by {approve}, {permit} or a spend).
    function _approve(address owner, address spender, uint256 value, bool emitEvent)
        internal
        override
        notBlacklisted(owner)
        notBlacklisted(spender)
    {
        super._approve(owner, spender, value, emitEvent);
    }

    /// @dev Checks `owner`'s permit signature, uses its nonce and sets the allowance.
    function _permit(address owner, address spender, uint256 value, uint256 deadline, bytes memory signature)
        private
    {
        if (block.timestamp > deadline) revert PermitExpired(deadline);
        bytes32 structHash = keccak256(abi.encode(PERMIT_TYPEHASH, owner, spender, value, _useNonce(owner), deadline));
        _requireValidSignature(owner, structHash, signature);
        _approve(owner, spender, value);
    }

    /// @dev A receive authorization, submitted by its payee.
    function _receiveWithAuthorization(
        address from,
        address to,
        uint256 value,
        uint256 validAfter,
        uint256 validBefore,
        bytes32 nonce,
        bytes memory signature
    ) private {
        if (to != _msgSender()) revert CallerNotPayee(_msgSender(), to);
        _useAuthorization(
            RECEIVE_WITH_AUTHORIZATION_TYPEHASH, from, to, value, validAfter, validBefore, nonce, signature
        );
    }

    /// @dev Voids `authorizer`'s unused `nonce` with its signature.
    function _cancelAuthorization(address authorizer, bytes32 nonce, bytes memory signature) private {
        _requireUnusedAuthorization(authorizer, nonce);
        bytes32 structHash = keccak256(abi.encode(CANCEL_AUTHORIZATION_TYPEHASH, authorizer, nonce));
        _requireValidSignature(authorizer, structHash, signature);
        _authorizationStates[authorizer][nonce] = true;
        emit AuthorizationCanceled(authorizer, nonce);
    }

    /// @dev Checks the validity window, the nonce and `from`'s signature of the authorization of type
    /// `typeHash`, marks the nonce used and moves the tokens.
    function _useAuthorization(
        bytes32 typeHash,
        address from,
        address to,
        uint256 value,
        uint256 validAfter,
        uint256 validBefore,
        bytes32 nonce,
        bytes memory signature
    ) private {
        // Valid strictly after `validAfter` and strictly before `validBefore`, as EIP-3009 and USDC have it.
        if (!(block.timestamp > validAfter)) revert AuthorizationNotYetValid(validAfter);
        if (!(block.timestamp < validBefore)) revert AuthorizationExpired(validBefore);
        _requireUnusedAuthorization(from, nonce);
        bytes32 structHash = keccak256(abi.encode(typeHash, from, to, value, validAfter, validBefore, nonce));
        _requireValidSignature(from, structHash, signature);
        _authorizationStates[from][nonce] = true;
        emit AuthorizationUsed(from, nonce);
        _transfer(from, to, value);
    }

    /// @dev Reverts unless `signer` signed the typed data of `structHash` under this token's domain (by ECDSA
    /// for an account without code, by ERC-1271 for a contract).
    function _requireValidSignature(address signer, bytes32 structHash, bytes memory signature) private view {
        bytes32 digest = MessageHashUtils.toTypedDataHash(DOMAIN_SEPARATOR(), structHash);
        if (!SignatureChecker.isValidSignatureNow(signer, digest, signature)) {
            revert InvalidSignature();
        }
    }

    /// @dev Reverts if `authorizer`'s `nonce` was used or cancelled.
    function _requireUnusedAuthorization(address authorizer, bytes32 nonce) private view {
        if (_authorizationStates[authorizer][nonce]) revert AuthorizationUsedOrCanceled(authorizer, nonce);
    }

    /// @dev Reverts unless the caller is the blacklister.
    function _checkBlacklister() private view {
        if (_msgSender() != blacklister) revert CallerNotBlacklister(_msgSender());
    }

    /// @dev The domain separator on the current chain.
    function _buildDomainSeparator() private view returns (bytes32) {
        return keccak256(abi.encode(_DOMAIN_TYPEHASH, _HASHED_NAME, _HASHED_VERSION, block.chainid, address(this)));
    }
}
