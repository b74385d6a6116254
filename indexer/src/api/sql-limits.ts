// Limits on the SQL over HTTP (/sql/db and /sql/live), in front of Ponder's `client` middleware. Ponder
// checks that a query only reads (an allowlist of statements, expressions and functions) but not what it
// costs: one cross join of a few tables asks for more rows than the database can produce in minutes, and on
// PGlite, which runs in the indexer's own thread, that stops indexing and every other request until it ends.
// So every query is planned first (EXPLAIN, which runs nothing) and refused when the planner's estimate
// exceeds PONDER_SQL_MAX_COST (total cost, in PostgreSQL's cost units) or PONDER_SQL_MAX_ROWS (rows of the
// result). The estimate bounds joins, scans and sorts by the size of the tables; it does not see an
// expression that is slow on every row.
//
// What is planned is exactly what Ponder then runs: the `sql` of the request (superjson, as `@ponder/client`
// sends it), refused unless it reads as one: one statement (no ";"), at most 5,000 characters (Ponder's own
// limit), no superjson reference that could put another text in its place, and no function call but those
// Ponder allows (constant arguments are evaluated while planning, before Ponder's own check would have run).
// Verdicts are kept per request (its `sql` parameter) for a minute.
import { createHash } from "node:crypto";
import type { MiddlewareHandler } from "hono";

export type SqlLimits = {
  /** Highest total cost of a query's plan (PostgreSQL's planner units: reading a page sequentially is 1). */
  maxCost: number;
  /** Most rows the plan may estimate for the result. */
  maxRows: number;
};

export const DEFAULT_SQL_LIMITS: SqlLimits = { maxCost: 20_000, maxRows: 1_000_000 };

/** Ponder's own length limit on a query's text. */
const MAX_SQL_LENGTH = 5_000;

/** Functions Ponder's `client` middleware allows (its validator refuses any other call). */
const ALLOWED_FUNCTIONS = new Set([
  "count", "sum", "avg", "min", "max", "lower", "upper", "length", "trim", "replace", "substring", "cast", "concat",
  "now", "current_timestamp", "current_date", "current_time", "coalesce", "json_agg", "json_object", "json_array",
  "json_object_agg", "json_array_agg", "json_build_array", "row_number", "rank", "dense_rank", "percent_rank",
  "cume_dist", "ntile", "lag", "lead", "first_value", "last_value", "nth_value", "abs", "cbrt", "ceil", "ceiling",
  "degrees", "div", "exp", "floor", "ln", "log", "mod", "pi", "power", "radians", "random", "round", "sign", "sqrt",
  "width_bucket", "acos", "asin", "atan", "atan2", "cos", "cot", "sin", "tan",
]); // prettier-ignore

/** Key words that an opening parenthesis may follow in a query (not function calls). */
const KEYWORDS_BEFORE_PARENTHESIS = new Set([
  "select", "from", "join", "on", "where", "and", "or", "not", "in", "any", "all", "some", "exists", "as", "values",
  "over", "filter", "within", "group", "by", "order", "having", "limit", "offset", "union", "intersect", "except",
  "is", "then", "else", "when", "case", "between", "like", "ilike", "distinct", "lateral", "using", "with", "array",
  "row", "partition", "asc", "desc", "nulls", "first", "last", "end", "set", "null", "true", "false",
  // type names with a modifier (numeric(78, 0), varchar(42)), in casts
  "numeric", "decimal", "varchar", "char", "character", "varying", "bit", "timestamp", "time", "interval", "float",
]); // prettier-ignore

export type ClientQuery = { sql: string; params: unknown[] };

/** The query of a `sql` parameter as `@ponder/client` sends it (superjson of `{sql, params, typings}`), or why it
 * is refused. */
