// The thread that builds batch Merkle trees (CPU-bound: about three keccak256 per reading), so that the
// relayer's event loop keeps serving requests meanwhile. It runs at the lowest scheduling priority: under
// load, ingest comes first and anchoring catches up when there is CPU to spare.
import { setPriority } from "node:os";
import { parentPort } from "node:worker_threads";
import { type BatchBinding, type LeafReading, batchRoot } from "./merkle.ts";

export type MerkleRequest = { id: number; binding: BatchBinding; readings: LeafReading[] };
export type MerkleResponse = { id: number; root?: string; error?: string };

try {
  setPriority(19); // On Linux this applies to the calling thread only.
} catch {
  // Not allowed here: run at normal priority.
}

parentPort?.on("message", (request: MerkleRequest) => {
  let response: MerkleResponse;
  try {
    response = { id: request.id, root: batchRoot(request.binding, request.readings) };
  } catch (error) {
    response = { id: request.id, error: (error as Error).message };
  }
  parentPort?.postMessage(response);
});
