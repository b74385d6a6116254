// The webhook events: each type, exactly when it fires, and the schema of its `data`. The OpenAPI document
// lists them under `webhooks` (registerWebhookDocs), the portal offers them as checkboxes, and the tests
// check every delivered event against its schema.
import { type OpenAPIHono, z } from "@hono/zod-openapi";
import { paymentRouterRailValues } from "../../../generated/abis.ts";
import { ChecksummedAddress, SplitLeg, Token, checksummedAddress } from "../representation.ts";

type OpenAPIRegistry = OpenAPIHono["openAPIRegistry"];

const Address = ChecksummedAddress;
const TxHash = z.string().regex(/^0x[0-9a-fA-F]{64}$/);
const Rail = z.enum(paymentRouterRailValues).openapi({
  description:
    "permit: a permit (relayed by the service or sent by the wallet); approval: the wallet paid after an approve; cash: an agent confirmed cash; authorization: an EIP-3009 receive authorization (USDC's own gasless transfer); permit2: a Permit2 transfer with the order as its witness (tokens without EIP-2612 or EIP-3009)",
});
const Timestamp = z.string().openapi({ description: "ISO 8601, UTC", example: "2026-01-01T12:00:00.000Z" });

const Payment = z.object({
  orderId: z.string().openapi({ example: "ord_01JD2Y6Y8X3K5V4Q9T7R2M1N0P" }),
  deviceId: z.string().openapi({ example: "kiosk-nbo-001" }),
  amountUsd: z.number().openapi({ description: "The order's price-locked amount, USD", example: 0.5 }),
  token: Token,
  tokenAmount: z.string().openapi({ description: "The amount in the token's base units", example: "500000" }),
  rail: Rail,
  payer: checksummedAddress("The paying account (the agent's account for cash)"),
  transactionHash: TxHash,
  blockNumber: z.number().int(),
});

const Settlement = z.object({
  orderId: z.string(),
  ref: z
    .string()
    .regex(/^0x[0-9a-fA-F]{64}$/)
    .openapi({ description: "The on-chain settlement reference: bytes32 of the order's on-chain id" }),
  split: checksummedAddress("The device's own asset and split contract that settled (every device has one)"),
  asset: z
    .object({
      deviceId: z.string().openapi({ example: "kiosk-nbo-001" }),
      chainDeviceId: z
        .string()
        .regex(/^0x[0-9a-fA-F]{64}$/)
        .openapi({ description: "keccak256 of the device id: the device's own key (the split's asset key is derived from it)" }),
    })
    .openapi({ description: "The asset (device) the split belongs to" }),
  token: Token,
  gross: z.string().openapi({ description: "Gross amount, token base units" }),
  grossUsd: z.number(),
  legs: z
    .array(
      z.object({
        leg: SplitLeg,
        recipient: Address,
        amount: z.string().openapi({ description: "Token base units" }),
      }),
    )
    .length(3)
    .openapi({ description: "The 50/40/10 legs: asset owner, operator, protocol" }),
  transactionHash: TxHash,
  blockNumber: z.number().int(),
  logIndex: z.number().int(),
});

const DeviceState = z.object({
  deviceId: z.string(),
  online: z.boolean(),
  observedAt: Timestamp.openapi({ description: "When the device cloud reported the new state" }),
  previousChangeAt: Timestamp.nullable().openapi({ description: "When the previous state began (as observed)" }),
});