export function readClientQuery(raw: string): ClientQuery | { refused: string } {
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch {
    return { refused: "the sql parameter is not JSON" };
  }
  if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) return { refused: "the sql parameter is not an object" };
  const { json, meta } = parsed as { json?: unknown; meta?: unknown };
  if (typeof json !== "object" || json === null || Array.isArray(json)) return { refused: "the sql parameter has no query" };
  const { sql, params } = json as { sql?: unknown; params?: unknown };
  if (typeof sql !== "string") return { refused: "the sql parameter has no query text" };
  if (params !== undefined && !Array.isArray(params)) return { refused: "the query's params are not a list" };
  // superjson's annotations may only touch the parameters: a value annotation or a reference aimed at `sql`
  // would make Ponder run another text than the one planned here. The parameters get the types Ponder gives them
  // (a bigint, a date), so that the plan is the one Ponder's query gets.
  const values = [...((params as unknown[] | undefined) ?? [])];
  if (meta !== undefined) {
    if (typeof meta !== "object" || meta === null || Array.isArray(meta)) return { refused: "malformed superjson annotations" };
    for (const [key, value] of Object.entries(meta)) {
      if (key === "v") continue;
      if (key !== "values" && key !== "referentialEqualities") return { refused: `unsupported superjson annotation "${key}"` };
      if (typeof value !== "object" || value === null || Array.isArray(value)) return { refused: "malformed superjson annotations" };
      for (const [path, annotation] of Object.entries(value)) {
        if (key === "referentialEqualities") {
          const paths = [path, ...(Array.isArray(annotation) ? annotation : [null])];
          if (!paths.every((p) => typeof p === "string" && /^params\.\d+$/.test(p))) {
            return { refused: "superjson annotations may only concern the query's params" };
          }
          continue;
        }
        const index = /^params\.(\d+)$/.exec(path)?.[1];
        const type = Array.isArray(annotation) ? annotation[0] : undefined;
        if (index === undefined || Number(index) >= values.length)
          return { refused: "superjson annotations may only concern the query's params" };
        const given = values[Number(index)];
        if (type === "bigint" && typeof given === "string" && /^-?\d{1,100}$/.test(given)) values[Number(index)] = BigInt(given);
        else if (type === "Date" && typeof given === "string") values[Number(index)] = new Date(given);
        else if (type === "undefined") values[Number(index)] = undefined;
        else return { refused: `unsupported superjson annotation of params.${index}` };
      }
    }
  }
  return { sql, params: values };
}

/** One linear pass over a query's text: the names it calls as functions (an identifier, or a quoted one, right
 * before "("), outside string literals, quoted identifiers and comments; or why it cannot be read. */
export function scanQuery(sql: string): { calls: string[] } | { refused: string } {
  if (sql.length > MAX_SQL_LENGTH) return { refused: `the query is longer than ${MAX_SQL_LENGTH} characters` };
  const calls: string[] = [];
  let previous: { word: string; quoted: boolean } | undefined;
  let i = 0;
  const n = sql.length;
  while (i < n) {
    const ch = sql[i]!;
    if (ch === "'") {
      // '...' with '' inside; an E'...' string may escape a quote with a backslash.
      const escapes = i > 0 && (sql[i - 1] === "E" || sql[i - 1] === "e") && previous?.word.toLowerCase() === "e";
      i++;
      while (i < n) {
        if (escapes && sql[i] === "\\") i += 2;
        else if (sql[i] === "'" && sql[i + 1] === "'") i += 2;
        else if (sql[i] === "'") break;
        else i++;
      }
      if (i >= n) return { refused: "unterminated string literal" };
      i++;
      previous = undefined;
    } else if (ch === '"') {
      let word = "";
      i++;
      while (i < n) {
        if (sql[i] === '"' && sql[i + 1] === '"') {
          word += '"';
          i += 2;
        } else if (sql[i] === '"') break;
        else word += sql[i++];
      }
      if (i >= n) return { refused: "unterminated quoted identifier" };
      i++;
      previous = { word, quoted: true };
    } else if (ch === "-" && sql[i + 1] === "-") {
      while (i < n && sql[i] !== "\n") i++;
    } else if (ch === "/" && sql[i + 1] === "*") {
      // Comments nest in PostgreSQL; none is needed in a query: refuse rather than follow.
      return { refused: "comments are not accepted" };
    } else if (ch === "$" && i + 1 < n && !/[0-9]/.test(sql[i + 1]!)) {
      return { refused: "dollar-quoted strings are not accepted" };
    } else if (ch === ";") {
      return { refused: "one statement only (no ';')" };
    } else if (/[A-Za-z_]/.test(ch)) {
      const start = i;
      while (i < n && /[A-Za-z0-9_$]/.test(sql[i]!)) i++;
      previous = { word: sql.slice(start, i), quoted: false };
    } else if (ch === "(") {
      if (previous && (previous.quoted || !KEYWORDS_BEFORE_PARENTHESIS.has(previous.word.toLowerCase()))) {
        calls.push(previous.quoted ? previous.word : previous.word.toLowerCase());
      }
      previous = undefined;
      i++;
    } else if (ch === " " || ch === "\t" || ch === "\n" || ch === "\r" || ch === "\f" || ch === "\v") {
      i++;
    } else {
      // "." keeps the name before it from counting (schema.function: the function's name is what follows).
      previous = undefined;
      i++;
    }
  }
  return { calls };
}

/** Checks a query before it is planned: one statement, readable, calling only functions Ponder allows. */
export function precheckQuery(sql: string): string | undefined {
  const scan = scanQuery(sql);
  if ("refused" in scan) return scan.refused;
  const refused = scan.calls.find((name) => !ALLOWED_FUNCTIONS.has(name));
  return refused === undefined ? undefined : `function ${JSON.stringify(refused)} is not allowed`;
}

