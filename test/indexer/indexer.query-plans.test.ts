// The indexer client's reads (indexer/client.ts) stay flat as the chain's history grows: the real indexer
// creates its schema on PostgreSQL (a local chain, `ponder start`), is stopped, and its tables are seeded
// set-based with 200,000 paid orders and their settlements over 2,000 splits (200 asset owners with 10 each,
// 20 operators, one protocol), three credits per settlement and the participants' totals. Every statement the
// client sends for the relayer's reads (the paid-order pages, a reorganisation's restart, orders and
// settlements by id or reference, a participant's earnings overall and per split, a page of its settlements
// through the credits table, the network statistics) is captured as it travels to the indexer's /sql (a
// stand-in answers it) and run with EXPLAIN (ANALYZE) against the seeded schema: its plan must not read a
// history table with a sequential scan, sort its rows, or discard more than a page's worth of them
// (test/support/query-plan.ts). PostgreSQL only (PGlite has no planner statistics worth asserting on).
import assert from "node:assert/strict";
import { type Server, createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { after, before, describe, it } from "node:test";
import pg from "pg";
import { START_CURSOR, createIndexerClient } from "../../indexer/client.ts";
import { postgresDatabase, selectedDatabaseKinds } from "../support/databases.ts";
import { explain, planProblems, walk } from "../support/query-plan.ts";
import { type Stack, startStack } from "./harness.ts";

const ORDERS = 200_000;
const SPLITS = 2_000;
const OWNERS = 200;
/** Tables whose rows grow with the chain's history. */
const HISTORY_TABLES = new Set(["orders", "settlements", "settlement_credits", "withdrawals"]);

/** A 20-byte address from `tag` and the SQL expression `k`. */
const address = (tag: string, k: string) => `'0x' || substr(md5('${tag}' || ${k}) || md5('${tag}y' || ${k}), 1, 40)`;
const split = (k: string) => address("s", k);
const owner = (k: string) => address("o", `(${k}) % ${OWNERS}`);
const operator = (k: string) => address("op", `(${k}) % 20`);
const PROTOCOL = `'0x' || repeat('9', 40)`;
const TOKEN = `'0x' || repeat('1', 40)`;
const id75 = (i: string) => `lpad((${i})::text, 75, '0')`;
/** Order `i`'s checkpoint (its cursor), as Ponder makes it: block timestamp (10 digits), chain id (16), block
 * number (16), then the event's place in the block (33). */
const checkpoint = (i: number | string) =>
  typeof i === "number"
    ? `${String(1_700_000_000 + i * 300).padStart(10, "0")}${"31337".padStart(16, "0")}${String(i).padStart(16, "0")}${"0".repeat(33)}`
    : `lpad((1700000000 + ${i} * 300)::text, 10, '0') || lpad('31337', 16, '0') || lpad((${i})::text, 16, '0') || repeat('0', 33)`;
const hash = (tag: string, i: string) => `'0x' || md5('${tag}' || ${i}) || md5('${tag}x' || ${i})`;

/** The seeded asset owner 0 and its ten splits (devices 0, 200, 400, ...). */
async function ownerZero(client: pg.Client): Promise<{ owner: `0x${string}`; splits: Array<`0x${string}`> }> {
  const { rows } = await client.query<{ address: `0x${string}`; asset_owner: `0x${string}` }>(
    `select address, asset_owner from splits where asset_owner = (select ${owner("0")}) order by address`,
  );
  return { owner: rows[0]!.asset_owner, splits: rows.map((r) => r.address) };
}

async function seed(client: pg.Client): Promise<void> {
  // The indexer's tables carry its triggers (live queries, reorganisation records), made for its own session:
  // the seed is not indexing and sets them aside.
  await client.query("set session_replication_role = replica");
  await client.query(`
    insert into splits (address, token, asset_key, factory, created_block, created_at, asset_owner, operator, protocol,
      asset_owner_bps, operator_bps, protocol_bps, legs_version, legs_updated_at)
    select ${split("k")}, ${TOKEN}, ${hash("a", "k")}, '0x' || repeat('2', 40), 1, 1, ${owner("k")}, ${operator("k")}, ${PROTOCOL},
      8000, 1500, 500, 1, 1
    from generate_series(0, ${SPLITS - 1}) k`);
  await client.query(`
    insert into orders (order_id, cursor, device_id, payer, token, split, amount, usd_micro, rail, chain_id, block_number,
      block_hash, block_timestamp, transaction_hash, transaction_index, log_index)
    select i, ${checkpoint("i")}, ${hash("d", `i % ${SPLITS}`)}, ${address("p", "i % 5000")}, ${TOKEN},
      ${split(`i % ${SPLITS}`)}, 500000, 500000, 'permit', 31337, i, ${hash("b", "i")}, 1700000000 + i * 300,
      ${hash("t", "i")}, 0, 0
    from generate_series(1, ${ORDERS}) i`);
  await client.query(`
    insert into settlements (id, split, token, ref, order_id, depositor, gross, asset_owner_amount, operator_amount,
      protocol_amount, asset_owner, operator, protocol, gross_usd_micro, chain_id, block_number, block_hash,
      block_timestamp, transaction_hash, transaction_index, log_index)
    select ${id75("i")}, ${split(`i % ${SPLITS}`)}, ${TOKEN}, '0x' || lpad(to_hex(i), 64, '0'), i, '0x' || repeat('3', 40),
      500000, 400000, 75000, 25000, ${owner(`i % ${SPLITS}`)}, ${operator(`i % ${SPLITS}`)}, ${PROTOCOL}, 500000, 31337, i,
      ${hash("b", "i")}, 1700000000 + i * 300, ${hash("t", "i")}, 0, 1
    from generate_series(1, ${ORDERS}) i`);
  await client.query(`
    insert into settlement_credits (recipient, settlement_id, split, credited)
    select asset_owner, id, split, asset_owner_amount from settlements
    union all select operator, id, split, operator_amount from settlements
    union all select protocol, id, split, protocol_amount from settlements`);
  await client.query(`
    insert into split_participants (split, recipient, token, credited, withdrawn, claimable, credited_as_asset_owner,
      credited_as_operator, credited_as_protocol, settlements, withdrawals, updated_at)
    select c.split, c.recipient, ${TOKEN}, sum(c.credited), 0, sum(c.credited), 0, 0, 0, count(*), 0, 1
    from settlement_credits c group by c.split, c.recipient`);
  await client.query(`
    insert into participants (recipient, token, credited, withdrawn, claimable, credited_as_asset_owner, credited_as_operator,
      credited_as_protocol, settlements, withdrawals, updated_at)
    select recipient, ${TOKEN}, sum(credited), 0, sum(credited), 0, 0, 0, sum(settlements), 0, 1
    from split_participants group by recipient`);
  await client.query("set session_replication_role = default");
  await client.query("analyze");
}

type Captured = { sql: string; params: unknown[] };

/** A stand-in for the indexer's /sql and /status that records each statement the client sends. It answers
 * every read with no rows, except a read of the checkpoint alone, answered with a checkpoint far ahead (so
 * that a cursor whose order is missing is taken for a reorganisation and its restart statement is sent too). */
async function startCapture(): Promise<{ url: string; statements: Captured[]; server: Server }> {
  const statements: Captured[] = [];
  const server = createServer((request, response) => {
    const url = new URL(request.url ?? "/", "http://localhost");
    response.setHeader("content-type", "application/json");
    if (url.pathname === "/status") return response.end("{}");
    const encoded = url.searchParams.get("sql");
    if (!encoded) return response.writeHead(404).end("{}");
    // superjson's envelope: the query is its `json` (bigint parameters as decimal strings).
    const query = (JSON.parse(encoded) as { json: Captured }).json;
    statements.push({ sql: query.sql, params: query.params });
    const checkpointOnly = /^select [^,]*"latest_checkpoint" from "_ponder_checkpoint"/.test(query.sql);
    response.end(JSON.stringify({ rows: checkpointOnly ? [{ latest_checkpoint: "9".repeat(75) }] : [] }));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, statements, server };
}

describe(
  "indexer client query plans on a schema grown with history (PostgreSQL)",
  {
    skip: !selectedDatabaseKinds().includes("postgres"),
    timeout: 600_000,
  },
  () => {
    let stack: Stack | undefined;
    let client: pg.Client;
    let capture: Awaited<ReturnType<typeof startCapture>>;

    before(
      async () => {
        const variant = postgresDatabase("indexer-plans");
        stack = await startStack(variant, { label: "indexer-plans" });
        // The schema is the indexer's own (its tables, keys and indexes); the seed replaces its indexing.
        await stack.indexer.stop();
        const { url, schema } = variant.database;
        client = new pg.Client({ connectionString: url, options: `-c search_path=${schema}` });
        await client.connect();
        await seed(client);
        capture = await startCapture();
      },
      { timeout: 600_000 },
    );
    after(async () => {
      await client?.end();
      capture?.server.close();
      await stack?.stop();
    });

    /** The statements `reads` sends, each with its plan on the seeded schema and the problems of that plan. */
    async function plansOf(reads: (indexer: ReturnType<typeof createIndexerClient>) => Promise<unknown>) {
      capture.statements.length = 0;
      await reads(createIndexerClient(capture.url));
      assert.ok(capture.statements.length > 0, "the read sent a statement");
      const plans = [];
      for (const statement of capture.statements) {
        const plan = await explain(client, statement);
        plans.push({ sql: statement.sql, plan, problems: planProblems(plan, HISTORY_TABLES) });
      }
      return plans;
    }

    /** Asserts that no statement `reads` sends has a plan problem. */
    async function assertFlat(name: string, reads: (indexer: ReturnType<typeof createIndexerClient>) => Promise<unknown>) {
      for (const { sql, plan, problems } of await plansOf(reads)) {
        assert.deepEqual(problems, [], `${name}:\n${sql}\n${JSON.stringify(plan, null, 1)}`);
      }
    }

    it("the paid-order pages: the first, one after a cursor, and a reorganisation's restart", async () => {
      await assertFlat("first page", (indexer) => indexer.paidOrdersAfter(START_CURSOR, 100));
      // A cursor near the head whose order the stand-in does not have, with the checkpoint past it: read as a
      // reorganisation, so the restart below the fork is read too.
      const near = ORDERS - 10;
      const cursor = `${checkpoint(near)}:0x${"ab".repeat(32)}`;
      const plans = await plansOf((indexer) => indexer.paidOrdersAfter(cursor, 100));
      assert.ok(
        plans.some((p) => p.sql.includes(`"block_number" <=`)),
        "the restart was read",
      );
      for (const { sql, plan, problems } of plans) assert.deepEqual(problems, [], `${sql}\n${JSON.stringify(plan, null, 1)}`);
    });

    it("orders and settlements by id; a settlement by reference sorts only that reference's rows", async () => {
      const ids = Array.from({ length: 50 }, (_, i) => BigInt(ORDERS - i * 997));
      await assertFlat("orders by id", (indexer) => indexer.ordersByIds(ids));
      await assertFlat("settlements by order id", (indexer) => indexer.settlementsByOrderIds(ids));
      // The first settlement with a reference: found through the reference's index, its few rows (a router
      // payment's reference is unique; a batch depositor's may repeat) sorted by id. The sort is of those rows,
      // not of the history.
      const [byRef] = await plansOf((indexer) => indexer.settlementByRef(`0x${(12_345).toString(16).padStart(64, "0")}`));
      assert.deepEqual(byRef!.problems, ["Sort of the rows of settlements"], byRef!.sql);
      const scans = [...walk(byRef!.plan)].filter(({ node }) => node["Relation Name"] === "settlements");
      assert.ok(
        scans.every(({ node }) => node["Index Name"]?.includes("ref") && (node["Actual Rows"] ?? 0) <= 1),
        JSON.stringify(byRef!.plan, null, 1),
      );
    });

    it("a participant's earnings, overall and in its splits", async () => {
      const { owner: who, splits } = await ownerZero(client);
      assert.equal(splits.length, SPLITS / OWNERS);
      await assertFlat("earnings", (indexer) => indexer.participantEarnings(who));
      await assertFlat("earnings in splits", (indexer) => indexer.participantEarningsInSplits(who, splits));
    });

    // One index-ordered branch per split, merged newest first: the page's rows only, whatever the participant's
    // history. (With `split in (...)` the planner took the recipient and the split for independent conditions,
    // expected a handful of rows, and sorted all the participant's credits in those splits.)
    it("a participant's settlements through the credits table, first and next page", async () => {
      const { owner: who, splits } = await ownerZero(client);
      const reads = [
        (indexer: ReturnType<typeof createIndexerClient>) => indexer.participantSettlements(who, splits, { limit: 50 }),
        (indexer: ReturnType<typeof createIndexerClient>) =>
          indexer.participantSettlements(who, splits, { limit: 50, before: String(ORDERS / 2).padStart(75, "0") }),
      ];
      for (const read of reads) {
        const [statement, ...others] = await plansOf(read);
        assert.deepEqual(others, [], "one statement for ten splits");
        assert.deepEqual(statement!.problems, [], `${statement!.sql}\n${JSON.stringify(statement!.plan, null, 1)}`);
        const credits = [...walk(statement!.plan)].filter(({ node }) => node["Relation Name"] === "settlement_credits");
        assert.equal(credits.length, splits.length, "a scan per split");
        // The scans stop at the page: at most one row past it per split (60 for a page of 50 over ten splits),
        // not the participant's 1,000 credits there.
        const creditsRead = credits.reduce((sum, { node }) => sum + (node["Actual Rows"] ?? 0) * (node["Actual Loops"] ?? 1), 0);
        assert.ok(creditsRead <= 50 + splits.length, `${creditsRead} credits read`);
      }
    });

    it("the network statistics", async () => {
      await assertFlat("network statistics", (indexer) => indexer.networkStats());
    });
  },
);
