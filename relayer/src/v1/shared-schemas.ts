// Schemas more than one /v1 route group uses: the device id, and the path `{id}` of every resource.
import { z } from "@hono/zod-openapi";
import { ORDER_ID_PATTERN } from "../ids.ts";

export const DeviceId = z
  .string()
  .min(1)
  .max(64)
  .regex(/^[A-Za-z0-9][A-Za-z0-9._-]*$/, "letters, digits, '.', '_' or '-'")
  .openapi({ example: "kiosk-nbo-001" });

/** A path `{id}`: any string is taken (the interface: "Path parameter {id} is a string"). The document gives
 * the shape the service's ids have (`pattern`), but a value of another shape is not refused as invalid: it
 * names no resource, so it is answered like any unknown id, 404 not_found, never 422. */
export function pathIdParam(description: string, example: string, pattern: string) {
  return z.object({
    id: z.string().openapi({
      param: { name: "id", in: "path" },
      description: `${description}. Any other value names nothing: 404 not_found.`,
      pattern,
      example,
    }),
  });
}

export const OrderIdParam = pathIdParam(
  "An order id: ord_ followed by 26 characters",
  "ord_01JD2Y6Y8X3K5V4Q9T7R2M1N0P",
  ORDER_ID_PATTERN.source,
);

export const DeviceIdParam = pathIdParam(
  "A device id: 1 to 64 letters, digits, '.', '_' or '-', starting with a letter or digit",
  "kiosk-nbo-001",
  "^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$",
);
