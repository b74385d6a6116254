// SPDX-License-Identifier: MIT
pragma solidity ^0.8.28;

/// @notice Test double whose asset is address zero; the router must refuse to register it.
contract NullAssetSplit {
    function asset() external pure returns (address) {
        return address(0);
    }
}
