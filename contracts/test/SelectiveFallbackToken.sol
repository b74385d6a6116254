// SPDX-License-Identifier: MIT
pragma solidity ^0.8.28;

import {ERC20} from "@openzeppelin/contracts/token/ERC20/ERC20.sol";

/// @notice Test token without EIP-2612 or EIP-3009 whose fallback accepts the calls of one function selector
/// (`accepted`, set by anyone) and reverts every other call: it lets a test make exactly one of the permit and
/// receive-authorization overloads "succeed" without checking anything.
contract SelectiveFallbackToken is ERC20 {
    bytes4 public accepted;

    error NotAccepted(bytes4 selector);

    constructor() ERC20("Selective Fallback Token", "SFT") {}

    function setAccepted(bytes4 selector) external {
        accepted = selector;
    }

    fallback() external {
        if (msg.sig != accepted) revert NotAccepted(msg.sig);
    }
}
