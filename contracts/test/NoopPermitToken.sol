// SPDX-License-Identifier: MIT
pragma solidity ^0.8.28;

import {ERC20} from "@openzeppelin/contracts/token/ERC20/ERC20.sol";

/// @notice Test token with EIP-2612's permit() and nonces(), but a permit() that checks nothing, grants nothing
/// and moves the owner's nonce by `nonceStep` (zero unless set): by default a no-op that does not revert.
contract NoopPermitToken is ERC20 {
    mapping(address owner => uint256) public nonces;
    uint256 public nonceStep;

    constructor() ERC20("Noop Permit Token", "NOP") {}

    function mint(address to, uint256 amount) external {
        _mint(to, amount);
    }

    function setNonceStep(uint256 step) external {
        nonceStep = step;
    }

    function permit(address owner, address, uint256, uint256, uint8, bytes32, bytes32) external {
        nonces[owner] += nonceStep;
    }
}
