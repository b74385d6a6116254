// Schemas of POST /v1/devices/{id}/tickets, and the ticket categories (the checkout page offers them too).
import { z } from "@hono/zod-openapi";
import { ORDER_ID_PATTERN } from "../ids.ts";
import { TICKET_EXAMPLE, TICKET_REQUEST_EXAMPLE } from "./examples.ts";

export const TICKET_CATEGORIES = {
  no_power: "The device did not power on, or stopped",
  payment: "A problem with paying",
  damaged: "The device is damaged or unsafe",
  other: "Something else",
} as const;

export const TicketRequest = z
  .object({
    category: z.enum(["no_power", "payment", "damaged", "other"]).openapi({
      description: Object.entries(TICKET_CATEGORIES)
        .map(([k, v]) => `${k}: ${v}`)
        .join("; "),
    }),
    // Lengths are those of the text as sent (the document's maxLength), checked before the spaces around it
    // are trimmed: a megabyte of spaces is not a short message.
    message: z.string().max(2000).trim().min(1).openapi({ example: "Paid for an hour but the socket has no power." }),
    contact: z.string().max(200).trim().optional().openapi({ description: "How to reach the customer (phone, email), optional" }),
    orderId: z
      .string()
      .regex(ORDER_ID_PATTERN)
      .optional()
      .openapi({ description: "The order concerned, if any (it must be an order of this device)" }),
  })
  .strict()
  .openapi("TicketRequest", { example: TICKET_REQUEST_EXAMPLE });

export const Ticket = z
  .object({
    id: z.string().openapi({ example: "tkt_01JD2Y6Y8X3K5V4Q9T7R2M1N0P" }),
    deviceId: z.string(),
    orderId: z.string().nullable(),
    category: z.enum(["no_power", "payment", "damaged", "other"]),
    status: z.enum(["open", "closed"]),
    createdAt: z.string(),
  })
  .openapi("Ticket", { example: TICKET_EXAMPLE });
