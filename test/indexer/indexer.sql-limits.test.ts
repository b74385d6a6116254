// The indexer's SQL over HTTP (/sql/db, /sql/live) refuses a query whose plan is too costly
// (indexer/src/api/sql-limits.ts): a cross join of nine tables used to hold a PGlite indexer's only thread for
// over half a minute (no block indexed, no other query answered, relayed payments stalled) and a PostgreSQL
// backend at full CPU. First the checks themselves, then, on each test database, a whole stack (chain,
// indexer, relayer): the cross join is refused at once, over and over, while a relayed payment goes through
// and the relayer's own reads keep working; on PostgreSQL, a `ponder serve` replica of that stack's indexer ends
// a query at its statement timeout.
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";
import { DEFAULT_SQL_LIMITS, planVerdict, precheckQuery, readClientQuery, readExplain } from "../../indexer/src/api/sql-limits.ts";
import pg from "pg";
import { serveIndexer } from "../../lib/indexer.ts";
import { selectedDatabaseKinds } from "../support/databases.ts";
import { payOrder } from "../support/pay.ts";
import { type Stack, startStack } from "../support/stack.ts";

/** The `sql` parameter `@ponder/client` sends (superjson of the compiled query; no annotation needed here). */
function sqlParam(sql: string, params: unknown[] = [], meta?: unknown): string {
  return JSON.stringify(meta === undefined ? { json: { sql, params, typings: [] } } : { json: { sql, params, typings: [] }, meta });
}

/** A query of nine tables joined with no condition: every combination of their rows. */
const CROSS_JOIN = `select count(*) from ${Array.from({ length: 9 }, (_, i) => `"orders" as "o${i}"`).join(", ")}`;

