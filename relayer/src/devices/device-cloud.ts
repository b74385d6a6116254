// Client of the device cloud (the fleet vendor's HTTP service; the simulator in device-cloud/ locally).
// Every call has a timeout; a timeout is reported as such so routes can answer 504.

export type DeviceCloudSession = {
  sessionId: string;
  startedAt: string;
  endsAt: string;
  durationSeconds: number;
  ended: boolean;
  energyWh: number;
};

export type DeviceCloudStatus = {
  deviceId: string;
  online: boolean;
  poweredOn: boolean;
  powerW: number;
  session: DeviceCloudSession | null;
  lifetimeEnergyWh: number;
};

export class DeviceCloudTimeout extends Error {}
export class DeviceCloudError extends Error {
  readonly status: number;
  constructor(status: number, message: string) {
    super(message);
    this.status = status;
  }
}

export function createDeviceCloud(baseUrl: string, timeoutMs: number) {
  const base = baseUrl.replace(/\/$/, "");

  async function call<T>(method: string, path: string, body?: unknown): Promise<T | undefined> {
    let response: Response;
    try {
      response = await fetch(`${base}${path}`, {
        method,
        headers: body === undefined ? undefined : { "content-type": "application/json" },
        body: body === undefined ? undefined : JSON.stringify(body),
        signal: AbortSignal.timeout(timeoutMs),
      });
    } catch (error) {
      const name = (error as Error).name;
      if (name === "TimeoutError" || name === "AbortError") throw new DeviceCloudTimeout(`${method} ${path} timed out`);
      throw new DeviceCloudError(0, `device cloud unreachable: ${(error as Error).message}`);
    }
    if (response.status === 404) return undefined;
    if (!response.ok) throw new DeviceCloudError(response.status, `${method} ${path} answered ${response.status}`);
    return (await response.json()) as T;
  }

  return {
    timeoutMs,
    /** The HTTP status of GET /health within `limitMs` (any answer shows the service is reachable); throws
     * when there is none. */
    async health(limitMs: number): Promise<number> {
      const response = await fetch(`${base}/health`, { signal: AbortSignal.timeout(limitMs) });
      await response.body?.cancel();
      return response.status;
    },
    /** Live state of one device; undefined if the device cloud does not know it. */
    status: (deviceId: string) => call<DeviceCloudStatus>("GET", `/devices/${encodeURIComponent(deviceId)}`),
    /** Live state of every device of the fleet. */
    async list(): Promise<DeviceCloudStatus[]> {
      const result = await call<{ devices: DeviceCloudStatus[] }>("GET", "/devices");
      return result?.devices ?? [];
    },
    /** Powers a device on for a session; idempotent per session id. Undefined for an unknown device. */
    powerOn: (deviceId: string, sessionId: string, durationSeconds: number) =>
      call<DeviceCloudSession>("POST", `/devices/${encodeURIComponent(deviceId)}/power-on`, {
        sessionId,
        durationSeconds,
      }),
    session: (deviceId: string, sessionId: string) =>
      call<DeviceCloudSession>("GET", `/devices/${encodeURIComponent(deviceId)}/sessions/${encodeURIComponent(sessionId)}`),
  };
}

export type DeviceCloud = ReturnType<typeof createDeviceCloud>;

/** A device's live state as the status cache holds it: `status` (undefined: the device cloud does not know the
 * device) as the device cloud answered at `checkedAt`. */
export type CheckedDeviceStatus = { status: DeviceCloudStatus | undefined; checkedAt: Date };

/** Live state per device, shared for `ttlMs` (what the public GET /v1/devices/{id}/status answers): one call to
 * the device cloud per device at a time, whatever the number of requests. Requests for a device while its call
 * is under way wait for that call; an answer (a 404 included) is reused until it is `ttlMs` old; a failure is
 * not kept (each request sharing the failed call gets it; the next one calls again). At most `maxEntries`
 * devices are held (a Map in insertion order: the oldest goes first). */
export function createDeviceStatusCache(
  fetchStatus: (deviceId: string) => Promise<DeviceCloudStatus | undefined>,
  opts: { ttlMs: number; maxEntries: number },
) {
  type Entry = { promise: Promise<CheckedDeviceStatus>; checkedAt: number | undefined };
  const entries = new Map<string, Entry>();
  return {
    get(deviceId: string): Promise<CheckedDeviceStatus> {
      const held = entries.get(deviceId);
      if (held && (held.checkedAt === undefined || Date.now() - held.checkedAt < opts.ttlMs)) return held.promise;
      if (held) entries.delete(deviceId);
      const entry: Entry = { promise: undefined as unknown as Promise<CheckedDeviceStatus>, checkedAt: undefined };
      entry.promise = fetchStatus(deviceId).then(
        (status) => {
          entry.checkedAt = Date.now();
          return { status, checkedAt: new Date(entry.checkedAt) };
        },
        (error: unknown) => {
          if (entries.get(deviceId) === entry) entries.delete(deviceId);
          throw error;
        },
      );
      entries.set(deviceId, entry);
      while (entries.size > opts.maxEntries) entries.delete(entries.keys().next().value!);
      return entry.promise;
    },
    /** How many devices are held. */
    get size() {
      return entries.size;
    },
  };
}
