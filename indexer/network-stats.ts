// The network totals before the first payment: the row the indexer starts from, and what the read path
// returns while there is none.
import type * as schema from "./ponder.schema.ts";

export function emptyNetworkStats(chainId: number): typeof schema.networkStats.$inferSelect {
  return {
    chainId,
    payments: 0,
    volumeUsdMicro: 0n,
    devices: 0,
    permitPayments: 0,
    approvalPayments: 0,
    cashPayments: 0,
    authorizationPayments: 0,
    permit2Payments: 0,
    transferPayments: 0,
    settlements: 0,
    settledUsdMicro: 0n,
    firstPaymentAt: null,
    lastPaymentAt: null,
    lastPaymentBlock: null,
  };
}
