// A device-cloud simulator: the HTTP service that, in production, is the fleet vendor's cloud. It keeps
// devices in memory with an online state, powers them on for paid sessions, and meters the energy each
// session delivers. Latency and failures are configurable per device, so the relayer's timeouts and
// retries can be exercised.
import { Hono } from "hono";
import { z } from "zod";

export type SimulatorOptions = {
  /** Simulated seconds per real second: 60 makes a one-hour session last one minute. */
  timeScale?: number;
  now?: () => number;
};

type Session = { sessionId: string; startedAt: number; durationSeconds: number };
type Device = {
  id: string;
  online: boolean;
  powerW: number;
  latencyMs: number;
  failureRate: number;
  sessions: Map<string, Session>;
  lastSessionId?: string;
};

const deviceSettings = z
  .object({
    online: z.boolean().optional(),
    powerW: z.number().int().min(0).max(1_000_000).optional(),
    latencyMs: z.number().int().min(0).max(120_000).optional(),
    failureRate: z.number().min(0).max(1).optional(),
  })
  .strict();

const powerOnBody = z
  .object({
    sessionId: z.string().min(1).max(100),
    durationSeconds: z
      .number()
      .int()
      .min(1)
      .max(7 * 86_400),
  })
  .strict();

export function createDeviceCloudSimulator(opts: SimulatorOptions = {}) {
  const timeScale = opts.timeScale ?? 1;
  const now = opts.now ?? Date.now;
  const devices = new Map<string, Device>();

  /** Real milliseconds a session of `durationSeconds` lasts. */
  const realDurationMs = (durationSeconds: number) => (durationSeconds * 1000) / timeScale;

  function sessionView(device: Device, session: Session) {
    const endsAt = session.startedAt + realDurationMs(session.durationSeconds);
    const elapsedMs = Math.max(0, Math.min(now(), endsAt) - session.startedAt);
    const simulatedHours = (elapsedMs * timeScale) / 3_600_000;
    return {
      sessionId: session.sessionId,
      startedAt: new Date(session.startedAt).toISOString(),
      endsAt: new Date(endsAt).toISOString(),
      durationSeconds: session.durationSeconds,
      ended: now() >= endsAt,
      energyWh: Math.round(device.powerW * simulatedHours),
    };
  }

  function deviceView(device: Device) {
    const current = device.lastSessionId ? device.sessions.get(device.lastSessionId) : undefined;
    const session = current ? sessionView(device, current) : null;
    let lifetimeEnergyWh = 0;
    for (const s of device.sessions.values()) lifetimeEnergyWh += sessionView(device, s).energyWh;
    return {
      deviceId: device.id,
      online: device.online,
      poweredOn: session !== null && !session.ended,
      powerW: device.powerW,
      session,
      lifetimeEnergyWh,
    };
  }

  const app = new Hono();

  // Simulated network behaviour of a device's routes: latency, then maybe a failure.
  app.use("/devices/:id/*", async (c, next) => {
    const device = devices.get(c.req.param("id"));
    if (device?.latencyMs) await new Promise((resolve) => setTimeout(resolve, device.latencyMs));
    if (device && device.failureRate > 0 && Math.random() < device.failureRate) {
      return c.json({ error: "simulated failure" }, 503);
    }
    await next();
  });
  app.use("/devices/:id", async (c, next) => {
    const device = devices.get(c.req.param("id"));
    if (device?.latencyMs) await new Promise((resolve) => setTimeout(resolve, device.latencyMs));
    if (device && device.failureRate > 0 && Math.random() < device.failureRate) {
      return c.json({ error: "simulated failure" }, 503);
    }
    await next();
  });

  app.get("/health", (c) => c.json({ status: "ok", devices: devices.size, timeScale }));

  app.get("/devices", (c) => c.json({ devices: [...devices.values()].map(deviceView) }));

  app.get("/devices/:id", (c) => {
    const device = devices.get(c.req.param("id"));
    return device ? c.json(deviceView(device)) : c.json({ error: "unknown device" }, 404);
  });

  app.post("/devices/:id/power-on", async (c) => {
    const device = devices.get(c.req.param("id"));
    if (!device) return c.json({ error: "unknown device" }, 404);
    const parsed = powerOnBody.safeParse(await c.req.json().catch(() => undefined));
    if (!parsed.success) return c.json({ error: "invalid body", issues: parsed.error.issues }, 400);
    const existing = device.sessions.get(parsed.data.sessionId);
    if (existing) return c.json(sessionView(device, existing));
    if (!device.online) return c.json({ error: "device offline" }, 409);
    const session = { sessionId: parsed.data.sessionId, startedAt: now(), durationSeconds: parsed.data.durationSeconds };
    device.sessions.set(session.sessionId, session);
    device.lastSessionId = session.sessionId;
    return c.json(sessionView(device, session), 201);
  });

  app.get("/devices/:id/sessions/:sessionId", (c) => {
    const device = devices.get(c.req.param("id"));
    const session = device?.sessions.get(c.req.param("sessionId"));
    return device && session ? c.json(sessionView(device, session)) : c.json({ error: "unknown session" }, 404);
  });

  // Simulation controls (not part of a real device cloud): register devices and change their behaviour.
  app.put("/sim/devices/:id", async (c) => {
    const parsed = deviceSettings.safeParse(await c.req.json().catch(() => undefined));
    if (!parsed.success) return c.json({ error: "invalid body", issues: parsed.error.issues }, 400);
    const id = c.req.param("id");
    const device = devices.get(id) ?? {
      id,
      online: true,
      powerW: 60,
      latencyMs: 0,
      failureRate: 0,
      sessions: new Map(),
    };
    Object.assign(device, Object.fromEntries(Object.entries(parsed.data).filter(([, v]) => v !== undefined)));
    devices.set(id, device);
    return c.json(deviceView(device));
  });

  app.delete("/sim/devices/:id", (c) => {
    return devices.delete(c.req.param("id")) ? c.body(null, 204) : c.json({ error: "unknown device" }, 404);
  });

  return { app, devices };
}
