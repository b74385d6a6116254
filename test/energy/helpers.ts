// Helpers of the energy sandbox's end-to-end suites: HTTP calls to /energy/v1 as an integrator makes them
// (form-encoded token request, bearer JSON calls, raw bodies), a meter that produces plausible readings,
// the envelope check, and the Merkle trees a batch and an anchor must have, computed independently of the relayer.
import assert from "node:assert/strict";
import { createPrivateKey, sign } from "node:crypto";
import { StandardMerkleTree } from "@openzeppelin/merkle-tree";
import { type Hex, keccak256, toHex } from "viem";
import type { Stack } from "../support/stack.ts";
import type { UncheckedJson } from "../support/unchecked-json.ts";

export const BASE = "/energy/v1";

export type Response = { status: number; headers: Headers; text: string; body: UncheckedJson };

export type Reading = {
  device_ts: string;
  energy_wh_cumulative: number;
  meter_epoch: number;
  sequence_number: number;
  reading_id: string;
  reset_reason?: string | null;
  measurement_quality?: string;
  supersedes_reading_id?: string;
  active_power_w?: number;
};

export async function request(
  stack: Stack,
  method: string,
  path: string,
  opts: { body?: string; headers?: Record<string, string>; token?: string } = {},
): Promise<Response> {
  const headers: Record<string, string> = { ...opts.headers };
  if (opts.token) headers.authorization = `Bearer ${opts.token}`;
  const response = await fetchAnswer(`${stack.relayerUrl}${path}`, { method, headers, body: opts.body });
  const text = await response.text();
  let body: unknown = text;
  try {
    body = JSON.parse(text);
  } catch {
    // not JSON
  }
  return { status: response.status, headers: response.headers, text, body };
}

/** fetch, retried when the server answered before reading the whole body and closed the connection while
 * the body was still being sent (the 413 case): the client may then see EPIPE or ECONNRESET instead of the
 * answer, depending on timing. Any other failure, and a third such one, is thrown. */
async function fetchAnswer(url: string, init: RequestInit): Promise<globalThis.Response> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await fetch(url, init);
    } catch (error) {
      const code = ((error as Error).cause as { code?: string } | undefined)?.code;
      if (attempt >= 3 || (code !== "EPIPE" && code !== "ECONNRESET")) throw error;
    }
  }
}

/** POST /auth/token with `fields` form-encoded. */
export function tokenRequest(stack: Stack, fields: Record<string, string>) {
  return request(stack, "POST", `${BASE}/auth/token`, {
    body: new URLSearchParams(fields).toString(),
    headers: { "content-type": "application/x-www-form-urlencoded" },
  });
}

/** A fresh access token of the sample client. */
export async function accessToken(stack: Stack): Promise<string> {
  const { clientId, clientSecret } = stack.sample.energyClient;
  const response = await tokenRequest(stack, { grant_type: "client_credentials", client_id: clientId, client_secret: clientSecret });
  assert.equal(response.status, 200, response.text);
  return response.body.access_token;
}

/** A JSON call with the bearer token. */
export function call(stack: Stack, token: string, method: string, path: string, body?: unknown, headers: Record<string, string> = {}) {
  return request(stack, method, `${BASE}${path}`, {
    token,
    body: body === undefined ? undefined : typeof body === "string" ? body : JSON.stringify(body),
    headers: body === undefined ? headers : { "content-type": "application/json", ...headers },
  });
}

export function postBatch(stack: Stack, token: string, body: unknown, headers: Record<string, string> = {}) {
  return call(stack, token, "POST", "/telemetry:batch", body, headers);
}

/** Asserts the sandbox's error envelope, exactly: status, svc_code, and no other field. */
export function assertError(response: Response, status: number, code: string, context = "") {
  assert.equal(response.status, status, `${context} ${response.text}`);
  assert.match(response.headers.get("content-type") ?? "", /^application\/json/);
  assert.deepEqual(Object.keys(response.body).sort(), ["environment", "error"], context);
  assert.deepEqual(Object.keys(response.body.error).sort(), ["message", "svc_code"], context);
  assert.equal(response.body.environment, "sandbox");
  assert.equal(response.body.error.svc_code, code, `${context} ${response.body.error.message}`);
  assert.equal(typeof response.body.error.message, "string");
  assert.ok(response.body.error.message.length > 0);
}

/** A meter producing plausible readings at a steady 2,520 W: one every 10 s of meter time (7 Wh each), the
 * meter's clock never more than 280 s behind real time, so readings are not flagged for drift unless a test
 * sends more than about 55 readings of one device within a few minutes. */