export const EVENT_CATALOGUE = {
  "payment.succeeded": {
    summary: "An order was paid",
    fires:
      "When the payment of an order is indexed on-chain, on any rail (a relayed permit, the wallet's own permit or approval, cash, an EIP-3009 authorization), and the order turns success. Once per order (again only if a chain reorganisation removed the payment and it was made anew).",
    data: Payment.extend({ paidAt: Timestamp.openapi({ description: "The payment block's time" }) }),
  },
  "payment.confirmed": {
    summary: "An order's payment is final (any rail)",
    fires:
      "When the block of a paid order's payment is CONFIRMATIONS blocks deep (0 by default: right after payment.succeeded). Once per order. Act on this event for anything that must not be undone by a reorganisation.",
    data: Payment.extend({ confirmations: z.number().int().openapi({ description: "The depth required (CONFIRMATIONS)" }) }),
  },
  "payment.reverted": {
    summary: "A chain reorganisation removed an order's payment (extension: not one of the interface's event names)",
    fires:
      "When a chain reorganisation removed the block of a payment that payment.succeeded (and with it payment.split, split.settled, revenue.recorded, perhaps payment.confirmed) announced: the order is pending again until it is paid anew, which fires payment.succeeded again. The data is the payment that was removed. `devicePoweredOn` says whether the device had already been powered on for it (only possible when the tenant powers devices on at 0 confirmations, or after a reorganisation deeper than CONFIRMATIONS).",
    data: Payment.extend({
      reason: z.literal("chain_reorganisation"),
      devicePoweredOn: z.boolean().openapi({ description: "Whether a session had already started for the payment" }),
      revertedAt: Timestamp.openapi({ description: "When the relayer saw the payment removed" }),
    }),
  },
  "payment.split": {
    summary: "A payment's revenue was split 50/40/10",
    fires:
      "With payment.succeeded (same transaction), when the indexer holds the split of the payment: the router splits every payment in the payment's own transaction. Once per order.",
    data: Settlement,
  },
  "split.settled": {
    summary: "The split was settled on-chain",
    fires:
      "With payment.split: the asset and split contract's settlement (its yield-deposited event) of the payment, with the on-chain reference `ref` and the transaction. Once per order.",
    data: Settlement,
  },
  "revenue.recorded": {
    summary: "Revenue was recorded for the tenant",
    fires:
      "With payment.succeeded: the order's amount counts as the tenant's revenue from then on (the revenue page and GET /v1/revenue/overview). Once per order.",
    data: z.object({
      orderId: z.string(),
      deviceId: z.string(),
      tier: z.string().openapi({ example: "1h" }),
      amountUsd: z.number(),
      token: Token,
      tokenAmount: z.string(),
      recordedAt: Timestamp.openapi({ description: "The payment's time" }),
    }),
  },
  "payment.expired": {
    summary: "An order expired unpaid, or was cancelled",
    fires:
      "When an unpaid order is past its expiry (plus EXPIRY_GRACE_SECONDS) and the indexer has caught up with the chain without seeing it paid, or when its cancellation (POST /v1/orders/{id}/cancel) is mined: no payment can arrive any more. Once per order.",
    data: z.object({
      orderId: z.string(),
      deviceId: z.string(),
      amountUsd: z.number(),
      expiredAt: Timestamp,
      reason: z.enum(["expired", "cancelled"]).openapi({
        description: "expired: its voucher's expiry passed; cancelled: its tenant cancelled it and the voucher was voided on-chain",
      }),
    }),
  },
  "device.online": {
    summary: "A device came online",
    fires:
      "When the device cloud reports a device online that it last reported offline (the relayer polls it every DEVICE_STATUS_POLL_MS, 10 s by default). Not on the first observation of a device.",
    data: DeviceState,
  },
  "device.offline": {
    summary: "A device went offline",
    fires:
      "When the device cloud reports a device offline (or no longer lists it) that it last reported online. Same polling as device.online.",
    data: DeviceState,
  },
  "device.powered_on": {
    summary: "A paid session started on the device",
    fires:
      "When the device cloud has powered the device on for a paid order's session (retried while the device is offline). Once per order. After payment.confirmed: with CONFIRMATIONS above 0 the device waits until the payment is that deep, unless the tenant chose to power on at 0 confirmations (POWER_ON_AT_ZERO_CONFIRMATIONS or the tenant's own setting: then after payment.succeeded, and a reorganisation can remove a payment whose session has started).",
    data: z.object({
      orderId: z.string(),
      deviceId: z.string(),
      sessionId: z.string(),
      poweredOnAt: Timestamp,
      sessionEndsAt: Timestamp,
      durationSeconds: z.number().int(),
    }),
  },
  "device.power_on_failed": {
    summary: "A paid session could not start",
    fires:
      "When powering the device on for a paid order failed after every retry (12 attempts with backoff). Once per order; the order stays paid.",
    data: z.object({ orderId: z.string(), deviceId: z.string(), reason: z.string(), attempts: z.number().int() }),
  },
  "device.session_ended": {
    summary: "A session ended and its energy was metered",
    fires: "When a powered-on session has ended and the device cloud reported the energy it delivered. Once per order.",
    data: z.object({
      orderId: z.string(),
      deviceId: z.string(),
      sessionId: z.string(),
      energyWh: z.number().int(),
      endedAt: Timestamp,
    }),
  },
  "ticket.created": {
    summary: "A customer reported a problem on a device",
    fires:
      'When POST /v1/devices/{id}/tickets records a ticket (the checkout page\'s "Report a problem" form, or any client). Once per ticket.',
    data: z.object({
      ticketId: z.string().openapi({ example: "tkt_01JD2Y6Y8X3K5V4Q9T7R2M1N0P" }),
      deviceId: z.string(),
      orderId: z.string().nullable(),
      category: z.enum(["no_power", "payment", "damaged", "other"]),
      message: z.string(),
      contact: z.string().nullable().openapi({ description: "How the customer asked to be contacted, as they typed it" }),
      createdAt: Timestamp,
    }),
  },
  "test.ping": {
    summary: "A test delivery",
    fires:
      "When the portal's Send test button (or POST /v1/webhooks/subscriptions/{id}/test) is pressed: delivered to that one subscription only, whatever its event types (a subscription may list test.ping; that adds no other delivery).",
    data: z.object({
      subscriptionId: z.string(),
      message: z.string(),
      sentAt: Timestamp,
      sentBy: z.string().nullable().openapi({ description: "Who asked for it: the portal user's id, or the API key's (key_...)" }),
    }),
  },
} as const;

