// Structured logs: one JSON object a line on stdout. Never pass secrets (keys, passwords, tokens) in fields.
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

export function createLogger(level: LogLevel = "info", base: Record<string, unknown> = {}, write = defaultWrite): Logger {
  const min = order[level];
  // A line is JSON.stringify({ time, level, msg, ...base, ...fields }). The base's part is serialised
  // once per logger and each line's fields appended to it: the same text, without copying and serialising
  // the base again on every line (the access log writes one line per request). A line whose fields repeat
  // a key of the base (or time, level, msg) is built the general way.
  const baseKeys = Object.keys(base);
  const baseJson = baseKeys.some((k) => LINE_KEYS.has(k)) ? undefined : members(JSON.stringify(base));
  const log = (lvl: LogLevel) => (msg: string, fields?: Record<string, unknown>) => {
    if (order[lvl] < min) return;
    const time = new Date().toISOString();
    const extra = serialise(fields);
    if (baseJson !== undefined && !Object.keys(extra).some((k) => LINE_KEYS.has(k) || Object.hasOwn(base, k))) {
      write(`{"time":"${time}","level":"${lvl}","msg":${JSON.stringify(msg)}${baseJson}${members(JSON.stringify(extra))}}`);
    } else {
      write(JSON.stringify({ time, level: lvl, msg, ...base, ...extra }));
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

function serialise(fields?: Record<string, unknown>) {
  if (!fields) return {};
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(fields)) {
    if (value instanceof Error) out[key] = { name: value.name, message: value.message, stack: value.stack };
    else if (typeof value === "bigint") out[key] = value.toString();
    else out[key] = value;
  }
  return out;
}
