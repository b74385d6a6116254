// relayer/src/http/text-guard.ts: the scan of JSON text for escapes PostgreSQL cannot store (\u0000 and
// unpaired surrogates). It runs on every JSON body before routing, authentication and rate limits, so it must
// take time linear in the body whatever the body is, and decide exactly as the regular-expression scan it
// replaced (kept below as the reference, on short inputs only: it is quadratic).
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { jsonEscapesUnstorable } from "../../relayer/src/http/text-guard.ts";
import { seededRandom } from "../support/seeded-random.ts";

/** The former implementation: a regular expression whose run of backslashes backtracks quadratically. */
function reference(text: string): boolean {
  if (!text.includes("\\u")) return false;
  const escape = /(\\+)u([0-9a-fA-F]{4})/g;
  for (let m = escape.exec(text); m; m = escape.exec(text)) {
    if (m[1].length % 2 === 0) continue;
    const code = parseInt(m[2], 16);
    if (code === 0) return true;
    if (code >= 0xdc00 && code <= 0xdfff) return true;
    if (code >= 0xd800 && code <= 0xdbff) {
      const low = /^\\u[dD][c-fC-F][0-9a-fA-F]{2}/.exec(text.slice(escape.lastIndex, escape.lastIndex + 6));
      if (!low) return true;
      escape.lastIndex += 6;
    }
  }
  return false;
}

const MiB = 1024 * 1024;
/** Generous: the linear scan takes a few milliseconds for 1 MiB; the former one took seconds for 64 KiB. */
const BOUND_MS = 200;

describe("text guard: JSON escapes of text PostgreSQL cannot store", () => {
  it("decides the documented cases: NUL, unpaired surrogates, escaped backslashes", () => {
    const cases: Array<[string, boolean]> = [
      ["", false],
      ['{"a":"b"}', false],
      ['{"a":"\\u0000"}', true],
      ['{"a":"\\u0041"}', false],
      ['{"a":"\\\\u0000"}', false], // an escaped backslash, then the text u0000
      ['{"a":"\\\\\\u0000"}', true], // an escaped backslash, then \u0000
      ['{"a":"\\\\\\\\u0000"}', false],
      ['{"a":"\\ud83d\\ude00"}', false], // a surrogate pair (an emoji)
      ['{"a":"\\uD83D\\uDE00"}', false],
      ['{"a":"\\ud83d"}', true], // a high surrogate alone
      ['{"a":"\\ude00"}', true], // a low surrogate alone
      ['{"a":"\\ude00\\ud83d"}', true], // in the wrong order
      ['{"a":"\\ud83d\\u0041"}', true],
      ['{"a":"\\ud83d\\\\ude00"}', true], // the "low" one is text after an escaped backslash
      ['{"a":"\\ud83d\\ude00\\ude00"}', true],
      ['{"a":"\\\\ud83d"}', false],
      ['{"a":"\\u00"}', false], // not an escape (and not JSON: the parser answers that)
      ['{"a":"\\uZZZZ"}', false],
      ["\\u\\u0000", true],
      ["\\u0000", true],
      ["\\\\", false],
    ];
    for (const [text, expected] of cases) {
      assert.equal(jsonEscapesUnstorable(text), expected, text);
      assert.equal(reference(text), expected, `reference: ${text}`);
    }
  });

  it("decides exactly as the former regular-expression scan on 30,000 random short texts", () => {
    const next = seededRandom(20240611);
    const pieces = [
      "\\",
      "\\",
      "\\",
      "u",
      "u",
      "0",
      "0000",
      "d800",
      "DBFF",
      "dc00",
      "DFFF",
      "d",
      "c",
      "8",
      "f",
      "x",
      '"',
      "\\u",
      "\\ud83d",
      "\\ude00",
      "\\u0000",
    ];
    for (let n = 0; n < 30_000; n++) {
      let text = "";
      const length = Math.floor(next() * 16);
      for (let i = 0; i < length; i++) text += pieces[Math.floor(next() * pieces.length)];
      assert.equal(jsonEscapesUnstorable(text), reference(text), JSON.stringify(text));
    }
  });

  it("takes linear time on pathological texts up to 1 MiB, with the same decisions", () => {
    // [name, build(size), decision]: what the former scan decided (it reads escapes the same way).
    const shapes: Array<[string, (size: number) => string, boolean]> = [
      ["\\u then backslashes", (size) => "\\u" + "\\".repeat(size - 2), false],
      ["backslashes then u", (size) => "\\".repeat(size - 1) + "u", false],
      ["an odd run of backslashes then u0000", (size) => "\\".repeat(size % 2 === 0 ? size - 5 : size - 6) + "u0000", true],
      ["an even run of backslashes then u0000", (size) => "\\".repeat(size % 2 === 0 ? size - 6 : size - 5) + "u0000", false],
      ["blocks of 1,000 backslashes and a u", (size) => ("\\".repeat(1000) + "u").repeat(Math.floor(size / 1001)), false],
      ["\\u repeated", (size) => "\\u".repeat(size / 2), false],
      ["\\\\u repeated", (size) => "\\\\u".repeat(Math.floor(size / 3)), false],
      ["surrogate pairs", (size) => "\\ud83d\\ude00".repeat(Math.floor(size / 12)), false],
      ["surrogate pairs, then a high one alone", (size) => "\\ud83d\\ude00".repeat(Math.floor(size / 12) - 1) + "\\ud83d", true],
      ["high surrogates followed by escaped backslashes", (size) => "\\\\\\ud83d\\\\".repeat(Math.floor(size / 10)), true],
      ["escaped NULs", (size) => "\\\\u0000".repeat(Math.floor(size / 7)), false],
    ];
    // Growing sizes: the former quadratic scan fails the bound at 64 KiB already, in seconds, instead of
    // hanging for minutes on 1 MiB.
    for (const size of [64 * 1024, MiB]) {
      for (const [name, build, expected] of shapes) {
        const text = build(size);
        assert.ok(text.length > size - 1100 && text.length <= size, `${name}: ${text.length} characters`);
        // The fastest of up to three runs, so a pause of the machine (another process, a collection) is no failure.
        let fastest = Infinity;
        for (let attempt = 0; attempt < 3 && fastest >= BOUND_MS; attempt++) {
          const started = performance.now();
          const decision = jsonEscapesUnstorable(text);
          fastest = Math.min(fastest, performance.now() - started);
          assert.equal(decision, expected, `${name} (${size} characters)`);
        }
        assert.ok(fastest < BOUND_MS, `${name} (${size} characters) took ${fastest.toFixed(1)} ms`);
      }
    }
  });
});
