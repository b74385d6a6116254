// Compile-time checks of the event recorders, run by the type check (test/typecheck.test.ts): each call
// marked as an expected error below must stay one, or tsc reports the directive as unused and fails.
// Never executed.
import type { DbOrTx } from "../../relayer/src/db/client.ts";
import { recordOrderEvent, recordWebhookEvent } from "../../relayer/src/events/record.ts";

export async function eventTypeChecks(tx: DbOrTx) {
  const ticket = {
    ticketId: "tkt_1",
    deviceId: "kiosk-1",
    orderId: null,
    category: "no_power" as const,
    message: "no power",
    contact: null,
    createdAt: "2026-01-01T00:00:00.000Z",
  };
  await recordWebhookEvent(tx, "tnt_1", "ticket.created", ticket);
  // @ts-expect-error an event type the catalogue does not have
  await recordWebhookEvent(tx, "tnt_1", "ticket.creatd", ticket);
  // @ts-expect-error a payload missing a field of the type's schema
  await recordWebhookEvent(tx, "tnt_1", "ticket.created", { ticketId: "tkt_1" });
  // @ts-expect-error a field of the wrong type
  await recordWebhookEvent(tx, "tnt_1", "device.online", { deviceId: "kiosk-1", online: "yes", observedAt: "", previousChangeAt: null });

  await recordOrderEvent(tx, "ord_1", "order.created", { status: "pending" });
  // @ts-expect-error an order event type the stream does not have
  await recordOrderEvent(tx, "ord_1", "order.creatd", { status: "pending" });
  // @ts-expect-error `state` is made up when a stream starts, never recorded
  await recordOrderEvent(tx, "ord_1", "state", {});
}
