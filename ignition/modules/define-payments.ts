// The payment router and its roles, shared by the local and the public-network modules. Its splits come from the
// split factory (define-split-factory.ts), which the router is pointed at.
import type { ArgumentType, IgnitionModuleBuilder } from "@nomicfoundation/ignition-core";

type Arg = ArgumentType;

export type PaymentsParams = {
  /** Holder of the default admin role. */
  admin: Arg;
  /** Delay of a default admin transfer, in seconds. */
  adminTransferDelay: Arg;
  /** The service's quote signer (signs price-locked orders; sends no transaction). */
  quoteSigner: Arg;
  /** The relayer's hot wallet: submits relayed permits, pays cash orders from its float (agent role) and
   * voids orders its integrators cancel (order-canceller role). */
  agent: Arg;
  /** May pause payments. */
  pauser: Arg;
};

/** Deploys PaymentRouter and grants its roles; returns the router and one of the grants (the modules deploy their
 * other contracts after it, so that their addresses stay the same from one deployment to the next). */
export function definePayments(m: IgnitionModuleBuilder, p: PaymentsParams) {
  const paymentRouter = m.contract("PaymentRouter", [p.admin, p.adminTransferDelay]);

  const quoteSignerRole = m.staticCall(paymentRouter, "QUOTE_SIGNER_ROLE", [], 0);
  const agentRole = m.staticCall(paymentRouter, "AGENT_ROLE", [], 0);
  const routerPauserRole = m.staticCall(paymentRouter, "PAUSER_ROLE", [], 0, { id: "PaymentRouter_PAUSER_ROLE" });
  const cancellerRole = m.staticCall(paymentRouter, "ORDER_CANCELLER_ROLE", [], 0);

  m.call(paymentRouter, "grantRole", [quoteSignerRole, p.quoteSigner], { id: "grantQuoteSigner" });
  m.call(paymentRouter, "grantRole", [agentRole, p.agent], { id: "grantAgent" });
  m.call(paymentRouter, "grantRole", [cancellerRole, p.agent], { id: "grantOrderCanceller" });
  const rolesGranted = m.call(paymentRouter, "grantRole", [routerPauserRole, p.pauser], { id: "grantRouterPauser" });

  return { paymentRouter, rolesGranted };
}
