// Bad input on every route of both interfaces, generated from their OpenAPI documents (support/mutations.ts):
// each malformed request is sent with valid credentials (so validation, not authentication, answers it) and,
// for a route that needs credentials, again without. Every answer must be below 500, in the envelope of the
// interface that answered, with a request id where that envelope has one and no stack trace; a write route
// must refuse what its document refuses; and the database must be exactly as it was (support/database.ts).
// Each request comes from its own loopback address (127.0.0.2 ...), as bench/http-throughput.ts does, so the
// per-client rate limits of login, quote, orders and tickets do not answer in place of validation.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { Stack } from "../../support/stack.ts";
import { changedTables, relayerFingerprint } from "../support/database.ts";
import { answererOf, envelopeProblem } from "../support/envelope.ts";
import type { Fixtures } from "../support/fixtures.ts";
import { type RawResponse, loopbackAddresses, pool } from "../support/http.ts";
import { type Case, type Context, type Prepared, generateCases, prepare, seeded } from "../support/mutations.ts";
import { type Operation, type Param, mainSchema, normalisePath } from "../support/openapi.ts";

const CONCURRENCY = 8;

/** Path parameters that name existing resources (tenant A's, or the sandbox's sample data). */
export function liveContext(fx: Fixtures): Context {
  const { a, energy } = fx;
  return {
    live(op: Operation, param: Param) {
      const pattern = String(mainSchema(param.schema).pattern ?? "");
      if (pattern.includes("ord_")) return a.orderId;
      if (pattern.includes("key_")) return a.keyId;
      if (pattern.includes("whs_")) return a.subscriptionId;
      if (pattern.includes("msg_")) return a.deliveryId;
      if (pattern.includes("pt_")) return a.participant.id;
      if (op.api === "payments" && op.path.startsWith("/devices/{")) return a.deviceId;
      const sandbox: Record<string, string> = {
        project_id: energy.projectId,
        device_id: energy.deviceId,
        distribution_id: energy.distributionId,
        evidence_ref: energy.evidenceRef,
      };
      return op.api === "energy" ? sandbox[param.name] : undefined;
    },
    credential(op: Operation) {
      if (op.security.includes("sandboxToken")) return `Bearer ${energy.token}`;
      if (op.security.includes("apiKey")) return `Bearer ${a.agentKey}`;
      if (op.security.includes("bearerJwt")) return `Bearer ${a.jwt}`;
      return undefined;
    },
  };
}

type Outcome = { c: Case; p: Prepared; res?: RawResponse; problem?: string };

/** What is wrong with the answer to a prepared case (undefined: nothing). */
function problemOf(fx: Fixtures, c: Case, p: Prepared, res: RawResponse): string | undefined {
  const method = p.request.method;
  if (res.status >= 500) return `status ${res.status}: ${res.text.slice(0, 300)}`;
  if (c.expectStatus && res.status !== c.expectStatus) return `status ${res.status}, expected ${c.expectStatus}: ${res.text.slice(0, 200)}`;
  const answerer = answererOf(fx.docs, normalisePath(p.request.path));
  if (res.status >= 400) {
    const problem = envelopeProblem(fx.docs, answerer, res, p.request.headers?.["x-request-id"]);
    if (problem) return `${res.status} not in the ${answerer} envelope (${problem}): ${res.text.slice(0, 200)}`;
  } else if (answerer !== "page" && /\n\s+at \S/.test(res.text)) {
    return "a stack trace in a success body";
  }
  const writes = method !== "GET" && method !== "OPTIONS";
  if (writes && c.invalid && res.status < 400) return `a write the document refuses answered ${res.status}: ${res.text.slice(0, 200)}`;
  if (p.anonymous && c.op.security.length > 0 && res.status < 300) return `answered ${res.status} without credentials`;
  return undefined;
}

/** Undoes what the accepted hostile writes created, where the document has a DELETE for it (API keys,
 * webhook subscriptions), so that later cases start from the fixtures. */
