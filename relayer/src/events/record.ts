// Recording what happened: an order's event log (its SSE stream) and the tenant's webhook events (the outbox
// the dispatcher delivers, and the log GET /v1/events lists), both
// written in the caller's database transaction, so a change and its events commit together or not at all.
import type { z } from "zod";
import { sql } from "drizzle-orm";
import type { DbOrTx } from "../db/client.ts";
import { orderEvents, webhookEvents } from "../db/schema.ts";
import { ulid } from "../ids.ts";
import type { EVENT_CATALOGUE, EventType } from "../webhooks/catalogue.ts";
import type { OrderEventType } from "./order-events.ts";

export const ORDER_EVENTS_CHANNEL = "order_events";
export const OUTBOX_CHANNEL = "events";

/** Appends to an order's event stream and wakes its listeners (in every relayer process) at commit. */
export async function recordOrderEvent(tx: DbOrTx, orderId: string, type: OrderEventType, data: Record<string, unknown>) {
  const [row] = await tx.insert(orderEvents).values({ orderId, type, data }).returning({ id: orderEvents.id });
  await tx.execute(sql`select pg_notify(${ORDER_EVENTS_CHANNEL}, ${orderId})`);
  return row.id;
}

/** The `data` of a webhook event of `type`, as its catalogue entry's schema describes it. */
export type WebhookEventData<T extends EventType> = z.input<(typeof EVENT_CATALOGUE)[T]["data"]>;

/** Records a webhook event of the tenant (its subscriptions' outbox, and GET /v1/events); returns its id. The type must be one
 * of the catalogue's and the data must match its schema: anything else does not compile. */
export async function recordWebhookEvent<T extends EventType>(tx: DbOrTx, tenantId: string, type: T, data: WebhookEventData<T>) {
  // The id's time and created_at are one reading of the clock: GET /v1/events pages and filters by id.
  const now = Date.now();
  const id = `evt_${ulid(now)}`;
  await tx.insert(webhookEvents).values({ id, tenantId, type, data, createdAt: new Date(now) });
  await tx.execute(sql`select pg_notify(${OUTBOX_CHANNEL}, ${id})`);
  return id;
}
