// The sandbox's background workers, started by relayer/src/main.ts's createWorkers().
import type { Services } from "../services.ts";
import { createAnchorWorker } from "./anchoring/anchor-worker.ts";
import { createEnergyMaintenance } from "./maintenance-worker.ts";

export function energyWorkers(services: Services) {
  return [createAnchorWorker(services), createEnergyMaintenance(services)];
}
