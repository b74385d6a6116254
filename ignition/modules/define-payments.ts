// The payment contracts and their wiring, shared by the local and the public-network modules.
import type { ArgumentType, IgnitionModuleBuilder } from "@nomicfoundation/ignition-core";

type Arg = ArgumentType;

export type PaymentsParams = {
  /** The stablecoin settled in (an address, a parameter or a deployed contract future). */
  token: Arg;
  /** Holder of the default admin role of both contracts. */
  admin: Arg;
  /** Delay of a default admin transfer, in seconds. */
  adminTransferDelay: Arg;
  /** Recipients of the asset-owner, operator and protocol legs. */
  recipients: [Arg, Arg, Arg];
  /** Shares of the three legs in basis points. */
  bps: Arg;
  /** The service's quote signer (signs price-locked orders; sends no transaction). */
  quoteSigner: Arg;
  /** The relayer's hot wallet: submits relayed permits, pays cash orders from its float (agent role) and
   * voids orders its integrators cancel (order-canceller role). */
  agent: Arg;
  /** May pause payments and settlements. */
  pauser: Arg;
};

/** Deploys AssetSplit and PaymentRouter, grants the roles and registers the split with the router. */
export function definePayments(m: IgnitionModuleBuilder, p: PaymentsParams) {
  const assetSplit = m.contract("AssetSplit", [p.token, p.admin, p.adminTransferDelay, p.recipients, p.bps]);
  const paymentRouter = m.contract("PaymentRouter", [p.admin, p.adminTransferDelay]);

  const depositorRole = m.staticCall(assetSplit, "DEPOSITOR_ROLE", [], 0, { id: "AssetSplit_DEPOSITOR_ROLE" });
  const splitPauserRole = m.staticCall(assetSplit, "PAUSER_ROLE", [], 0, { id: "AssetSplit_PAUSER_ROLE" });
  const quoteSignerRole = m.staticCall(paymentRouter, "QUOTE_SIGNER_ROLE", [], 0);
  const agentRole = m.staticCall(paymentRouter, "AGENT_ROLE", [], 0);
  const routerPauserRole = m.staticCall(paymentRouter, "PAUSER_ROLE", [], 0, { id: "PaymentRouter_PAUSER_ROLE" });
  const cancellerRole = m.staticCall(paymentRouter, "ORDER_CANCELLER_ROLE", [], 0);

  const depositor = m.call(assetSplit, "grantRole", [depositorRole, paymentRouter], { id: "grantDepositorToRouter" });
  m.call(assetSplit, "grantRole", [splitPauserRole, p.pauser], { id: "grantSplitPauser" });
  m.call(paymentRouter, "grantRole", [quoteSignerRole, p.quoteSigner], { id: "grantQuoteSigner" });
  m.call(paymentRouter, "grantRole", [agentRole, p.agent], { id: "grantAgent" });
  m.call(paymentRouter, "grantRole", [cancellerRole, p.agent], { id: "grantOrderCanceller" });
  m.call(paymentRouter, "grantRole", [routerPauserRole, p.pauser], { id: "grantRouterPauser" });
  const registered = m.call(paymentRouter, "registerSplit", [assetSplit], { id: "registerSplit", after: [depositor] });

  return { assetSplit, paymentRouter, registered };
}
