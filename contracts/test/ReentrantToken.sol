// SPDX-License-Identifier: MIT
pragma solidity ^0.8.28;

import {ERC20} from "@openzeppelin/contracts/token/ERC20/ERC20.sol";
import {ERC20Permit} from "@openzeppelin/contracts/token/ERC20/extensions/ERC20Permit.sol";

/// @notice Test token that, once armed, calls `target` with `payload` from inside every transfer and
/// bubbles up any revert of that call.
contract ReentrantToken is ERC20, ERC20Permit {
    address public target;
    bytes public payload;

    constructor() ERC20("Reentrant Token", "REE") ERC20Permit("Reentrant Token") {}

    function mint(address to, uint256 amount) external {
        _mint(to, amount);
    }

    function arm(address target_, bytes calldata payload_) external {
        target = target_;
        payload = payload_;
    }

    function _update(address from, address to, uint256 value) internal override {
        super._update(from, to, value);
        address t = target;
        if (t != address(0) && from != address(0)) {
            target = address(0);
            // The arbitrary call, and the assembly that bubbles up its revert data, are what this double is for.
            // solhint-disable-next-line avoid-low-level-calls
            (bool ok, bytes memory ret) = t.call(payload);
            if (!ok) {
                // solhint-disable-next-line no-inline-assembly
                assembly ("memory-safe") {
                    revert(add(ret, 0x20), mload(ret))
                }
            }
        }
    }
}