export type PlanEstimate = { totalCost: number; planRows: number };

/** Why a plan's estimate is refused under `limits`, or undefined when it is within them. */
export function planVerdict(plan: PlanEstimate, limits: SqlLimits): string | undefined {
  if (!(plan.totalCost <= limits.maxCost)) {
    return `query refused: its estimated cost ${plan.totalCost.toPrecision(3)} exceeds the limit ${limits.maxCost} (PONDER_SQL_MAX_COST)`;
  }
  if (!(plan.planRows <= limits.maxRows)) {
    return `query refused: it would return about ${plan.planRows.toPrecision(3)} rows, more than ${limits.maxRows} (PONDER_SQL_MAX_ROWS)`;
  }
  return undefined;
}

/** PostgreSQL's `disable_cost` (before PostgreSQL 18): what the planner adds to a plan node of a kind that is
 * switched off (enable_seqscan = off) but has to be used anyway. */
const DISABLE_COST = 1e10;

type PlanNode = { "Node Type"?: unknown; "Startup Cost"?: unknown; "Total Cost"?: unknown; "Plan Rows"?: unknown; Plans?: unknown };

/** The estimate of EXPLAIN (FORMAT JSON)'s result (its one row, column "QUERY PLAN"). PGlite (PostgreSQL 16)
 * runs with enable_seqscan off, so each table it has to scan whole (a small one, or one with no usable index)
 * adds `disable_cost` to the plan once (the scan's startup cost; a rescanned one is materialized): that is
 * taken off again, leaving what the work costs. */
export function readExplain(rows: ReadonlyArray<Record<string, unknown>>): PlanEstimate {
  let plan = rows[0]?.["QUERY PLAN"];
  if (typeof plan === "string") plan = JSON.parse(plan);
  const top = (plan as Array<{ Plan?: PlanNode }> | undefined)?.[0]?.Plan;
  let totalCost = Number(top?.["Total Cost"]);
  const planRows = Number(top?.["Plan Rows"]);
  if (!Number.isFinite(totalCost) || !Number.isFinite(planRows)) throw new Error("EXPLAIN returned no estimate");
  const pending: PlanNode[] = top ? [top] : [];
  while (pending.length > 0) {
    const node = pending.pop()!;
    if (node["Node Type"] === "Seq Scan" && Number(node["Startup Cost"]) >= DISABLE_COST) totalCost -= DISABLE_COST;
    if (Array.isArray(node.Plans)) pending.push(...(node.Plans as PlanNode[]));
  }
  return { totalCost: Math.max(0, totalCost), planRows };
}

/** Verdicts kept, at most, and for how long. */
const VERDICT_CACHE_ENTRIES = 10_000;
const VERDICT_TTL_MS = 60_000;

/** The middleware for `/sql/*`, before Ponder's `client`: `explain` plans a query (EXPLAIN (FORMAT JSON) of its
 * text with its params) and returns the result's rows. */
export function sqlLimits(opts: {
  limits: SqlLimits;
  explain: (query: ClientQuery) => Promise<ReadonlyArray<Record<string, unknown>>>;
  onRefused?: (message: string, query: string) => void;
}): MiddlewareHandler {
  const verdicts = new Map<string, { refused: string | undefined; at: number }>();
  return async (c, next) => {
    if (c.req.path !== "/sql/db" && c.req.path !== "/sql/live") return next();
    const raw = c.req.query("sql");
    if (raw === undefined) return next(); // Ponder answers it (400)
    const now = Date.now();
    const key = createHash("sha256").update(raw).digest("base64");
    let verdict = verdicts.get(key);
    if (verdict === undefined || now - verdict.at > VERDICT_TTL_MS) {
      const query = readClientQuery(raw);
      let refused: string | undefined;
      if ("refused" in query) refused = query.refused;
      else refused = precheckQuery(query.sql);
      if (refused !== undefined) return c.text(refused, 400);
      let estimate: PlanEstimate;
      try {
        estimate = readExplain(await opts.explain(query as ClientQuery));
      } catch (error) {
        // The query cannot be planned: it would not run either. Answered as Ponder answers a failed query.
        return c.text((error as Error).message, 500);
      }
      verdict = { refused: planVerdict(estimate, opts.limits), at: now };
      verdicts.delete(key);
      verdicts.set(key, verdict);
      if (verdicts.size > VERDICT_CACHE_ENTRIES) verdicts.delete(verdicts.keys().next().value!);
      if (verdict.refused !== undefined) opts.onRefused?.(verdict.refused, (query as ClientQuery).sql);
    }
    if (verdict.refused !== undefined) return c.text(verdict.refused, 422);
    return next();
  };
}
