// The local chain's deployment: its stablecoin, the payment router, the split factory (one AssetSplit per
// device), and funded test accounts. The stablecoin is RehearsalUsdc, USDC v2.2's behaviour: EIP-2612 permits and
// EIP-3009 authorizations, each with its `v, r, s` and its `bytes` overload, checked by ERC-1271 for a
// smart-contract account; Permit2 is installed beside it (lib/permit2.ts), so every rail can be tried locally.
// A second stablecoin, "USDT" (PlainStablecoin: no EIP-2612, no EIP-3009, as USDT is on many chains), has its
// own split factory (AssetSplitFactory_USDT): wallets pay it gaslessly through Permit2.
// Accounts are the local node's: 0 admin, pauser and the token's owner (it mints), 1 quote signer, 2 relayer
// (agent), 3 spare, 4-5 asset owners and operators of the sample data, 6 the protocol recipient of every split,
// 7 a funded test wallet, 13 the split manager (proposes recipient changes: `npm run splits`). The relayer (2)
// also anchors telemetry batch roots and creates each device's split (which anyone may); it holds no split
// factory role.
import { buildModule } from "@nomicfoundation/hardhat-ignition/modules";
import { definePayments } from "./define-payments.ts";
import { defineSplitFactory } from "./define-split-factory.ts";
import { defineTelemetryAnchor } from "./define-telemetry-anchor.ts";

export default buildModule("LocalStack", (m) => {
  const admin = m.getAccount(0);
  const agent = m.getAccount(2);
  const testWallet = m.getAccount(7);

  // Name and symbol "USDC", EIP-712 domain version "2", six decimals: what a wallet meets on a public chain.
  const stablecoin = m.contract("RehearsalUsdc", [admin]);
  const bps = [5000, 4000, 1000];
  const { paymentRouter, rolesGranted } = definePayments(m, {
    admin,
    adminTransferDelay: 0,
    quoteSigner: m.getAccount(1),
    agent,
    pauser: admin,
  });

  const floatAmount = m.getParameter("agentFloat", 1_000_000_000_000n); // 1,000,000 USDC
  const walletAmount = m.getParameter("testWalletFunds", 10_000_000_000n); // 10,000 USDC
  m.call(stablecoin, "mint", [agent, floatAmount], { id: "mintAgentFloat" });
  m.call(stablecoin, "mint", [testWallet, walletAmount], { id: "mintTestWallet" });
  m.call(stablecoin, "approve", [paymentRouter, 2n ** 256n - 1n], {
    id: "approveAgentFloat",
    from: agent,
    after: [rolesGranted],
  });

  const { telemetryAnchor } = defineTelemetryAnchor(m, {
    admin,
    adminTransferDelay: 0,
    anchorer: agent,
    after: [rolesGranted],
  });

  const splitFactoryParams = {
    paymentRouter,
    admin,
    adminTransferDelay: 0,
    protocolRecipient: m.getAccount(6),
    bps,
    splitManager: m.getAccount(13),
    // Short on the local stack (a minute), so that a recipient change can be tried end to end.
    recipientChangeDelay: m.getParameter("recipientChangeDelay", 60),
    pauser: admin,
  };
  const { assetSplitFactory, splitFactorySet } = defineSplitFactory(m, {
    ...splitFactoryParams,
    token: stablecoin,
    after: [telemetryAnchor],
  });

  // Deployed after everything above, whose addresses stay those of a deployment without it.
  const plainStablecoin = m.contract("PlainStablecoin", ["Tether USD", "USDT", admin], { after: [splitFactorySet] });
  m.call(plainStablecoin, "mint", [agent, floatAmount], { id: "mintAgentFloatUsdt" });
  m.call(plainStablecoin, "mint", [testWallet, walletAmount], { id: "mintTestWalletUsdt" });
  m.call(plainStablecoin, "approve", [paymentRouter, 2n ** 256n - 1n], { id: "approveAgentFloatUsdt", from: agent });
  const { assetSplitFactory: plainSplitFactory } = defineSplitFactory(m, {
    ...splitFactoryParams,
    token: plainStablecoin,
    id: "AssetSplitFactory_USDT",
  });

  return { stablecoin, paymentRouter, telemetryAnchor, assetSplitFactory, plainStablecoin, plainSplitFactory };
});
