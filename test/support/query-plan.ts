// What the query-plan tests assert of a statement's plan (test/relayer/query-plans.test.ts, the relayer's
// statements; test/indexer/indexer.query-plans.test.ts, the indexer client's): run with EXPLAIN (ANALYZE,
// FORMAT JSON) on a database seeded with history, its plan must not read a table that grows with history with
// a sequential scan, sort its rows, or discard more than a page's worth of them through a filter.
import type pg from "pg";

/** More rows than this removed by a filter of a scan means the index does not match the statement. */
export const MAX_ROWS_FILTERED = 1_000;

export type PlanNode = {
  "Node Type": string;
  "Relation Name"?: string;
  "Index Name"?: string;
  "Actual Rows"?: number;
  "Rows Removed by Filter"?: number;
  "Actual Loops"?: number;
  Plans?: PlanNode[];
};

/** Every node of the plan, depth first, each with the nodes above it. */
export function* walk(node: PlanNode, above: PlanNode[] = []): Generator<{ node: PlanNode; above: PlanNode[] }> {
  yield { node, above };
  for (const child of node.Plans ?? []) yield* walk(child, [...above, node]);
}

const isSort = (node: PlanNode) => node["Node Type"] === "Sort" || node["Node Type"] === "Incremental Sort";

/** What is wrong with the plan: a sequential scan of a table of `tables`, a sort of its rows (not of
 * aggregated groups), a filter discarding more than MAX_ROWS_FILTERED of them, or rows locked by a SELECT
 * (LockRows). */
export function planProblems(plan: PlanNode, tables: Set<string>): string[] {
  const problems: string[] = [];
  for (const { node, above } of walk(plan)) {
    const table = node["Relation Name"];
    if (node["Node Type"] === "LockRows") problems.push("LockRows: a SELECT ... FOR UPDATE locking the rows it reads");
    if (table === undefined || !tables.has(table)) continue;
    if (node["Node Type"] === "Seq Scan") problems.push(`Seq Scan on ${table}`);
    const removed = (node["Rows Removed by Filter"] ?? 0) * (node["Actual Loops"] ?? 1);
    if (removed > MAX_ROWS_FILTERED)
      problems.push(`${node["Node Type"]} on ${table} (${node["Index Name"] ?? "-"}) discards ${removed} rows`);
    // The nearest sort above the scan, unless an aggregate lies between them (a sort of groups, not of rows).
    for (let i = above.length - 1; i >= 0; i--) {
      if (above[i]["Node Type"] === "Aggregate") break;
      if (isSort(above[i])) {
        problems.push(`${above[i]["Node Type"]} of the rows of ${table}`);
        break;
      }
    }
  }
  return problems;
}

/** The plan of `query` as PostgreSQL runs it (EXPLAIN ANALYZE, in a transaction rolled back after). */
export async function explain(client: pg.Client, query: { sql: string; params: unknown[] }): Promise<PlanNode> {
  await client.query("begin");
  try {
    const { rows } = await client.query<{ "QUERY PLAN": Array<{ Plan: PlanNode }> }>(
      `explain (analyze, buffers, format json) ${query.sql}`,
      query.params,
    );
    return rows[0]["QUERY PLAN"][0].Plan;
  } finally {
    await client.query("rollback");
  }
}
