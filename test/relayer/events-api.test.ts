// The events API (GET /v1/events, GET /v1/events/{id}), end to end on each selected database: the tenant's
// webhook events newest first, a page at a time with nextCursor; filtered by type, by family (ticket.*) and by
// creation time; scoped to the tenant (another tenant's key sees none of them and reads none: 404); read with a
// developer key or a portal JWT (an agent key is 403); a delivery's eventId names an event the API returns, with
// the data the delivery carried; bad filters are 422. The retention (jobs/retention.ts) deletes events past
// WEBHOOK_EVENT_RETENTION_DAYS with their deliveries and attempts, and keeps those not delivered to the end;
// in process, on each database.
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { eq, sql } from "drizzle-orm";
import { type Database, openDatabase } from "../../relayer/src/db/client.ts";
import { migrate } from "../../relayer/src/db/migrate.ts";
import { webhookAttempts, webhookDeliveries, webhookEvents, webhookSubscriptions } from "../../relayer/src/db/schema.ts";
import { ulid } from "../../relayer/src/ids.ts";
import { createRetentionWorker } from "../../relayer/src/jobs/retention.ts";
import { createLogger } from "../../relayer/src/logger.ts";
import { pgliteDatabase, postgresDatabase, selectedDatabaseKinds } from "../support/databases.ts";
import { request } from "../support/relayer-cluster.ts";
import { type Stack, startStack } from "../support/stack.ts";
import { type WebhookReceiver, startWebhookReceiver } from "../support/webhook-receiver.ts";
import { login, sendTest } from "../webhooks/support.ts";

const logger = createLogger("error");

type ApiEvent = { id: string; type: string; createdAt: string; data: Record<string, unknown> };

