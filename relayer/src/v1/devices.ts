// GET /v1/devices, GET /v1/devices/{id} (an API key of either role: the tenant's own devices only; an agent in
// the field finds the device it takes cash for) and the public GET /v1/devices/{id}/status, proxied from the
// device cloud: answers are shared per device for DEVICE_STATUS_TTL_MS (one device-cloud call per device at a
// time, however many ask) and each client address is rate-limited.
import { createRoute } from "@hono/zod-openapi";
import { and, asc, eq, gt } from "drizzle-orm";
import { requireApiKey } from "../auth/middleware.ts";
import { devices } from "../db/schema.ts";
import { DeviceCloudTimeout, createDeviceStatusCache } from "../devices/device-cloud.ts";
import { createApi } from "../http/api.ts";
import { errorResponses } from "../http/errors.ts";
import { errors } from "../errors.ts";
import { rateLimit } from "../http/middleware.ts";
import { payoutView } from "../payments/payout-parties.ts";
import { usd } from "../payments/pricing.ts";
import type { Services } from "../services.ts";
import { Device, DeviceList, DeviceListQuery, DeviceStatus } from "./devices.schemas.ts";
import { DeviceIdParam } from "./shared-schemas.ts";

type DeviceRow = typeof devices.$inferSelect;

/** How long a device's live state from the device cloud is shared by the status route. */
export const DEVICE_STATUS_TTL_MS = 2_000;
/** How many devices' states the status route holds at most. */
const DEVICE_STATUS_CACHE_ENTRIES = 10_000;

function deviceView(row: DeviceRow, tierSeconds: ReadonlyMap<string, number>) {
  return {
    id: row.id,
    name: row.name,
    deviceClass: row.deviceClass,
    region: row.region,
    chainDeviceId: row.chainDeviceId,
    tiers: Object.entries(row.tiers)
      .filter(([tier]) => tierSeconds.has(tier))
      .map(([tier, micros]) => ({ tier, durationSeconds: tierSeconds.get(tier)!, priceUsd: usd(micros) }))
      .sort((a, b) => a.durationSeconds - b.durationSeconds),
    payout: payoutView(row),
    createdAt: row.createdAt.toISOString(),
  };
}

export function deviceRoutes(services: Services) {
  const api = createApi();
  const {
    database: { db },
    config,
    deviceCloud,
  } = services;
  const apiKey = requireApiKey(db, ["developer", "agent"]);
  const security = [{ apiKey: ["developer", "agent"] }];
  const statuses = createDeviceStatusCache((id) => deviceCloud.status(id), {
    ttlMs: DEVICE_STATUS_TTL_MS,
    maxEntries: DEVICE_STATUS_CACHE_ENTRIES,
  });

  api.openapi(
    createRoute({
      method: "get",
      path: "/devices",
      operationId: "listDevices",
      tags: ["Devices"],
      summary: "List the tenant's devices (paginated, filterable by region and class)",
      security,
      middleware: [apiKey] as const,
      request: { query: DeviceListQuery },
      responses: {
        200: { description: "A page of devices, by id", content: { "application/json": { schema: DeviceList } } },
        ...errorResponses(401, 422),
      },
    }),
    async (c) => {
      const q = c.req.valid("query");
      const conditions = [eq(devices.tenantId, c.get("identity").tenantId)];
      if (q.cursor) conditions.push(gt(devices.id, q.cursor));
      if (q.region) conditions.push(eq(devices.region, q.region));
      if (q.deviceClass) conditions.push(eq(devices.deviceClass, q.deviceClass));
      const rows = await db
        .select()
        .from(devices)
        .where(and(...conditions))
        .orderBy(asc(devices.id))
        .limit(q.limit + 1);
      const page = rows.slice(0, q.limit);
      return c.json(
        {
          data: page.map((row) => deviceView(row, config.TIERS)),
          nextCursor: rows.length > q.limit ? page[page.length - 1].id : null,
        },
        200,
      );
    },
  );

  api.openapi(
    createRoute({
      method: "get",
      path: "/devices/{id}",
      operationId: "getDevice",
      tags: ["Devices"],
      summary: "One of the tenant's devices (another tenant's device is 404)",
      security,
      middleware: [apiKey] as const,
      request: { params: DeviceIdParam },
      responses: {
        200: { description: "The device", content: { "application/json": { schema: Device } } },
        ...errorResponses(401, 404),
      },
    }),
    async (c) => {
      const { id } = c.req.valid("param");
      const [row] = await db
        .select()
        .from(devices)
        .where(and(eq(devices.id, id), eq(devices.tenantId, c.get("identity").tenantId)));
      if (!row) throw errors.notFound(`device ${id}`);
      return c.json(deviceView(row, config.TIERS), 200);
    },
  );

  api.openapi(
    createRoute({
      method: "get",
      path: "/devices/{id}/status",
      operationId: "getDeviceStatus",
      tags: ["Devices"],
      summary: "Live online state of a device, from the device cloud (504 if it does not answer in time)",
      description:
        "The device cloud's answer is shared for 2 s per device (`checkedAt` is when it answered); 60 requests at once, then 10 a second, per client address (429 with `retry-after`).",
      middleware: [rateLimit({ capacity: 60, perSecond: 10 })] as const,
      request: { params: DeviceIdParam },
      responses: {
        200: { description: "Live state", content: { "application/json": { schema: DeviceStatus } } },
        ...errorResponses(404, 429, 502, 504),
      },
    }),
    async (c) => {
      const { id } = c.req.valid("param");
      const [row] = await db.select({ id: devices.id }).from(devices).where(eq(devices.id, id));
      if (!row) throw errors.notFound(`device ${id}`);
      let status, checkedAt;
      try {
        ({ status, checkedAt } = await statuses.get(id));
      } catch (error) {
        if (error instanceof DeviceCloudTimeout) throw errors.deviceTimeout(id);
        throw errors.badGateway(`the device cloud failed: ${(error as Error).message}`);
      }
      if (!status) throw errors.notFound(`device ${id} in the device cloud`);
      return c.json(
        {
          deviceId: id,
          online: status.online,
          poweredOn: status.poweredOn,
          sessionEndsAt: status.poweredOn ? (status.session?.endsAt ?? null) : null,
          checkedAt: checkedAt.toISOString(),
        },
        200,
      );
    },
  );

  return api;
}
