// The deployment to a public network: the payment contracts over an existing stablecoin (USDC), and the
// telemetry anchor of the energy sandbox.
// Every address comes from a parameter file (ignition/parameters/<network>.json).
import { buildModule } from "@nomicfoundation/hardhat-ignition/modules";
import { definePayments } from "./define-payments.ts";
import { defineTelemetryAnchor } from "./define-telemetry-anchor.ts";

export default buildModule("Payments", (m) => {
  const { assetSplit, paymentRouter, registered } = definePayments(m, {
    token: m.getParameter("token"),
    admin: m.getParameter("admin"),
    adminTransferDelay: m.getParameter("adminTransferDelay", 86_400),
    recipients: [
      m.getParameter("assetOwnerRecipient"),
      m.getParameter("operatorRecipient"),
      m.getParameter("protocolRecipient"),
    ],
    bps: m.getParameter("bps", [5000, 4000, 1000]),
    quoteSigner: m.getParameter("quoteSigner"),
    agent: m.getParameter("agent"),
    pauser: m.getParameter("pauser"),
  });
  const { telemetryAnchor } = defineTelemetryAnchor(m, {
    admin: m.getParameter("admin"),
    adminTransferDelay: m.getParameter("adminTransferDelay", 86_400),
    anchorer: m.getParameter("anchorer"),
    after: [registered],
  });
  return { assetSplit, paymentRouter, telemetryAnchor };
});
