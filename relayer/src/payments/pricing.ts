// Prices: a device's tiers are priced in micro-USD; a stablecoin amount is micro-USD scaled to the
// token's decimals (a USD stablecoin is worth one dollar). Money is never a float in storage.
export const MICROS_PER_USD = 1_000_000;

/** Base units of a stablecoin with `decimals` for `micros` micro-USD, rounded up (never under-charge). */
export function tokenAmountForMicros(micros: number, decimals: number): bigint {
  const value = BigInt(micros);
  if (decimals >= 6) return value * 10n ** BigInt(decimals - 6);
  const divisor = 10n ** BigInt(6 - decimals);
  return (value + divisor - 1n) / divisor;
}

/** micro-USD to the dollars the API shows (at most 6 decimals, exact for any price a tier can have). */
export function usd(micros: number): number {
  return micros / MICROS_PER_USD;
}

/** Whether dollars a client sent name the same amount as `micros` (1.5 and 1.50 do; 1.500001 does not). */
export function sameAmount(amountUsd: number, micros: number): boolean {
  return Math.abs(amountUsd * MICROS_PER_USD - micros) < 0.5;
}

/** A device's price of `tier` in micro-USD, if the device prices it. The price list is stored JSON (a plain
 * object) and the tier is what the client sent: only the list's own entries count, never what every
 * object inherits (`constructor`, `__proto__`, `toString`). */
export function tierPrice(prices: Readonly<Record<string, number>>, tier: string): number | undefined {
  return Object.hasOwn(prices, tier) ? prices[tier] : undefined;
}
