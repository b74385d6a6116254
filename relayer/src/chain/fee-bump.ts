// The fees of a transaction the sender signs: first the network's suggestion, then, for a replacement of
// one left unmined, at least 12.5% more on both fees (nodes refuse a replacement with the same nonce that
// does not raise both by a margin: 10% for geth and Hardhat) and at least the network's current suggestion;
// never above the configured ceiling.

export type Fees = { maxFeePerGas: bigint; maxPriorityFeePerGas: bigint };

/** +12.5%, rounded up, and at least 1 wei more: nodes accept a replacement only if both fees rise, and a
 * network may suggest a priority fee of zero (reth does on an idle chain; viem falls back to zero when the
 * node cannot say), which 12.5% would leave at zero. */
export function bumped(value: bigint): bigint {
  const raised = (value * 1125n + 999n) / 1000n;
  return raised > value ? raised : value + 1n;
}

const larger = (a: bigint, b: bigint) => (a > b ? a : b);

/** `fees` with maxFeePerGas at most `ceiling`, and the priority fee at most the max fee. */
export function cappedFees(fees: Fees, ceiling: bigint): Fees {
  const maxFeePerGas = fees.maxFeePerGas > ceiling ? ceiling : fees.maxFeePerGas;
  const maxPriorityFeePerGas = fees.maxPriorityFeePerGas > maxFeePerGas ? maxFeePerGas : fees.maxPriorityFeePerGas;
  return { maxFeePerGas, maxPriorityFeePerGas };
}

/** The fees of the replacement of a transaction signed with `previous` fees, the network now suggesting
 * `suggested`; undefined when `ceiling` leaves no room for the bump nodes require (the transaction then
 * waits as it is). */
export function replacementFees(previous: Fees, suggested: Fees, ceiling: bigint): Fees | undefined {
  const least = { maxFeePerGas: bumped(previous.maxFeePerGas), maxPriorityFeePerGas: bumped(previous.maxPriorityFeePerGas) };
  const maxPriorityFeePerGas = larger(least.maxPriorityFeePerGas, suggested.maxPriorityFeePerGas);
  const maxFeePerGas = larger(larger(least.maxFeePerGas, suggested.maxFeePerGas), maxPriorityFeePerGas);
  const fees = cappedFees({ maxFeePerGas, maxPriorityFeePerGas }, ceiling);
  if (fees.maxFeePerGas < least.maxFeePerGas || fees.maxPriorityFeePerGas < least.maxPriorityFeePerGas) return undefined;
  return fees;
}
