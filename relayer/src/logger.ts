// Structured logs through pino: one JSON object a line on stdout, `{"level","time","msg",...fields}` (the level
// by name, the time in ISO 8601). Secrets are redacted here, whatever a call site passes (log-redaction.ts): by
// field name at any depth, and by shape inside any text, the message included. pino's `redact` option takes fixed
// paths; a secret can sit at any depth of a field here (a request body, an error's cause), so the redaction is
// pino's `formatters.log` hook, which sees every line's fields before they are serialised, and the base and a
// child logger's fields are redacted once, when the logger is made.
//
// The project's call sites keep one shape, `logger.info(msg, fields)` (pino's own is `(fields, msg)`): Logger
// below is that interface over a pino logger.
import pino from "pino";
import { redactFields, redactText } from "./log-redaction.ts";

export type LogLevel = "debug" | "info" | "warn" | "error";

export type Logger = {
  debug(msg: string, fields?: Record<string, unknown>): void;
  info(msg: string, fields?: Record<string, unknown>): void;
  warn(msg: string, fields?: Record<string, unknown>): void;
  error(msg: string, fields?: Record<string, unknown>): void;
  child(fields: Record<string, unknown>): Logger;
};

/** A logger at `level` with `base` on every line, writing each line (without its newline) to `write`; by
 * default to stdout, synchronously. */
export function createLogger(level: LogLevel = "info", base: Record<string, unknown> = {}, write?: (line: string) => void): Logger {
  const destination = write
    ? { write: (chunk: string) => write(chunk.endsWith("\n") ? chunk.slice(0, -1) : chunk) }
    : pino.destination({ dest: 1, sync: true });
  const root = pino(
    {
      level,
      base: redactFields(base),
      messageKey: "msg",
      timestamp: pino.stdTimeFunctions.isoTime,
      formatters: {
        level: (label) => ({ level: label }),
        log: (fields) => redactFields(fields),
      },
    },
    destination,
  );
  return wrap(root);
}

function wrap(logger: pino.Logger): Logger {
  const at = (level: LogLevel) => (msg: string, fields?: Record<string, unknown>) => {
    if (!logger.isLevelEnabled(level)) return;
    if (fields) logger[level](fields, redactText(msg));
    else logger[level](redactText(msg));
  };
  return {
    debug: at("debug"),
    info: at("info"),
    warn: at("warn"),
    error: at("error"),
    child: (fields) => wrap(logger.child(redactFields(fields))),
  };
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
