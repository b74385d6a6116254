// SPDX-License-Identifier: MIT
pragma solidity ^0.8.28;

/// @notice Test double: claims to be a split factory of the router and the token given, but names an
/// implementation that is not its first contract creation (so the router could not derive its splits).
contract MisplacedSplitFactory {
    address public immutable router;
    address public immutable token;

    constructor(address router_, address token_) {
        router = router_;
        token = token_;
    }

    function implementation() external view returns (address) {
        return address(this);
    }
}