describe("SQL limits: the checks", () => {
  it("reads the query @ponder/client sends, and refuses superjson annotations that could swap its text", () => {
    assert.deepEqual(readClientQuery(sqlParam("select 1", ["x"])), { sql: "select 1", params: ["x"] });
    const withBigint = readClientQuery(
      JSON.stringify({ json: { sql: "select $1", params: ["5"] }, meta: { values: { "params.0": ["bigint"] }, v: 1 } }),
    );
    assert.deepEqual(withBigint, { sql: "select $1", params: [5n] }); // typed as Ponder will bind it
    for (const meta of [
      { referentialEqualities: { "params.0": ["sql"] } }, // superjson would set sql to params.0
      { values: { sql: ["custom", "x"] } },
      { values: { "params.0": ["bigint"] }, other: {} },
      { referentialEqualities: [["sql"]] },
      { values: { "params.0": ["regexp"] } },
      { values: { "params.7": ["bigint"] } },
    ]) {
      assert.ok("refused" in readClientQuery(sqlParam("select 1", [CROSS_JOIN], meta)), JSON.stringify(meta));
    }
    for (const raw of ["not json", "[]", '{"json":{"params":[]}}', '{"json":{"sql":1}}', '{"json":{"sql":"x","params":{}}}']) {
      assert.ok("refused" in readClientQuery(raw), raw);
    }
  });

  it("accepts the relayer's kind of query and refuses, before planning, what Ponder would refuse to run", () => {
    const accepted = [
      'select "orders"."order_id", "_ponder_checkpoint"."latest_checkpoint" from "orders" left join "_ponder_checkpoint" on "_ponder_checkpoint"."latest_checkpoint" >= $1 where ("orders"."cursor" > $2 and "orders"."device_id" in ($3, $4)) order by "orders"."cursor" asc limit $5',
      'select coalesce(sum("split_participants"."credited"), 0), count(*) from "split_participants" where lower("split_participants"."recipient") = $1',
      'select cast("orders"."amount" as numeric(78, 0)) from "orders" where "orders"."rail" = \'it\'\'s (fine)\'',
      'select "orders"."id" from "orders" where exists (select 1 from "settlements" where "settlements"."order_id" = "orders"."order_id")',
    ];
    for (const sql of accepted) assert.equal(precheckQuery(sql), undefined, sql);
    const refused: Array<[string, RegExp]> = [
      ["select 1; delete from orders", /one statement/],
      ["select repeat('x', 1000000000)", /"repeat" is not allowed/],
      ["select pg_catalog.repeat('x', 10)", /"repeat" is not allowed/],
      ["select \"repeat\"('x', 10)", /"repeat" is not allowed/],
      ["select pg_sleep(10)", /"pg_sleep" is not allowed/],
      ["select repeat\f('x', 10)", /"repeat" is not allowed/], // a form feed is white space to PostgreSQL
      ["select repeat -- a comment\n ('x', 10)", /"repeat" is not allowed/],
      ["select /* hidden */ 1", /comments/],
      ["select $$;$$", /dollar-quoted/],
      ["select 'unterminated", /unterminated/],
      ["select '\\'; select 1'", /one statement/], // no escape in a standard string: the ';' is outside it
      [`select 1 from "orders" where "orders"."id" = '${"x".repeat(5_000)}'`, /longer than 5000/],
    ];
    for (const [sql, reason] of refused) assert.match(precheckQuery(sql) ?? "accepted", reason, sql);
    // A string literal or a quoted identifier hides nothing from the scan, and is not a call itself.
    assert.equal(precheckQuery("select 'repeat(' from \"orders\""), undefined);
    assert.equal(precheckQuery("select '; drop' from \"orders\""), undefined);
    assert.equal(precheckQuery("select E'\\'; select 1' from \"orders\""), undefined); // one escaped string
  });

  it("refuses a plan above the cost or row limit, and reads EXPLAIN's answer as either driver returns it", () => {
    const limits = { maxCost: 1_000, maxRows: 100 };
    assert.equal(planVerdict({ totalCost: 999, planRows: 100 }, limits), undefined);
    assert.match(
      planVerdict({ totalCost: 1_001, planRows: 1 }, limits) ?? "",
      /estimated cost .* exceeds the limit 1000 \(PONDER_SQL_MAX_COST\)/,
    );
    assert.match(planVerdict({ totalCost: 10, planRows: 101 }, limits) ?? "", /more than 100 \(PONDER_SQL_MAX_ROWS\)/);
    assert.match(planVerdict({ totalCost: Number.NaN, planRows: 1 }, limits) ?? "", /cost/);
    const plan = [{ Plan: { "Node Type": "Aggregate", "Total Cost": 1.5e27, "Plan Rows": 1 } }];
    assert.deepEqual(readExplain([{ "QUERY PLAN": plan }]), { totalCost: 1.5e27, planRows: 1 });
    assert.deepEqual(readExplain([{ "QUERY PLAN": JSON.stringify(plan) }]), { totalCost: 1.5e27, planRows: 1 });
    assert.throws(() => readExplain([]));
    // PGlite plans with enable_seqscan off: a small table scanned whole costs disable_cost (1e10) more, which is
    // not work and is taken off (the relayer's reads join the one-row checkpoint table that way).
    const pglite = [
      {
        Plan: {
          "Node Type": "Limit",
          "Startup Cost": 1e10 + 0.15,
          "Total Cost": 1e10 + 1.48,
          "Plan Rows": 100,
          Plans: [
            { "Node Type": "Index Scan", "Startup Cost": 0.15, "Total Cost": 49.28, "Plan Rows": 293 },
            {
              "Node Type": "Materialize",
              "Startup Cost": 1e10,
              "Total Cost": 1e10 + 22.47,
              "Plan Rows": 293,
              Plans: [{ "Node Type": "Seq Scan", "Startup Cost": 1e10, "Total Cost": 1e10 + 21, "Plan Rows": 293 }],
            },
          ],
        },
      },
    ];
    const estimate = readExplain([{ "QUERY PLAN": pglite }]);
    assert.ok(Math.abs(estimate.totalCost - 1.48) < 0.01, String(estimate.totalCost));
    // A seq scan that PostgreSQL plans normally (startup cost 0) is work: nothing is taken off.
    const postgres = [{ Plan: { "Node Type": "Seq Scan", "Startup Cost": 0, "Total Cost": 2e10, "Plan Rows": 5 } }];
    assert.equal(readExplain([{ "QUERY PLAN": postgres }]).totalCost, 2e10);
    assert.ok(DEFAULT_SQL_LIMITS.maxCost >= 10_000 && DEFAULT_SQL_LIMITS.maxRows >= 10_000);
  });
});

