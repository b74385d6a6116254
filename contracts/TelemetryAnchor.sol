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
/// nothing about any other chain, project, device or batch. The anchorer submits the root once per batch; a
/// batch (a project, a device and a batch sequence number) can never be anchored twice.
///
/// A reading is verified from its fields ({verifyReading}): the contract builds the double-hashed leaf itself,
/// so an inner node of a tree (a single hash of two nodes) never verifies as a reading.
///
/// Only the root is stored (one slot: what {verifyReading} and the once-per-batch rule need); the number of
/// readings is in the {BatchAnchored} event and the time in its block, which is where an indexer or an
/// auditor reads them. Storing them too would cost another slot, about 22,000 gas per batch.
///
/// @dev Project and device ids are the keccak256 of their UTF-8 identifiers.
contract TelemetryAnchor is AccessControlDefaultAdminRules {
    /// @notice A meter reading as a leaf binds it (with the chain id, project, device and batch sequence).
    /// @param readingId The reading's identifier.
    /// @param sequenceNumber The reading's sequence number on its meter.
    /// @param meterEpoch The meter's epoch (it increases when the meter's counter resets).
    /// @param energyWhCumulative The meter's cumulative energy, in watt-hours.
    /// @param deviceTsMs The device's timestamp of the reading, in Unix milliseconds.
    /// @param supersedesReadingId The reading this one corrects ("" if none).
    struct Reading {
        string readingId;
        uint64 sequenceNumber;
        uint64 meterEpoch;
        uint64 energyWhCumulative;
        int64 deviceTsMs;
        string supersedesReadingId;
    }

    /// @notice Role allowed to anchor batches (the service's hot wallet).
    bytes32 public constant ANCHORER_ROLE = keccak256("ANCHORER_ROLE");

    mapping(bytes32 projectId => mapping(bytes32 deviceId => mapping(uint64 batchSequence => bytes32 root))) private
        _roots;

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
    error BatchAlreadyAnchored(bytes32 projectId, bytes32 deviceId, uint64 batchSequence, bytes32 root);
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
    /// @param projectId keccak256 of the project's identifier (bound into every leaf, and part of the batch's key).
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
        mapping(uint64 batchSequence => bytes32 root) storage batches = _roots[projectId][deviceId];
        bytes32 existing = batches[batchSequence];
        if (existing != bytes32(0)) revert BatchAlreadyAnchored(projectId, deviceId, batchSequence, existing);
        batches[batchSequence] = root;
        emit BatchAnchored(projectId, deviceId, batchSequence, root, readings);
    }

    /// @notice The Merkle root a batch was anchored with (zero if it is not anchored). Its number of readings
    /// and its time are in its {BatchAnchored} event.
    /// @param projectId keccak256 of the project's identifier.
    /// @param deviceId keccak256 of the device's identifier.
    /// @param batchSequence The batch's sequence number among the device's attested batches.
    function rootOf(bytes32 projectId, bytes32 deviceId, uint64 batchSequence) external view returns (bytes32) {
        return _roots[projectId][deviceId][batchSequence];
    }

    /// @notice Whether `reading` is one of the readings of the anchored batch, by its Merkle `proof`. False for
    /// a batch that is not anchored.
    /// @param projectId keccak256 of the project's identifier.
    /// @param deviceId keccak256 of the device's identifier.
    /// @param batchSequence The batch's sequence number among the device's attested batches.
    /// @param reading The reading's fields.
    /// @param proof The Merkle proof of the reading's leaf ({readingLeaf}) in the batch's tree.
    function verifyReading(
        bytes32 projectId,
        bytes32 deviceId,
        uint64 batchSequence,
        Reading calldata reading,
        bytes32[] calldata proof
    ) external view returns (bool) {
        bytes32 root = _roots[projectId][deviceId][batchSequence];
        return root != bytes32(0)
            && MerkleProof.verifyCalldata(proof, root, readingLeaf(projectId, deviceId, batchSequence, reading));
    }

    /// @notice The leaf of `reading` in its batch's tree on this chain: `keccak256(bytes.concat(keccak256(
    /// abi.encode(block.chainid, projectId, deviceId, batchSequence, readingId, sequenceNumber, meterEpoch,
    /// energyWhCumulative, deviceTsMs, supersedesReadingId))))`, OpenZeppelin's standard-tree leaf.
    /// @param projectId keccak256 of the project's identifier.
    /// @param deviceId keccak256 of the device's identifier.
    /// @param batchSequence The batch's sequence number among the device's attested batches.
    /// @param reading The reading's fields.
    function readingLeaf(bytes32 projectId, bytes32 deviceId, uint64 batchSequence, Reading calldata reading)
        public
        view
        returns (bytes32)
    {
        bytes memory values = abi.encode(
            block.chainid,
            projectId,
            deviceId,
            batchSequence,
            reading.readingId,
            reading.sequenceNumber,
            reading.meterEpoch,
            reading.energyWhCumulative,
            reading.deviceTsMs,
            reading.supersedesReadingId
        );
        return keccak256(bytes.concat(keccak256(values)));
    }
}
