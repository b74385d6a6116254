// The sandbox's background workers (jobs/worker.ts), started by relayer/src/main.ts's createWorkers().
import type { Worker } from "../jobs/worker.ts";
import type { Services } from "../services.ts";
import { createAnchorWorker } from "./anchoring/anchor-worker.ts";
import { createEnergyMaintenance } from "./maintenance-worker.ts";

export function energyWorkers(services: Services): Worker[] {
  return [createAnchorWorker(services), createEnergyMaintenance(services)];
}
