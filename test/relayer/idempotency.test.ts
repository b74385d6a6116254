// Idempotency-Key on the /v1 POST routes (relayer/src/http/idempotency.ts), end to end on each selected
// database: a retry with the same key and body replays the first response (status, body, Location-free JSON,
// `Idempotent-Replayed: true`) without running again (one subscription, one ticket); the body's key order does
// not matter; another body with the key is 422 idempotency_key_reused; keys belong to their credential (the
// same key from another tenant's key, or from an anonymous client, runs on its own); a malformed key is 400;
// a request refused by validation lets the key go; parallel requests with one key run once (the others are
// replays or 409 idempotency_key_in_use with Retry-After). On PostgreSQL, with two relayer processes on one
// database: a key used through one process is replayed by the other, and parallel requests spread over both
// run once; a key held by a request whose process died is taken over once its hold ends; the stored answer (a
// signing secret in it) is encrypted. The store itself
// (relayer/src/idempotency/store.ts) and the retention worker's expiry after 24 hours run in process on
// each database.
import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { after, before, describe, it } from "node:test";
import { type Database, openDatabase } from "../../relayer/src/db/client.ts";
import { migrate } from "../../relayer/src/db/migrate.ts";
import {
  IDEMPOTENCY_LOCK_SECONDS,
  IDEMPOTENCY_RETENTION_SECONDS,
  claimIdempotencyKey,
  releaseIdempotencyKey,
  storeIdempotentResponse,
} from "../../relayer/src/idempotency/store.ts";
import { createRetentionWorker } from "../../relayer/src/jobs/retention.ts";
import { createLogger } from "../../relayer/src/logger.ts";
import { pgliteDatabase, postgresDatabase, selectedDatabaseKinds, withPostgres } from "../support/databases.ts";
import { request } from "../support/relayer-cluster.ts";
import { type Stack, startStack } from "../support/stack.ts";
import { type WebhookReceiver, startWebhookReceiver } from "../support/webhook-receiver.ts";

const logger = createLogger("error");

/** Where the subscriptions point (no event is sent to them). */
let receiver: WebhookReceiver;
const subscription = (n: number) => ({
  url: receiver.url(`/idem-${n}`),
  eventTypes: ["payment.succeeded", "device.*"],
  description: `idem ${n}`,
});

