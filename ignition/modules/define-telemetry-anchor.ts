// The telemetry anchor (Merkle roots of the energy sandbox's telemetry batches), shared by the local and the
// public-network modules.
import type { ArgumentType, Future, IgnitionModuleBuilder } from "@nomicfoundation/ignition-core";

type Arg = ArgumentType;

export type TelemetryAnchorParams = {
  /** Holder of the default admin role. */
  admin: Arg;
  /** Delay of a default admin transfer, in seconds. */
  adminTransferDelay: Arg;
  /** The relayer's hot wallet, which anchors batch roots (anchorer role). */
  anchorer: Arg;
  /** Futures to deploy after (keeps the addresses of the modules' other contracts unchanged). */
  after?: Future[];
};

/** Deploys TelemetryAnchor with the anchorer role granted to the relayer's account. */
export function defineTelemetryAnchor(m: IgnitionModuleBuilder, p: TelemetryAnchorParams) {
  const telemetryAnchor = m.contract("TelemetryAnchor", [p.admin, p.adminTransferDelay, p.anchorer], {
    after: p.after ?? [],
  });
  return { telemetryAnchor };
}