export type EventType = keyof typeof EVENT_CATALOGUE;
export const EVENT_TYPES = Object.keys(EVENT_CATALOGUE) as EventType[];
/** Types a subscription can list: every event name of the interface, test.ping included (the interface
 * names it). Listing test.ping changes nothing: a test.ping goes to the one subscription tested, always. */
export const SUBSCRIBABLE_TYPES: EventType[] = [...EVENT_TYPES];
export const EVENT_FAMILIES = [...new Set(SUBSCRIBABLE_TYPES.map((t) => t.split(".")[0]))].map((f) => `${f}.*`);
/** Everything a subscription may list: `*`, a family such as `device.*`, or a type (the enum of the
 * OpenAPI document, so generated clients know them). */
export const SUBSCRIPTION_PATTERNS = ["*", ...EVENT_FAMILIES, ...SUBSCRIBABLE_TYPES] as [string, ...string[]];
const patterns: ReadonlySet<string> = new Set(SUBSCRIPTION_PATTERNS);

/** Whether `pattern` (a type, a family like `device.*`, or `*`) is something a subscription may list. */
export function isValidPattern(pattern: string): boolean {
  return patterns.has(pattern);
}

/** Whether a subscription listing `patterns` receives events of `type`. */
export function subscribes(patterns: readonly string[], type: string): boolean {
  if (type === "test.ping") return false;
  return patterns.some((p) => p === "*" || p === type || (p.endsWith(".*") && type.startsWith(p.slice(0, -1))));
}

