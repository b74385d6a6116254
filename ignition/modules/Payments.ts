// The deployment to a public network: the payment router over an existing stablecoin (USDC), the split factory
// (one AssetSplit per asset, the only splits the router pays through), and the telemetry anchor of the energy
// sandbox.
// Every address comes from a parameter file (ignition/parameters/<network>.json).
import { buildModule } from "@nomicfoundation/hardhat-ignition/modules";
import { definePayments } from "./define-payments.ts";
import { defineSplitFactory } from "./define-split-factory.ts";
import { defineTelemetryAnchor } from "./define-telemetry-anchor.ts";

export default buildModule("Payments", (m) => {
  const { paymentRouter, rolesGranted } = definePayments(m, {
    admin: m.getParameter("admin"),
    adminTransferDelay: m.getParameter("adminTransferDelay", 86_400),
    quoteSigner: m.getParameter("quoteSigner"),
    agent: m.getParameter("agent"),
    pauser: m.getParameter("pauser"),
  });
  const { telemetryAnchor } = defineTelemetryAnchor(m, {
    admin: m.getParameter("admin"),
    adminTransferDelay: m.getParameter("adminTransferDelay", 86_400),
    anchorer: m.getParameter("anchorer"),
    after: [rolesGranted],
  });
  const { assetSplitFactory } = defineSplitFactory(m, {
    token: m.getParameter("token"),
    paymentRouter,
    admin: m.getParameter("admin"),
    adminTransferDelay: m.getParameter("adminTransferDelay", 86_400),
    protocolRecipient: m.getParameter("protocolRecipient"),
    bps: m.getParameter("bps", [5000, 4000, 1000]),
    splitManager: m.getParameter("splitManager"),
    recipientChangeDelay: m.getParameter("recipientChangeDelay", 172_800),
    pauser: m.getParameter("pauser"),
    after: [telemetryAnchor],
  });
  return { paymentRouter, telemetryAnchor, assetSplitFactory };
});
