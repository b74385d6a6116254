// SPDX-License-Identifier: MIT
pragma solidity ^0.8.28;

import {Ownable} from "@openzeppelin/contracts/access/Ownable.sol";
import {ERC20} from "@openzeppelin/contracts/token/ERC20/ERC20.sol";

/// @title PlainStablecoin
/// @notice A 6-decimal stablecoin without EIP-2612 permits or EIP-3009 authorizations, as USDT is on many chains:
/// wallets pay it gaslessly through Permit2 ({PaymentRouter-payWithPermit2}) after one approval of Permit2. For
/// the local chain and tests; only its owner mints. Never deploy it where real value is at stake.
contract PlainStablecoin is ERC20, Ownable {
    /// @notice Deploys the token with no supply; `initialOwner` mints.
    /// @param name_ Token name.
    /// @param symbol_ Token symbol.
    /// @param initialOwner The account allowed to mint.
    constructor(string memory name_, string memory symbol_, address initialOwner)
        ERC20(name_, symbol_)
        Ownable(initialOwner)
    {}

    /// @notice Six decimals, like USDT and USDC.
    function decimals() public pure override returns (uint8) {
        return 6;
    }

    /// @notice Mints `amount` base units to `to`. Only for the owner.
    /// @param to The account credited.
    /// @param amount Amount in base units.
    function mint(address to, uint256 amount) external onlyOwner {
        _mint(to, amount);
    }
}
