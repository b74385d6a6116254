// SPDX-License-Identifier: MIT
pragma solidity ^0.8.28;

/// @title IERC20PermitBytes
/// @notice The EIP-2612 `permit` overload of Circle's FiatToken v2.2 (USDC) that takes the signature as bytes, so
/// that a smart-contract account can sign it (the token checks ERC-1271 for an owner with code).
interface IERC20PermitBytes {
    /// @notice Sets `owner`'s allowance to `spender` to `value` with `owner`'s signature.
    /// @param owner The account whose tokens are approved.
    /// @param spender The account approved.
    /// @param value The allowance set.
    /// @param deadline Last second (unix time) at which the permit can be used.
    /// @param signature `owner`'s signature: 65 bytes (r, s, v) for an account without code, any ERC-1271
    /// signature for a contract.
    function permit(address owner, address spender, uint256 value, uint256 deadline, bytes calldata signature)
        external;
}

/// @title IERC3009Bytes
/// @notice The EIP-3009 `receiveWithAuthorization` overload of Circle's FiatToken v2.2 (USDC) that takes the
/// signature as bytes (ERC-1271 for a payer with code).
interface IERC3009Bytes {
    /// @notice Moves `value` from `from` to the caller, who must be `to`, with `from`'s signed authorization.
    /// @param from The payer, who signed.
    /// @param to The payee, who must be the caller.
    /// @param value Amount in base units.
    /// @param validAfter The authorization is valid after this second (unix time).
    /// @param validBefore The authorization is valid before this second (unix time).
    /// @param nonce A unique nonce chosen by the payer.
    /// @param signature `from`'s signature.
    function receiveWithAuthorization(
        address from,
        address to,
        uint256 value,
        uint256 validAfter,
        uint256 validBefore,
        bytes32 nonce,
        bytes calldata signature
    ) external;
}
