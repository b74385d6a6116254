// SPDX-License-Identifier: MIT
pragma solidity ^0.8.28;

import {Account} from "@openzeppelin/contracts/account/Account.sol";
import {IERC1271} from "@openzeppelin/contracts/interfaces/IERC1271.sol";
import {MultiSignerERC7913} from "@openzeppelin/contracts/utils/cryptography/signers/MultiSignerERC7913.sol";

/// @notice Test smart-contract account: OpenZeppelin's ERC-4337 {Account} with several owners and a threshold
/// ({MultiSignerERC7913}), answering ERC-1271 with the owners' signatures of the hash itself. Its signature,
/// `abi.encode(signers, signatures)`, is far longer than 65 bytes, as a multisig's or a passkey wallet's is.
/// @dev A production account would also wrap the hash (ERC-7739) so that one owner's signature cannot be replayed
/// on another account of the same owners; these tests need the plain ERC-1271 path only.
contract MultiOwnerAccount is Account, MultiSignerERC7913, IERC1271 {
    /// @param signers The owners (each a 20-byte address, the ERC-7913 form of an account without code).
    /// @param threshold How many of them must sign.
    constructor(bytes[] memory signers, uint64 threshold) MultiSignerERC7913(signers, threshold) {}

    /// @inheritdoc IERC1271
    function isValidSignature(bytes32 hash, bytes calldata signature) external view returns (bytes4) {
        return _rawSignatureValidation(hash, signature) ? IERC1271.isValidSignature.selector : bytes4(0xffffffff);
    }
}
