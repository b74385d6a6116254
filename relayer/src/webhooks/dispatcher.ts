// The webhook dispatcher: delivers the outbox (table webhook_events, dispatched_at null) to the subscriptions, durably.
//
// 1. Fan-out. Undispatched events are read FOR UPDATE SKIP LOCKED; one delivery row is created per
//    matching active subscription (test.ping: only the subscription it names) and the events are marked
//    dispatched, in one transaction. A crash before the commit leaves the events undispatched; several
//    processes never fan the same event out twice.
// 2. Claim. Due pending deliveries are chosen fairly across tenants (below), read again FOR UPDATE SKIP
//    LOCKED; each gets its attempt counted, an attempt row, and a lease (next_attempt_at = now + timeout +
//    margin), and the transaction commits. No other process can take a leased delivery until the lease
//    ends, so an attempt is made once.
// 3. Attempt. The HTTP call happens outside any transaction (PGlite has one connection).
// 4. Record. The attempt's result is written, and the delivery becomes succeeded, failed (5 attempts, or
//    a 410 that also disables the subscription) or pending again with its backoff - only if this
//    process still holds it (same attempt count). Results that finish together are written in one
//    transaction (deliveries locked in id order). If the process died during the attempt, the lease ends
//    and another (or the restarted) process makes the next attempt: nothing is lost, an attempt in flight
//    may be seen twice by the endpoint (with the same webhook-id).
//
// NOTIFY on the outbox channel (at every event's commit) and on the deliveries channel (after a fan-out)
// wakes every process at once. A timed pass comes when the next pending delivery is due (a retry, a lease
// that ends), at most SAFETY_POLL_MS later: it claims what came due and fans out anything a missed NOTIFY
// did not announce. A pass fans out only after an outbox NOTIFY (or the database listener's return after a
// lost connection) or a timed pass (a pass woken by a finished attempt only claims). The loop, and
// SAFETY_POLL_MS, are jobs/worker.ts's.
//
// Fairness. A process makes at most WEBHOOK_CONCURRENCY attempts at once; one tenant's deliveries take at
// most WEBHOOK_TENANT_CONCURRENCY of those slots, and retries (a second or later attempt: the receiver
// failed or did not answer in time) at most a quarter of them, whoever's they are. A claim takes every
// tenant's oldest due delivery before any tenant's second, and so on (round-robin), the tenants in turn
// from the one after the last this process served; a tenant at its limit is passed over until one of its
// attempts ends. So a tenant flooding an endpoint that never answers holds a few slots for the attempt
// timeout, and another tenant's delivery is attempted at the next pass. The tenants that have due deliveries
// are found by a skip scan of the (tenant_id, next_attempt_at) index of pending deliveries, then a few of
// each tenant's oldest: the claim's cost grows with the number of tenants, not with one tenant's backlog.
import os from "node:os";
import { and, asc, eq, inArray, isNull, lte, min, notInArray, sql } from "drizzle-orm";
import { signDelivery } from "../../../sdk/src/webhooks.ts";
import type { DbOrTx, Tx } from "../db/client.ts";
import { webhookAttempts, webhookDeliveries, webhookEvents, webhookSubscriptions } from "../db/schema.ts";
import { OUTBOX_CHANNEL } from "../events/record.ts";
import { type DeliveryChange, countDeliveryChanges } from "./delivery-counters.ts";
import { newId } from "../ids.ts";
import { SAFETY_POLL_MS, createWorker } from "../jobs/worker.ts";
import type { Services } from "../services.ts";
import { subscribes } from "./catalogue.ts";
import { LEASE_MARGIN_MS, MAX_ATTEMPTS, isAcknowledged, retryDelayMs } from "./schedule.ts";
import { createSecretBox, signingSecrets } from "./secrets.ts";
import { type AttemptResult, postWebhook } from "./send.ts";
import { webhookUrlPolicy } from "./url-safety.ts";

export const DELIVERIES_CHANNEL = "webhook_deliveries";
const FANOUT_BATCH = 100;
const POLL_MS = 1_000;
const WORKER = `${os.hostname()}:${process.pid}`;

