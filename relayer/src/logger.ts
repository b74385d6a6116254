// Structured logs: one JSON object a line on stdout. Secrets are redacted here, whatever a call site passes
// (log-redaction.ts): by field name at any depth, and by shape inside any text, the message included.
import { redactFields, redactText } from "./log-redaction.ts";

export type LogLevel = "debug" | "info" | "warn" | "error";
const order: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40 };

export type Logger = {
  debug(msg: string, fields?: Record<string, unknown>): void;
  info(msg: string, fields?: Record<string, unknown>): void;
  warn(msg: string, fields?: Record<string, unknown>): void;
  error(msg: string, fields?: Record<string, unknown>): void;
  child(fields: Record<string, unknown>): Logger;
};

const LINE_KEYS = new Set(["time", "level", "msg"]);

/** `{"a":1,"b":2}` -> `,"a":1,"b":2` (`{}` -> ``). */
const members = (json: string) => (json.length > 2 ? `,${json.slice(1, -1)}` : "");

/** Whether `fields` has a key of the line's own (time, level, msg) or of the logger's base. */
function repeatsKey(fields: Record<string, unknown>, base: Record<string, unknown>): boolean {
  for (const key in fields) if (LINE_KEYS.has(key) || Object.hasOwn(base, key)) return true;
  return false;
}

// The current time in ISO 8601, formatted once per millisecond: a busy server writes several lines in each.
let isoMs = Number.NaN;
let isoText = "";
function isoNow(): string {
  const now = Date.now();
  if (now !== isoMs) {
    isoMs = now;
    isoText = new Date(now).toISOString();
  }
  return isoText;
}

export function createLogger(level: LogLevel = "info", base: Record<string, unknown> = {}, write = defaultWrite): Logger {
  const min = order[level];
  // A line is JSON.stringify({ time, level, msg, ...base, ...fields }). The base's part is serialised
  // once per logger and each line's fields appended to it: the same text, without copying and serialising
  // the base again on every line (the access log writes one line per request). A line whose fields repeat
  // a key of the base (or time, level, msg) is built the general way.
  const safeBase = redactFields(base);
  const baseKeys = Object.keys(safeBase);
  const baseJson = baseKeys.some((k) => LINE_KEYS.has(k)) ? undefined : members(JSON.stringify(safeBase));
  const log = (lvl: LogLevel) => (msg: string, fields?: Record<string, unknown>) => {
    if (order[lvl] < min) return;
    const time = isoNow();
    const text = redactText(msg);
    const extra = fields ? redactFields(fields) : {};
    if (baseJson !== undefined && !repeatsKey(extra, safeBase)) {
      write(`{"time":"${time}","level":"${lvl}","msg":${JSON.stringify(text)}${baseJson}${members(JSON.stringify(extra))}}`);
    } else {
      write(JSON.stringify({ time, level: lvl, msg: text, ...safeBase, ...extra }));
    }
  };
  return {
    debug: log("debug"),
    info: log("info"),
    warn: log("warn"),
    error: log("error"),
    child: (fields) => createLogger(level, { ...base, ...fields }, write),
  };
}

function defaultWrite(line: string) {
  process.stdout.write(`${line}\n`);
}

/** A writer for a long-running process's logger: the lines of one turn of the event loop go to stdout in
 * one write (stdout is a pipe or a file, written synchronously: one system call per line would cost the
 * HTTP server about a tenth of its time at high request rates). Lines keep their order; whatever is
 * pending is written before the process exits. */
export function batchedStdoutWriter(): (line: string) => void {
  let pending: string[] = [];
  let scheduled = false;
  const flush = () => {
    scheduled = false;
    if (pending.length === 0) return;
    const chunk = `${pending.join("\n")}\n`;
    pending = [];
    process.stdout.write(chunk);
  };
  process.on("exit", flush);
  return (line: string) => {
    pending.push(line);
    if (!scheduled) {
      scheduled = true;
      setImmediate(flush);
    }
  };
}
