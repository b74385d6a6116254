// The errors that answer a client (4xx of both interfaces) capture no stack trace: they are answers, not
// faults (relayer/src/http/errors.ts withoutStackFor). Faults of the service (5xx) keep theirs, and the
// process's own limit is left as it was.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { errors } from "../../relayer/src/errors.ts";
import { sandboxErrors } from "../../relayer/src/energy/errors.ts";
import { SandboxHttpError } from "../../relayer/src/energy/routes/envelope.ts";

const frames = (error: Error) => (error.stack ?? "").split("\n").filter((line) => line.trimStart().startsWith("at ")).length;

describe("stack traces of the errors that answer requests", () => {
  it("a 4xx of the payment API or the sandbox has none; its message and code are whole", () => {
    for (const error of [errors.notFound("order ord_x"), errors.unauthorized(), errors.invalid("bad"), errors.rateLimited(3)]) {
      assert.equal(frames(error), 0, `${error.code}: ${error.stack}`);
      assert.ok(error.stack?.startsWith(`Error: ${error.message}`), error.stack);
    }
    for (const error of [
      sandboxErrors.notFound("no such device"),
      sandboxErrors.invalidRequest("bad"),
      new SandboxHttpError(401, "unauthorized", "unknown client_id or wrong client_secret"),
    ]) {
      assert.equal(frames(error), 0, `${error.code}: ${error.stack}`);
    }
  });

  it("a 5xx keeps its stack, and the process's limit is unchanged afterwards", () => {
    const before = Error.stackTraceLimit;
    assert.ok(frames(errors.deviceTimeout("dev-1")) > 0);
    assert.ok(frames(errors.unavailable("down")) > 0);
    assert.ok(frames(new SandboxHttpError(500, "internal_error", "boom")) > 0);
    errors.notFound("x");
    sandboxErrors.notFound("x");
    new SandboxHttpError(404, "not_found", "x");
    assert.equal(Error.stackTraceLimit, before);
    assert.ok(frames(new Error("plain")) > 0, "other errors still have their stacks");
  });
});
