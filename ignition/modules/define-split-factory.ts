// The split factory (one AssetSplit per asset: AssetSplitFactory and the AssetSplit implementation its
// constructor deploys, which every split clones) and its wiring to the payment router, shared by the local and the public-network modules.
import type { ArgumentType, CallableContractFuture, Future, IgnitionModuleBuilder } from "@nomicfoundation/ignition-core";
import { SPLIT_FACTORY } from "../deployment-records.ts";

type Arg = ArgumentType;

export type SplitFactoryParams = {
  /** The stablecoin every split settles in (an address, a parameter or a deployed contract future). */
  token: Arg;
  /** The payment router: the splits' only settler besides the factory's depositors; it pays through them. */
  paymentRouter: CallableContractFuture<string>;
  /** Holder of the factory's default admin role (also the router's admin, who points the router at it). */
  admin: Arg;
  /** Delay of a default admin transfer, in seconds. */
  adminTransferDelay: Arg;
  /** Recipient of every split's protocol leg (fixed for the factory's splits). */
  protocolRecipient: Arg;
  /** Shares of the asset-owner, operator and protocol legs in basis points (fixed for the factory's splits). */
  bps: Arg;
  /** Proposes changes of a split's asset-owner and operator recipients on behalf of the asset's tenant: an offline
   * signer (hardware key, KMS or multisig), never the relayer's hot wallet. Creation needs no role. */
  splitManager: Arg;
  /** Delay between a recipient change's proposal and its execution, in seconds (fixed for the factory). */
  recipientChangeDelay: Arg;
  /** May pause a split's settlements. */
  pauser: Arg;
  /** Futures to deploy after (keeps the addresses of the modules' other contracts unchanged). */
  after?: Future[];
  /** The factory's name in the deployment record: `AssetSplitFactory` for the main token's (the default), and
   * `AssetSplitFactory_<SYMBOL>` for each other token's (deployment-records.ts: splitFactoriesOf). */
  id?: string;
};

/** Deploys AssetSplitFactory, grants its roles and makes the router pay through its splits (in its token; the
 * first factory the router is given is its main one). */
export function defineSplitFactory(m: IgnitionModuleBuilder, p: SplitFactoryParams) {
  const id = p.id ?? SPLIT_FACTORY;
  if (id !== SPLIT_FACTORY && !id.startsWith(`${SPLIT_FACTORY}_`)) throw new Error(`a split factory's id starts with ${SPLIT_FACTORY}_`);
  // The main factory's future ids are the ones its first deployments recorded.
  const suffix = id === SPLIT_FACTORY ? "" : id.slice(SPLIT_FACTORY.length);
  const assetSplitFactory = m.contract(
    "AssetSplitFactory",
    [p.token, p.paymentRouter, p.protocolRecipient, p.bps, p.admin, p.adminTransferDelay, p.recipientChangeDelay],
    { id, after: p.after ?? [] },
  );

  const managerRole = m.staticCall(assetSplitFactory, "SPLIT_MANAGER_ROLE", [], 0);
  const pauserRole = m.staticCall(assetSplitFactory, "PAUSER_ROLE", [], 0, { id: `${id}_PAUSER_ROLE` });
  m.call(assetSplitFactory, "grantRole", [managerRole, p.splitManager], { id: `grantSplitManager${suffix}` });
  m.call(assetSplitFactory, "grantRole", [pauserRole, p.pauser], { id: `grantSplitFactoryPauser${suffix}` });
  const splitFactorySet = m.call(p.paymentRouter, "setSplitFactory", [assetSplitFactory], { id: `setSplitFactory${suffix}` });

  return { assetSplitFactory, splitFactorySet };
}
