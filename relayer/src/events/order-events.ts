// The event types of an order's stream (GET /v1/orders/{id}/events): the one list that the recorder's types,
// the stream's terminal check and the OpenAPI description are built from.
export const ORDER_EVENT_TYPES = {
  state: "The order as GET /v1/orders/{id} returns it (first event of a new stream).",
  "order.created": "The order was created.",
  "payment.submitted":
    "The relayer queued a payment transaction for the order (a relayed permit or authorization, cash, or the transfer to the order's deposit address).",
  "payment.failed": "The relayer's payment transaction failed or reverted; the order stays pending and can be retried.",
  "payment.succeeded": "The payment was indexed on-chain: the order is success.",
  "payment.reverted": "A chain reorganisation removed the payment: the order is pending again until it is paid anew.",
  "split.settled": "The payment was split 50/40/10 on-chain (same transaction).",
  "device.powered_on": "The device was powered on for the session (terminal).",
  "device.power_on_failed": "The device cloud could not power the device on after retries (terminal).",
  "order.cancel_requested":
    "The tenant cancelled the order: the relayer is voiding its voucher on-chain (the order stays pending until that is mined; a payment mined first wins).",
  "order.expired": "The order expired unpaid, or its cancellation was mined (terminal).",
} as const;

/** What can be recorded in an order's stream (`state` is made up when a stream starts, never stored). */
export type OrderEventType = Exclude<keyof typeof ORDER_EVENT_TYPES, "state">;

/** Events after which nothing more is streamed for the order. */
export const TERMINAL_EVENTS: ReadonlySet<string> = new Set<OrderEventType>([
  "order.expired",
  "device.powered_on",
  "device.power_on_failed",
]);
