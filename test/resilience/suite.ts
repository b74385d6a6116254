// The resilience suite: the whole system on loopback (support/stack.ts), on the embedded PGlite or on
// PostgreSQL, with the chain (and on PostgreSQL the relayer's database) behind switchable TCP proxies. One
// test file a database (resilience.pglite.test.ts, resilience.postgres.test.ts), so that the two can run at
// the same time.
//   bad input   generated malformed requests on every route of both interfaces (cases/bad-input.ts), each
//               on one of the databases (badInputShare)
//   limits      body size, pagination, rate limits on login and token routes, event streams per client (on
//               PostgreSQL when both databases run: runsLimitCases)
//   transports  unfinished headers and stalled bodies on every operation, each from an address of its own
//               (cases/transports.ts; with the limit cases)
//   security    revocation and expiry on the next request, tenant isolation, private callback URLs,
//               secrets in logs and responses
//   faults      SIGKILL during a webhook delivery and during a relayed payment, the database and the chain's
//               RPC cut off for a while
import { after, before, describe } from "node:test";
import { type DatabaseKind, selectedDatabaseKinds } from "../support/databases.ts";
import { QUICK_TAKEOVER_ENV, type Stack, startStack } from "../support/stack.ts";
import { type CaseShare, badInputCases } from "./cases/bad-input.ts";
import { faultCases } from "./cases/faults.ts";
import { limitCases } from "./cases/limits.ts";
import { transportCases } from "./cases/transports.ts";
import { secretsCases, securityCases } from "./cases/security.ts";
import { type Fixtures, OTHER_TENANT, prepareFixtures } from "./support/fixtures.ts";

/** The bad-input cases of the suite on `database`: with both databases selected, each case runs on one of
 * them, a quarter of the cases on PostgreSQL and the rest on PGlite (the same relayer code and the same
 * PostgreSQL engine behind it, so a case that one database would turn into a 5xx the other would too; each
 * run still checks that its database is as it was); with one selected, every case on it. */
function badInputShare(database: DatabaseKind): CaseShare {
  if (selectedDatabaseKinds().length < 2) return { from: 0, to: 1 };
  return database === "postgres" ? { from: 0, to: 0.25 } : { from: 0.25, to: 1 };
}

/** Whether the limit cases run on `database`: with both databases selected, on PostgreSQL only. Their subject
 * is the HTTP layer (body sizes, page sizes, rate limits and event streams per client, all held in the relayer
 * process or answered by the same queries on either database), so a second run on PGlite adds its 16 s and
 * no case; with one database selected, on it. */
function runsLimitCases(database: DatabaseKind): boolean {
  return selectedDatabaseKinds().length < 2 || database === "postgres";
}

/** The suite on one database kind. */
export function resilienceSuite(database: DatabaseKind): void {
  describe(`resilience on ${database}`, { concurrency: false }, () => {
    let stack: Stack;
    let fx: Fixtures;
    before(
      async () => {
        stack = await startStack({
          label: `resilience-${database}`,
          database,
          chainProxy: true,
          databaseProxy: database === "postgres",
          relayerEnv: {
            // Debug lines too: the secrets scan reads the whole log.
            LOG_LEVEL: "debug",
            ...QUICK_TAKEOVER_ENV,
            WEBHOOK_RETRY_BASE_MS: "50",
            WEBHOOK_TIMEOUT_MS: "2000",
            // The fault cases send one tenant's subscription 40 test pings at once (the route's per-tenant limit is
            // tested in test/webhooks/tenant-fairness.test.ts).
            WEBHOOK_TEST_PINGS_PER_MINUTE: "1000",
            // The bad-input cases send the sandbox's telemetry route a thousand batches with one OAuth client:
            // its ingest rate limit (tested in test/energy/sandbox.test.ts) would answer 429 in place of
            // validation.
            ENERGY_INGEST_BURST: "100000",
            ENERGY_INGEST_PER_SECOND: "100000",
          },
          tenants: [OTHER_TENANT],
        });
        fx = await prepareFixtures(stack);
      },
      { timeout: 300_000 },
    );
    after(async () => {
      await fx?.close();
      await stack?.stop();
    });
    const getStack = () => stack;
    const getFixtures = () => fx;

    badInputCases(getStack, getFixtures, { database, share: badInputShare(database) });
    if (runsLimitCases(database)) {
      limitCases(getStack, getFixtures);
      transportCases(getStack, getFixtures);
    }
    securityCases(getStack, getFixtures, { database });
    faultCases(getStack, getFixtures, { database });
    // Last: it reads every response and log line of the cases before it.
    secretsCases(getStack, getFixtures);
  });
}
