// The receipt of a paid order: its payment and its settlement, as recorded on-chain (addresses EIP-55, as
// everywhere in the API; the indexer stores them in lower case).
import { getAddress } from "viem";
import { orderRef } from "../../../indexer/client.ts";
import { errors } from "../errors.ts";
import type { Services } from "../services.ts";
import type { OrderRow } from "./orders.ts";
import { tokenRef } from "../representation.ts";
import { usd } from "./pricing.ts";

export async function orderReceipt(services: Services, order: OrderRow) {
  if (order.status !== "success" || !order.rail || !order.payer || !order.txHash || !order.paidAt) {
    throw errors.conflict("order_unpaid", `order ${order.id} is ${order.status}: there is no receipt until it is paid`);
  }
  const settlement = await services.indexer.settlementByRef(orderRef(order.onchainId)).catch(() => {
    throw errors.unavailable("the indexer is not reachable; retry shortly");
  });
  return {
    orderId: order.id,
    deviceId: order.deviceId,
    tier: order.tier,
    amountUsd: usd(order.amountUsdMicros),
    token: tokenRef(order.token, order.tokenAddress),
    tokenAmount: order.tokenAmount,
    chain: order.chain,
    chainId: order.chainId,
    payment: {
      rail: order.rail,
      payer: getAddress(order.payer),
      transactionHash: order.txHash,
      blockNumber: order.blockNumber ?? 0,
      paidAt: order.paidAt.toISOString(),
    },
    settlement: settlement
      ? {
          ref: settlement.ref,
          split: getAddress(settlement.split),
          gross: settlement.gross.toString(),
          legs: [
            { leg: "assetOwner" as const, recipient: getAddress(settlement.assetOwner), amount: settlement.assetOwnerAmount.toString() },
            { leg: "operator" as const, recipient: getAddress(settlement.operator), amount: settlement.operatorAmount.toString() },
            { leg: "protocol" as const, recipient: getAddress(settlement.protocol), amount: settlement.protocolAmount.toString() },
          ],
          transactionHash: settlement.transactionHash,
        }
      : null,
    device: {
      poweredOnAt: order.poweredOnAt?.toISOString() ?? null,
      sessionEndsAt: order.sessionEndsAt?.toISOString() ?? null,
      energyWh: order.energyWh,
    },
  };
}
