// Assertions on the payment API's error envelope.
import assert from "node:assert/strict";
import type { ApiResponse } from "../../support/stack.ts";

/** The response is `status` with the envelope {"error": {"code", "message"}, "requestId"}. */
export function expectError(response: ApiResponse, status: number, code: string) {
  assert.equal(response.status, status, `expected ${status} ${code}, got ${response.status}: ${response.text}`);
  assert.equal(response.body?.error?.code, code, response.text);
  assert.equal(typeof response.body.error.message, "string");
  assert.match(response.body.requestId, /^req_[0-9A-Z]{26}$/);
  assert.equal(response.headers.get("x-request-id"), response.body.requestId);
  assert.ok(!/at .+\.ts:\d+/.test(response.text), "no stack trace in the response");
}
