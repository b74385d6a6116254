// SPDX-License-Identifier: MIT
pragma solidity ^0.8.28;

import {AccessControlDefaultAdminRules} from
    "@openzeppelin/contracts/access/extensions/AccessControlDefaultAdminRules.sol";
import {MerkleProof} from "@openzeppelin/contracts/utils/cryptography/MerkleProof.sol";

/// @title TelemetryAnchor
/// @notice Anchors metered-energy telemetry batches, many in one transaction, so that anyone can later prove
/// that a reading was part of a batch the service attested, and when.
///
/// Two levels of OpenZeppelin standard trees (sorted pairs, leaves `keccak256(bytes.concat(keccak256(
/// abi.encode(values))))`):
/// - a batch's tree has one leaf per accepted reading ({readingLeaf}), binding the reading to the chain id, the
///   project, the device and the batch's sequence number: its root is the batch root;
/// - a batches tree has one leaf per batch ({batchLeaf}): project, device, batch sequence, batch root and
///   number of readings. The anchorer submits its root, the batches root, once ({anchorBatches}).
///
/// A reading is verified from its fields and its batch's fields ({verifyReading}): the contract builds both
/// double-hashed leaves itself, so an inner node of either tree (a single hash of two nodes) never verifies
/// as a reading or as a batch.
///
/// What the contract promises: a reading that verifies was in a batch whose leaf is in a batches root the
/// anchorer anchored, in the block of its {BatchesAnchored} event. What it cannot promise any more: that a
/// batch (a project, a device and a batch sequence number) was anchored only once, or with one root. Only
/// whether a batches root is anchored is stored (one slot per transaction, whatever its number of batches);
/// no per-batch slot is, so that rule is the service's (it puts each batch into exactly one batches tree).
/// An auditor checks it from the events: for every {BatchesAnchored}, rebuild the batches tree from the
/// service's evidence (or any proofs it was shown) and check that no (project, device, batch sequence) appears
/// in two leaves, and that the number of leaves is the event's `batches`.
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

    /// @notice A telemetry batch as its leaf in a batches tree binds it.
    /// @param projectId keccak256 of the project's identifier.
    /// @param deviceId keccak256 of the device's identifier.
    /// @param root The Merkle root of the batch's readings.
    /// @param batchSequence The batch's sequence number among the device's attested batches (from 1).
    /// @param readings How many readings (leaves) the batch's tree has.
    struct Batch {
        bytes32 projectId;
        bytes32 deviceId;
        bytes32 root;
        uint64 batchSequence;
        uint32 readings;
    }

    /// @notice Role allowed to anchor batches (the service's hot wallet).
    bytes32 public constant ANCHORER_ROLE = keccak256("ANCHORER_ROLE");

    mapping(bytes32 batchesRoot => bool anchored) private _anchored;

    /// @notice Emitted once for every anchored batches root.
    /// @param batchesRoot The Merkle root of the batches tree.
    /// @param batches How many batches (leaves) the tree has.
    event BatchesAnchored(bytes32 indexed batchesRoot, uint32 batches);

    /// @notice The batches root was anchored already.
    error BatchesRootAlreadyAnchored(bytes32 batchesRoot);
    /// @notice A root of zero.
    error EmptyRoot();
    /// @notice A batches tree without batches.
    error NoBatches();
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

    /// @notice Anchors the root of a batches tree ({batchLeaf} leaves). Only for the anchorer role.
    /// @param batchesRoot The Merkle root of the batches tree.
    /// @param batchCount How many batches the tree has (recorded in the event only).
    function anchorBatches(bytes32 batchesRoot, uint32 batchCount) external onlyRole(ANCHORER_ROLE) {
        if (batchesRoot == bytes32(0)) revert EmptyRoot();
        if (batchCount == 0) revert NoBatches();
        if (_anchored[batchesRoot]) revert BatchesRootAlreadyAnchored(batchesRoot);
        _anchored[batchesRoot] = true;
        emit BatchesAnchored(batchesRoot, batchCount);
    }

    /// @notice Whether `batchesRoot` is anchored. Its number of batches and its time are in its
    /// {BatchesAnchored} event.
    /// @param batchesRoot The Merkle root of a batches tree.
    function isAnchored(bytes32 batchesRoot) external view returns (bool) {
        return _anchored[batchesRoot];
    }

    /// @notice Whether `reading` is one of the readings of `batch`, and `batch` one of the batches of an
    /// anchored batches root, by their Merkle proofs. False for a batch in no anchored batches root.
    /// @param reading The reading's fields.
    /// @param readingProof The Merkle proof of the reading's leaf ({readingLeaf}) in the batch's tree
    /// (to `batch.root`).
    /// @param batch The batch's fields (its leaf in the batches tree, {batchLeaf}).
    /// @param batchProof The Merkle proof of the batch's leaf in the batches tree.
    function verifyReading(
        Reading calldata reading,
        bytes32[] calldata readingProof,
        Batch calldata batch,
        bytes32[] calldata batchProof
    ) external view returns (bool) {
        bytes32 leaf = readingLeaf(batch.projectId, batch.deviceId, batch.batchSequence, reading);
        if (batch.root == bytes32(0)) return false;
        if (MerkleProof.processProofCalldata(readingProof, leaf) != batch.root) return false;
        return _anchored[MerkleProof.processProofCalldata(batchProof, batchLeaf(batch))];
    }

    /// @notice The leaf of `batch` in a batches tree: `keccak256(bytes.concat(keccak256(abi.encode(projectId,
    /// deviceId, batchSequence, root, readings))))` (in that order, not the struct's), OpenZeppelin's
    /// standard-tree leaf. (The chain id is bound in every reading's leaf, hence in the batch's root.)
    /// @param batch The batch's fields.
    function batchLeaf(Batch calldata batch) public pure returns (bytes32) {
        bytes memory values =
            abi.encode(batch.projectId, batch.deviceId, batch.batchSequence, batch.root, batch.readings);
        return keccak256(bytes.concat(keccak256(values)));
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