type Delivery = typeof webhookDeliveries.$inferSelect;
type Subscription = typeof webhookSubscriptions.$inferSelect;
type OutboxEvent = typeof webhookEvents.$inferSelect;
type Claim = { delivery: Delivery; attempt: number; attemptId: number; subscription: Subscription; event: OutboxEvent };
type Recording = { claim: Claim; result: AttemptResult; resolve: () => void; reject: (error: unknown) => void };

/** Most attempt results written in one transaction. */
const RECORD_BATCH = 50;

/** A claim's pick: a due delivery, its tenant, whether it is a retry. */
type Candidate = { id: string; tenantId: string; retry: boolean };

/** Picks up to `room` of `candidates` (in the claim's fair order): none of a tenant beyond its free slots
 * (`free`: tenants absent have `tenantCap`), retries at most `retryRoom`. */
export function pickFairly(
  candidates: readonly Candidate[],
  opts: { room: number; tenantCap: number; free: ReadonlyMap<string, number>; retryRoom: number },
): Candidate[] {
  const left = new Map(opts.free);
  let retries = opts.retryRoom;
  const picked: Candidate[] = [];
  for (const candidate of candidates) {
    if (picked.length >= opts.room) break;
    const free = left.get(candidate.tenantId) ?? opts.tenantCap;
    if (free <= 0 || (candidate.retry && retries <= 0)) continue;
    left.set(candidate.tenantId, free - 1);
    if (candidate.retry) retries--;
    picked.push(candidate);
  }
  return picked;
}

/** What an attempt's log row and the delivery keep as the error (null when acknowledged). */
function errorOf(result: AttemptResult): string | null {
  return isAcknowledged(result.statusCode) ? null : (result.error ?? `HTTP ${result.statusCode}`);
}

/** The body of a delivery: the envelope, serialised once and signed as these exact bytes. */
export function envelopeBody(event: Pick<OutboxEvent, "type" | "data">, deliveryId: string): string {
  return JSON.stringify({ type: event.type, data: event.data, id: deliveryId });
}

/** Disables a subscription and fails its pending deliveries (inside the caller's transaction). */
export async function disableSubscription(tx: DbOrTx, id: string, reason: string) {
  const now = new Date();
  await tx
    .update(webhookSubscriptions)
    .set({ status: "disabled", disabledReason: reason, disabledAt: now, updatedAt: now })
    .where(eq(webhookSubscriptions.id, id));
  const failed = await tx
    .update(webhookDeliveries)
    .set({ status: "failed", nextAttemptAt: null, lastError: `not delivered: ${reason}`, completedAt: now, updatedAt: now })
    .where(and(eq(webhookDeliveries.subscriptionId, id), eq(webhookDeliveries.status, "pending")))
    .returning({ id: webhookDeliveries.id });
  await countDeliveryChanges(tx, [{ subscriptionId: id, from: "pending", to: "failed", n: failed.length, at: now }]);
}

