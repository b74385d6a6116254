// The cash rail's caps. An agent's cash confirmation (POST /v1/orders/{id}/cash) makes the relayer pay the
// order from its own float, so a tenant holding an agent key could otherwise drain the float into its own
// devices' splits. Two limits bound that: the cash one agent key may confirm in any 24 hours
// (CASH_DAILY_LIMIT_USD_PER_KEY) and the cash all of one tenant's agent keys may (CASH_DAILY_LIMIT_USD_PER_TENANT);
// and after a change of a device's payout parties the cash rail refuses the device's orders for
// PAYOUT_CHANGE_DELAY_SECONDS (a recipient just set cannot be paid from the float at once).
//
// Each accepted confirmation is a cash_confirmations row (one per order: repeating the request counts once).
// The sums are read and the row written in one transaction that holds the tenant's row lock, so relayer
// processes sharing one database never both admit confirmations that together go over a limit.
import { and, eq, gte, sql } from "drizzle-orm";
import type { Config } from "../config.ts";
import { cashConfirmations, chainTransactions, devices, tenants } from "../db/schema.ts";
import { type ServiceError, errors } from "../errors.ts";
import type { Services } from "../services.ts";
import type { OrderRow } from "./orders.ts";
import { usd } from "./pricing.ts";

export const CASH_LIMIT_WINDOW_MS = 24 * 3_600_000;

export type CashLimits = {
  perKeyUsdMicros: number;
  perTenantUsdMicros: number;
  payoutChangeDelayMs: number;
};

export function cashLimitsOf(
  config: Pick<Config, "CASH_DAILY_LIMIT_USD_PER_KEY" | "CASH_DAILY_LIMIT_USD_PER_TENANT" | "PAYOUT_CHANGE_DELAY_SECONDS">,
): CashLimits {
  return {
    perKeyUsdMicros: Math.round(config.CASH_DAILY_LIMIT_USD_PER_KEY * 1e6),
    perTenantUsdMicros: Math.round(config.CASH_DAILY_LIMIT_USD_PER_TENANT * 1e6),
    payoutChangeDelayMs: config.PAYOUT_CHANGE_DELAY_SECONDS * 1000,
  };
}

export type ExceededLimit = {
  name: "CASH_DAILY_LIMIT_USD_PER_KEY" | "CASH_DAILY_LIMIT_USD_PER_TENANT";
  limitUsdMicros: number;
  usedUsdMicros: number;
};

/** The first limit a confirmation of `amountUsdMicros` would go over, given what the key and the tenant
 * confirmed in the last 24 hours; undefined if it fits under both. */
export function exceededCashLimit(
  used: { keyUsdMicros: number; tenantUsdMicros: number },
  amountUsdMicros: number,
  limits: Pick<CashLimits, "perKeyUsdMicros" | "perTenantUsdMicros">,
): ExceededLimit | undefined {
  if (used.keyUsdMicros + amountUsdMicros > limits.perKeyUsdMicros) {
    return { name: "CASH_DAILY_LIMIT_USD_PER_KEY", limitUsdMicros: limits.perKeyUsdMicros, usedUsdMicros: used.keyUsdMicros };
  }
  if (used.tenantUsdMicros + amountUsdMicros > limits.perTenantUsdMicros) {
    return { name: "CASH_DAILY_LIMIT_USD_PER_TENANT", limitUsdMicros: limits.perTenantUsdMicros, usedUsdMicros: used.tenantUsdMicros };
  }
  return undefined;
}

/** Until when the cash rail refuses a device's orders after its payout parties changed at `changedAt`
 * (undefined: not refused at `now`). */
export function payoutChangePendingUntil(changedAt: Date | null, delayMs: number, now: number): Date | undefined {
  if (!changedAt) return undefined;
  const until = changedAt.getTime() + delayMs;
  return until > now ? new Date(until) : undefined;
}

function limitExceeded(exceeded: ExceededLimit, amountUsdMicros: number): ServiceError {
  const scope = exceeded.name === "CASH_DAILY_LIMIT_USD_PER_KEY" ? "this agent key" : "this tenant's agent keys";
  const message =
    `cash limit ${exceeded.name} reached: ${scope} confirmed ${usd(exceeded.usedUsdMicros)} USD of cash in the last 24 hours; ` +
    `this order's ${usd(amountUsdMicros)} USD would go over the limit of ${usd(exceeded.limitUsdMicros)} USD`;
  return errors.refused("cash_limit_exceeded", message, [{ path: exceeded.name, message }]);
}

