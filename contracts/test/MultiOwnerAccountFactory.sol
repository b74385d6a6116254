// SPDX-License-Identifier: MIT
pragma solidity ^0.8.28;

import {MultiOwnerAccount} from "./MultiOwnerAccount.sol";

/// @notice Deploys {MultiOwnerAccount}s at CREATE2 addresses known before deployment, the factory an ERC-6492
/// signature of an undeployed account names.
contract MultiOwnerAccountFactory {
    /// @notice Deploys the account of `signers`, `threshold` and `salt` (or returns it if it exists).
    /// @param signers The owners.
    /// @param threshold How many of them must sign.
    /// @param salt Distinguishes accounts of the same owners.
    /// @return account The account.
    function createAccount(bytes[] calldata signers, uint64 threshold, bytes32 salt)
        external
        returns (address account)
    {
        account = predictAccount(signers, threshold, salt);
        if (account.code.length == 0) new MultiOwnerAccount{salt: salt}(signers, threshold);
    }

    /// @notice The address of the account of `signers`, `threshold` and `salt`, deployed or not.
    /// @param signers The owners.
    /// @param threshold How many of them must sign.
    /// @param salt Distinguishes accounts of the same owners.
    /// @return The account's address.
    function predictAccount(bytes[] calldata signers, uint64 threshold, bytes32 salt) public view returns (address) {
        bytes32 initCodeHash =
            keccak256(abi.encodePacked(type(MultiOwnerAccount).creationCode, abi.encode(signers, threshold)));
        return address(uint160(uint256(keccak256(abi.encodePacked(bytes1(0xff), address(this), salt, initCodeHash)))));
    }
}
