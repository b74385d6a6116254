// The payment API end to end: the relayer over HTTP, with the real chain, indexer and device cloud, on one
// database (PostgreSQL when selected: support/databases.ts oneDatabaseKind; the database is not its subject).
import { after, before, describe } from "node:test";
import { oneDatabaseKind } from "../support/databases.ts";
import { QUICK_TAKEOVER_ENV, type Stack, startStack } from "../support/stack.ts";
import { authCases } from "./cases/auth.ts";
import { cancellationCases } from "./cases/cancellation.ts";
import { deviceSplitCases } from "./cases/device-splits.ts";
import { OTHER_TENANT, deviceCases } from "./cases/devices.ts";
import { expiryCases } from "./cases/expiry.ts";
import { limitCases } from "./cases/limits.ts";
import { orderStreamCases } from "./cases/order-stream.ts";
import { quoteOrderCases } from "./cases/quotes-orders.ts";
import { railCases } from "./cases/rails.ts";
import { revenueCases } from "./cases/revenue.ts";
import { scopeCases } from "./cases/scopes.ts";

const database = oneDatabaseKind();
describe(`payment API on ${database}`, { concurrency: false }, () => {
  let stack: Stack;
  let other: { key: string; agentKey: string; participantId: string };
  before(
    async () => {
      stack = await startStack({
        label: "api",
        database,
        relayerEnv: { ...QUICK_TAKEOVER_ENV, DEVICE_CLOUD_TIMEOUT_MS: "500" },
        tenants: [OTHER_TENANT],
      });
      const [seeded] = stack.tenants;
      const keyOf = (role: string) => seeded.createdKeys.find((k) => k.role === role)?.key ?? "";
      other = { key: keyOf("developer"), agentKey: keyOf("agent"), participantId: seeded.participants[0].id };
    },
    { timeout: 240_000 },
  );
  after(() => stack?.stop());
  const getStack = () => stack;
  const getOther = () => other;

  authCases(getStack);
  deviceCases(getStack, getOther);
  quoteOrderCases(getStack);
  railCases(getStack);
  revenueCases(getStack, getOther);
  scopeCases(getStack, getOther);
  orderStreamCases(getStack);
  limitCases(getStack);
  cancellationCases(getStack, getOther);
  expiryCases(getStack);
  deviceSplitCases(getStack);
});
