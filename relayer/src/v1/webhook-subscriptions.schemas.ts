// Schemas of the webhook subscription routes (/v1/webhooks/subscriptions, portal JWT).
import { z } from "@hono/zod-openapi";
import { SUBSCRIPTION_PATTERNS } from "../webhooks/catalogue.ts";
import { pathIdParam } from "./shared-schemas.ts";
import {
  CREATED_WEBHOOK_SUBSCRIPTION_EXAMPLE,
  CREATE_WEBHOOK_SUBSCRIPTION_EXAMPLE,
  ROTATED_WEBHOOK_SECRET_EXAMPLE,
  UPDATE_WEBHOOK_SUBSCRIPTION_EXAMPLE,
  WEBHOOK_SUBSCRIPTION_EXAMPLE,
  WEBHOOK_SUBSCRIPTION_LIST_EXAMPLE,
  WEBHOOK_TEST_QUEUED_EXAMPLE,
} from "./examples.ts";

export const SubscriptionIdParam = pathIdParam(
  "A subscription id: whs_ followed by 26 characters",
  "whs_01JD2Y6Y8X3K5V4Q9T7R2M1N0P",
  "^whs_[0-9A-Z]{26}$",
);
const EventPattern = z.enum(SUBSCRIPTION_PATTERNS).openapi({
  description:
    "An event type of GET /v1/webhooks/event-types, a family such as device.*, or * (every type, including types added later). " +
    "test.ping may be listed; a test.ping is delivered only to the subscription whose test was asked for, whatever its types.",
  example: "payment.succeeded",
});

const CallbackUrl = z.string().max(2048).trim().min(1).openapi({
  example: "https://example.com/webhooks/payg",
  description:
    "https (http only for hosts in WEBHOOK_ALLOWED_PRIVATE_HOSTS); the host must resolve to public addresses only (private, loopback, link-local and other special-purpose addresses are refused unless the host, or host:port, is allowlisted); never an endpoint of the service itself (its own API, chain RPC, indexer, device cloud or database), allowlisted or not; no credentials, no fragment",
});

export const CreateWebhookSubscription = z
  .object({
    url: CallbackUrl,
    eventTypes: z.array(EventPattern).min(1).max(50),
    description: z.string().max(200).trim().optional(),
  })
  .strict()
  .openapi("CreateWebhookSubscription", { example: CREATE_WEBHOOK_SUBSCRIPTION_EXAMPLE });

export const UpdateWebhookSubscription = z
  .object({
    url: CallbackUrl.optional(),
    eventTypes: z.array(EventPattern).min(1).max(50).optional(),
    description: z.string().max(200).trim().nullable().optional(),
    status: z
      .enum(["active", "disabled"])
      .optional()
      .openapi({ description: "disabled stops deliveries (pending ones fail); active resumes" }),
  })
  .strict()
  .refine((b) => Object.keys(b).length > 0, "at least one field")
  .openapi("UpdateWebhookSubscription", { example: UPDATE_WEBHOOK_SUBSCRIPTION_EXAMPLE });

export const WebhookSubscription = z
  .object({
    id: z.string().openapi({ example: "whs_01JD2Y6Y8X3K5V4Q9T7R2M1N0P" }),
    url: z.string(),
    eventTypes: z.array(z.string()),
    description: z.string().nullable(),
    status: z.enum(["active", "disabled"]),
    disabledReason: z.string().nullable(),
    disabledAt: z.string().nullable(),
    secretHint: z.string().openapi({ description: "whsec_ and the secret's last four characters", example: "whsec_...k9Q=" }),
    previousSecretHint: z.string().nullable().openapi({
      description: "After a rotation, while its grace period lasts: the hint of the secret it replaced, which still signs deliveries",
      example: "whsec_...Xy0=",
    }),
    previousSecretExpiresAt: z.string().nullable().openapi({
      description: "When the replaced secret stops signing deliveries (x-service-signature switches to the new secret then); null: none",
    }),
    deliveries: z.object({
      pending: z.number().int(),
      succeeded: z.number().int(),
      failed: z.number().int(),
      lastActivityAt: z.string().nullable(),
    }),
    createdAt: z.string(),
    updatedAt: z.string(),
  })
  .openapi("WebhookSubscription", { example: WEBHOOK_SUBSCRIPTION_EXAMPLE });

export const WebhookSubscriptionList = z
  .object({ data: z.array(WebhookSubscription) })
  .openapi({ example: WEBHOOK_SUBSCRIPTION_LIST_EXAMPLE });

export const CreatedWebhookSubscription = WebhookSubscription.extend({
  secret: z.string().openapi({ description: "The signing secret (whsec_...). Shown this once: store it now." }),
}).openapi("CreatedWebhookSubscription", { example: CREATED_WEBHOOK_SUBSCRIPTION_EXAMPLE });

export const RotatedWebhookSecret = WebhookSubscription.extend({
  secret: z.string().openapi({ description: "The new signing secret (whsec_...). Shown this once: store it now." }),
}).openapi("RotatedWebhookSecret", { example: ROTATED_WEBHOOK_SECRET_EXAMPLE });

export const WebhookTestQueued = z
  .object({ eventId: z.string(), type: z.literal("test.ping"), subscriptionId: z.string() })
  .openapi("WebhookTestQueued", { example: WEBHOOK_TEST_QUEUED_EXAMPLE });