async function removeCreated(fx: Fixtures, outcomes: Outcome[]) {
  for (const w of outcomes) {
    if (!w.res || w.res.status >= 300 || typeof w.res.json?.id !== "string") continue;
    const itemPath = `${w.c.op.path}/{id}`;
    const remove = fx.docs.operations.find((op) => op.method === "DELETE" && op.base === w.c.op.base && op.path === itemPath);
    if (!remove) continue;
    const response = await fx.client.send({
      method: "DELETE",
      path: `${remove.base}${remove.path.replace("{id}", encodeURIComponent(w.res.json.id))}`,
      headers: { authorization: String(w.p.request.headers?.authorization ?? "") },
    });
    assert.equal(response.status, 200, `removing ${w.res.json.id}: ${response.text}`);
  }
}

export function badInputCases(stack: () => Stack, fixtures: () => Fixtures, opts: { fraction: number; database: string }) {
  describe("bad input", () => {
    it(`refuses generated malformed requests on every documented route: no 5xx, the interface's envelope, nothing written (${opts.fraction === 1 ? "every case" : `a ${Math.round(opts.fraction * 100)}% sample`})`, async (t) => {
      const s = stack();
      const fx = fixtures();
      const ctx = liveContext(fx);
      const cases = generateCases(fx.docs.operations);
      const pickSample = seeded(7);
      const chosen = opts.fraction >= 1 ? cases : cases.filter(() => pickSample() < opts.fraction);
      const work: Outcome[] = [];
      for (const c of chosen) {
        for (const anonymous of c.op.security.length > 0 ? [false, true] : [false]) work.push({ c, p: prepare(c, ctx, { anonymous }) });
      }
      const covered = new Set(work.map((w) => w.c.op.id));
      const missing = fx.docs.operations.map((op) => op.id).filter((id) => !covered.has(id));
      assert.deepEqual(missing, [], "every documented operation gets malformed requests");
      // Well-formed writes carrying hostile text (a SQL fragment as an API key's name, say) may be accepted:
      // they go after the check that nothing was written.
      const refused = work.filter((w) => !w.p.mayWrite);
      const accepted = work.filter((w) => w.p.mayWrite);

      const address = loopbackAddresses();
      const send = async (w: Outcome) => {
        try {
          w.res = await fx.client.send({ ...w.p.request, localAddress: address(), timeoutMs: 20_000 });
          w.problem = problemOf(fx, w.c, w.p, w.res);
        } catch (error) {
          w.problem = (error as Error).message;
        }
      };
      const before = await relayerFingerprint(s);
      const started = Date.now();
      await pool(refused, CONCURRENCY, send);
      const elapsed = Date.now() - started;
      const after = await relayerFingerprint(s);
      await pool(accepted, CONCURRENCY, send);
      await removeCreated(fx, accepted);

      const count = (api: string) => work.filter((w) => w.c.op.api === api).length;
      const anonymous = work.filter((w) => w.p.anonymous).length;
      const byStatus = new Map<number, number>();
      for (const w of work) if (w.res) byStatus.set(w.res.status, (byStatus.get(w.res.status) ?? 0) + 1);
      t.diagnostic(
        `bad input on ${opts.database}: ${work.length} requests tried on ${fx.docs.operations.length} operations ` +
          `(payments /v1: ${count("payments")}, energy sandbox /energy/v1: ${count("energy")}; ${anonymous} of them without credentials): ` +
          `${refused.length} that must change nothing (sent in ${(elapsed / 1000).toFixed(1)} s between two database fingerprints), then ${accepted.length} well-formed writes ` +
          `carrying hostile text; answers: ${[...byStatus].sort((x, y) => x[0] - y[0]).map(([k, v]) => `${k}x${v}`).join(" ")}`,
      );
      const failures = work.filter((w) => w.problem);
      assert.deepEqual(
        failures.slice(0, 25).map((w) => `${w.p.request.method} ${w.c.op.id} [${w.c.what}${w.p.anonymous ? ", no credentials" : ""}]: ${w.problem}`),
        [],
        `${failures.length} of ${work.length} malformed requests were answered wrongly`,
      );
      assert.deepEqual(changedTables(before, after), [], "the refused requests wrote nothing");
      assert.equal(s.relayer.process.exitCode, null, "the relayer is still running");
    });
  });
}