export function createWebhookDispatcher(services: Services) {
  const { database, config } = services;
  const db = database.db;
  const logger = services.logger.child({ worker: "webhooks" });
  const box = createSecretBox(config.WEBHOOK_SECRET_KEY);
  // Re-checked at every attempt (send.ts): the allowlist, public addresses, the relayer's own endpoints.
  const policy = webhookUrlPolicy(config);
  const leaseMs = config.WEBHOOK_TIMEOUT_MS + LEASE_MARGIN_MS;
  const concurrency = config.WEBHOOK_CONCURRENCY;
  /** Slots one tenant's attempts may take, and retries (of any tenant). */
  const tenantCap = Math.min(config.WEBHOOK_TENANT_CONCURRENCY, concurrency);
  const retrySlots = Math.max(1, Math.floor(concurrency / 4));
  const inFlight = new Set<Promise<void>>();
  /** Attempts in flight by tenant (tenants with none are absent), and retries among them. */
  const tenantInFlight = new Map<string, number>();
  let retriesInFlight = 0;
  /** The tenant of the last delivery this process claimed: the next claim starts with the tenant after it. */
  let lastTenant = "";
  const toRecord: Recording[] = [];
  let recording: Promise<void> | undefined;
  /** Whether the outbox may hold events not fanned out yet (see pump). */
  let outboxDirty = true;
  let lastFanOut = 0;

  /** Free slots of the tenants that have attempts in flight (a tenant absent has `tenantCap`). */
  function freeSlots(): Map<string, number> {
    return new Map([...tenantInFlight].map(([tenantId, n]) => [tenantId, tenantCap - n]));
  }

  /** Fans out one batch of undispatched events; returns how many events it handled and the first
   * attempts it claimed at once (up to `room`, and up to each tenant's free slots: new deliveries are
   * claimed in the fan-out's own transaction, which saves a commit before the first attempt). */
  async function fanOut(room: number): Promise<{ events: number; claims: Claim[] }> {
    return db.transaction(async (tx) => {
      const batch = await tx
        .select()
        .from(webhookEvents)
        .where(isNull(webhookEvents.dispatchedAt))
        .orderBy(asc(webhookEvents.createdAt), asc(webhookEvents.id))
        .limit(FANOUT_BATCH)
        .for("update", { skipLocked: true });
      if (batch.length === 0) return { events: 0, claims: [] };
      const tenantIds = [...new Set(batch.map((e) => e.tenantId))];
      const subscriptions = await tx
        .select()
        .from(webhookSubscriptions)
        .where(and(inArray(webhookSubscriptions.tenantId, tenantIds), eq(webhookSubscriptions.status, "active")));
      const now = new Date();
      const lease = new Date(now.getTime() + leaseMs);
      const rows: Array<typeof webhookDeliveries.$inferInsert> = [];
      const claims: Array<Omit<Claim, "attemptId">> = [];
      const free = freeSlots();
      for (const event of batch) {
        for (const sub of subscriptions) {
          if (sub.tenantId !== event.tenantId) continue;
          const wanted =
            event.type === "test.ping"
              ? event.data.subscriptionId === sub.id
              : sub.createdAt.getTime() <= event.createdAt.getTime() && subscribes(sub.eventTypes, event.type);
          if (!wanted) continue;
          const tenantFree = free.get(sub.tenantId) ?? tenantCap;
          const claimNow = claims.length < room && tenantFree > 0;
          if (claimNow) free.set(sub.tenantId, tenantFree - 1);
          const row = {
            id: newId("msg"),
            eventId: event.id,
            subscriptionId: sub.id,
            tenantId: event.tenantId,
            eventType: event.type,
            status: "pending" as const,
            attempts: claimNow ? 1 : 0,
            attemptLimit: MAX_ATTEMPTS,
            nextAttemptAt: claimNow ? lease : now,
            createdAt: now,
            updatedAt: now,
          };
          rows.push(row);
          if (claimNow) {
            claims.push({
              delivery: { ...row, attempts: 0, nextAttemptAt: now, lastStatusCode: null, lastError: null, completedAt: null },
              attempt: 1,
              subscription: sub,
              event,
            });
          }
        }
      }
      let attemptIds = new Map<string, number>();
      if (rows.length > 0) {
        await tx.insert(webhookDeliveries).values(rows);
        await countDeliveryChanges(
          tx,
          rows.map((row) => ({ subscriptionId: row.subscriptionId, to: "pending" as const, at: now })),
        );
        if (claims.length > 0) {
          const inserted = await tx
            .insert(webhookAttempts)
            .values(claims.map((c) => ({ deliveryId: c.delivery.id, attempt: 1, worker: WORKER, startedAt: now })))
            .returning({ id: webhookAttempts.id, deliveryId: webhookAttempts.deliveryId });
          attemptIds = new Map(inserted.map((r) => [r.deliveryId, r.id]));
        }
        if (rows.length > claims.length) await tx.execute(sql`select pg_notify(${DELIVERIES_CHANNEL}, '')`);
      }
      await tx
        .update(webhookEvents)
        .set({ dispatchedAt: now })
        .where(
          inArray(
            webhookEvents.id,
            batch.map((e) => e.id),
          ),
        );
      return { events: batch.length, claims: claims.map((c) => ({ ...c, attemptId: attemptIds.get(c.delivery.id)! })) };
    });
  }

  /** Claims up to `limit` due deliveries for this process, fairly across tenants (see the top of the file). */
  async function claim(limit: number): Promise<Claim[]> {
    return db.transaction(async (tx) => {
      const now = new Date();
      const free = freeSlots();
      const retryRoom = retrySlots - retriesInFlight;
      // The candidates, unlocked: each tenant's oldest due deliveries (those of a tenant with free slots; no
      // retry while the retries' slots are taken), ranked round-robin across tenants.
      const candidates = (
        (await tx.execute(sql`
          with recursive due_tenants(tenant_id) as (
            (select tenant_id from webhook_deliveries
              where status = 'pending' and next_attempt_at <= ${now.toISOString()}::timestamptz
              order by tenant_id limit 1)
            union all
            select (select d.tenant_id from webhook_deliveries d
                     where d.status = 'pending' and d.next_attempt_at <= ${now.toISOString()}::timestamptz
                       and d.tenant_id > due_tenants.tenant_id
                     order by d.tenant_id limit 1)
            from due_tenants where due_tenants.tenant_id is not null
          )
          select c.id, c.tenant_id, c.attempts > 0 as retry
          from due_tenants t
          cross join lateral (
            select d.id, d.tenant_id, d.attempts, row_number() over (order by d.next_attempt_at) as rank
            from webhook_deliveries d
            where d.tenant_id = t.tenant_id and d.status = 'pending'
              and d.next_attempt_at <= ${now.toISOString()}::timestamptz
              and (${retryRoom > 0} or d.attempts = 0)
            order by d.next_attempt_at
            limit ${tenantCap}
          ) c
          where t.tenant_id is not null
            and coalesce((${JSON.stringify(Object.fromEntries(free))}::jsonb ->> t.tenant_id)::integer, ${tenantCap}) > 0
          order by c.rank, t.tenant_id <= ${lastTenant}, t.tenant_id
          limit ${Math.max(limit * 4, 64)}`)) as unknown as { rows: Array<{ id: string; tenant_id: string; retry: boolean }> }
      ).rows.map((r) => ({ id: r.id, tenantId: r.tenant_id, retry: r.retry }));
      const picked = pickFairly(candidates, { room: limit, tenantCap, free, retryRoom });
      if (picked.length === 0) return [];
      // The picks, locked (skipping those another process holds), with their subscription and event in the
      // same query; only the deliveries are locked. Still due: another process may have claimed one since.
      const order = new Map(picked.map((c, i) => [c.id, i]));
      const found = (
        await tx
          .select({ delivery: webhookDeliveries, subscription: webhookSubscriptions, event: webhookEvents })
          .from(webhookDeliveries)
          .innerJoin(webhookSubscriptions, eq(webhookSubscriptions.id, webhookDeliveries.subscriptionId))
          .innerJoin(webhookEvents, eq(webhookEvents.id, webhookDeliveries.eventId))
          .where(
            and(
              inArray(webhookDeliveries.id, [...order.keys()]),
              eq(webhookDeliveries.status, "pending"),
              lte(webhookDeliveries.nextAttemptAt, now),
            ),
          )
          .for("update", { of: webhookDeliveries, skipLocked: true })
      ).sort((a, b) => order.get(a.delivery.id)! - order.get(b.delivery.id)!);
      if (found.length === 0) return [];
      const due = found.map((r) => r.delivery);
      const subscriptions = new Map(found.map((r) => [r.subscription.id, r.subscription]));
      const outbox = new Map(found.map((r) => [r.event.id, r.event]));
      // Attempts without a result: their process stopped during them and the lease has ended.
      const retaken = due.filter((d) => d.attempts > 0).map((d) => d.id);
      if (retaken.length > 0) {
        await tx
          .update(webhookAttempts)
          .set({ finishedAt: now, error: "no result: the relayer stopped during the attempt" })
          .where(and(inArray(webhookAttempts.deliveryId, retaken), isNull(webhookAttempts.finishedAt)));
      }
      const take: Delivery[] = [];
      const ended: Delivery[] = [];
      for (const delivery of due) {
        const subscription = subscriptions.get(delivery.subscriptionId)!;
        const end = (lastError: string) => {
          ended.push(delivery);
          return tx
            .update(webhookDeliveries)
            .set({ status: "failed", nextAttemptAt: null, lastError, completedAt: now, updatedAt: now })
            .where(eq(webhookDeliveries.id, delivery.id));
        };
        if (subscription.status !== "active") await end(`not delivered: ${subscription.disabledReason ?? "the subscription is disabled"}`);
        else if (delivery.attempts >= delivery.attemptLimit)
          await end(delivery.lastError ?? "no result: the relayer stopped during the last attempt");
        else take.push(delivery);
      }
      // Those ended failed; those taken are touched (their lease).
      await countDeliveryChanges(tx, [
        ...ended.map((d) => ({ subscriptionId: d.subscriptionId, from: "pending" as const, to: "failed" as const, at: now })),
        ...take.map((d) => ({ subscriptionId: d.subscriptionId, from: "pending" as const, to: "pending" as const, at: now })),
      ]);
      if (take.length === 0) return [];
      await tx
        .update(webhookDeliveries)
        .set({ attempts: sql`${webhookDeliveries.attempts} + 1`, nextAttemptAt: new Date(now.getTime() + leaseMs), updatedAt: now })
        .where(
          inArray(
            webhookDeliveries.id,
            take.map((d) => d.id),
          ),
        );
      const rows = await tx
        .insert(webhookAttempts)
        .values(take.map((d) => ({ deliveryId: d.id, attempt: d.attempts + 1, worker: WORKER, startedAt: now })))
        .returning({ id: webhookAttempts.id, deliveryId: webhookAttempts.deliveryId });
      const attemptIds = new Map(rows.map((r) => [r.deliveryId, r.id]));
      lastTenant = take[take.length - 1]!.tenantId;
      return take.map((delivery) => ({
        delivery,
        attempt: delivery.attempts + 1,
        attemptId: attemptIds.get(delivery.id)!,
        subscription: subscriptions.get(delivery.subscriptionId)!,
        event: outbox.get(delivery.eventId)!,
      }));
    });
  }

  async function attempt(claim: Claim): Promise<void> {
    let result: AttemptResult;
    try {
      const body = envelopeBody(claim.event, claim.delivery.id);
      // During a secret rotation's grace period, signed with the old secret too (secrets.ts).
      const headers = signDelivery({ ...signingSecrets(box, claim.subscription), id: claim.delivery.id, type: claim.event.type, body });
      result = await postWebhook(claim.subscription.url, body, headers, { timeoutMs: config.WEBHOOK_TIMEOUT_MS, policy });
    } catch (error) {
      result = { statusCode: null, durationMs: 0, error: (error as Error).message, responseExcerpt: null };
    }
    await record(claim, result);
  }

  /** Writes an attempt's result: the attempt row, and the delivery's new state if this process still holds
   * the delivery. Results that finish while the previous ones are being written are written together, in
   * one transaction (a group commit: under load, one commit for many deliveries instead of one each). */
  function record(claim: Claim, result: AttemptResult): Promise<void> {
    return new Promise((resolve, reject) => {
      toRecord.push({ claim, result, resolve, reject });
      recording ??= (async () => {
        await new Promise((wait) => setImmediate(wait));
        while (toRecord.length > 0) {
          const batch = toRecord.splice(0, RECORD_BATCH);
          await recordBatch(batch).catch((error: unknown) => {
            for (const item of batch) item.reject(error);
          });
        }
        recording = undefined;
      })();
    });
  }

  async function recordBatch(batch: Recording[]) {
    const now = new Date();
    // Deliveries in id order: concurrent writers (other processes) lock them in the same order.
    batch.sort((a, b) => (a.claim.delivery.id < b.claim.delivery.id ? -1 : a.claim.delivery.id > b.claim.delivery.id ? 1 : 0));
    const outcomes: string[] = [];
    try {
      await db.transaction(async (tx) => {
        // The delivery rows first, then their attempts: the order claim() locks them in (no deadlock).
        const locked = await tx
          .select()
          .from(webhookDeliveries)
          .where(
            inArray(
              webhookDeliveries.id,
              batch.map((r) => r.claim.delivery.id),
            ),
          )
          .orderBy(asc(webhookDeliveries.id))
          .for("update");
        const byId = new Map(locked.map((row) => [row.id, row]));
        let reread = false;
        const changes: DeliveryChange[] = [];
        for (const { claim, result } of batch) {
          let current = byId.get(claim.delivery.id);
          // A 410 earlier in this batch disabled a subscription and failed its pending deliveries.
          if (reread) [current] = await tx.select().from(webhookDeliveries).where(eq(webhookDeliveries.id, claim.delivery.id));
          const outcome = await applyResult(tx, claim, result, current, now, changes);
          if (outcome === "gone") reread = true;
          outcomes.push(outcome);
        }
        await countDeliveryChanges(tx, changes);
      });
    } catch (error) {
      for (const item of batch) item.reject(error);
      return;
    }
    batch.forEach(({ claim, result, resolve }, i) => {
      const outcome = outcomes[i]!;
      services.metrics.webhookAttempts.inc({ outcome });
      const ok = isAcknowledged(result.statusCode);
      const error = errorOf(result);
      const fields = {
        deliveryId: claim.delivery.id,
        eventType: claim.event.type,
        subscriptionId: claim.subscription.id,
        host: safeHost(claim.subscription.url),
        attempt: claim.attempt,
        statusCode: result.statusCode,
        durationMs: result.durationMs,
        outcome,
        ...(error ? { error } : {}),
      };
      if (outcome === "gone") logger.warn("webhook endpoint gone; subscription disabled", fields);
      else if (ok) logger.info("webhook delivered", fields);
      else logger.info("webhook attempt failed", fields);
      resolve();
    });
  }

  /** One result, in the recording transaction; `current` is the delivery row, locked. Returns the outcome;
   * adds the delivery's change to `changes` (for its subscription's counters). */
  async function applyResult(
    tx: Tx,
    claim: Claim,
    result: AttemptResult,
    current: Delivery | undefined,
    now: Date,
    changes: DeliveryChange[],
  ): Promise<string> {
    const ok = isAcknowledged(result.statusCode);
    const gone = result.statusCode === 410;
    const error = errorOf(result);
    await tx
      .update(webhookAttempts)
      .set({
        finishedAt: now,
        durationMs: result.durationMs,
        statusCode: result.statusCode,
        error,
        responseExcerpt: result.responseExcerpt,
      })
      .where(eq(webhookAttempts.id, claim.attemptId));
    // Another process took the delivery over once this process's lease ended: its result decides.
    if (!current || current.status !== "pending" || current.attempts !== claim.attempt) return "lost";
    const common = { lastStatusCode: result.statusCode, lastError: error, updatedAt: now };
    const change = (to: "pending" | "succeeded" | "failed") =>
      changes.push({ subscriptionId: current.subscriptionId, from: "pending", to, at: now });
    if (ok) {
      change("succeeded");
      await tx
        .update(webhookDeliveries)
        .set({ ...common, status: "succeeded", nextAttemptAt: null, completedAt: now })
        .where(eq(webhookDeliveries.id, current.id));
      return "succeeded";
    }
    if (gone) {
      change("failed");
      await tx
        .update(webhookDeliveries)
        .set({ ...common, status: "failed", nextAttemptAt: null, completedAt: now })
        .where(eq(webhookDeliveries.id, current.id));
      await disableSubscription(tx, current.subscriptionId, "the endpoint answered 410 Gone");
      return "gone";
    }
    if (claim.attempt >= current.attemptLimit) {
      change("failed");
      await tx
        .update(webhookDeliveries)
        .set({ ...common, status: "failed", nextAttemptAt: null, completedAt: now })
        .where(eq(webhookDeliveries.id, current.id));
      return "failed";
    }
    const next = new Date(now.getTime() + retryDelayMs(claim.attempt, config.WEBHOOK_RETRY_BASE_MS));
    change("pending");
    await tx
      .update(webhookDeliveries)
      .set({ ...common, nextAttemptAt: next })
      .where(eq(webhookDeliveries.id, current.id));
    return "retry";
  }

  function start(claim: Claim) {
    const tenantId = claim.delivery.tenantId;
    const retry = claim.attempt > 1;
    tenantInFlight.set(tenantId, (tenantInFlight.get(tenantId) ?? 0) + 1);
    if (retry) retriesInFlight++;
    const task: Promise<void> = attempt(claim)
      .catch((error) =>
        logger.warn("recording a webhook attempt failed", { deliveryId: claim.delivery.id, error: (error as Error).message }),
      )
      .finally(() => {
        inFlight.delete(task);
        const n = (tenantInFlight.get(tenantId) ?? 1) - 1;
        if (n > 0) tenantInFlight.set(tenantId, n);
        else tenantInFlight.delete(tenantId);
        if (retry) retriesInFlight--;
        worker.wake();
      });
    inFlight.add(task);
  }

  async function pump() {
    const t0 = performance.now();
    let fanned = 0;
    let started = 0;
    // Fan out only when the outbox may hold something new: an outbox NOTIFY came, or a poll is due (which
    // also catches up on a NOTIFY missed while the listener reconnected). A pass woken by a finished
    // attempt or another process's fan-out skips the (empty) fan-out transaction.
    if (Date.now() - lastFanOut >= POLL_MS) outboxDirty = true;
    while (outboxDirty && !worker.isStopped()) {
      outboxDirty = false;
      lastFanOut = Date.now();
      let n: number;
      try {
        const fanned_ = await fanOut(Math.max(0, concurrency - inFlight.size));
        n = fanned_.events;
        for (const c of fanned_.claims) start(c);
        started += fanned_.claims.length;
      } catch (error) {
        outboxDirty = true;
        throw error;
      }
      fanned += n;
      if (n === FANOUT_BATCH) outboxDirty = true; // a full batch: there may be more
    }
    const t1 = performance.now();
    while (!worker.isStopped() && inFlight.size < concurrency) {
      const room = concurrency - inFlight.size;
      const claimed = await claim(room);
      for (const c of claimed) start(c);
      started += claimed.length;
      if (claimed.length < room) break;
    }
    if (fanned > 0 || started > 0) {
      logger.debug("webhook dispatcher pass", {
        events: fanned,
        attempts: started,
        fanOutMs: Math.round(t1 - t0),
        claimMs: Math.round(performance.now() - t1),
      });
    }
  }

  /** Until the next pending delivery this process could claim is due: those of tenants at their limit, and
   * retries while the retries' slots are taken, wait for an attempt to end (which wakes the worker). */
  async function delayUntilDue(): Promise<number> {
    const saturated = [...tenantInFlight].filter(([, n]) => n >= tenantCap).map(([tenantId]) => tenantId);
    const [row] = await db
      .select({ next: min(webhookDeliveries.nextAttemptAt) })
      .from(webhookDeliveries)
      .where(
        and(
          eq(webhookDeliveries.status, "pending"),
          saturated.length > 0 ? notInArray(webhookDeliveries.tenantId, saturated) : undefined,
          retriesInFlight >= retrySlots ? eq(webhookDeliveries.attempts, 0) : undefined,
        ),
      );
    if (!row?.next) return SAFETY_POLL_MS;
    return Math.max(0, Math.min(SAFETY_POLL_MS, new Date(row.next).getTime() - Date.now() + 5));
  }

  const worker = createWorker({
    name: "webhooks",
    async tick(ctx) {
      // A timed pass: retries that came due, and the outbox (anything a missed NOTIFY did not announce).
      if (ctx.reason === "timer") outboxDirty = true;
      await pump();
      // When another pass follows at once, the time of the next due attempt is not needed.
      return ctx.woken() ? POLL_MS : delayUntilDue();
    },
    onError(error) {
      logger.warn("webhook dispatcher pass failed", { error: (error as Error).message });
      return POLL_MS;
    },
    wakeOn: {
      database,
      channels: [OUTBOX_CHANNEL, DELIVERIES_CHANNEL],
      onNotify: (channel) => {
        if (channel === OUTBOX_CHANNEL) outboxDirty = true;
      },
    },
    // Let attempts under way finish (briefly: the process is given 10 s to stop); one cut short is made
    // again once its lease ends.
    async onStop() {
      const pending = Promise.allSettled([...inFlight]);
      await Promise.race([pending, new Promise((resolve) => setTimeout(resolve, Math.min(5_000, config.WEBHOOK_TIMEOUT_MS + 500)))]);
    },
  });

  return {
    ...worker,
    /** One pass now (tests). */
    pump,
  };
}

function safeHost(url: string): string {
  try {
    return new URL(url).host;
  } catch {
    return "invalid";
  }
}
