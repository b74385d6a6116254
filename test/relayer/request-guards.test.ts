// relayer/src/http/request-guards.ts: the body limit, the unstorable-text guard and the JSON depth limit as one
// middleware in front of an interface's routes. Each check's refusal must become the response (whichever
// check refuses, however deep in the chain), a request that passes must reach the route with its body still
// readable, and a request without a body must not be asked for one. Every route of both interfaces is covered
// end to end by test/resilience (cases/bad-input.ts, cases/limits.ts); this pins the composition itself.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { Hono } from "hono";
import { bodyLimit } from "hono/body-limit";
import { MAX_JSON_DEPTH, MAX_JSON_MEMBERS } from "../../relayer/src/http/json-shape.ts";
import { requestGuards } from "../../relayer/src/http/request-guards.ts";

const LIMIT = 8 * 1024;

function app() {
  const seen: string[] = [];
  const app = new Hono();
  // A middleware before the guards, as in the relayer (metrics, request context): with more than one
  // middleware Hono composes them, and `next` resolves to the context rather than to undefined.
  app.use("*", (c, next) => next());
  app.use(
    "*",
    requestGuards({
      limitBody: bodyLimit({ maxSize: LIMIT, onError: (c) => c.json({ refused: "size" }, 413) }),
      refuseText: (c, where) => (where === "query" ? undefined : c.json({ refused: `text in ${where}` }, 422)),
      refuseJson: (c, message) => c.json({ refused: message.includes("levels deep") ? "depth" : "members" }, 422),
    }),
  );
  app.post("/items/:id", async (c) => {
    const body = await c.req.text();
    seen.push(`POST ${c.req.param("id")} ${body}`);
    return c.json({ id: c.req.param("id"), body }, 201, { "x-route": "items" });
  });
  app.get("/items/:id", (c) => {
    seen.push(`GET ${c.req.param("id")}`);
    return c.json({ id: c.req.param("id") });
  });
  return { app, seen };
}

const post = (body: string, type = "application/json") => ({ method: "POST", body, headers: { "content-type": type } });
const nested = (depth: number) => `${"[".repeat(depth)}${"]".repeat(depth)}`;
const wide = (members: number) => JSON.stringify(Object.fromEntries(Array.from({ length: members }, (_, i) => [`k${i}`, i])));

describe("request guards", () => {
  it("passes a well-formed request through to its route, with the body still readable and the route's headers", async () => {
    const { app: a, seen } = app();
    const response = await a.request("/items/1", post('{"name":"lamp"}'));
    assert.equal(response.status, 201);
    assert.equal(response.headers.get("x-route"), "items");
    assert.deepEqual(await response.json(), { id: "1", body: '{"name":"lamp"}' });
    assert.deepEqual(seen, ['POST 1 {"name":"lamp"}']);
  });

  it("answers each check's refusal, and the route never runs", async () => {
    const { app: a, seen } = app();
    const cases: Array<[string, RequestInit, number, string]> = [
      ["/items/1", post(`"${"x".repeat(LIMIT + 10)}"`), 413, "size"],
      ["/items/1", post('{"name":"\\u0000"}'), 422, "text in body"],
      ["/items/1", post('{"name":"a\u0000b"}'), 422, "text in body"],
      ["/items/1%00", post("{}"), 422, "text in path"],
      ["/items/1", post(nested(MAX_JSON_DEPTH + 1)), 422, "depth"],
      ["/items/1", post(wide(MAX_JSON_MEMBERS + 1)), 422, "members"],
      ["/items/a%00b", { method: "GET" }, 422, "text in path"],
    ];
    for (const [url, init, status, refused] of cases) {
      const response = await a.request(url, init);
      assert.equal(response.status, status, `${init.method} ${url}`);
      assert.deepEqual(await response.json(), { refused }, `${init.method} ${url}`);
    }
    assert.deepEqual(seen, []);
  });

  it("lets through what a check leaves alone: JSON at the depth and width limits, a body of another type, text in an unread query", async () => {
    const { app: a, seen } = app();
    assert.equal((await a.request("/items/1", post(nested(MAX_JSON_DEPTH)))).status, 201);
    assert.equal((await a.request("/items/4", post(wide(MAX_JSON_MEMBERS)))).status, 201);
    // Not JSON: no depth to count (the route's own validation answers such bodies).
    assert.equal((await a.request("/items/2", post(nested(MAX_JSON_DEPTH + 5), "text/plain"))).status, 201);
    // refuseText answers undefined for the query: the request goes on.
    assert.equal((await a.request("/items/3?q=%00", { method: "GET" })).status, 200);
    assert.deepEqual(seen, [
      `POST 1 ${nested(MAX_JSON_DEPTH)}`,
      `POST 4 ${wide(MAX_JSON_MEMBERS)}`,
      `POST 2 ${nested(MAX_JSON_DEPTH + 5)}`,
      "GET 3",
    ]);
  });

  it("leaves the answer of a request no route takes to the app (404), whatever its method", async () => {
    const { app: a, seen } = app();
    for (const method of ["OPTIONS", "POST", "GET", "DELETE"]) {
      const response = await a.request("/nothing-here", method === "POST" ? post("{}") : { method });
      assert.equal(response.status, 404, method);
      assert.equal(await response.text(), "404 Not Found", method);
    }
    const options = await a.request("/items/1", { method: "OPTIONS" });
    assert.equal(options.status, 404);
    assert.deepEqual(seen, []);
  });

  it("checks the size of a body of any type before reading it", async () => {
    const { app: a, seen } = app();
    const response = await a.request("/items/1", post("x".repeat(LIMIT + 1), "text/plain"));
    assert.equal(response.status, 413);
    assert.deepEqual(seen, []);
  });
});
