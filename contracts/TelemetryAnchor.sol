// SPDX-License-Identifier: MIT
pragma solidity ^0.8.28;

import {AccessControlDefaultAdminRules} from
    "@openzeppelin/contracts/access/extensions/AccessControlDefaultAdminRules.sol";
import {MerkleProof} from "@openzeppelin/contracts/utils/cryptography/MerkleProof.sol";

/// @title TelemetryAnchor
/// @notice Anchors the Merkle roots of metered-energy telemetry batches, so that anyone can later prove
/// that a reading was part of a batch the service attested, and when.
///
/// The service builds one Merkle tree per accepted batch of meter readings (OpenZeppelin's standard tree:
/// sorted pairs, leaves `keccak256(bytes.concat(keccak256(abi.encode(values))))`). Each leaf binds one
/// reading to the chain id, the project, the device and the batch's sequence number, so a leaf proves
/// nothing about any other chain, device or batch. The anchorer submits the root once per batch; a batch
/// (a device and a batch sequence number) can never be anchored twice.
///
/// @dev Project and device ids are the keccak256 of their UTF-8 identifiers.
contract TelemetryAnchor is AccessControlDefaultAdminRules {
    /// @notice An anchored batch.
    /// @param root The Merkle root of the batch's readings.
    /// @param readings How many readings (leaves) the tree has.
    /// @param anchoredAt Block timestamp of the anchoring.
    struct Anchor {
        bytes32 root;
        uint32 readings;
        uint64 anchoredAt;
    }

    /// @notice Role allowed to anchor batches (the service's hot wallet).
    bytes32 public constant ANCHORER_ROLE = keccak256("ANCHORER_ROLE");

    mapping(bytes32 deviceId => mapping(uint64 batchSequence => Anchor)) private _anchors;

    /// @notice Emitted once for every anchored batch.
    /// @param projectId keccak256 of the project's identifier.
    /// @param deviceId keccak256 of the device's identifier.
    /// @param batchSequence The batch's sequence number among the device's attested batches (from 1).
    /// @param root The Merkle root of the batch's readings.
    /// @param readings How many readings (leaves) the tree has.
    event BatchAnchored(
        bytes32 indexed projectId,
        bytes32 indexed deviceId,
        uint64 indexed batchSequence,
        bytes32 root,
        uint32 readings
    );

    /// @notice The batch was anchored already (with `root`).
    error BatchAlreadyAnchored(bytes32 deviceId, uint64 batchSequence, bytes32 root);
    /// @notice A root of zero (zero marks a batch that is not anchored).
    error EmptyRoot();
    /// @notice A batch without readings.
    error NoReadings();
    /// @notice An initial anchorer of address zero.
    error InvalidAnchorer(address anchorer);

    /// @notice Deploys the anchor with its admin and its first anchorer.
    /// @param initialAdmin Holder of the default admin role.
    /// @param adminTransferDelay Delay of a default admin transfer, in seconds.
    /// @param initialAnchorer The first holder of the anchorer role.
    constructor(address initialAdmin, uint48 adminTransferDelay, address initialAnchorer)
        AccessControlDefaultAdminRules(adminTransferDelay, initialAdmin)
    {
        if (initialAnchorer == address(0)) revert InvalidAnchorer(initialAnchorer);
        _grantRole(ANCHORER_ROLE, initialAnchorer);
    }

    /// @notice Anchors the Merkle root of one telemetry batch. Only for the anchorer role.
    /// @param projectId keccak256 of the project's identifier (bound into every leaf).
    /// @param deviceId keccak256 of the device's identifier.
    /// @param batchSequence The batch's sequence number among the device's attested batches.
    /// @param root The Merkle root of the batch's readings.
    /// @param readings How many readings the tree has.
    function anchor(bytes32 projectId, bytes32 deviceId, uint64 batchSequence, bytes32 root, uint32 readings)
        external
        onlyRole(ANCHORER_ROLE)
    {
        if (root == bytes32(0)) revert EmptyRoot();
        if (readings == 0) revert NoReadings();
        Anchor storage existing = _anchors[deviceId][batchSequence];
        if (existing.root != bytes32(0)) revert BatchAlreadyAnchored(deviceId, batchSequence, existing.root);
        _anchors[deviceId][batchSequence] = Anchor(root, readings, uint64(block.timestamp));
        emit BatchAnchored(projectId, deviceId, batchSequence, root, readings);
    }

    /// @notice The anchor of a batch (all zero if it is not anchored).
    /// @param deviceId keccak256 of the device's identifier.
    /// @param batchSequence The batch's sequence number among the device's attested batches.
    function anchorOf(bytes32 deviceId, uint64 batchSequence) external view returns (Anchor memory) {
        return _anchors[deviceId][batchSequence];
    }

    /// @notice Whether `leaf` is a reading of the anchored batch, by its Merkle `proof`. False for a batch
    /// that is not anchored.
    /// @param deviceId keccak256 of the device's identifier.
    /// @param batchSequence The batch's sequence number among the device's attested batches.
    /// @param proof The Merkle proof of `leaf` in the batch's tree.
    /// @param leaf The reading's leaf hash: `keccak256(bytes.concat(keccak256(abi.encode(values))))`.
    function verifyReading(bytes32 deviceId, uint64 batchSequence, bytes32[] calldata proof, bytes32 leaf)
        external
        view
        returns (bool)
    {
        bytes32 root = _anchors[deviceId][batchSequence].root;
        return root != bytes32(0) && MerkleProof.verifyCalldata(proof, root, leaf);
    }
}
