// SPDX-License-Identifier: MIT
pragma solidity ^0.8.28;

/// @title Erc6492AccountDeployer
/// @notice Runs the account factory call an ERC-6492 signature carries, so that the signer, a smart-contract
/// account not deployed yet, exists when its signature is checked. The {PaymentRouter} creates one in its
/// constructor and sends every ERC-6492 signature through it.
/// @dev A contract of its own, which holds nothing and has no role anywhere, so that the arbitrary call a payer's
/// signature names never comes from the router (which is the settler of every split, and may hold tokens sent to
/// it by mistake). Coinbase's commerce-payments routes the same call through Multicall3 for that reason.
contract Erc6492AccountDeployer {
    /// @notice Decodes `wrapped` (an ERC-6492 signature without its 32-byte magic suffix: the ABI encoding of the
    /// factory, the factory calldata and the account's signature), calls the factory if `account` has no code
    /// yet, and returns the account's own signature. A failed factory call is ignored, as ERC-6492 has it: the
    /// signature check that follows fails if the account still does not exist.
    /// @param account The signer the signature is for.
    /// @param wrapped The ERC-6492 signature without its magic suffix.
    /// @return signature The account's signature, for its ERC-1271 `isValidSignature`.
    function deployAndUnwrap(address account, bytes calldata wrapped) external returns (bytes memory signature) {
        address factory;
        bytes memory factoryCalldata;
        (factory, factoryCalldata, signature) = abi.decode(wrapped, (address, bytes, bytes));
        if (account.code.length == 0) {
            // solhint-disable-next-line avoid-low-level-calls
            (bool deployed,) = factory.call(factoryCalldata);
            deployed; // ignored on purpose (see above)
        }
    }
}
