// Builds batch Merkle roots on the Merkle thread (merkle-thread.ts), one request at a time per thread; a
// thread that dies is replaced on the next request.
import { Worker } from "node:worker_threads";
import type { Hex } from "viem";
import type { Logger } from "../../logger.ts";
import type { BatchBinding, LeafReading } from "./merkle.ts";
import type { MerkleRequest, MerkleResponse } from "./merkle-thread.ts";

export type MerkleBuilder = {
  root(binding: BatchBinding, readings: LeafReading[]): Promise<Hex>;
  close(): Promise<void>;
};

export function createMerkleBuilder(logger: Logger): MerkleBuilder {
  let thread: Worker | undefined;
  let nextId = 1;
  const pending = new Map<number, { resolve(root: Hex): void; reject(error: Error): void }>();

  function failAll(error: Error) {
    for (const waiter of pending.values()) waiter.reject(error);
    pending.clear();
  }

  function ensureThread(): Worker {
    if (thread) return thread;
    const started = new Worker(new URL("./merkle-thread.ts", import.meta.url));
    started.on("message", (response: MerkleResponse) => {
      const waiter = pending.get(response.id);
      if (!waiter) return;
      pending.delete(response.id);
      if (response.root) waiter.resolve(response.root as Hex);
      else waiter.reject(new Error(response.error ?? "the Merkle thread returned nothing"));
    });
    started.on("error", (error) => {
      logger.warn("the Merkle thread failed", { error });
      if (thread === started) thread = undefined;
      failAll(error);
    });
    started.on("exit", (code) => {
      if (thread === started) thread = undefined;
      failAll(new Error(`the Merkle thread exited (${code})`));
    });
    thread = started;
    return started;
  }

  return {
    root(binding, readings) {
      const worker = ensureThread();
      const id = nextId++;
      return new Promise<Hex>((resolve, reject) => {
        pending.set(id, { resolve, reject });
        worker.postMessage({ id, binding, readings } satisfies MerkleRequest);
      });
    },
    async close() {
      const current = thread;
      thread = undefined;
      if (current) await current.terminate();
    },
  };
}
