// relayer/src/payments/cash-limits.ts, its pure decisions: which daily cash limit a confirmation would go
// over (the per-key limit first, exactly at a limit still fits), the limits read from the configuration in
// micro-USD, and when the cash rail's delay after a payout-party change ends. The end-to-end suite
// (cash-rail-caps.test.ts) shows the route answering with them.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { loadConfig } from "../../relayer/src/config.ts";
import { cashLimitsOf, exceededCashLimit, payoutChangePendingUntil } from "../../relayer/src/payments/cash-limits.ts";
import { MINIMAL_RELAYER_ENV } from "../support/relayer-env.ts";

describe("cash rail limits", () => {
  it("reads the limits from the configuration, in micro-USD, with defaults", () => {
    assert.deepEqual(cashLimitsOf(loadConfig({ ...MINIMAL_RELAYER_ENV })), {
      perKeyUsdMicros: 200_000_000,
      perTenantUsdMicros: 1_000_000_000,
      payoutChangeDelayMs: 86_400_000,
    });
    const set = loadConfig({
      ...MINIMAL_RELAYER_ENV,
      CASH_DAILY_LIMIT_USD_PER_KEY: "0.6",
      CASH_DAILY_LIMIT_USD_PER_TENANT: "12.345678",
      PAYOUT_CHANGE_DELAY_SECONDS: "90",
    });
    assert.deepEqual(cashLimitsOf(set), { perKeyUsdMicros: 600_000, perTenantUsdMicros: 12_345_678, payoutChangeDelayMs: 90_000 });
    assert.throws(() => loadConfig({ ...MINIMAL_RELAYER_ENV, CASH_DAILY_LIMIT_USD_PER_KEY: "-1" }), /CASH_DAILY_LIMIT_USD_PER_KEY/);
    assert.throws(() => loadConfig({ ...MINIMAL_RELAYER_ENV, PAYOUT_CHANGE_DELAY_SECONDS: "1.5" }), /PAYOUT_CHANGE_DELAY_SECONDS/);
  });

  it("names the limit a confirmation would go over: the key's first, then the tenant's; reaching a limit exactly fits", () => {
    const limits = { perKeyUsdMicros: 600_000, perTenantUsdMicros: 900_000 };
    assert.equal(exceededCashLimit({ keyUsdMicros: 300_000, tenantUsdMicros: 300_000 }, 300_000, limits), undefined);
    assert.deepEqual(exceededCashLimit({ keyUsdMicros: 300_001, tenantUsdMicros: 300_001 }, 300_000, limits), {
      name: "CASH_DAILY_LIMIT_USD_PER_KEY",
      limitUsdMicros: 600_000,
      usedUsdMicros: 300_001,
    });
    assert.deepEqual(exceededCashLimit({ keyUsdMicros: 300_000, tenantUsdMicros: 600_001 }, 300_000, limits), {
      name: "CASH_DAILY_LIMIT_USD_PER_TENANT",
      limitUsdMicros: 900_000,
      usedUsdMicros: 600_001,
    });
    // Both over: the key's limit is named.
    assert.equal(exceededCashLimit({ keyUsdMicros: 600_000, tenantUsdMicros: 900_000 }, 1, limits)?.name, "CASH_DAILY_LIMIT_USD_PER_KEY");
    // A limit of 0 refuses every confirmation.
    assert.equal(
      exceededCashLimit({ keyUsdMicros: 0, tenantUsdMicros: 0 }, 1, { ...limits, perTenantUsdMicros: 0 })?.name,
      "CASH_DAILY_LIMIT_USD_PER_TENANT",
    );
  });

  it("refuses a device's cash orders until the delay after its payout parties changed is over", () => {
    const changedAt = new Date("2026-01-01T00:00:00.000Z");
    const delayMs = 3_600_000;
    assert.equal(payoutChangePendingUntil(null, delayMs, changedAt.getTime()), undefined, "never changed");
    assert.deepEqual(payoutChangePendingUntil(changedAt, delayMs, changedAt.getTime()), new Date("2026-01-01T01:00:00.000Z"));
    assert.deepEqual(payoutChangePendingUntil(changedAt, delayMs, changedAt.getTime() + delayMs - 1), new Date("2026-01-01T01:00:00.000Z"));
    assert.equal(payoutChangePendingUntil(changedAt, delayMs, changedAt.getTime() + delayMs), undefined, "over at its end");
    assert.equal(payoutChangePendingUntil(changedAt, 0, changedAt.getTime()), undefined, "no delay configured");
  });
});
