// relayer/src/http/json-shape.ts: the nesting and width limits on JSON bodies. It scans every JSON body before
// anything parses it, so it must count exactly (brackets and colons inside strings, escaped quotes) and take
// time linear in the body whatever the body holds; JSON.parse itself is the reference for what nests how deep
// and how many members an object has.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { MAX_JSON_DEPTH, MAX_JSON_MEMBERS, jsonShapeProblem } from "../../relayer/src/http/json-shape.ts";
import { seededRandom } from "../support/seeded-random.ts";

/** The nesting depth of a parsed JSON value: the reference. */
function depthOf(value: unknown): number {
  if (Array.isArray(value)) return 1 + Math.max(0, ...value.map(depthOf));
  if (value !== null && typeof value === "object") return 1 + Math.max(0, ...Object.values(value).map(depthOf));
  return 0;
}

/** The most members of one object in a parsed JSON value: the reference. */
function widthOf(value: unknown): number {
  if (Array.isArray(value)) return Math.max(0, ...value.map(widthOf));
  if (value !== null && typeof value === "object") return Math.max(Object.keys(value).length, ...Object.values(value).map(widthOf));
  return 0;
}

const deeperThan = (text: string, depth: number) => jsonShapeProblem(text, { depth, members: Infinity }) === "depth";
const widerThan = (text: string, members: number) => jsonShapeProblem(text, { depth: Infinity, members }) === "members";

/** A random JSON value with strings full of brackets, colons, quotes and backslashes. */
function randomValue(next: () => number, depth: number): unknown {
  const pick = next();
  if (depth <= 0 || pick < 0.3) {
    const chars = ["[", "]", "{", "}", ":", '"', "\\", "a", " ", '\\"', "\\\\"];
    let text = "";
    for (let i = Math.floor(next() * 8); i > 0; i--) text += chars[Math.floor(next() * chars.length)];
    return pick < 0.15 ? text : Math.floor(next() * 100);
  }
  const items = Array.from({ length: Math.floor(next() * 6) }, () => randomValue(next, depth - 1));
  if (pick < 0.65) return items;
  return Object.fromEntries(items.map((item, i) => [`k${i}[{:"\\`, item]));
}

const MiB = 1024 * 1024;
/** Generous: the scan takes a few milliseconds for 1 MiB; JSON.parse of nested brackets takes about a second. */
const BOUND_MS = 100;

describe("JSON nesting and width limits", () => {
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
    for (const [text, max, expected] of cases) assert.equal(deeperThan(text, max), expected, `${text} over ${max}`);
  });

  it("agrees with JSON.parse on 5,000 random documents", () => {
    const next = seededRandom(20261124);
    for (let n = 0; n < 5_000; n++) {
      const text = JSON.stringify(randomValue(next, 8));
      const depth = depthOf(JSON.parse(text));
      assert.equal(deeperThan(text, depth), false, text);
      if (depth > 0) assert.equal(deeperThan(text, depth - 1), true, text);
      const width = widthOf(JSON.parse(text));
      assert.equal(widerThan(text, width), false, text);
      if (width > 0) assert.equal(widerThan(text, width - 1), true, text);
    }
  });

  it(`refuses ${MAX_JSON_DEPTH + 1} levels and allows ${MAX_JSON_DEPTH}`, () => {
    const nest = (levels: number) => `${'{"a":'.repeat(levels)}1${"}".repeat(levels)}`;
    assert.equal(jsonShapeProblem(nest(MAX_JSON_DEPTH)), undefined);
    assert.equal(jsonShapeProblem(nest(MAX_JSON_DEPTH + 1)), "depth");
  });

  it(`refuses an object of ${MAX_JSON_MEMBERS + 1} members and allows ${MAX_JSON_MEMBERS}, also in an array of such objects`, () => {
    const object = (members: number) => JSON.stringify(Object.fromEntries(Array.from({ length: members }, (_, i) => [`k${i}`, { a: i }])));
    assert.equal(jsonShapeProblem(object(MAX_JSON_MEMBERS)), undefined);
    assert.equal(jsonShapeProblem(object(MAX_JSON_MEMBERS + 1)), "members");
    assert.equal(jsonShapeProblem(`[${object(MAX_JSON_MEMBERS)},${object(MAX_JSON_MEMBERS)}]`), undefined);
    assert.equal(jsonShapeProblem(`[${object(MAX_JSON_MEMBERS)},${object(MAX_JSON_MEMBERS + 1)}]`), "members");
    // Members of nested objects count for their own object only; an array's elements are no members.
    assert.equal(jsonShapeProblem(JSON.stringify(Array.from({ length: 5_000 }, (_, i) => ({ i })))), undefined);
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
      "one object of distinct keys": flat(JSON.stringify(Object.fromEntries(Array.from({ length: MiB / 16 }, (_, i) => [`k${i}`, 1])))),
    };
    for (const [name, text] of Object.entries(bodies)) {
      jsonShapeProblem(text, { depth: MAX_JSON_DEPTH, members: Infinity }); // warm up; a wide object is scanned whole
      const started = performance.now();
      jsonShapeProblem(text, { depth: MAX_JSON_DEPTH, members: Infinity });
      const ms = performance.now() - started;
      assert.ok(ms < BOUND_MS, `${name} (${text.length} characters): ${ms.toFixed(1)} ms`);
    }
  });
});
