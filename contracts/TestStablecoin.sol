// SPDX-License-Identifier: MIT
pragma solidity ^0.8.28;

import {Ownable} from "@openzeppelin/contracts/access/Ownable.sol";
import {ERC20} from "@openzeppelin/contracts/token/ERC20/ERC20.sol";
import {ERC20Permit} from "@openzeppelin/contracts/token/ERC20/extensions/ERC20Permit.sol";

/// @title TestStablecoin
/// @notice A 6-decimal stablecoin with EIP-2612 permits for the local chain and testnets. Only its owner
/// mints. Never deploy it where real value is at stake.
contract TestStablecoin is ERC20, ERC20Permit, Ownable {
    /// @notice Deploys the token with no supply; `initialOwner` mints.
    /// @param name_ Token name; also the EIP-712 domain name of its permits.
    /// @param symbol_ Token symbol.
    /// @param initialOwner The account allowed to mint.
    constructor(string memory name_, string memory symbol_, address initialOwner)
        ERC20(name_, symbol_)
        ERC20Permit(name_)
        Ownable(initialOwner)
    {}

    /// @notice Six decimals, like USDC.
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