/** The Webhooks tag's description in the OpenAPI document: how deliveries work and how to verify them. */
export const WEBHOOKS_GUIDE = `Subscribe a callback URL to event types (POST /v1/webhooks/subscriptions, or the portal's Webhooks page);
the response carries the endpoint's signing secret (\`whsec_...\`), shown that once. Each event is then POSTed to the URL,
\`content-type: application/json\`, with the body \`{"type", "data", "id"}\` (each event's \`data\` is under \`webhooks\` below).

**Headers.** \`x-service-event\`: the type. \`x-service-signature: sha256=<hex>\`: HMAC-SHA256 of the raw body bytes keyed with
the whole secret string. \`webhook-id\` (= the envelope's \`id\`), \`webhook-timestamp\` (Unix seconds of this attempt) and
\`webhook-signature: v1,<base64>\`: HMAC-SHA256 of \`<webhook-id>.<webhook-timestamp>.<body>\` keyed with the base64-decoded part
of the secret after \`whsec_\` (Standard Webhooks; several space-separated signatures may come, one valid is enough).

**Verifying.** Use the raw body as received. Prefer \`webhook-signature\`: recompute it, compare in constant time, and reject a
\`webhook-timestamp\` more than 5 minutes from your clock - that stops replays of captured deliveries, which
\`x-service-signature\` alone (it signs no time: a captured delivery verifies with it for as long as the secret is accepted)
cannot. Then deduplicate on \`webhook-id\`. \`verifyWebhook()\` of the SDK (\`@payg/sdk\`) does all of it.

**Rotating the secret.** POST /v1/webhooks/subscriptions/{id}/rotate-secret shows a new secret once. For the grace period
(WEBHOOK_SECRET_GRACE_SECONDS, 24 h by default; \`previousSecretExpiresAt\`) \`webhook-signature\` carries \`v1,<new> v1,<old>\`
and \`x-service-signature\` stays signed with the old secret; after it, both use the new secret only.

**Acknowledging and retries.** Answer 2xx within the timeout (WEBHOOK_TIMEOUT_MS, 10 s by default; DNS, connection and answer
included; redirects are not followed). Anything else is retried: up to 5 attempts, the n-th retry WEBHOOK_RETRY_BASE_MS x 5^(n-1)
after the failure (1 min, 5 min, 25 min, ~2 h by default) with +-20% jitter. The \`id\` is the same on every attempt of one event.
After the 5th failure the delivery is failed; redeliver it by hand (POST /v1/webhooks/deliveries/{id}/redeliver, one more
attempt). A 410 answer disables the subscription. Events of one endpoint may arrive out of order: order them by their data.

**Durability.** Events are written in the same database transaction as the change that causes them and delivered from that
outbox, so a restart loses none; an attempt that was under way when the service stopped is made again (same id).

**Callback URLs.** https (plain http only for hosts the operator allowlists); no credentials or fragment; the host must resolve to
public addresses only - private, loopback, link-local and other reserved addresses are refused unless allowlisted
(WEBHOOK_ALLOWED_PRIVATE_HOSTS), when the subscription is saved and again, on the connection's own resolution, at every attempt.`;

/** Documents every event under the OpenAPI document's `webhooks`. */
export function registerWebhookDocs(registry: OpenAPIRegistry) {
  const headers = z.object({
    "x-service-event": z.string().openapi({ description: "The event type" }),
    "x-service-signature": z.string().openapi({
      description:
        "sha256=<hex>: HMAC-SHA256 of the raw body, keyed with the whole signing secret (whsec_...) as UTF-8 (during a rotation's grace period, the previous secret). Signs no time: verify webhook-signature and webhook-timestamp against replays",
    }),
    "webhook-id": z
      .string()
      .openapi({ description: "The delivery id (= the envelope's id), the same on every attempt: deduplicate on it" }),
    "webhook-timestamp": z.string().openapi({ description: "Unix seconds when this attempt was signed" }),
    "webhook-signature": z.string().openapi({
      description:
        "v1,<base64>: HMAC-SHA256 of `<webhook-id>.<webhook-timestamp>.<body>`, keyed with the base64-decoded part of the secret after whsec_ (Standard Webhooks). During a rotation's grace period two, space-separated: `v1,<new> v1,<old>`",
    }),
  });
  for (const [type, entry] of Object.entries(EVENT_CATALOGUE)) {
    // payment.succeeded -> PaymentSucceededEvent, device.power_on_failed -> DevicePowerOnFailedEvent
    const name = `${type
      .split(/[^a-z]/)
      .filter(Boolean)
      .map((word) => word[0].toUpperCase() + word.slice(1))
      .join("")}Event`;
    registry.registerWebhook({
      method: "post",
      path: type,
      // receivePaymentSucceededEvent: the method a generated client gives the receiver of this event.
      operationId: `receive${name}`,
      // The receiver authenticates a delivery by its signature headers (below), not by a credential scheme.
      security: [],
      tags: ["Webhooks"],
      summary: entry.summary,
      description:
        `**Fires:** ${entry.fires}\n\nA POST to the subscription's URL; see the Webhooks tag for signatures and retries. ` +
        "Answer 2xx to acknowledge; 410 disables the subscription; anything else, or no answer within WEBHOOK_TIMEOUT_MS, is retried.",
      request: {
        headers,
        body: {
          required: true,
          content: {
            "application/json": {
              schema: z
                .object({ type: z.literal(type), data: entry.data, id: z.string().openapi({ example: "msg_01JD2Y6Y8X3K5V4Q9T7R2M1N0P" }) })
                .openapi(name),
            },
          },
        },
      },
      responses: {
        200: { description: "Any 2xx acknowledges the delivery" },
        410: { description: "Gone: the subscription is disabled, no further deliveries" },
      },
    });
  }
}