for (const database of selectedDatabaseKinds()) {
  describe(`SQL limits on a running indexer (${database})`, { concurrency: false }, () => {
    let stack: Stack;

    before(
      async () => {
        stack = await startStack({ label: `sql-limits-${database}`, database });
        // Ten paid orders, one after the other: the cross join of nine copies of them is 10^9 combinations.
        // (The device's split is created at its first quote: until it is, quotes answer 409 split_not_ready.)
        const deadline = Date.now() + 240_000;
        for (let paid = 0; paid < 10;) {
          try {
            await payOrder(stack, { timeoutMs: 60_000 });
            paid++;
          } catch (error) {
            if (!/split_not_ready/.test((error as Error).message) || Date.now() > deadline) throw error;
            await sleep(500);
          }
        }
      },
      { timeout: 400_000 },
    );
    after(async () => {
      await stack?.stop();
    });

    async function query(route: "db" | "live", sql: string): Promise<{ status: number; text: string; ms: number }> {
      const started = performance.now();
      const controller = new AbortController();
      const timer = setTimeout(() => controller.abort(), 120_000);
      try {
        const response = await fetch(`${stack.indexerUrl}/sql/${route}?sql=${encodeURIComponent(sqlParam(sql))}`, {
          signal: controller.signal,
        });
        // A live query that is accepted streams on: its first event is enough.
        const text = route === "live" && response.ok ? "(stream)" : await response.text();
        return { status: response.status, text, ms: performance.now() - started };
      } finally {
        clearTimeout(timer);
        controller.abort();
      }
    }

    it("answers a query within the limits", async () => {
      const answer = await query("db", 'select count(*) as "n" from "orders"');
      assert.equal(answer.status, 200, answer.text);
      assert.ok(Number((JSON.parse(answer.text) as { rows: Array<{ n: string | number }> }).rows[0]!.n) >= 10, answer.text);
    });

    it("refuses the nine-way cross join at once, on /sql/db and /sql/live", async (t) => {
      for (const route of ["db", "live"] as const) {
        const answer = await query(route, CROSS_JOIN);
        assert.equal(answer.status, 422, `${route}: ${answer.status} ${answer.text.slice(0, 200)} after ${Math.round(answer.ms)} ms`);
        assert.match(answer.text, /query refused: its estimated cost .* exceeds the limit/);
        // Planned, not run: far below the tens of seconds the query itself takes (35 s on a fast machine; the
        // bound leaves room for a slow, loaded one).
        assert.ok(answer.ms < 15_000, `${route} answered after ${Math.round(answer.ms)} ms`);
        t.diagnostic(`/sql/${route}: cross join refused after ${Math.round(answer.ms)} ms`);
      }
    });

    it("keeps paying while the cross join is sent over and over: a relayed payment goes through", async (t) => {
      let attacking = true;
      const refusals: number[] = [];
      const attacker = async () => {
        while (attacking) {
          const answer = await query("db", CROSS_JOIN);
          assert.equal(answer.status, 422, answer.text.slice(0, 200));
          refusals.push(answer.ms);
        }
      };
      const attackers = [attacker(), attacker()];
      try {
        const started = performance.now();
        const { order } = await payOrder(stack, { timeoutMs: 60_000 });
        const ms = performance.now() - started;
        assert.equal(order.status, "success");
        // About a second unattacked; the unguarded cross join held a PGlite indexer for 35 s a query, so two
        // attackers looping would hold the payment past a minute.
        assert.ok(ms < 45_000, `the payment took ${Math.round(ms)} ms`);
        t.diagnostic(`relayed payment under attack: ${Math.round(ms)} ms`);
      } finally {
        attacking = false;
        await Promise.all(attackers);
      }
      assert.ok(refusals.length >= 2, `refused ${refusals.length} times`);
      const slowest = Math.max(...refusals);
      t.diagnostic(`${refusals.length} refusals meanwhile, slowest ${Math.round(slowest)} ms`);
      assert.ok(slowest < 15_000, `slowest refusal ${Math.round(slowest)} ms`);
      // The relayer's reads of the indexer (the order's payment, the revenue) still pass the limits.
      const revenue = await stack.api("GET", "/v1/revenue/splits", { token: stack.sample.developerKey });
      assert.equal(revenue.status, 200, revenue.text);
      assert.ok(Array.isArray(revenue.body.data) && revenue.body.data.length >= 1, revenue.text.slice(0, 300));
    });

    // The same indexer's tables through a `ponder serve` replica (the suite's stack and its paid orders: the
    // cross join of nine copies of ten orders and more).
    if (database === "postgres") {
      it(
        "on a PostgreSQL replica (ponder serve): ends a query that passes the plan limits at PONDER_SQL_STATEMENT_TIMEOUT_MS, and keeps answering",
        { timeout: 480_000 },
        async (t) => {
          const indexerDatabase = stack.indexerDatabase;
          assert.ok(indexerDatabase.kind === "postgres" && indexerDatabase.viewsSchema !== undefined);
          // The replica runs with the plan limits lifted, so that the cross join reaches the database, and a
          // statement timeout of 500 ms on the readers' connections.
          const saved = { timeout: process.env.PONDER_SQL_STATEMENT_TIMEOUT_MS, cost: process.env.PONDER_SQL_MAX_COST };
          process.env.PONDER_SQL_STATEMENT_TIMEOUT_MS = "500";
          process.env.PONDER_SQL_MAX_COST = "1e30";
          let replica: Awaited<ReturnType<typeof serveIndexer>>;
          try {
            replica = await serveIndexer({
              deploymentId: stack.chain.deploymentId,
              rpcUrl: stack.chain.rpcUrl,
              database: { kind: "postgres", url: indexerDatabase.url, schema: indexerDatabase.viewsSchema },
            });
          } finally {
            for (const [name, value] of [
              ["PONDER_SQL_STATEMENT_TIMEOUT_MS", saved.timeout],
              ["PONDER_SQL_MAX_COST", saved.cost],
            ] as const) {
              if (value === undefined) delete process.env[name];
              else process.env[name] = value;
            }
          }
          try {
            // Ponder retries a failed read up to 9 times, waiting 0.25 s doubling each time: the request ends after
            // about a minute, but each attempt's backend runs for the statement timeout only (with Ponder's 30 s,
            // ten attempts would keep a backend busy for five minutes). Sampled in pg_stat_activity meanwhile.
            const watcher = new pg.Client({ connectionString: indexerDatabase.url });
            await watcher.connect();
            const attempts = new Map<string, number>();
            let done = false;
            const sampling = (async () => {
              while (!done) {
                const { rows } = await watcher.query<{ started: string; ms: number }>(
                  `select query_start::text as started, extract(epoch from clock_timestamp() - query_start) * 1000 as ms
                     from pg_stat_activity where state = 'active' and query like '%"o8"%' and pid <> pg_backend_pid()`,
                );
                for (const row of rows) attempts.set(row.started, Math.max(attempts.get(row.started) ?? 0, Number(row.ms)));
                await sleep(50);
              }
            })();
            const started = performance.now();
            let text: string;
            let status: number;
            try {
              const response = await fetch(`${replica.url}/sql/db?sql=${encodeURIComponent(sqlParam(CROSS_JOIN))}`, {
                signal: AbortSignal.timeout(240_000),
              });
              text = await response.text();
              status = response.status;
            } finally {
              done = true;
              await sampling;
              await watcher.end();
            }
            const ms = performance.now() - started;
            assert.equal(status, 500, text.slice(0, 200));
            assert.match(text, /statement timeout/);
            assert.ok(attempts.size >= 1, "the query reached the database");
            const longest = Math.max(...attempts.values());
            assert.ok(longest < 5_000, `a backend ran the cross join for ${Math.round(longest)} ms (statement timeout 500 ms)`);
            t.diagnostic(
              `replica: ${attempts.size} attempts seen, longest ${Math.round(longest)} ms of a backend; the request ended after ${Math.round(ms)} ms`,
            );
            const small = await fetch(`${replica.url}/sql/db?sql=${encodeURIComponent(sqlParam('select count(*) as "n" from "orders"'))}`);
            assert.equal(small.status, 200, await small.text());
          } finally {
            await replica.service.stop();
          }
        },
      );
    }
  });
}
