// relayer/src/http/json-depth.ts: the nesting limit on JSON bodies. It scans every JSON body before anything
// parses it, so it must count exactly (brackets inside strings, escaped quotes) and take time linear in the
// body whatever the body holds; JSON.parse itself is the reference for what nests how deep.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { MAX_JSON_DEPTH, jsonNestsDeeperThan } from "../../relayer/src/http/json-depth.ts";
import { seededRandom } from "../support/seeded-random.ts";

/** The nesting depth of a parsed JSON value: the reference. */
function depthOf(value: unknown): number {
  if (Array.isArray(value)) return 1 + Math.max(0, ...value.map(depthOf));
  if (value !== null && typeof value === "object") return 1 + Math.max(0, ...Object.values(value).map(depthOf));
  return 0;
}

/** A random JSON value with strings full of brackets, quotes and backslashes. */
function randomValue(next: () => number, depth: number): unknown {
  const pick = next();
  if (depth <= 0 || pick < 0.3) {
    const chars = ["[", "]", "{", "}", '"', "\\", "a", " ", '\\"', "\\\\"];
    let text = "";
    for (let i = Math.floor(next() * 8); i > 0; i--) text += chars[Math.floor(next() * chars.length)];
    return pick < 0.15 ? text : Math.floor(next() * 100);
  }
  const items = Array.from({ length: Math.floor(next() * 4) }, () => randomValue(next, depth - 1));
  if (pick < 0.65) return items;
  return Object.fromEntries(items.map((item, i) => [`k${i}[{"\\`, item]));
}

const MiB = 1024 * 1024;
/** Generous: the scan takes a few milliseconds for 1 MiB; JSON.parse of nested brackets takes about a second. */
const BOUND_MS = 100;

describe("JSON nesting limit", () => {
  it("counts arrays and objects, not brackets inside strings or after escaped quotes", () => {
    const cases: Array<[string, number, boolean]> = [
      ["{}", 0, true],
      ["{}", 1, false],
      ['{"a":[1,{"b":[]}]}', 3, true],
      ['{"a":[1,{"b":[]}]}', 4, false],
      ['{"a":"[[[[{{{{"}', 1, false],
      ['{"a":"\\"[[[["}', 1, false], // an escaped quote does not end the string
      ['{"a":"\\\\"}[[', 1, true], // an escaped backslash, then the quote ends it
      ['{"a":"\\\\\\"[["}', 1, false],
      ['"[[[', 0, false], // an unterminated string: not JSON, the parser answers that
      ["[[[[", 3, true],
    ];
    for (const [text, max, expected] of cases) assert.equal(jsonNestsDeeperThan(text, max), expected, `${text} over ${max}`);
  });

  it("agrees with JSON.parse on 5,000 random documents", () => {
    const next = seededRandom(20261124);
    for (let n = 0; n < 5_000; n++) {
      const text = JSON.stringify(randomValue(next, 8));
      const depth = depthOf(JSON.parse(text));
      assert.equal(jsonNestsDeeperThan(text, depth), false, text);
      if (depth > 0) assert.equal(jsonNestsDeeperThan(text, depth - 1), true, text);
    }
  });

  it(`refuses ${MAX_JSON_DEPTH + 1} levels and allows ${MAX_JSON_DEPTH}`, () => {
    const nest = (levels: number) => `${'{"a":'.repeat(levels)}1${"}".repeat(levels)}`;
    assert.equal(jsonNestsDeeperThan(nest(MAX_JSON_DEPTH), MAX_JSON_DEPTH), false);
    assert.equal(jsonNestsDeeperThan(nest(MAX_JSON_DEPTH + 1), MAX_JSON_DEPTH), true);
  });

  it("takes linear time on 1 MiB bodies of any shape", () => {
    const flat = (text: string) => Buffer.from(text).toString("utf8"); // a flat string, as a request body is
    const bodies = {
      "nested brackets": flat("[".repeat(MiB / 2) + "]".repeat(MiB / 2)),
      "brackets in a string": flat(JSON.stringify({ a: "[".repeat(MiB) })),
      "escaped quotes": flat(JSON.stringify({ a: '\\"['.repeat(MiB / 4) })),
      "one run of backslashes": flat(JSON.stringify({ a: "\\".repeat(MiB / 2) })),
      "many short strings": flat(JSON.stringify(Array.from({ length: MiB / 4 }, () => ""))),
      "many small objects": flat(JSON.stringify(Array.from({ length: MiB / 16 }, (_, i) => ({ a: [i] })))),
    };
    for (const [name, text] of Object.entries(bodies)) {
      jsonNestsDeeperThan(text, MAX_JSON_DEPTH); // warm up
      const started = performance.now();
      jsonNestsDeeperThan(text, MAX_JSON_DEPTH);
      const ms = performance.now() - started;
      assert.ok(ms < BOUND_MS, `${name} (${text.length} characters): ${ms.toFixed(1)} ms`);
    }
  });
});