for (const kind of selectedDatabaseKinds()) {
  describe(`events API (${kind})`, { concurrency: false }, () => {
    let stack: Stack;
    let receiver: WebhookReceiver;
    let otherKey: string;
    let jwt: string;
    let subscriptionId: string;
    /** Our events, oldest first: five ticket.created, then two test.ping. */
    const ours: ApiEvent[] = [];

    const get = (path: string, token = stack.sample.developerKey) => stack.api("GET", path, { token });

    before(
      async () => {
        receiver = await startWebhookReceiver();
        stack = await startStack({
          label: `events-api-${kind}`,
          database: kind,
          indexer: false,
          relayerEnv: { WEBHOOK_RETRY_BASE_MS: "20" },
          tenants: [{ tenant: { id: "tn_events_other", name: "Other" }, apiKeys: [{ name: "other", role: "developer" }] }],
        });
        otherKey = stack.tenants[0].createdKeys.find((k: { role: string }) => k.role === "developer")!.key;
        jwt = await login(stack);
        const sub = await stack.api("POST", "/v1/webhooks/subscriptions", {
          token: stack.sample.developerKey,
          body: { url: receiver.url("/events"), eventTypes: ["ticket.*"] },
        });
        assert.equal(sub.status, 201, sub.text);
        receiver.setSecret("/events", sub.body.secret);
        subscriptionId = sub.body.id;
        const ids: string[] = [];
        // Tickets from five client addresses (the route's limit is per client), a few ms apart.
        for (let i = 1; i <= 5; i++) {
          const ticket = await request(stack.relayerUrl, "POST", `/v1/devices/${stack.sample.devices[0].id}/tickets`, {
            body: { category: "other", message: `events api ${i}` },
            from: `127.0.98.${i}`,
          });
          assert.equal(ticket.status, 201, ticket.text);
          await new Promise((resolve) => setTimeout(resolve, 5));
        }
        for (let i = 0; i < 2; i++) ids.push(await sendTest(stack, stack.sample.developerKey, subscriptionId));
        const all = await get("/v1/events?limit=100");
        assert.equal(all.status, 200, all.text);
        const mine = (all.body.data as ApiEvent[]).filter(
          (e) => (e.type === "ticket.created" && String(e.data.message).startsWith("events api")) || ids.includes(e.id),
        );
        ours.push(...mine.reverse());
      },
      { timeout: 240_000 },
    );
    after(async () => {
      await stack?.stop();
      await receiver?.close();
    });

    it("lists the tenant's events newest first, a page at a time", async () => {
      assert.deepEqual(
        ours.map((e) => e.type),
        [...Array(5).fill("ticket.created"), "test.ping", "test.ping"],
      );
      const seen: ApiEvent[] = [];
      let cursor: string | null = null;
      let pages = 0;
      do {
        const page = await get(`/v1/events?limit=3${cursor ? `&cursor=${cursor}` : ""}`);
        assert.equal(page.status, 200, page.text);
        assert.ok(page.body.data.length <= 3);
        seen.push(...page.body.data);
        cursor = page.body.nextCursor;
        pages++;
      } while (cursor && pages < 50);
      assert.equal(cursor, null);
      const ids = seen.map((e) => e.id);
      assert.equal(new Set(ids).size, ids.length, "no event twice");
      assert.deepEqual([...ids].sort().reverse(), ids, "newest first");
      for (let i = 1; i < seen.length; i++) assert.ok(seen[i].createdAt <= seen[i - 1].createdAt);
      for (const e of ours) assert.ok(ids.includes(e.id), `${e.id} listed`);
    });

    it("filters by type, by family and by creation time", async () => {
      const tickets = await get("/v1/events?type=ticket.created&limit=100");
      assert.equal(tickets.status, 200, tickets.text);
      assert.ok(tickets.body.data.every((e: ApiEvent) => e.type === "ticket.created"));
      assert.equal(tickets.body.data.filter((e: ApiEvent) => ours.some((o) => o.id === e.id)).length, 5);
      const family = await get("/v1/events?type=test.*&limit=100");
      assert.deepEqual(
        family.body.data.map((e: ApiEvent) => e.id),
        ours
          .slice(5)
          .map((e) => e.id)
          .reverse(),
      );
      const none = await get("/v1/events?type=payment.*");
      assert.deepEqual(none.body.data, []);
      // From the third ticket (inclusive) to the first ping (exclusive).
      const from = encodeURIComponent(ours[2].createdAt);
      const to = encodeURIComponent(ours[5].createdAt);
      const range = await get(`/v1/events?from=${from}&to=${to}&limit=100`);
      assert.equal(range.status, 200, range.text);
      assert.deepEqual(
        range.body.data.map((e: ApiEvent) => e.id),
        ours
          .slice(2, 5)
          .filter((e) => e.createdAt < ours[5].createdAt)
          .map((e) => e.id)
          .reverse(),
      );
      for (const bad of ["type=payment", "type=*", "cursor=evt_x", "from=yesterday", "limit=0", "limit=101", "color=red"]) {
        const response = await get(`/v1/events?${bad}`);
        assert.equal(response.status, 422, `${bad}: ${response.text}`);
        assert.equal(response.body.error.code, "invalid_parameters");
      }
    });

    it("reads one event; another tenant sees none of them; an agent key is refused; a portal JWT reads them too", async () => {
      const [event] = ours;
      const one = await get(`/v1/events/${event.id}`);
      assert.equal(one.status, 200, one.text);
      assert.deepEqual(one.body, event);
      const theirs = await get("/v1/events?limit=100", otherKey);
      assert.equal(theirs.status, 200);
      assert.ok(!theirs.body.data.some((e: ApiEvent) => ours.some((o) => o.id === e.id)));
      assert.equal((await get(`/v1/events/${event.id}`, otherKey)).status, 404);
      for (const id of ["evt_00000000000000000000000000", "evt_x", "constructor"])
        assert.equal((await get(`/v1/events/${id}`)).status, 404);
      const agent = await get("/v1/events", stack.sample.agentKey);
      assert.equal(agent.status, 403, agent.text);
      assert.equal((await get(`/v1/events/${event.id}`, jwt)).status, 200);
      assert.equal((await stack.api("GET", "/v1/events")).status, 401);
    });

    it("links a delivery to its event: the eventId of the delivery log reads the event the delivery carried", async () => {
      const delivered = await receiver.waitFor((d) => d.path === "/events" && d.envelope?.data?.message === "events api 1", 60_000);
      assert.ok(delivered.standardOk);
      const log = await get(`/v1/webhooks/subscriptions/${subscriptionId}/deliveries?limit=100`);
      assert.equal(log.status, 200, log.text);
      const delivery = log.body.data.find((d: { id: string }) => d.id === delivered.envelope!.id);
      assert.ok(delivery, "the delivery is in the log");
      const event = await get(`/v1/events/${delivery.eventId}`);
      assert.equal(event.status, 200, event.text);
      assert.equal(event.body.type, delivered.envelope!.type);
      assert.deepEqual(event.body.data, delivered.envelope!.data);
    });
  });

  describe(`webhook event retention (${kind})`, () => {
    const variant = kind === "pglite" ? pgliteDatabase("event-retention") : postgresDatabase("event-retention");
    let database: Database;
    before(async () => {
      database =
        variant.database.kind === "pglite"
          ? await openDatabase({ kind: "pglite", directory: variant.database.directory }, logger)
          : await openDatabase({ kind: "postgres", url: variant.database.url, schema: variant.database.schema }, logger);
      await migrate(database);
    });
    after(async () => {
      await database?.close();
      await variant.cleanup();
    });

    it("deletes events past the retention with their deliveries and attempts, and keeps what is not delivered to the end", async () => {
      const { db } = database;
      const day = 86_400_000;
      const now = Date.now();
      const at = (daysAgo: number) => now - daysAgo * day;
      await db.execute(sql`insert into tenants (id, name) values ('ten_r', 'R')`);
      await db.insert(webhookSubscriptions).values({
        id: "whs_r",
        tenantId: "ten_r",
        url: "https://example.com/r",
        eventTypes: ["*"],
        secretCiphertext: "v1.x.y.z",
        secretLast4: "abcd",
      });
      const event = (name: string, daysAgo: number, dispatched = true) => ({
        id: `evt_${ulid(at(daysAgo))}`,
        tenantId: "ten_r",
        type: "ticket.created",
        data: { name },
        createdAt: new Date(at(daysAgo)),
        dispatchedAt: dispatched ? new Date(at(daysAgo)) : null,
      });
      const expired = event("expired", 31);
      const stillPending = event("pending delivery", 31);
      const undispatched = event("not fanned out", 31, false);
      const recent = event("recent", 29);
      await db.insert(webhookEvents).values([expired, stillPending, undispatched, recent]);
      const delivery = (id: string, eventId: string, status: "succeeded" | "pending") => ({
        id,
        eventId,
        subscriptionId: "whs_r",
        tenantId: "ten_r",
        eventType: "ticket.created",
        status,
        attempts: 1,
        nextAttemptAt: status === "pending" ? new Date() : null,
      });
      await db
        .insert(webhookDeliveries)
        .values([
          delivery("msg_done", expired.id, "succeeded"),
          delivery("msg_pending", stillPending.id, "pending"),
          delivery("msg_recent", recent.id, "succeeded"),
        ]);
      await db.insert(webhookAttempts).values([
        { deliveryId: "msg_done", attempt: 1, worker: "test:1", statusCode: 200 },
        { deliveryId: "msg_recent", attempt: 1, worker: "test:1", statusCode: 200 },
      ]);

      const retention = createRetentionWorker({ db, logger, eventRetentionDays: 30 });
      const pass = await retention.pass(now);
      assert.equal(pass.events, 1);
      const left = (await db.select({ id: webhookEvents.id }).from(webhookEvents)).map((e) => e.id).sort();
      assert.deepEqual(left, [stillPending.id, undispatched.id, recent.id].sort());
      assert.deepEqual(await db.select().from(webhookDeliveries).where(eq(webhookDeliveries.id, "msg_done")), []);
      assert.deepEqual(await db.select().from(webhookAttempts).where(eq(webhookAttempts.deliveryId, "msg_done")), []);
      assert.equal((await db.select().from(webhookAttempts).where(eq(webhookAttempts.deliveryId, "msg_recent"))).length, 1);
      // With a longer retention nothing more goes; a second pass finds nothing.
      assert.equal((await createRetentionWorker({ db, logger, eventRetentionDays: 60 }).pass(now)).events, 0);
      assert.equal((await retention.pass(now)).events, 0);
    });
  });
}