function payoutChangePending(deviceId: string, until: Date, now: number): ServiceError {
  const seconds = Math.max(1, Math.ceil((until.getTime() - now) / 1000));
  return errors.conflict(
    "payout_change_pending",
    `the payout parties of device ${deviceId} changed recently: cash payments for it are refused until ${until.toISOString()}`,
    { retryAfterSeconds: seconds },
  );
}

/** Counts the cash confirmation of `order` by agent key `keyId` against the limits, or refuses it: 409
 * payout_change_pending while the device's payout parties changed less than PAYOUT_CHANGE_DELAY_SECONDS ago,
 * 422 cash_limit_exceeded (naming the limit) over a daily limit. Returns whether this call recorded the
 * confirmation (false: the order's confirmation was counted before, or the order is not payable and the
 * cash route answers for that). A recorded confirmation whose payment is not queued after all is taken
 * back with `releaseCash`. */
export async function reserveCash(services: Services, order: OrderRow, keyId: string): Promise<boolean> {
  // Paid, expired or past its expiry: the rail answers with the order's own conflict, nothing is counted.
  if (order.status !== "pending" || order.expiresAt.getTime() <= Date.now()) return false;
  const limits = cashLimitsOf(services.config);
  return services.database.db.transaction(async (tx) => {
    // Serialises the tenant's cash confirmations across relayer processes: the sums below stay true until commit.
    await tx.select({ id: tenants.id }).from(tenants).where(eq(tenants.id, order.tenantId)).for("update");
    const [counted] = await tx
      .select({ orderId: cashConfirmations.orderId })
      .from(cashConfirmations)
      .where(eq(cashConfirmations.orderId, order.id));
    if (counted) return false;
    const now = Date.now();
    const [device] = await tx.select({ payoutChangedAt: devices.payoutChangedAt }).from(devices).where(eq(devices.id, order.deviceId));
    const until = payoutChangePendingUntil(device?.payoutChangedAt ?? null, limits.payoutChangeDelayMs, now);
    if (until) throw payoutChangePending(order.deviceId, until, now);
    const [used] = await tx
      .select({
        tenant: sql<string>`coalesce(sum(${cashConfirmations.amountUsdMicros}), 0)`,
        key: sql<string>`coalesce(sum(${cashConfirmations.amountUsdMicros}) filter (where ${cashConfirmations.keyId} = ${keyId}), 0)`,
      })
      .from(cashConfirmations)
      .where(and(eq(cashConfirmations.tenantId, order.tenantId), gte(cashConfirmations.createdAt, new Date(now - CASH_LIMIT_WINDOW_MS))));
    const exceeded = exceededCashLimit(
      { keyUsdMicros: Number(used.key), tenantUsdMicros: Number(used.tenant) },
      order.amountUsdMicros,
      limits,
    );
    if (exceeded) throw limitExceeded(exceeded, order.amountUsdMicros);
    await tx.insert(cashConfirmations).values({
      orderId: order.id,
      tenantId: order.tenantId,
      keyId,
      amountUsdMicros: order.amountUsdMicros,
      createdAt: new Date(now),
    });
    return true;
  });
}

/** Takes back the confirmation `reserveCash` recorded for `order` when its payment was refused after all
 * (a conflict, a simulation that reverts): unless a cash transaction for the order is queued or under way
 * (a concurrent request of the same order got through), it no longer counts against the limits. */
export async function releaseCash(services: Services, order: OrderRow): Promise<void> {
  await services.database.db.transaction(async (tx) => {
    await tx.select({ id: tenants.id }).from(tenants).where(eq(tenants.id, order.tenantId)).for("update");
    const [active] = await tx
      .select({ status: chainTransactions.status })
      .from(chainTransactions)
      .where(and(eq(chainTransactions.ref, order.id), eq(chainTransactions.kind, "pay_cash")));
    if (active && active.status !== "failed" && active.status !== "reverted") return;
    await tx.delete(cashConfirmations).where(eq(cashConfirmations.orderId, order.id));
  });
}