for (const kind of selectedDatabaseKinds()) {
  describe(`Idempotency-Key on /v1 POST routes (${kind})`, { concurrency: false }, () => {
    let stack: Stack;
    let otherKey: string;

    before(
      async () => {
        receiver = await startWebhookReceiver();
        stack = await startStack({
          label: `idempotency-${kind}`,
          database: kind,
          indexer: false,
          tenants: [{ tenant: { id: "tn_idem_other", name: "Other" }, apiKeys: [{ name: "other", role: "developer" }] }],
        });
        otherKey = stack.tenants[0].createdKeys.find((k: { role: string }) => k.role === "developer")!.key;
      },
      { timeout: 240_000 },
    );
    after(async () => {
      await stack?.stop();
      await receiver?.close();
    });

    const post = (path: string, body: unknown, key: string | undefined, token = stack.sample.developerKey, base = stack.relayerUrl) =>
      request(base, "POST", path, {
        body,
        headers: { authorization: `Bearer ${token}`, ...(key === undefined ? {} : { "idempotency-key": key }) },
      });

    async function subscriptionCount(description: string, token = stack.sample.developerKey): Promise<number> {
      const list = await stack.api("GET", "/v1/webhooks/subscriptions", { token });
      assert.equal(list.status, 200, list.text);
      return (list.body.data as Array<{ description: string }>).filter((s) => s.description === description).length;
    }

    it("replays the first response to a retry with the same key and body, in any key order, without running again", async () => {
      const key = randomUUID();
      const first = await post("/v1/webhooks/subscriptions", subscription(1), key);
      assert.equal(first.status, 201, first.text);
      assert.equal(first.headers["idempotent-replayed"], undefined);
      const { url, eventTypes, description } = subscription(1);
      const again = await post("/v1/webhooks/subscriptions", { description, eventTypes, url }, key);
      assert.equal(again.status, 201, again.text);
      assert.equal(again.headers["idempotent-replayed"], "true");
      assert.match(String(again.headers["content-type"]), /application\/json/);
      // The same subscription, its secret included: the answer stored, not a second run.
      assert.equal(again.text, first.text);
      assert.equal(await subscriptionCount("idem 1"), 1);
    });

    it("answers 422 idempotency_key_reused for the key with another body, and runs nothing", async () => {
      const key = randomUUID();
      assert.equal((await post("/v1/webhooks/subscriptions", subscription(2), key)).status, 201);
      const other = await post("/v1/webhooks/subscriptions", subscription(3), key);
      assert.equal(other.status, 422, other.text);
      assert.equal(other.body.error.code, "idempotency_key_reused");
      assert.equal(await subscriptionCount("idem 3"), 0);
      // Another route with the key is another request too.
      const elsewhere = await post("/v1/devices/kiosk-nbo-001/tickets", { category: "other", message: "hello" }, key);
      assert.equal(elsewhere.status, 422, elsewhere.text);
      assert.equal(elsewhere.body.error.code, "idempotency_key_reused");
    });

    it("keeps each credential's keys apart: another tenant's key and an anonymous client run on their own", async () => {
      const key = randomUUID();
      const mine = await post("/v1/webhooks/subscriptions", subscription(4), key);
      assert.equal(mine.status, 201, mine.text);
      const theirs = await post("/v1/webhooks/subscriptions", subscription(4), key, otherKey);
      assert.equal(theirs.status, 201, theirs.text);
      assert.equal(theirs.headers["idempotent-replayed"], undefined);
      assert.notEqual(theirs.body.id, mine.body.id);
      assert.equal(await subscriptionCount("idem 4", otherKey), 1);
      // A public route without a credential: keyed by the client's address, and replayed to it.
      const ticket = { category: "no_power", message: `no power ${key}` };
      const anonymous = await request(stack.relayerUrl, "POST", "/v1/devices/kiosk-nbo-001/tickets", {
        body: ticket,
        headers: { "idempotency-key": key },
      });
      assert.equal(anonymous.status, 201, anonymous.text);
      const replayed = await request(stack.relayerUrl, "POST", "/v1/devices/kiosk-nbo-001/tickets", {
        body: ticket,
        headers: { "idempotency-key": key },
      });
      assert.equal(replayed.headers["idempotent-replayed"], "true");
      assert.equal(replayed.body.id, anonymous.body.id);
    });

    it("refuses a malformed key with 400 invalid_idempotency_key before anything runs", async () => {
      for (const key of ["", "has space", "x".repeat(256), "caf\u00e9"]) {
        const response = await post("/v1/webhooks/subscriptions", subscription(5), key);
        assert.equal(response.status, 400, `${JSON.stringify(key)}: ${response.text}`);
        assert.equal(response.body.error.code, "invalid_idempotency_key");
      }
      assert.equal(await subscriptionCount("idem 5"), 0);
      // 255 visible ASCII characters are a key.
      const longest = await post("/v1/webhooks/subscriptions", subscription(5), "!~".repeat(127) + "k");
      assert.equal(longest.status, 201, longest.text);
    });

    it("lets the key go when the request is refused by validation or authentication: the corrected retry runs", async () => {
      const key = randomUUID();
      const invalid = await post("/v1/webhooks/subscriptions", { ...subscription(6), eventTypes: [] }, key);
      assert.equal(invalid.status, 422, invalid.text);
      assert.equal(invalid.body.error.code, "invalid_parameters");
      const unauthenticated = await post("/v1/webhooks/subscriptions", subscription(6), key, "payg_notakey");
      assert.equal(unauthenticated.status, 401, unauthenticated.text);
      const fixed = await post("/v1/webhooks/subscriptions", subscription(6), key);
      assert.equal(fixed.status, 201, fixed.text);
      assert.equal(fixed.headers["idempotent-replayed"], undefined);
    });

    it("runs parallel requests with one key once: the others are replays or 409 idempotency_key_in_use with Retry-After", async () => {
      const key = randomUUID();
      const answers = await Promise.all(Array.from({ length: 8 }, () => post("/v1/webhooks/subscriptions", subscription(7), key)));
      const created = answers.filter((a) => a.status === 201);
      assert.ok(created.length >= 1, JSON.stringify(answers.map((a) => a.status)));
      for (const a of created) assert.equal(a.body.id, created[0].body.id);
      assert.equal(created.filter((a) => a.headers["idempotent-replayed"] === undefined).length, 1);
      for (const a of answers.filter((x) => x.status !== 201)) {
        assert.equal(a.status, 409, a.text);
        assert.equal(a.body.error.code, "idempotency_key_in_use");
        assert.ok(Number(a.headers["retry-after"]) >= 1, JSON.stringify(a.headers));
      }
      assert.equal(await subscriptionCount("idem 7"), 1);
    });

    it("documents the header once, as a shared parameter of every POST operation", async () => {
      const doc = (await stack.api("GET", "/v1/openapi.json")).body;
      assert.equal(doc.components.parameters.IdempotencyKey.name, "Idempotency-Key");
      const posts = Object.entries(doc.paths as Record<string, { post?: { parameters?: Array<{ $ref?: string }> } }>).filter(
        ([, item]) => item.post,
      );
      assert.ok(posts.length >= 10);
      for (const [path, item] of posts) {
        assert.ok(
          item.post!.parameters?.some((p) => p.$ref === "#/components/parameters/IdempotencyKey"),
          `POST ${path} lists the Idempotency-Key parameter`,
        );
      }
    });

    if (kind === "postgres") {
      it("holds across two relayer processes: a replay through the other, parallel requests over both run once", async () => {
        const second = await stack.startExtraRelayer();
        const key = randomUUID();
        const first = await post("/v1/webhooks/subscriptions", subscription(8), key);
        assert.equal(first.status, 201, first.text);
        const replay = await post("/v1/webhooks/subscriptions", subscription(8), key, undefined, second.url);
        assert.equal(replay.headers["idempotent-replayed"], "true");
        assert.equal(replay.text, first.text);

        const parallelKey = randomUUID();
        const answers = await Promise.all(
          Array.from({ length: 10 }, (_, i) =>
            post("/v1/webhooks/subscriptions", subscription(9), parallelKey, undefined, i % 2 ? second.url : stack.relayerUrl),
          ),
        );
        assert.ok(
          answers.every((a) => a.status === 201 || (a.status === 409 && a.body.error.code === "idempotency_key_in_use")),
          JSON.stringify(answers.map((a) => [a.status, a.body.error?.code])),
        );
        assert.equal(await subscriptionCount("idem 9"), 1);
      });

      it("answers 409 while a key is held by a request whose process died, and runs the retry once the hold has ended", async () => {
        const db = stack.relayerOptions.database;
        assert.equal(db.kind, "postgres");
        const sql = (text: string, values: unknown[]) =>
          withPostgres(db.url, async (client) => {
            await client.query(`set search_path to "${db.schema}"`);
            return (await client.query(text, values)).rowCount;
          });
        const key = randomUUID();
        const created = await post("/v1/webhooks/subscriptions", subscription(10), key);
        assert.equal(created.status, 201);
        // The stored answer carries the signing secret: it is kept encrypted, never as sent.
        const stored = await withPostgres(db.url, async (client) => {
          await client.query(`set search_path to "${db.schema}"`);
          return (
            await client.query<{ body: string }>("select response_body as body from idempotency_keys where idempotency_key = $1", [key])
          ).rows[0].body;
        });
        assert.match(stored, /^v1\./);
        assert.ok(!stored.includes(created.body.secret) && !stored.includes("whsec_"));
        // As if the request were still running in a process that then died: no response, held for a minute.
        const held =
          "update idempotency_keys set response_status = null, response_body = null, locked_until = now() + interval '1 minute' where idempotency_key = $1";
        assert.equal(await sql(held, [key]), 1);
        const busy = await post("/v1/webhooks/subscriptions", subscription(10), key);
        assert.equal(busy.status, 409, busy.text);
        assert.equal(busy.body.error.code, "idempotency_key_in_use");
        assert.equal(busy.headers["retry-after"], "1");
        assert.equal(
          await sql("update idempotency_keys set locked_until = now() - interval '1 second' where idempotency_key = $1", [key]),
          1,
        );
        const retaken = await post("/v1/webhooks/subscriptions", subscription(10), key);
        assert.equal(retaken.status, 201, retaken.text);
        assert.equal(retaken.headers["idempotent-replayed"], undefined);
        const replay = await post("/v1/webhooks/subscriptions", subscription(10), key, undefined, stack.relayerUrl);
        assert.equal(replay.headers["idempotent-replayed"], "true");
        assert.equal(replay.body.id, retaken.body.id);
      });
    }
  });

  describe(`Idempotency-Key store and its expiry (${kind})`, () => {
    const variant = kind === "pglite" ? pgliteDatabase("idempotency-store") : postgresDatabase("idempotency-store");
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

    it("claims, holds, stores, replays, refuses another request, lets go, and is taken over after the hold", async () => {
      const { db } = database;
      const t0 = new Date("2026-03-01T00:00:00.000Z");
      const claim = await claimIdempotencyKey(db, "key:a", "k1", "h1", t0);
      assert.equal(claim.kind, "claimed");
      assert.deepEqual(await claimIdempotencyKey(db, "key:a", "k1", "h1", t0), { kind: "in_progress", retryAfterSeconds: 1 });
      assert.deepEqual(await claimIdempotencyKey(db, "key:a", "k1", "h2", t0), { kind: "reused" });
      // Another scope's key of the same name is its own.
      assert.equal((await claimIdempotencyKey(db, "key:b", "k1", "h2", t0)).kind, "claimed");
      assert.ok(claim.kind === "claimed");
      const response = { status: 201, headers: { "content-type": "application/json" }, body: '{"id":"x"}' };
      assert.equal(await storeIdempotentResponse(db, "key:a", "k1", claim.lockedUntil, response), true);
      assert.deepEqual(await claimIdempotencyKey(db, "key:a", "k1", "h1", t0), { kind: "replay", response });

      // Let go: the next request runs.
      const second = await claimIdempotencyKey(db, "key:a", "k2", "h1", t0);
      assert.ok(second.kind === "claimed");
      await releaseIdempotencyKey(db, "key:a", "k2", second.lockedUntil);
      assert.equal((await claimIdempotencyKey(db, "key:a", "k2", "h1", t0)).kind, "claimed");

      // A hold that ended (its process died): taken over once, and the old holder can no longer store.
      const later = new Date(t0.getTime() + (IDEMPOTENCY_LOCK_SECONDS + 1) * 1000);
      const taken = await claimIdempotencyKey(db, "key:a", "k2", "h1", later);
      assert.ok(taken.kind === "claimed");
      assert.equal((await claimIdempotencyKey(db, "key:a", "k2", "h1", later)).kind, "in_progress");
      assert.equal(await storeIdempotentResponse(db, "key:a", "k2", second.lockedUntil, response), false);
      assert.equal(await storeIdempotentResponse(db, "key:a", "k2", taken.lockedUntil, response), true);

      // Past 24 hours the key is new again, and the retention worker deletes it.
      const dayLater = new Date(t0.getTime() + IDEMPOTENCY_RETENTION_SECONDS * 1000 + 1000);
      assert.equal((await claimIdempotencyKey(db, "key:a", "k1", "h9", dayLater)).kind, "claimed");
      const retention = createRetentionWorker({ db, logger, eventRetentionDays: 30 });
      const pass = await retention.pass(dayLater.getTime());
      // k2 (stored at t0) and key:b's k1 expire; key:a's k1, claimed again at dayLater, stays.
      assert.equal(pass.idempotencyKeys, 2);
      assert.equal((await claimIdempotencyKey(db, "key:a", "k1", "h9", dayLater)).kind, "in_progress");
    });
  });
}