export function meter(deviceId: string, start: { sequence: number; cumulative: number; epoch: number }, powerW = 2_520) {
  const state = { sequence: start.sequence, cumulative: start.cumulative, epoch: start.epoch, lastTs: 0 };
  return {
    deviceId,
    state,
    /** The next `count` readings; `overrides` applies to each. */
    readings(count: number, overrides: Partial<Reading> = {}): Reading[] {
      const out: Reading[] = [];
      for (let i = 0; i < count; i++) {
        const ts = Math.max(state.lastTs + 10_000, Date.now() - 280_000);
        const elapsed = state.lastTs > 0 ? ts - state.lastTs : 10_000;
        state.lastTs = ts;
        state.sequence += 1;
        state.cumulative += Math.round((powerW * elapsed) / 3_600_000);
        out.push({
          device_ts: new Date(ts).toISOString(),
          energy_wh_cumulative: state.cumulative,
          meter_epoch: state.epoch,
          sequence_number: state.sequence,
          reading_id: `${deviceId}-${state.epoch}-${state.sequence}`,
          measurement_quality: "good",
          active_power_w: powerW,
          ...overrides,
        });
      }
      return out;
    },
    batch(count: number, overrides: Partial<Reading> = {}) {
      return { device_id: deviceId, readings: this.readings(count, overrides) };
    },
  };
}

/** The Ed25519 signature (base64) of `body` with the key whose 32-byte seed is `seedHex`. */
export function signBody(body: string, seedHex: string): string {
  const key = createPrivateKey({
    key: Buffer.concat([Buffer.from("302e020100300506032b657004220420", "hex"), Buffer.from(seedHex, "hex")]),
    format: "der",
    type: "pkcs8",
  });
  return sign(null, Buffer.from(body, "utf8"), key).toString("base64");
}

/** The documented leaf encoding, and the tree an attested batch must anchor. */
export const LEAF_TYPES = ["uint256", "bytes32", "bytes32", "uint64", "string", "uint64", "uint64", "uint64", "int64", "string"];

export function expectedTree(
  binding: { chainId: number; projectId: string; deviceId: string; batchSequence: number },
  readings: Reading[],
) {
  const values = readings.map((r) => [
    BigInt(binding.chainId),
    keccak256(toHex(binding.projectId)),
    keccak256(toHex(binding.deviceId)),
    BigInt(binding.batchSequence),
    r.reading_id,
    BigInt(r.sequence_number),
    BigInt(r.meter_epoch),
    BigInt(r.energy_wh_cumulative),
    BigInt(Date.parse(r.device_ts)),
    r.supersedes_reading_id ?? "",
  ]);
  return StandardMerkleTree.of(values, LEAF_TYPES);
}

/** The documented leaf encoding of a batches tree, and the tree one anchor transaction must anchor. */
export const BATCH_LEAF_TYPES = ["bytes32", "bytes32", "uint64", "bytes32", "uint32"];

/** A batch's fields as its batches-tree leaf and TelemetryAnchor.verifyReading take them. */
export type BatchFields = { projectId: Hex; deviceId: Hex; batchSequence: bigint; root: Hex; readings: number };

export function batchFields(projectId: string, deviceId: string, batchSequence: number, root: string, readings: number): BatchFields {
  return {
    projectId: keccak256(toHex(projectId)),
    deviceId: keccak256(toHex(deviceId)),
    batchSequence: BigInt(batchSequence),
    root: root as Hex,
    readings,
  };
}

export function expectedBatchesTree(batches: BatchFields[]) {
  return StandardMerkleTree.of(
    batches.map((b) => [b.projectId, b.deviceId, b.batchSequence, b.root, b.readings]),
    BATCH_LEAF_TYPES,
  );
}

/** A reading as TelemetryAnchor.verifyReading takes it, from the reading as sent. */
export function readingFields(r: Reading) {
  return {
    readingId: r.reading_id,
    sequenceNumber: BigInt(r.sequence_number),
    meterEpoch: BigInt(r.meter_epoch),
    energyWhCumulative: BigInt(r.energy_wh_cumulative),
    deviceTsMs: BigInt(Date.parse(r.device_ts)),
    supersedesReadingId: r.supersedes_reading_id ?? "",
  };
}

/** Polls `check` until it returns a value other than undefined; fails after `timeoutMs`. */
export async function waitFor<T>(what: string, check: () => Promise<T | undefined>, timeoutMs = 30_000, intervalMs = 100): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  while (Date.now() < deadline) {
    try {
      const value = await check();
      if (value !== undefined) return value;
    } catch (error) {
      last = error;
    }
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
  throw new Error(`timed out waiting for ${what}${last ? `: ${(last as Error).message}` : ""}`);
}
