// SPDX-License-Identifier: MIT
pragma solidity ^0.8.28;

import {IERC20} from "@openzeppelin/contracts/token/ERC20/IERC20.sol";
import {SafeERC20} from "@openzeppelin/contracts/token/ERC20/utils/SafeERC20.sol";

/// @title OrderDeposit
/// @notice The deposit address of one order: a payer who can only send a plain ERC-20 transfer (a wallet scanning
/// an EIP-681 payment request) sends the order amount there, and the {PaymentRouter} collects it with
/// {PaymentRouter-payFromDeposit}. The router creates it with CREATE2, the salt being the order's EIP-712 digest,
/// so its address follows from the order alone ({PaymentRouter-depositAddress}) and is known before anything is
/// deployed there.
/// @dev Its constructor grants the creator (the router) an unlimited allowance of `token` and returns no runtime
/// code: nothing can call it afterwards, and only the router, through that allowance, ever moves what the address
/// holds. Tokens sent there before or after its creation are the same balance. `forceApprove` makes the grant work
/// for tokens that return nothing from `approve` (USDT).
contract OrderDeposit {
    using SafeERC20 for IERC20;

    /// @notice Grants the creator an unlimited allowance of `token` and leaves no code at this address.
    /// @param token The order's token.
    constructor(IERC20 token) {
        token.forceApprove(msg.sender, type(uint256).max);
        // Returning empty runtime code: the address keeps only its balance and the allowance. Solidity has no
        // other way to end a constructor without deploying the contract's code.
        // solhint-disable-next-line no-inline-assembly
        assembly ("memory-safe") {
            return(0, 0)
        }
    }
}
