// SPDX-License-Identifier: MIT
pragma solidity ^0.8.28;

import {ERC20} from "@openzeppelin/contracts/token/ERC20/ERC20.sol";

/// @notice Test token without EIP-2612 (no permit(), no nonces()) whose fallback accepts any call and returns
/// nothing, like WETH9's. A call to permit() on it "succeeds" without checking anything; the router must not
/// take that for a granted permit.
contract PhantomPermitToken is ERC20 {
    constructor() ERC20("Phantom Permit Token", "PHP") {}

    function mint(address to, uint256 amount) external {
        _mint(to, amount);
    }

    fallback() external {}
}
